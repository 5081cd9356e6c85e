//! Node sets per label `key=value` and per label key, so selectors become set algebra. Sets
//! are sparse or dense by size: a hostname label names one node of 50,000.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use super::NodeSet;
use crate::api::StringMap;
use crate::model::NodeId;

/// Inverted index from node labels to node sets: per key, the nodes with that key and the nodes
/// per value (nested, so neither building nor looking up allocates a key).
#[derive(Debug, Default)]
pub struct LabelIndex {
    by_key: HashMap<String, KeyIndex, FixedState>,
}

#[derive(Debug)]
struct KeyIndex {
    nodes: NodeSet,
    by_value: HashMap<String, NodeSet, FixedState>,
}

impl LabelIndex {
    /// Builds the index over `labels[node]`.
    pub fn build<'a>(labels: impl Iterator<Item = &'a StringMap>, len: usize) -> Self {
        type Ids = Vec<u32>;
        type Values<'a> = HashMap<&'a str, Ids, FixedState>;
        let mut keys: HashMap<&str, (Ids, Values), FixedState> = HashMap::default();
        for (n, map) in labels.enumerate() {
            for (k, v) in map {
                let (nodes, values) = keys.entry(k).or_default();
                nodes.push(n as u32);
                values.entry(v).or_default().push(n as u32);
            }
        }
        let by_key = keys
            .into_iter()
            .map(|(k, (nodes, values))| {
                let by_value = values
                    .into_iter()
                    .map(|(v, ids)| (v.to_string(), NodeSet::from_sorted(ids, len)))
                    .collect();
                let index = KeyIndex {
                    nodes: NodeSet::from_sorted(nodes, len),
                    by_value,
                };
                (k.to_string(), index)
            })
            .collect();
        LabelIndex { by_key }
    }

    /// Nodes labelled `key=value`.
    pub fn with_value(&self, key: &str, value: &str) -> Option<&NodeSet> {
        self.by_key.get(key)?.by_value.get(value)
    }

    /// Nodes that have label `key`.
    pub fn with_key(&self, key: &str) -> Option<&NodeSet> {
        self.by_key.get(key).map(|k| &k.nodes)
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
        let labels: Vec<StringMap> = (0..200)
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
