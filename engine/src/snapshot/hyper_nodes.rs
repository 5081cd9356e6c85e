//! Hyper-nodes (network topology): a tree of node groups by tier, plus a virtual top that holds
//! every node.

use std::collections::HashMap;

use fixedbitset::FixedBitSet;

use crate::model::{HyperNodeId, NodeId};

/// Hyper-nodes; the last row is the virtual `<cluster-top-hypernode>`.
#[derive(Debug, Default)]
pub struct HyperNodeTable {
    pub name: Vec<String>,
    pub tier: Vec<i32>,
    pub tier_name: Vec<String>,
    pub parent: Vec<Option<HyperNodeId>>,
    pub children: Vec<Vec<HyperNodeId>>,
    /// Leaf nodes under each hyper-node, as a bitmap and in node-table order.
    pub real_nodes: Vec<FixedBitSet>,
    pub real_node_list: Vec<Vec<NodeId>>,
    pub by_name: HashMap<String, HyperNodeId>,
    /// Distinct tiers, ascending.
    pub tiers: Vec<i32>,
    /// For each node, the lowest-tier hyper-node that contains it.
    pub lowest_of_node: Vec<Option<HyperNodeId>>,
}

/// Name of the virtual hyper-node at the top of the tree.
pub const CLUSTER_TOP: &str = "<cluster-top-hypernode>";

impl HyperNodeTable {
    /// The virtual top hyper-node.
    pub fn top(&self) -> HyperNodeId {
        HyperNodeId(self.name.len() as u32 - 1)
    }

    /// Number of hyper-nodes including the virtual top.
    pub fn len(&self) -> usize {
        self.name.len()
    }

    /// True when not even the top exists (an unbuilt table).
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    /// Looks up by name.
    pub fn id(&self, name: &str) -> Option<HyperNodeId> {
        self.by_name.get(name).copied()
    }

    /// True when `anc` is `hn` or one of its ancestors.
    pub fn is_ancestor_or_self(&self, anc: HyperNodeId, hn: HyperNodeId) -> bool {
        let mut cur = Some(hn);
        while let Some(c) = cur {
            if c == anc {
                return true;
            }
            cur = self.parent[c.idx()];
        }
        false
    }

    /// `GetLCAHyperNode(a, b)`: `None` operands return the other; else the first ancestor of
    /// `b` (from `b` up) that is an ancestor-or-self of `a`.
    pub fn lca(&self, a: Option<HyperNodeId>, b: Option<HyperNodeId>) -> Option<HyperNodeId> {
        let (a, b) = match (a, b) {
            (None, x) | (x, None) => return x,
            (Some(a), Some(b)) => (a, b),
        };
        let mut cur = Some(b);
        while let Some(c) = cur {
            if self.is_ancestor_or_self(c, a) {
                return Some(c);
            }
            cur = self.parent[c.idx()];
        }
        None
    }
}
