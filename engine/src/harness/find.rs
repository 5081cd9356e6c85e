//! Rows of an opened test session by name; a name that is not there fails the test, naming it.

use crate::framework::Session;
use crate::model::{JobId, NodeId, QueueId, TaskId};

/// The task of pod `namespace/name`.
pub fn task(ssn: &Session, key: &str) -> TaskId {
    ssn.state
        .snap
        .task_id(key)
        .unwrap_or_else(|| panic!("no pod {key}"))
}

/// The node called `name`.
pub fn node_id(ssn: &Session, name: &str) -> NodeId {
    ssn.state
        .snap
        .nodes
        .id(name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

/// Every node, in table order.
pub fn all_nodes(ssn: &Session) -> Vec<NodeId> {
    ssn.state.snap.nodes.ids().collect()
}

/// The queue called `name`.
pub fn queue(ssn: &Session, name: &str) -> QueueId {
    ssn.state
        .snap
        .queues
        .id(name)
        .unwrap_or_else(|| panic!("no queue {name}"))
}

/// The job of PodGroup `namespace/name`.
pub fn job(ssn: &Session, key: &str) -> JobId {
    ssn.state
        .snap
        .job_id(key)
        .unwrap_or_else(|| panic!("no job {key}"))
}
