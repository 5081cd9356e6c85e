//! A kube view's own copies of the per-node entries it changed, over entries every view of the
//! session shares. A view copies a node's entry out when it first changes it, so opening a view
//! costs one vector of indexes, not a copy (or a reference count) per node, and most nodes never
//! change in a session. `NodePods` (the pod lists) and the views' request sums are built on it.

use crate::model::NodeId;

/// No copy: the node's entry is the shared one.
const SHARED: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
pub struct NodeCopies<T> {
    /// Per node, `SHARED` or the index of its copy in `copies`.
    copy_of: Vec<u32>,
    copies: Vec<T>,
}

impl<T> NodeCopies<T> {
    /// No copy yet, for `nodes` nodes.
    pub fn new(nodes: usize) -> Self {
        NodeCopies {
            copy_of: vec![SHARED; nodes],
            copies: Vec::new(),
        }
    }

    /// This view's copy of node `n`'s entry, when it changed it.
    pub fn get(&self, n: NodeId) -> Option<&T> {
        match self.copy_of[n.idx()] {
            SHARED => None,
            i => Some(&self.copies[i as usize]),
        }
    }

    /// This view's copy of node `n`'s entry, made by `copy` (of the shared entry) the first time.
    pub fn get_mut(&mut self, n: NodeId, copy: impl FnOnce() -> T) -> &mut T {
        if self.copy_of[n.idx()] == SHARED {
            self.copy_of[n.idx()] = self.copies.len() as u32;
            self.copies.push(copy());
        }
        &mut self.copies[self.copy_of[n.idx()] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_copied_once_and_later_changes_go_to_its_copy() {
        let mut copies = NodeCopies::new(3);
        assert_eq!(copies.get(NodeId(1)), None);
        *copies.get_mut(NodeId(1), || 10) += 1;
        *copies.get_mut(NodeId(1), || unreachable!("copied already")) += 1;
        assert_eq!(copies.get(NodeId(1)), Some(&12));
        assert_eq!(copies.get(NodeId(0)), None);
        assert_eq!(copies.copies.len(), 1, "one copy per changed node");
    }
}
