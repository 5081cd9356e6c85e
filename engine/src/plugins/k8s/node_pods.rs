//! Which pods (tasks) each node holds, as one kube view sees them. The session-open lists are
//! one flat array (`IdLists`) shared by every view of the snapshot; a view copies a node's list
//! out when it first changes it. A list per node took two allocations per node at every open
//! (100k for `large`), and most nodes never change in a session.

use std::sync::Arc;

use super::node_copies::NodeCopies;
use crate::framework::NodeTasks;
use crate::model::{NodeId, TaskId};
use crate::snapshot::IdLists;

#[derive(Debug, Clone, Default)]
pub struct NodePods {
    /// Every node's session-open list.
    open: Arc<IdLists<TaskId>>,
    /// This view's lists of the nodes it changed.
    copies: NodeCopies<Vec<TaskId>>,
}

impl NodePods {
    /// The lists as given, one per node.
    pub fn new(per_node: &[NodeTasks]) -> NodePods {
        NodePods {
            open: Arc::new(IdLists::from_rows(per_node)),
            copies: NodeCopies::new(per_node.len()),
        }
    }

    /// The pods on node `n`.
    pub fn get(&self, n: NodeId) -> &[TaskId] {
        match self.copies.get(n) {
            Some(copy) => copy,
            None => &self.open[n.idx()],
        }
    }

    /// Node `n`'s list, copied out of the shared one first if this view has not changed it yet.
    fn get_mut(&mut self, n: NodeId) -> &mut Vec<TaskId> {
        let open = &self.open;
        self.copies.get_mut(n, || open[n.idx()].to_vec())
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
