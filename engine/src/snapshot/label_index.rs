//! Bitmaps of nodes per label `key=value` and per label key, so selectors become bitmap algebra.

use std::collections::HashMap;

use fixedbitset::FixedBitSet;

use crate::model::NodeId;

/// Inverted index from node labels to node sets.
#[derive(Debug, Default)]
pub struct LabelIndex {
    len: usize,
    by_pair: HashMap<(String, String), FixedBitSet>,
    by_key: HashMap<String, FixedBitSet>,
    empty: FixedBitSet,
}

impl LabelIndex {
    /// Builds the index over `labels[node]`.
    pub fn build<'a>(
        labels: impl Iterator<Item = &'a std::collections::BTreeMap<String, String>>,
        len: usize,
    ) -> Self {
        let mut idx = LabelIndex {
            len,
            empty: FixedBitSet::with_capacity(len),
            ..Default::default()
        };
        for (n, map) in labels.enumerate() {
            for (k, v) in map {
                idx.by_pair
                    .entry((k.clone(), v.clone()))
                    .or_insert_with(|| FixedBitSet::with_capacity(len))
                    .insert(n);
                idx.by_key
                    .entry(k.clone())
                    .or_insert_with(|| FixedBitSet::with_capacity(len))
                    .insert(n);
            }
        }
        idx
    }

    /// Nodes labelled `key=value`.
    pub fn with_value(&self, key: &str, value: &str) -> &FixedBitSet {
        self.by_pair
            .get(&(key.to_string(), value.to_string()))
            .unwrap_or(&self.empty)
    }

    /// Nodes that have label `key`.
    pub fn with_key(&self, key: &str) -> &FixedBitSet {
        self.by_key.get(key).unwrap_or(&self.empty)
    }

    /// All nodes.
    pub fn all(&self) -> FixedBitSet {
        let mut s = FixedBitSet::with_capacity(self.len);
        s.insert_range(..);
        s
    }

    /// Nodes matching every `key=value` of a nodeSelector.
    pub fn matching_selector(
        &self,
        selector: &std::collections::BTreeMap<String, String>,
    ) -> FixedBitSet {
        let mut s = self.all();
        for (k, v) in selector {
            s.intersect_with(self.with_value(k, v));
        }
        s
    }

    /// True when `node` carries `key=value`.
    pub fn has(&self, node: NodeId, key: &str, value: &str) -> bool {
        self.with_value(key, value).contains(node.idx())
    }
}
