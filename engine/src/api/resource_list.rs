//! `ResourceList`: resource name → quantity, as in `requests`, `allocatable` or a queue's
//! `capability`.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::Quantity;

/// A `ResourceList` (`cpu: 2`, `memory: 4Gi`, ...), sorted by resource name.
///
/// A sorted vector rather than a `BTreeMap`: a list holds two or three entries, and a map's
/// first node alone took about 800 bytes, a quarter of a pod's memory in a 400k-pod cluster.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ResourceList(Vec<(String, Quantity)>);

impl ResourceList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(name))
    }

    /// The quantity of `name`.
    pub fn get(&self, name: &str) -> Option<&Quantity> {
        self.position(name).ok().map(|i| &self.0[i].1)
    }

    /// True when the list names `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// Sets `name` to `quantity`; returns the quantity it replaces.
    pub fn insert(&mut self, name: String, quantity: Quantity) -> Option<Quantity> {
        match self.position(&name) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, quantity)),
            Err(i) => {
                self.0.insert(i, (name, quantity));
                None
            }
        }
    }

    /// Removes `name`; returns its quantity.
    pub fn remove(&mut self, name: &str) -> Option<Quantity> {
        self.position(name).ok().map(|i| self.0.remove(i).1)
    }

    /// Entries in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Quantity)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// Resource names in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    /// Quantities in name order.
    pub fn values(&self) -> impl Iterator<Item = &Quantity> {
        self.0.iter().map(|(_, v)| v)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when the list is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, Quantity)> for ResourceList {
    /// A later entry for the same name replaces an earlier one, as in a map.
    fn from_iter<I: IntoIterator<Item = (String, Quantity)>>(entries: I) -> Self {
        let map: BTreeMap<String, Quantity> = entries.into_iter().collect();
        ResourceList(map.into_iter().collect())
    }
}

impl<const N: usize> From<[(String, Quantity); N]> for ResourceList {
    fn from(entries: [(String, Quantity); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl IntoIterator for ResourceList {
    type Item = (String, Quantity);
    type IntoIter = std::vec::IntoIter<(String, Quantity)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a ResourceList {
    type Item = (&'a String, &'a Quantity);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, Quantity)>,
        fn(&'a (String, Quantity)) -> (&'a String, &'a Quantity),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl std::fmt::Debug for ResourceList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for ResourceList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for ResourceList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, Quantity>::deserialize(deserializer)?;
        Ok(ResourceList(map.into_iter().collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn entries_stay_sorted_and_unique_by_name() {
        let mut l = ResourceList::new();
        assert_eq!(l.insert("memory".into(), q("1Gi")), None);
        assert_eq!(l.insert("cpu".into(), q("1")), None);
        assert_eq!(l.insert("cpu".into(), q("2")), Some(q("1")));
        assert_eq!(l.keys().collect::<Vec<_>>(), ["cpu", "memory"]);
        assert_eq!(l.get("cpu"), Some(&q("2")));
        assert_eq!(l.remove("memory"), Some(q("1Gi")));
        assert!(!l.contains_key("memory"));
        assert_eq!(l.len(), 1);
    }

    #[test]
    fn a_later_entry_replaces_an_earlier_one_as_in_a_map() {
        let l: ResourceList = [("cpu".to_string(), q("1")), ("cpu".to_string(), q("3"))].into();
        assert_eq!(
            l.iter().collect::<Vec<_>>(),
            [(&"cpu".to_string(), &q("3"))]
        );
    }

    #[test]
    fn json_is_a_map_in_name_order() {
        let l: ResourceList = serde_json::from_str(r#"{"memory":"1Gi","cpu":"500m"}"#).unwrap();
        assert_eq!(l.keys().collect::<Vec<_>>(), ["cpu", "memory"]);
        assert_eq!(
            serde_json::to_string(&l).unwrap(),
            r#"{"cpu":"500m","memory":"1Gi"}"#
        );
        assert!(serde_json::from_str::<ResourceList>(r#"{"cpu":"lots"}"#).is_err());
    }
}
