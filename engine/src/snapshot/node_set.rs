//! A set of nodes stored the cheap way for its size: a sorted id list when sparse (a label
//! unique to one node), a bitmap when dense (a zone label).

use fixedbitset::FixedBitSet;

use crate::model::NodeId;

/// A set of node ids.
#[derive(Debug, Clone)]
pub enum NodeSet {
    Sparse(Vec<u32>),
    Dense(FixedBitSet),
}

impl NodeSet {
    /// Builds the set from ascending ids out of `universe` nodes; bitmap when more than one
    /// node in 64 is in it (the list would then be larger than the bitmap).
    pub fn from_sorted(ids: Vec<u32>, universe: usize) -> NodeSet {
        if ids.len() * 64 > universe {
            let mut b = FixedBitSet::with_capacity(universe);
            for &i in &ids {
                b.insert(i as usize);
            }
            NodeSet::Dense(b)
        } else {
            NodeSet::Sparse(ids)
        }
    }

    /// Membership.
    pub fn contains(&self, n: NodeId) -> bool {
        match self {
            NodeSet::Sparse(v) => v.binary_search(&n.0).is_ok(),
            NodeSet::Dense(b) => b.contains(n.idx()),
        }
    }

    /// Number of nodes in the set.
    pub fn len(&self) -> usize {
        match self {
            NodeSet::Sparse(v) => v.len(),
            NodeSet::Dense(b) => b.count_ones(..),
        }
    }

    /// Removes from `set` every node that is not in this set.
    pub fn retain_in(&self, set: &mut FixedBitSet) {
        match self {
            NodeSet::Dense(b) => set.intersect_with(b),
            NodeSet::Sparse(ids) => {
                let mut kept = FixedBitSet::with_capacity(set.len());
                for &i in ids.iter().filter(|&&i| set.contains(i as usize)) {
                    kept.insert(i as usize);
                }
                *set = kept;
            }
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_and_dense_answer_alike() {
        let ids = vec![1, 5, 9];
        for universe in [1000, 100] {
            let s = NodeSet::from_sorted(ids.clone(), universe);
            assert_eq!(matches!(s, NodeSet::Dense(_)), universe == 100);
            assert!(s.contains(NodeId(5)) && !s.contains(NodeId(6)));
            assert_eq!(s.len(), 3);
        }
    }

    #[test]
    fn retain_in_keeps_only_the_members_of_both() {
        for universe in [1000, 100] {
            let s = NodeSet::from_sorted(vec![1, 5, 9], universe);
            let mut all = FixedBitSet::with_capacity(universe);
            all.insert_range(..);
            all.remove(9);
            s.retain_in(&mut all);
            assert_eq!(all.ones().collect::<Vec<_>>(), [1, 5]);
        }
    }
}
