//! The session's columns of task rows.

use super::Column;
use super::LastTransaction;
use crate::model::{HyperNodeId, NodeId, TaskId, TaskStatus};
use crate::snapshot::TaskTable;

/// What a session knows of each task beyond the snapshot. Read by anyone; written by the
/// framework only (`SessionState`, `Statement`), which keeps the job counters and node
/// accounting in step with them.
#[derive(Debug)]
pub struct TaskColumns {
    pub status: Column<TaskId, TaskStatus>,
    pub node: Column<TaskId, Option<NodeId>>,
    /// The status under which the task is accounted on its node (`NodeInfo.Tasks` clone); set
    /// when the snapshot's tasks are listed on their nodes (`SessionState::new`).
    pub(super) node_status: Column<TaskId, Option<TaskStatus>>,
    pub eviction_occurred: Column<TaskId, bool>,
    pub last_tx: Column<TaskId, Option<LastTransaction>>,
    /// `task.JobAllocatedHyperNode`.
    pub allocated_hyper_node: Column<TaskId, Option<HyperNodeId>>,
    /// The pod's `nominatedNodeName` was dropped this session (a stale nomination, Volcano:
    /// pkg/scheduler/actions/allocate/allocate.go, the nominated hyper-node path).
    pub nomination_cleared: Column<TaskId, bool>,
    /// The tasks whose status this session changed, once per change: close reads these, not
    /// every row, for what only a session can have set (a pod's own status is never
    /// `Pipelined`) and for the jobs whose sums moved.
    pub(super) status_changes: Vec<TaskId>,
}

impl TaskColumns {
    /// The columns of a session opening on `tasks`: statuses and nodes as the snapshot has
    /// them, nothing accounted yet (no node statuses: `SessionState::new` sets them).
    pub(super) fn open(tasks: &TaskTable) -> Self {
        let rows = tasks.len();
        TaskColumns {
            status: Column::from(tasks.status.clone()),
            node: Column::from(tasks.node.clone()),
            node_status: Column::from(Vec::new()),
            eviction_occurred: Column::filled(rows, false),
            last_tx: Column::filled(rows, None),
            allocated_hyper_node: Column::filled(rows, None),
            nomination_cleared: Column::filled(rows, false),
            status_changes: Vec::new(),
        }
    }
}
