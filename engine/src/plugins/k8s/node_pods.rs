//! Which pods (tasks) each node holds, as one kube view sees them. The session-open lists are
//! one flat array (`IdLists`) shared by every view of the snapshot; a view copies a node's list
//! out when it first changes it. A list per node took two allocations per node at every open
//! (100k for `large`), and most nodes never change in a session.

use std::sync::Arc;

use crate::framework::NodeTasks;
use crate::model::{NodeId, TaskId};
use crate::snapshot::IdLists;

/// No copy: the node's list is the session-open one.
const OPEN: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
pub struct NodePods {
    /// Every node's session-open list.
    open: Arc<IdLists<TaskId>>,
    /// Per node, `OPEN` or the index of its copy in `copies`.
    copy_of: Vec<u32>,
    copies: Vec<Vec<TaskId>>,
}

impl NodePods {
    /// The lists as given, one per node.
    pub fn new(per_node: &[NodeTasks]) -> NodePods {
        NodePods {
            open: Arc::new(IdLists::from_rows(per_node)),
            copy_of: vec![OPEN; per_node.len()],
            copies: Vec::new(),
        }
    }

    /// The pods on node `n`.
    pub fn get(&self, n: NodeId) -> &[TaskId] {
        match self.copy_of[n.idx()] {
            OPEN => &self.open[n.idx()],
            i => &self.copies[i as usize],
        }
    }

    /// Node `n`'s list, copied out of the shared one first if this view has not changed it yet.
    fn get_mut(&mut self, n: NodeId) -> &mut Vec<TaskId> {
        if self.copy_of[n.idx()] == OPEN {
            let copy = self.get(n).to_vec();
            self.copy_of[n.idx()] = self.copies.len() as u32;
            self.copies.push(copy);
        }
        &mut self.copies[self.copy_of[n.idx()] as usize]
    }

    /// `t` joins node `n`.
    pub fn push(&mut self, n: NodeId, t: TaskId) {
        self.get_mut(n).push(t);
    }

    /// `t` leaves node `n`.
    pub fn remove(&mut self, n: NodeId, t: TaskId) {
        self.get_mut(n).retain(|&x| x != t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smallvec::smallvec;

    #[test]
    fn a_change_is_seen_by_its_view_only_and_leaves_the_other_nodes_as_opened() {
        let opened = NodePods::new(&[
            smallvec![TaskId(0), TaskId(1)],
            smallvec![],
            smallvec![TaskId(2)],
        ]);
        let mut view = opened.clone();
        view.push(NodeId(1), TaskId(3));
        view.remove(NodeId(0), TaskId(0));
        assert_eq!(view.get(NodeId(0)), &[TaskId(1)]);
        assert_eq!(view.get(NodeId(1)), &[TaskId(3)]);
        assert_eq!(view.get(NodeId(2)), &[TaskId(2)]);
        assert_eq!(opened.get(NodeId(0)), &[TaskId(0), TaskId(1)]);
        assert!(opened.get(NodeId(1)).is_empty());
    }
}
