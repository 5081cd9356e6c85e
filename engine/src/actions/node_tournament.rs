//! The order of one class's feasible nodes as a winner tree over the node table: a leaf per
//! node holds its key (or nothing when the node is not feasible), each inner slot the lesser of
//! its two children, so the root is the class's best node. One node re-ranked after a placement
//! walks log2(n) slots of one array up to the root; a class re-ranking thousands of nodes at
//! once (a carried class revived, every node ranked when the class is founded) writes their
//! leaves and rebuilds the inner slots in one pass, with no sort.
//!
//! A key packs the order of `class_cache`: idle fit before future-idle fit, then the higher
//! score, then the lower node index, as one `u128` compared as an integer. Keys are unique (the
//! node is in them), so the root is the least key whatever the tree's shape.

use crate::model::NodeId;

/// The key of a node that is not in the order.
const ABSENT: u128 = u128::MAX;

/// A winner tree over `leaves` nodes: slot 1 is the root, slot `i` the lesser of `2i` and
/// `2i + 1`, and node `n`'s leaf is slot `leaves + n`.
#[derive(Debug, Clone)]
pub(super) struct NodeTournament {
    slots: Vec<u128>,
    leaves: usize,
}

/// A feasible node's place in the order: `group` 0 fits idle now, 1 only future idle; within a
/// group the higher `score` first, then the lower node index.
pub(super) fn key(group: u8, score: f64, n: NodeId) -> u128 {
    // `f64::total_cmp`'s order as an unsigned integer, inverted so that a higher score is less.
    let bits = score.to_bits() as i64;
    let ordered = (bits ^ ((((bits >> 63) as u64) >> 1) as i64)) as u64 ^ (1 << 63);
    (u128::from(group) << 96) | (u128::from(!ordered) << 32) | u128::from(n.0)
}

impl NodeTournament {
    /// The order of nodes `0..keys.len()`, node `n` keyed `keys[n]`.
    pub fn new(keys: impl ExactSizeIterator<Item = Option<u128>>) -> NodeTournament {
        let leaves = keys.len().max(1);
        let mut slots = vec![ABSENT; 2 * leaves];
        for (slot, k) in slots[leaves..].iter_mut().zip(keys) {
            *slot = k.unwrap_or(ABSENT);
        }
        let mut tree = NodeTournament { slots, leaves };
        tree.rebuild();
        tree
    }

    /// The node of the least key, `None` when no node is in the order.
    pub fn best(&self) -> Option<NodeId> {
        let k = self.slots[1];
        (k != ABSENT).then_some(NodeId(k as u32))
    }

    /// True when no node is in the order.
    pub fn is_empty(&self) -> bool {
        self.slots[1] == ABSENT
    }

    /// Sets node `n`'s key and brings the slots above it up to date.
    fn set(&mut self, n: NodeId, k: Option<u128>) {
        let mut i = self.leaves + n.idx();
        self.slots[i] = k.unwrap_or(ABSENT);
        while i > 1 {
            i /= 2;
            self.slots[i] = self.slots[2 * i].min(self.slots[2 * i + 1]);
        }
    }

    /// Sets the keys of many nodes: leaf by leaf, then the inner slots in one pass when walking
    /// up from each would touch more slots than there are.
    pub fn set_many(&mut self, keys: &[(NodeId, Option<u128>)]) {
        let depth = usize::BITS - self.leaves.leading_zeros();
        if keys.len() * depth as usize <= self.leaves {
            for &(n, k) in keys {
                self.set(n, k);
            }
            return;
        }
        for &(n, k) in keys {
            self.slots[self.leaves + n.idx()] = k.unwrap_or(ABSENT);
        }
        self.rebuild();
    }

    fn rebuild(&mut self) {
        for i in (1..self.leaves).rev() {
            self.slots[i] = self.slots[2 * i].min(self.slots[2 * i + 1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{NodeTournament, key};
    use crate::model::NodeId;

    /// The best node by brute force: the least key.
    fn least(keys: &[Option<u128>]) -> Option<NodeId> {
        keys.iter().flatten().min().map(|&k| NodeId(k as u32))
    }

    #[test]
    fn keys_order_idle_first_then_higher_score_then_lower_node() {
        let n = |i| NodeId(i);
        assert!(
            key(0, 1.0, n(9)) < key(1, 100.0, n(0)),
            "idle before future idle"
        );
        assert!(key(0, 2.0, n(9)) < key(0, 1.0, n(0)), "higher score first");
        assert!(
            key(0, 1.0, n(3)) < key(0, 1.0, n(4)),
            "ties to the lower node"
        );
        assert!(
            key(0, 0.5, n(0)) < key(0, -0.5, n(0)),
            "negative scores below positive"
        );
        assert!(key(0, -1.0, n(0)) < key(0, -2.0, n(0)));
        assert!(
            key(0, 0.0, n(0)) < key(0, -0.0, n(0)),
            "total order: +0 above -0"
        );
        assert!(key(0, f64::INFINITY, n(0)) < key(0, f64::MAX, n(0)));
    }

    #[test]
    fn the_best_node_is_the_least_key_after_every_kind_of_update() {
        // A small deterministic generator: the same sequence in every run.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |bound: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % bound
        };
        for nodes in [0usize, 1, 2, 3, 7, 64, 100] {
            let mut keys: Vec<Option<u128>> = (0..nodes)
                .map(|i| {
                    (next(3) > 0).then(|| key(next(2) as u8, next(5) as f64, NodeId(i as u32)))
                })
                .collect();
            let mut tree = NodeTournament::new(keys.iter().copied());
            assert_eq!(tree.best(), least(&keys), "{nodes} nodes, built");
            assert_eq!(tree.is_empty(), least(&keys).is_none());
            for round in 0..50 {
                let count = if round % 5 == 0 { nodes } else { 1 };
                let mut updates = Vec::new();
                for _ in 0..count.min(nodes) {
                    let n = NodeId(next(nodes as u64) as u32);
                    let k = (next(4) > 0).then(|| key(next(2) as u8, next(5) as f64, n));
                    keys[n.idx()] = k;
                    updates.push((n, k));
                }
                if round % 2 == 0 {
                    tree.set_many(&updates);
                } else {
                    for &(n, k) in &updates {
                        tree.set(n, k);
                    }
                }
                assert_eq!(tree.best(), least(&keys), "{nodes} nodes, round {round}");
            }
        }
    }
}
