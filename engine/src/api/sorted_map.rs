//! `SortedMap`: the small string-keyed maps every object carries, kept as one slice sorted by
//! key: labels and annotations (`StringMap`), requests, limits and allocatable
//! (`ResourceList`).
//!
//! The cache holds them for every object, 430k pods in a large cluster, and most hold a handful
//! of entries or one (a pod's PodGroup annotation, a container's `cpu` and `memory`). A
//! `BTreeMap` spends a node of eleven slots on even one entry: 544 bytes for two strings (a
//! 640-byte allocation under mimalloc), about 800 for a quantity. The slice spends one entry's
//! size an entry. Reads are what a `BTreeMap` gives: lookups by key, iteration in key order, the
//! same JSON both ways. Writes copy the slice, which the few places that write can afford.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::Quantity;

/// Keys and values, sorted by key, each key once.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SortedMap<V>(Box<[(String, V)]>);

/// Labels and annotations: string to string.
pub type StringMap = SortedMap<String>;

/// A `ResourceList` (`cpu: 2`, `memory: 4Gi`, ...): resource name to quantity, as in
/// `requests`, `allocatable` or a queue's `capability`.
pub type ResourceList = SortedMap<Quantity>;

/// The iterator of `SortedMap::iter`: entries in key order, as a `BTreeMap`'s.
pub type Iter<'a, V> =
    std::iter::Map<std::slice::Iter<'a, (String, V)>, fn(&'a (String, V)) -> (&'a String, &'a V)>;

impl<V> Default for SortedMap<V> {
    fn default() -> Self {
        SortedMap(Box::default())
    }
}

impl<V> SortedMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.position(key).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> Iter<'_, V> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }

    /// Sets `key` to `value`; the value it had.
    pub fn insert(&mut self, key: String, value: V) -> Option<V> {
        match self.position(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                let mut entries = std::mem::take(&mut self.0).into_vec();
                entries.insert(i, (key, value));
                self.0 = entries.into_boxed_slice();
                None
            }
        }
    }

    /// Removes `key`; the value it had.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let i = self.position(key).ok()?;
        let mut entries = std::mem::take(&mut self.0).into_vec();
        let (_, value) = entries.remove(i);
        self.0 = entries.into_boxed_slice();
        Some(value)
    }

    /// The map of `entries` in any order; of two entries with one key the later wins, as
    /// inserting them into a `BTreeMap` one by one would.
    fn of(mut entries: Vec<(String, V)>) -> Self {
        // Stable: entries of one key stay in their order, and the last of each run is kept.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(String, V)> = Vec::with_capacity(entries.len());
        for entry in entries {
            match kept.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => kept.push(entry),
            }
        }
        SortedMap(kept.into_boxed_slice())
    }
}

impl<V> FromIterator<(String, V)> for SortedMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        Self::of(iter.into_iter().collect())
    }
}

impl<V, const N: usize> From<[(String, V); N]> for SortedMap<V> {
    fn from(entries: [(String, V); N]) -> Self {
        Self::of(entries.into())
    }
}

impl<V> Extend<(String, V)> for SortedMap<V> {
    fn extend<I: IntoIterator<Item = (String, V)>>(&mut self, iter: I) {
        let mut entries = std::mem::take(&mut self.0).into_vec();
        entries.extend(iter);
        *self = Self::of(entries);
    }
}

impl<V> IntoIterator for SortedMap<V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_vec().into_iter()
    }
}

impl<'a, V> IntoIterator for &'a SortedMap<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = Iter<'a, V>;

    fn into_iter(self) -> Iter<'a, V> {
        self.iter()
    }
}

/// `map[key]`: the value of `key`, which must be there.
impl<V> std::ops::Index<&str> for SortedMap<V> {
    type Output = V;

    fn index(&self, key: &str) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

impl<V: fmt::Debug> fmt::Debug for SortedMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V: Serialize> Serialize for SortedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for SortedMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<V>(PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for Entries<V> {
            type Value = SortedMap<V>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map with string keys")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::with_capacity(access.size_hint().unwrap_or(0).min(64));
                while let Some(entry) = access.next_entry::<String, V>()? {
                    entries.push(entry);
                }
                Ok(SortedMap::of(entries))
            }
        }

        deserializer.deserialize_map(Entries(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{ResourceList, StringMap};
    use crate::model::Quantity;

    fn pairs(entries: &[(&str, &str)]) -> Vec<(String, String)> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn reads_and_writes_as_a_btree_map_does() {
        let input = pairs(&[("b", "1"), ("a", "2"), ("b", "3"), ("c", "4")]);
        let mut map: StringMap = input.iter().cloned().collect();
        let mut reference: BTreeMap<String, String> = input.into_iter().collect();
        let same = |m: &StringMap, r: &BTreeMap<String, String>| {
            assert!(m.iter().eq(r.iter()), "{m:?} against {r:?}");
            assert_eq!(m.len(), r.len());
        };
        same(&map, &reference);
        assert_eq!(map.get("b").map(String::as_str), Some("3"));
        assert!(map.contains_key("c") && !map.contains_key("d"));
        assert_eq!(
            map.insert("a".into(), "5".into()),
            reference.insert("a".into(), "5".into())
        );
        assert_eq!(
            map.insert("0".into(), "6".into()),
            reference.insert("0".into(), "6".into())
        );
        assert_eq!(map.remove("b"), reference.remove("b"));
        assert_eq!(map.remove("z"), reference.remove("z"));
        same(&map, &reference);
    }

    #[test]
    fn round_trips_through_json_as_a_btree_map_does() {
        let json = r#"{"z":"1","a":"2","m":"3","a":"4"}"#;
        let map: StringMap = serde_json::from_str(json).unwrap();
        let reference: BTreeMap<String, String> = serde_json::from_str(json).unwrap();
        assert!(map.iter().eq(reference.iter()));
        assert_eq!(
            serde_json::to_string(&map).unwrap(),
            serde_json::to_string(&reference).unwrap()
        );
        assert!(serde_json::from_str::<StringMap>(r#"{"a":1}"#).is_err());
    }

    #[test]
    fn resource_lists_stay_sorted_and_unique_by_name() {
        let mut l = ResourceList::new();
        assert_eq!(l.insert("memory".into(), q("1Gi")), None);
        assert_eq!(l.insert("cpu".into(), q("1")), None);
        assert_eq!(l.insert("cpu".into(), q("2")), Some(q("1")));
        assert_eq!(l.keys().collect::<Vec<_>>(), ["cpu", "memory"]);
        assert_eq!(l.get("cpu"), Some(&q("2")));
        assert_eq!(l.remove("memory"), Some(q("1Gi")));
        assert!(!l.contains_key("memory"));
        assert_eq!(l.len(), 1);
        let l: ResourceList = [("cpu".to_string(), q("1")), ("cpu".to_string(), q("3"))].into();
        assert_eq!(
            l.iter().collect::<Vec<_>>(),
            [(&"cpu".to_string(), &q("3"))]
        );
    }

    #[test]
    fn a_resource_list_is_a_json_map_in_name_order_of_valid_quantities() {
        let l: ResourceList = serde_json::from_str(r#"{"memory":"1Gi","cpu":"500m"}"#).unwrap();
        assert_eq!(l.keys().collect::<Vec<_>>(), ["cpu", "memory"]);
        assert_eq!(
            serde_json::to_string(&l).unwrap(),
            r#"{"cpu":"500m","memory":"1Gi"}"#
        );
        assert!(serde_json::from_str::<ResourceList>(r#"{"cpu":"lots"}"#).is_err());
    }
}
