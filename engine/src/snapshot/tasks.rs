//! The task table: one row per pod.

use std::cmp::Ordering;
use std::sync::Arc;

use super::SignatureId;
use super::pods_by_group::task_order;
use crate::api::{Pod, Time};
use crate::model::{JobId, NodeId, Resource, SubJobId, TaskId, TaskStatus};

/// Tasks, sorted by job then by pod UID; tasks without a session job come last.
#[derive(Debug, Default)]
pub struct TaskTable {
    pub uid: Vec<Arc<str>>,
    pub name: Vec<Arc<str>>,
    pub namespace: Vec<Arc<str>>,
    /// The session job, if the pod's PodGroup is in the session.
    pub job: Vec<Option<JobId>>,
    pub sub_job: Vec<Option<SubJobId>>,
    /// `volcano.sh/task-spec` annotation or label.
    pub role: Vec<Arc<str>>,
    /// `Resreq` (= `InitResreq`): the pod request incl. init containers, overhead and `pods: 1`.
    pub resreq: Vec<Resource>,
    pub best_effort: Vec<bool>,
    pub priority: Vec<i32>,
    pub preemptable: Vec<bool>,
    /// Gated by a scheduling gate.
    pub sch_gated: Vec<bool>,
    /// Status at snapshot time.
    pub status: Vec<TaskStatus>,
    /// Node at snapshot time (only nodes in the snapshot).
    pub node: Vec<Option<NodeId>>,
    pub created: Vec<Time>,
    /// The index at the end of the pod's name (`<job>-<role>-<index>`), the first key of
    /// Volcano's default task order, parsed once per pod version instead of per comparison.
    pub name_index: Vec<Option<i64>>,
    /// The task's interned scheduling signature (`TaskSignature`), from its row, so allocate
    /// finds a task's class without reading its pod.
    pub signature: Vec<SignatureId>,
    /// The pod sets pod affinity, pod anti-affinity or topology spread constraints: read from
    /// here, filters for pods that set none need not read the pod at all.
    pub inter_pod: Vec<bool>,
    /// The pod sets preferred node affinity terms (node-order's scores for it are then not
    /// node-local).
    pub preferred_node_affinity: Vec<bool>,
    /// The pod has a `status.nominatedNodeName`. With `inter_pod` and
    /// `preferred_node_affinity`, allocate learns from the table alone what it asks of a pod
    /// that sets none of them, and never reads the pod: the first read of each pending pod
    /// was a cache miss per task.
    pub nominated: Vec<bool>,
    /// The pod's volumes name claims: the volume filters read its claims, and where it may go
    /// depends on the volumes other placements took, so it is never node-local.
    pub claims: Vec<bool>,
    pub pod: Vec<Arc<Pod>>,
}

impl TaskTable {
    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.uid.len()
    }

    /// True when there are no tasks.
    pub fn is_empty(&self) -> bool {
        self.uid.is_empty()
    }

    /// Two tasks of one job in the order of the job's task list (`task_order`: pod UID,
    /// namespace, name), which their ids follow only as long as ids are assigned in that order.
    pub fn order_within_job(&self, l: TaskId, r: TaskId) -> Ordering {
        task_order(&self.pod[l.idx()], &self.pod[r.idx()])
    }

    /// `namespace/name`.
    pub fn key(&self, t: TaskId) -> String {
        format!("{}/{}", self.namespace[t.idx()], self.name[t.idx()])
    }
}
