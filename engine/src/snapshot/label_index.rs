//! Node sets per label `key=value` and per label key, so selectors become set algebra. Sets
//! are sparse or dense by size: a hostname label names one node of 50,000.

use std::collections::{BTreeMap, HashMap};

use super::NodeSet;
use crate::model::NodeId;

/// Inverted index from node labels to node sets.
#[derive(Debug, Default)]
pub struct LabelIndex {
    by_pair: HashMap<(String, String), NodeSet>,
    by_key: HashMap<String, NodeSet>,
}

impl LabelIndex {
    /// Builds the index over `labels[node]`.
    pub fn build<'a>(
        labels: impl Iterator<Item = &'a BTreeMap<String, String>>,
        len: usize,
    ) -> Self {
        let mut pairs: HashMap<(String, String), Vec<u32>> = HashMap::new();
        let mut keys: HashMap<String, Vec<u32>> = HashMap::new();
        for (n, map) in labels.enumerate() {
            for (k, v) in map {
                pairs
                    .entry((k.clone(), v.clone()))
                    .or_default()
                    .push(n as u32);
                keys.entry(k.clone()).or_default().push(n as u32);
            }
        }
        LabelIndex {
            by_pair: pairs
                .into_iter()
                .map(|(k, ids)| (k, NodeSet::from_sorted(ids, len)))
                .collect(),
            by_key: keys
                .into_iter()
                .map(|(k, ids)| (k, NodeSet::from_sorted(ids, len)))
                .collect(),
        }
    }

    /// Nodes labelled `key=value`.
    pub fn with_value(&self, key: &str, value: &str) -> Option<&NodeSet> {
        self.by_pair.get(&(key.to_string(), value.to_string()))
    }

    /// Nodes that have label `key`.
    pub fn with_key(&self, key: &str) -> Option<&NodeSet> {
        self.by_key.get(key)
    }

    /// True when `node` carries `key=value`.
    pub fn has(&self, node: NodeId, key: &str, value: &str) -> bool {
        self.with_value(key, value)
            .is_some_and(|s| s.contains(node))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_and_keys_index_every_node() {
        let labels: Vec<BTreeMap<String, String>> = (0..200)
            .map(|i| {
                [
                    ("host".to_string(), format!("n{i}")),
                    ("zone".to_string(), format!("z{}", i % 2)),
                ]
                .into()
            })
            .collect();
        let idx = LabelIndex::build(labels.iter(), 200);
        assert!(idx.has(NodeId(7), "host", "n7"));
        assert!(!idx.has(NodeId(7), "host", "n8"));
        assert_eq!(idx.with_value("zone", "z1").map(NodeSet::len), Some(100));
        assert_eq!(idx.with_key("host").map(NodeSet::len), Some(200));
        assert!(idx.with_value("zone", "z9").is_none());
    }
}
