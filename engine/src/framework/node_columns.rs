//! The session's columns of node rows.

use super::Column;
use super::NodeTasks;
use super::node_accounts::NodeAccounting;
use crate::model::{NodeId, Resource};

/// Each node's accounting (`NodeInfo`'s sums) and tasks in the session. Read by anyone;
/// written by the framework only (`SessionState::node_add`, `node_remove`), which keeps the
/// sums, the task lists and the change log in step.
#[derive(Debug)]
pub struct NodeColumns {
    pub idle: Column<NodeId, Resource>,
    pub used: Column<NodeId, Resource>,
    pub releasing: Column<NodeId, Resource>,
    pub pipelined: Column<NodeId, Resource>,
    /// Tasks accounted on each node, in the order they were added.
    pub tasks: Column<NodeId, NodeTasks>,
    /// Every node whose accounting changed this session, in order.
    pub(super) changes: Vec<NodeId>,
}

impl NodeColumns {
    /// Columns opening with `accounting`, no task listed yet.
    pub(super) fn open(accounting: NodeAccounting) -> Self {
        NodeColumns {
            idle: Column::from(accounting.idle),
            used: Column::from(accounting.used),
            releasing: Column::from(accounting.releasing),
            pipelined: Column::from(accounting.pipelined),
            tasks: Column::from(Vec::new()),
            changes: Vec::new(),
        }
    }

    /// Every node whose accounting changed this session, in order (node-search caches replay
    /// it to re-rank only what changed).
    pub fn changes(&self) -> &[NodeId] {
        &self.changes
    }

    /// The accounting columns as they are now, taken out (the session has closed).
    pub(super) fn take_accounting(&mut self) -> NodeAccounting {
        let take = |c: &mut Column<NodeId, Resource>| {
            std::mem::replace(c, Column::from(Vec::new())).into_vec()
        };
        NodeAccounting {
            idle: take(&mut self.idle),
            used: take(&mut self.used),
            releasing: take(&mut self.releasing),
            pipelined: take(&mut self.pipelined),
        }
    }
}
