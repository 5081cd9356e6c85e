//! Bitmaps of nodes per taint, so "which nodes can this toleration set use" is bitmap algebra
//! and untainted nodes skip the taint filter entirely.

use std::collections::HashMap;

use fixedbitset::FixedBitSet;

use super::NodeSet;
use crate::api::Taint;
use crate::model::NodeId;

/// Inverted index from node taints to node sets.
#[derive(Debug, Default)]
pub struct TaintIndex {
    by_taint: HashMap<(String, String, String), NodeSet>,
    /// Nodes with at least one `NoSchedule` or `NoExecute` taint.
    repelling: FixedBitSet,
}

impl TaintIndex {
    /// Builds the index over `taints[node]`.
    pub fn build<'a>(taints: impl Iterator<Item = &'a Vec<Taint>>, len: usize) -> Self {
        let mut idx = TaintIndex {
            repelling: FixedBitSet::with_capacity(len),
            ..Default::default()
        };
        let mut by_taint: HashMap<(&str, &str, &str), Vec<u32>> = HashMap::new();
        for (n, list) in taints.enumerate() {
            for t in list {
                by_taint
                    .entry((&t.key, &t.value, &t.effect))
                    .or_default()
                    .push(n as u32);
                if t.effect == "NoSchedule" || t.effect == "NoExecute" {
                    idx.repelling.insert(n);
                }
            }
        }
        idx.by_taint = by_taint
            .into_iter()
            .map(|((k, v, e), ids)| {
                let taint = (k.to_string(), v.to_string(), e.to_string());
                (taint, NodeSet::from_sorted(ids, len))
            })
            .collect();
        idx
    }

    /// True when the node has a taint that filters pods (`NoSchedule` / `NoExecute`).
    pub fn repels(&self, node: NodeId) -> bool {
        self.repelling.contains(node.idx())
    }

    /// Nodes carrying exactly this taint.
    pub fn with_taint(&self, key: &str, value: &str, effect: &str) -> Option<&NodeSet> {
        self.by_taint
            .get(&(key.to_string(), value.to_string(), effect.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_no_schedule_and_no_execute_taints_repel() {
        let t = |e: &str| Taint {
            key: "k".into(),
            value: "v".into(),
            effect: e.into(),
        };
        let taints = [
            vec![t("NoSchedule")],
            vec![t("PreferNoSchedule")],
            vec![],
            vec![t("NoExecute")],
        ];
        let idx = TaintIndex::build(taints.iter(), 4);
        let repels: Vec<bool> = (0..4).map(|n| idx.repels(NodeId(n))).collect();
        assert_eq!(repels, [true, false, false, true]);
        let s = idx.with_taint("k", "v", "NoSchedule").unwrap();
        assert!(s.contains(NodeId(0)) && s.len() == 1);
    }
}
