//! `StringMap`: the labels and annotations of object metadata, kept as one slice sorted by key.
//!
//! The cache holds one of each per object, 430k pods in a large cluster, and most hold a
//! handful of entries or one (a pod's PodGroup annotation). A `BTreeMap<String, String>` spends
//! a node of eleven slots, 544 bytes (a 640-byte allocation under mimalloc), on even one entry;
//! the slice spends 48 bytes an entry. Reads are what a `BTreeMap` gives: lookups by key,
//! iteration in key order. Writes copy the slice, which the few places that write can afford.

use std::borrow::Borrow;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Keys and values, sorted by key, each key once.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct StringMap(Box<[(String, String)]>);

/// The iterator of `StringMap::iter`: entries in key order, as a `BTreeMap`'s.
pub type Iter<'a> = std::iter::Map<
    std::slice::Iter<'a, (String, String)>,
    fn(&'a (String, String)) -> (&'a String, &'a String),
>;

impl StringMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    fn position<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        String: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.0.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&String>
    where
        String: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.position(key).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        String: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.position(key).is_ok()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> Iter<'_> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(_, v)| v)
    }

    /// Sets `key` to `value`; the value it had.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
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
    pub fn remove<Q>(&mut self, key: &Q) -> Option<String>
    where
        String: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let i = self.position(key).ok()?;
        let mut entries = std::mem::take(&mut self.0).into_vec();
        let (_, value) = entries.remove(i);
        self.0 = entries.into_boxed_slice();
        Some(value)
    }

    /// The map of `entries` in any order; of two entries with one key the later wins, as
    /// inserting them into a `BTreeMap` one by one would.
    fn of(mut entries: Vec<(String, String)>) -> Self {
        // Stable: entries of one key stay in their order, and the last of each run is kept.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(String, String)> = Vec::with_capacity(entries.len());
        for entry in entries {
            match kept.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => kept.push(entry),
            }
        }
        StringMap(kept.into_boxed_slice())
    }
}

impl FromIterator<(String, String)> for StringMap {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        Self::of(iter.into_iter().collect())
    }
}

impl<const N: usize> From<[(String, String); N]> for StringMap {
    fn from(entries: [(String, String); N]) -> Self {
        Self::of(entries.into())
    }
}

impl Extend<(String, String)> for StringMap {
    fn extend<I: IntoIterator<Item = (String, String)>>(&mut self, iter: I) {
        let mut entries = std::mem::take(&mut self.0).into_vec();
        entries.extend(iter);
        *self = Self::of(entries);
    }
}

impl<'a> IntoIterator for &'a StringMap {
    type Item = (&'a String, &'a String);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// `map[key]`: the value of `key`, which must be there.
impl<Q> std::ops::Index<&Q> for StringMap
where
    String: Borrow<Q>,
    Q: Ord + ?Sized,
{
    type Output = String;

    fn index(&self, key: &Q) -> &String {
        self.get(key).expect("no entry found for key")
    }
}

impl fmt::Debug for StringMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for StringMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;

        impl<'de> Visitor<'de> for Entries {
            type Value = StringMap;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of strings")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<StringMap, A::Error> {
                let mut entries = Vec::with_capacity(access.size_hint().unwrap_or(0).min(64));
                while let Some(entry) = access.next_entry::<String, String>()? {
                    entries.push(entry);
                }
                Ok(StringMap::of(entries))
            }
        }

        deserializer.deserialize_map(Entries)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::StringMap;

    fn pairs(entries: &[(&str, &str)]) -> Vec<(String, String)> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
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
}
