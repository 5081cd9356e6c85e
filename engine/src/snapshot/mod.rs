//! The immutable, columnar picture of the cluster one cycle works on.
//!
//! Nodes, tasks, jobs, sub-jobs, queues and hyper-nodes are tables indexed by dense ids, one
//! column per field. A `Snapshot` never changes; the session keeps the columns that a cycle
//! mutates (statuses, node accounting, ...) in its own `SessionState`.
//!
//! A job's tasks and sub-jobs and a sub-job's tasks are `IdLists`, one flat array with row offsets.
//! The task table also flags what a pod sets (inter-pod terms, preferred node affinity, a nominated
//! node), so allocate reads no pod of a task that sets none of them.

mod build;
mod derived;
mod few_text;
mod group_key;
mod hyper_nodes;
mod id_lists;
mod job_columns;
mod job_row;
mod job_task_sums;
mod jobs;
mod label_index;
mod moved_out;
mod namespaces;
mod node_refresh;
mod node_row;
mod node_set;
mod node_shard;
mod nodes;
mod pods_by_group;
mod queues;
mod signature;
mod storage;
mod superseded_pods;
mod taint_index;
mod task_columns;
mod task_row;
mod tasks;
mod workload_selectors;

pub use build::{
    GROUP_NAME_ANNOTATION, PREEMPTABLE_KEY, SnapshotBuilder, TASK_PRIORITY_KEY, TASK_SPEC_KEY,
    parse_go_bool, pod_request,
};
pub use derived::Derived;
pub use hyper_nodes::HyperNodeTable;
pub use id_lists::IdLists;
pub use job_row::prepare_job_row;
pub use job_task_sums::JobTaskSums;
pub use jobs::{JobTable, NetworkTopology, PodGroupCounts, SubJobTable, TopologyMode};
pub use label_index::LabelIndex;
pub use namespaces::NamespaceTable;
pub use node_refresh::Refreshed;
pub use node_row::prepare_node_row;
pub use node_set::NodeSet;
pub use node_shard::{NodesInShard, ShardingMode};
pub use nodes::{Measured, NodeTable, NodeUsage};
pub use pods_by_group::{PodsByGroup, group_name};
pub use queues::QueueTable;
pub use signature::{SignatureId, TaskSignature};
pub use storage::StorageObjects;
pub use taint_index::TaintIndex;
pub use task_columns::Released;
pub use task_row::prepare_task_row;
pub use tasks::TaskTable;
pub use workload_selectors::WorkloadSelectors;

use std::sync::Arc;

use crate::model::{JobId, NodeId, Resource, TaskId};

/// One cycle's cluster, as tables.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub nodes: Arc<NodeTable>,
    /// Shared with the cache, which builds the next snapshot's rows of unchanged jobs from it.
    pub tasks: Arc<TaskTable>,
    pub jobs: Arc<JobTable>,
    pub sub_jobs: Arc<SubJobTable>,
    pub queues: QueueTable,
    pub hyper_nodes: HyperNodeTable,
    /// Node label index: node sets per `key=value` and per key.
    pub labels: Arc<LabelIndex>,
    /// Node taint index: bitmaps of nodes per taint and of nodes that repel pods.
    pub taints: Arc<TaintIndex>,
    /// Namespaces, for their labels.
    pub namespaces: Arc<NamespaceTable>,
    /// PodDisruptionBudgets, for victim filtering.
    pub pdbs: Vec<std::sync::Arc<crate::api::PodDisruptionBudget>>,
    /// ResourceQuotas, for the `resourcequota` plugin's admission check.
    pub resource_quotas: Vec<std::sync::Arc<crate::api::ResourceQuota>>,
    /// Nodes' CPU and NUMA topologies, for the `numa-aware` plugin.
    pub numatopologies: Vec<std::sync::Arc<crate::api::Numatopology>>,
    /// Per node name, NUMA sets (CPU ids by resource name) still held by pods bound with sets
    /// the scheduler chose that the node's Numatopology does not report yet.
    pub numa_held: std::collections::BTreeMap<String, crate::api::NumaSets>,
    /// Claims, volumes, storage classes and CSI objects, for the volume filters.
    pub storage: Arc<StorageObjects>,
    /// The Services' and workloads' selectors, for default topology spreading.
    pub workload_selectors: Arc<WorkloadSelectors>,
    /// Values derived from this snapshot and shared within the cycle.
    pub derived: Derived,
    /// Σ allocatable over the nodes (`ssn.TotalResource`).
    pub total: Resource,
    /// This snapshot among all built in the process (from 1; 0: not built by a builder).
    pub serial: u64,
    /// The nodes whose state may differ from an earlier snapshot's, when the cache that built
    /// both knows (`None`: any node may have changed).
    pub changed_since: Option<ChangedNodes>,
    /// The nodes this scheduler's NodeShard lets it use, under hard or soft sharding; `None`
    /// without sharding (every node is the scheduler's).
    pub shard: Option<Arc<NodesInShard>>,
}

/// The nodes that may differ between snapshot `since` and this one: their objects, metrics or
/// the pods on them. Every other node has the same id, row and pods (the same versions) in
/// both, and no node's images changed (image locality scores a node by the images of all).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangedNodes {
    pub since: u64,
    /// Sorted, without repeats.
    pub nodes: Vec<NodeId>,
}

/// The node side of a snapshot: the node rows, the indexes over them and their total. It depends
/// on node objects only, so a cache whose nodes did not change since the last snapshot hands it
/// to the next one instead of building it again.
#[derive(Debug, Clone, Default)]
pub struct NodeTables {
    pub nodes: Arc<NodeTable>,
    pub labels: Arc<LabelIndex>,
    pub taints: Arc<TaintIndex>,
    pub total: Resource,
}

/// The job and task tables of a snapshot and the node table its task rows refer to: what the
/// next snapshot reuses for jobs whose pods did not change (`SnapshotBuilder::earlier_tasks`).
#[derive(Debug, Clone, Default)]
pub struct TaskTables {
    pub nodes: Arc<NodeTable>,
    pub jobs: Arc<JobTable>,
    pub tasks: Arc<TaskTable>,
    pub sub_jobs: Arc<SubJobTable>,
}

impl Snapshot {
    /// This snapshot's job and task side, shared.
    pub fn task_tables(&self) -> TaskTables {
        TaskTables {
            nodes: self.nodes.clone(),
            jobs: self.jobs.clone(),
            tasks: self.tasks.clone(),
            sub_jobs: self.sub_jobs.clone(),
        }
    }

    /// This snapshot's node side, shared.
    pub fn node_tables(&self) -> NodeTables {
        NodeTables {
            nodes: self.nodes.clone(),
            labels: self.labels.clone(),
            taints: self.taints.clone(),
            total: self.total.clone(),
        }
    }

    /// Two jobs in the order a snapshot that numbers them in order gives them: by UID. Where
    /// Volcano walks its job map, in no order, tephra walks the jobs in this one, whatever ids
    /// they have.
    pub fn job_walk_order(&self, l: JobId, r: JobId) -> std::cmp::Ordering {
        self.jobs.uid[l.idx()].cmp(&self.jobs.uid[r.idx()])
    }

    /// Two tasks in the order a snapshot that numbers them in order gives them: by their jobs'
    /// UIDs (tasks of no session job last), then in task order (`TaskTable::order_within_job`).
    /// Where Volcano walks its job and task maps, in no order, tephra walks them in this one,
    /// whatever ids the tasks have.
    pub fn task_walk_order(&self, l: TaskId, r: TaskId) -> std::cmp::Ordering {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match (self.tasks.job[l.idx()], self.tasks.job[r.idx()]) {
            (Some(a), Some(b)) => self.job_walk_order(a, b),
            (Some(_), None) => Less,
            (None, Some(_)) => Greater,
            (None, None) => Equal,
        }
        .then_with(|| self.tasks.order_within_job(l, r))
    }

    /// A task by `namespace/name`.
    pub fn task_id(&self, key: &str) -> Option<TaskId> {
        (0..self.tasks.len())
            .map(|i| TaskId(i as u32))
            .find(|&t| self.tasks.key(t) == key)
    }

    /// A job by UID (`namespace/name` of its PodGroup).
    pub fn job_id(&self, uid: &str) -> Option<JobId> {
        self.jobs
            .uid
            .iter()
            .position(|u| &**u == uid)
            .map(|i| JobId(i as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Pod, PodGroup, Queue};

    /// Three jobs of three pods and a pod of no job, built with ids in order, or shuffled.
    fn built(shuffle: Option<u64>) -> Snapshot {
        let mut b = SnapshotBuilder::new("q");
        let mut queue = Queue::default();
        queue.metadata.name = "q".into();
        b.queue(Arc::new(queue));
        for job in ["a", "b", "c"] {
            let mut pg = PodGroup::default();
            pg.metadata.name = job.into();
            pg.metadata.namespace = "ns".into();
            pg.spec.queue = "q".into();
            b.pod_group(Arc::new(pg));
        }
        for (name, group) in [
            ("a-2", "a"),
            ("c-1", "c"),
            ("b-1", "b"),
            ("a-1", "a"),
            ("loose", ""),
            ("c-2", "c"),
            ("b-2", "b"),
            ("a-3", "a"),
            ("c-3", "c"),
            ("b-3", "b"),
        ] {
            let mut pod = Pod::default();
            pod.metadata.name = name.into();
            pod.metadata.namespace = "ns".into();
            pod.metadata.uid = format!("uid-{name}");
            if !group.is_empty() {
                pod.metadata
                    .annotations
                    .insert(GROUP_NAME_ANNOTATION.into(), group.into());
            }
            b.pod(Arc::new(pod));
        }
        if let Some(seed) = shuffle {
            b.ids_shuffled(seed);
        }
        b.build()
    }

    /// The task names, tasks sorted by `task_walk_order`.
    fn walked(s: &Snapshot) -> Vec<&str> {
        let mut tasks: Vec<TaskId> = (0..s.tasks.len() as u32).map(TaskId).collect();
        tasks.sort_by(|&l, &r| s.task_walk_order(l, r));
        tasks.iter().map(|t| &*s.tasks.name[t.idx()]).collect()
    }

    #[test]
    fn the_walk_order_is_the_id_order_of_a_snapshot_numbered_in_order_whatever_the_ids() {
        let in_order = built(None);
        let by_id: Vec<&str> = in_order.tasks.name.iter().map(|n| &**n).collect();
        let expected = [
            "a-1", "a-2", "a-3", "b-1", "b-2", "b-3", "c-1", "c-2", "c-3", "loose",
        ];
        assert_eq!(by_id, expected);
        assert_eq!(walked(&in_order), expected);
        let shuffled = (0..64)
            .map(|seed| built(Some(seed)))
            .find(|s| s.jobs.uid != in_order.jobs.uid)
            .expect("some seed numbers the jobs otherwise");
        let by_id: Vec<&str> = shuffled.tasks.name.iter().map(|n| &**n).collect();
        assert_ne!(by_id, expected);
        assert_eq!(walked(&shuffled), expected);
        let mut jobs: Vec<JobId> = shuffled.jobs.ids().collect();
        jobs.sort_by(|&l, &r| shuffled.job_walk_order(l, r));
        let uids: Vec<&str> = jobs.iter().map(|j| &*shuffled.jobs.uid[j.idx()]).collect();
        assert_eq!(uids, ["ns/a", "ns/b", "ns/c"]);
    }
}
