//! Building a `Snapshot` from cluster objects: Volcano's `TaskInfo`, `JobInfo`, `NodeInfo`,
//! `QueueInfo` and hyper-node derivations (Volcano: pkg/scheduler/api/queue_info.go and hyper_node_info.go), done once per object per cycle.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use fixedbitset::FixedBitSet;
use foldhash::fast::FixedState;
use rayon::prelude::*;

use super::hyper_nodes::CLUSTER_TOP;
use super::job_columns::{JobSource, job_columns, sort_by_uid};
use super::job_row::JobRow;
use super::job_task_sums::job_task_sums;
use super::jobs::{NetworkTopology, TopologyMode};
use super::namespaces::NamespaceTable;
use super::node_row::NodeRow;
use super::pods_by_group::task_order;
use super::task_columns::{
    Earlier, Released, Reuse, Source, earlier_reuse, job_sources, task_columns,
};
use super::task_row::TaskRow;
use super::{
    ChangedNodes, IdLists, JobTable, LabelIndex, NodeTable, NodeTables, NodeUsage, PodsByGroup,
    QueueTable, Snapshot, StorageObjects, SubJobTable, TaintIndex, TaskTable, TaskTables,
    WorkloadSelectors,
};
use crate::api::{
    ClusterObject, HyperNode, LabelSelector, Namespace, NetworkTopologySpec, Node, NodeMetrics,
    NumaSets, Numatopology, Pod, PodDisruptionBudget, PodGroup, PriorityClass, Queue, ResourceList,
    ResourceQuota, StringMap,
};
use crate::model::{Dim, HyperNodeId, JobId, NodeId, QueueId, Resource, SubJobId, TaskId};
use crate::selector::Selector;

/// Annotation naming a pod's PodGroup.
pub const GROUP_NAME_ANNOTATION: &str = "scheduling.k8s.io/group-name";
/// Annotation or label naming a pod's task role.
pub const TASK_SPEC_KEY: &str = "volcano.sh/task-spec";
/// Annotation or label marking a pod or PodGroup preemptable.
pub const PREEMPTABLE_KEY: &str = "volcano.sh/preemptable";
/// Annotation overriding a task's priority.
pub const TASK_PRIORITY_KEY: &str = "volcano.sh/task-priority";

/// Collects objects, then builds the tables. Nodes, pods and PodGroups may be lent rather than
/// given (`*_ref`): a cache that keeps them anyway then hands over hundreds of thousands of
/// objects per cycle without touching their reference counts.
#[derive(Debug, Default)]
pub struct SnapshotBuilder<'a> {
    nodes: Vec<Cow<'a, Arc<Node>>>,
    pods: Vec<Cow<'a, Arc<Pod>>>,
    /// Pods already grouped, as a cache keeps them.
    pods_by_group: Option<&'a PodsByGroup>,
    pod_groups: Vec<Cow<'a, Arc<PodGroup>>>,
    queues: Vec<Arc<Queue>>,
    priority_classes: Vec<Arc<PriorityClass>>,
    hyper_nodes: Vec<Arc<HyperNode>>,
    pdbs: Vec<Arc<PodDisruptionBudget>>,
    resource_quotas: Vec<Arc<ResourceQuota>>,
    numatopologies: Vec<Arc<Numatopology>>,
    numa_held: BTreeMap<String, NumaSets>,
    node_metrics: Vec<Arc<NodeMetrics>>,
    namespaces: NamespaceTable,
    storage: Arc<StorageObjects>,
    workload_selectors: Arc<WorkloadSelectors>,
    /// Node tables of an earlier snapshot, used instead of the node objects when set.
    node_tables: Option<NodeTables>,
    /// Job and task tables of an earlier snapshot, whose rows of unchanged jobs are reused;
    /// taken by `build`, which moves the rows out when nothing else holds the tables.
    earlier_tasks: Mutex<Option<TaskTables>>,
    /// `earlier_tasks` were built from the very objects given to this builder.
    unchanged_since_earlier: bool,
    /// What the build let go of from the earlier tables, for the caller to free.
    released: Mutex<Released>,
    default_queue: String,
    /// `nodes_changed_since`: an earlier snapshot and the names of the nodes changed since.
    changed_since: Option<(u64, Vec<String>)>,
    /// `ids_shuffled`: job and task ids follow an order drawn from this seed.
    id_seed: Option<u64>,
}

/// The last serial handed to a snapshot; serials are unique in the process, so a snapshot
/// cannot be mistaken for another cache's.
static LAST_SERIAL: AtomicU64 = AtomicU64::new(0);

/// True when `sel` parses and matches `labels` (a selector that does not parse selects nothing).
fn selects(sel: Option<&LabelSelector>, labels: &StringMap) -> bool {
    Selector::from_label_selector(sel).is_ok_and(|s| s.matches(labels))
}

/// Go's `strconv.ParseBool`.
pub fn parse_go_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Volcano's pod request: containers, init-container peak (with sidecars), overhead, `pods: 1`.
pub fn pod_request(pod: &Pod) -> Resource {
    let mut base = Resource::empty();
    for c in &pod.spec.containers {
        base.add(&Resource::from_list(&c.resources.requests));
    }
    let mut sidecars = Resource::empty();
    let mut init_peak = Resource::empty();
    for ic in &pod.spec.init_containers {
        let req = Resource::from_list(&ic.resources.requests);
        let candidate = if ic.restart_policy.as_deref() == Some("Always") {
            base.add(&req);
            sidecars.add(&req);
            sidecars.clone()
        } else {
            req.plus(&sidecars)
        };
        init_peak.set_max(&candidate);
    }
    base.set_max(&init_peak);
    base.add(&Resource::from_list(&pod.spec.overhead));
    base.add_scalar(Dim::PODS, 1.0);
    base
}

pub(super) fn topology_of(spec: &Option<NetworkTopologySpec>) -> Option<NetworkTopology> {
    let s = spec.as_ref()?;
    let mode = match s.mode.as_str() {
        "hard" => TopologyMode::Hard,
        _ => TopologyMode::Soft,
    };
    Some(NetworkTopology {
        mode,
        highest_tier_allowed: s.highest_tier_allowed,
        highest_tier_name: s.highest_tier_name.clone(),
    })
}

fn resource_opt(list: &ResourceList) -> Option<Resource> {
    if list.is_empty() {
        None
    } else {
        Some(Resource::from_list(list))
    }
}

impl<'a> SnapshotBuilder<'a> {
    /// A builder whose PodGroups without a queue go to `default_queue`.
    pub fn new(default_queue: &str) -> Self {
        SnapshotBuilder {
            default_queue: default_queue.to_string(),
            ..Default::default()
        }
    }

    pub fn node(&mut self, n: Arc<Node>) -> &mut Self {
        self.nodes.push(Cow::Owned(n));
        self
    }
    pub fn node_ref(&mut self, n: &'a Arc<Node>) -> &mut Self {
        self.nodes.push(Cow::Borrowed(n));
        self
    }
    pub fn pod(&mut self, p: Arc<Pod>) -> &mut Self {
        self.pods.push(Cow::Owned(p));
        self
    }
    pub fn pod_ref(&mut self, p: &'a Arc<Pod>) -> &mut Self {
        self.pods.push(Cow::Borrowed(p));
        self
    }
    /// Lends pods already grouped and in task order, so the snapshot neither groups nor sorts
    /// them; pods given one by one are added to them.
    pub fn pods_by_group(&mut self, pods: &'a PodsByGroup) -> &mut Self {
        self.pods_by_group = Some(pods);
        self
    }
    pub fn pod_group(&mut self, pg: Arc<PodGroup>) -> &mut Self {
        self.pod_groups.push(Cow::Owned(pg));
        self
    }
    pub fn pod_group_ref(&mut self, pg: &'a Arc<PodGroup>) -> &mut Self {
        self.pod_groups.push(Cow::Borrowed(pg));
        self
    }
    pub fn queue(&mut self, q: Arc<Queue>) -> &mut Self {
        self.queues.push(q);
        self
    }
    pub fn priority_class(&mut self, pc: Arc<PriorityClass>) -> &mut Self {
        self.priority_classes.push(pc);
        self
    }
    pub fn hyper_node(&mut self, hn: Arc<HyperNode>) -> &mut Self {
        self.hyper_nodes.push(hn);
        self
    }
    pub fn pdb(&mut self, pdb: Arc<PodDisruptionBudget>) -> &mut Self {
        self.pdbs.push(pdb);
        self
    }
    pub fn resource_quota(&mut self, quota: Arc<ResourceQuota>) -> &mut Self {
        self.resource_quotas.push(quota);
        self
    }
    pub fn numatopology(&mut self, n: Arc<Numatopology>) -> &mut Self {
        self.numatopologies.push(n);
        self
    }
    /// NUMA sets held on `node` by pods its Numatopology does not report yet.
    pub fn numa_held(&mut self, node: &str, sets: NumaSets) -> &mut Self {
        self.numa_held.insert(node.to_string(), sets);
        self
    }
    pub fn node_metrics(&mut self, m: Arc<NodeMetrics>) -> &mut Self {
        self.node_metrics.push(m);
        self
    }
    pub fn namespace(&mut self, ns: &Arc<Namespace>) -> &mut Self {
        self.namespaces.insert(ns);
        self
    }
    /// The claims, volumes, classes and CSI objects, as one shared set.
    pub fn storage(&mut self, storage: Arc<StorageObjects>) -> &mut Self {
        self.storage = storage;
        self
    }
    /// Adds one storage object to the builder's own copy of the set; false when `object` is
    /// not a storage object.
    pub fn storage_object(&mut self, object: ClusterObject) -> bool {
        Arc::make_mut(&mut self.storage).upsert(object).is_ok()
    }
    /// The Services' and workloads' selectors, as one shared set.
    pub fn workload_selectors(&mut self, selectors: Arc<WorkloadSelectors>) -> &mut Self {
        self.workload_selectors = selectors;
        self
    }
    /// Adds one Service, ReplicationController, ReplicaSet or StatefulSet to the builder's own
    /// copy of the set; false when `object` is none of them.
    pub fn workload_object(&mut self, object: ClusterObject) -> bool {
        Arc::make_mut(&mut self.workload_selectors)
            .upsert(object)
            .is_ok()
    }
    /// Takes the node side from an earlier snapshot built from the same node and node-metrics
    /// objects; the node and node-metrics objects given to this builder are then not read.
    pub fn node_tables(&mut self, tables: NodeTables) -> &mut Self {
        self.node_tables = Some(tables);
        self
    }

    /// Gives the job and task tables of an earlier snapshot (from the same cache): a job whose
    /// pods are the very same versions as then gets its task rows from them instead of from the
    /// pods. The tables are reused in place when nothing else holds them any more.
    pub fn earlier_tasks(&mut self, tables: TaskTables) -> &mut Self {
        *self
            .earlier_tasks
            .get_mut()
            .unwrap_or_else(|p| p.into_inner()) = Some(tables);
        self
    }

    /// Gives the tables of the last snapshot of a cache in which nothing changed since: none of
    /// the objects given to this builder came, went or changed, and the default queue is the
    /// same. They are this snapshot's as they are, when the node ids are the same too (else
    /// they are `earlier_tasks`). A cycle on an unchanged cluster, as the first one after the
    /// warm-up usually is, then builds no row.
    pub fn unchanged_since(&mut self, tables: TaskTables) -> &mut Self {
        self.unchanged_since_earlier = true;
        self.earlier_tasks(tables)
    }

    /// Assigns job ids, and the ids of each job's tasks, in an order drawn from `seed` instead
    /// of UID and task order. Nothing Volcano decides may depend on how ids are assigned, as
    /// every order it uses compares UIDs, names or creation times; the checking mode's session
    /// from scratch takes shuffled ids so that a decision that does depend on them shows up.
    pub fn ids_shuffled(&mut self, seed: u64) -> &mut Self {
        self.id_seed = Some(seed);
        self
    }

    /// Says which nodes may differ from snapshot `since`, which the same cache built with the
    /// same node ids and node images (`Snapshot::changed_since`).
    pub fn nodes_changed_since(
        &mut self,
        since: u64,
        names: impl IntoIterator<Item = String>,
    ) -> &mut Self {
        self.changed_since = Some((since, names.into_iter().collect()));
        self
    }

    /// The earlier tables, when they were built from the same objects and node ids.
    fn unchanged_tables(&self, nodes: &Arc<NodeTable>) -> Option<TaskTables> {
        if !self.unchanged_since_earlier {
            return None;
        }
        let mut earlier = self.earlier_tasks.lock().unwrap_or_else(|p| p.into_inner());
        earlier.take_if(|t| Arc::ptr_eq(&t.nodes, nodes))
    }

    /// What the last `build` let go of from the earlier tables (often the last owner of pods
    /// replaced since): freeing it is work the cycle need not wait for.
    pub fn take_released(&self) -> Released {
        std::mem::take(&mut *self.released.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Builds the snapshot. Objects the scheduler would skip (a PodGroup whose queue does not
    /// exist, a pod on an unknown node) are left out of the tables, as Volcano does.
    pub fn build(&self) -> Snapshot {
        let tables = match &self.node_tables {
            Some(t) => t.clone(),
            None => self.build_node_tables(),
        };
        let mut snap = Snapshot {
            nodes: tables.nodes,
            labels: tables.labels,
            taints: tables.taints,
            total: tables.total,
            serial: LAST_SERIAL.fetch_add(1, Ordering::Relaxed) + 1,
            ..Default::default()
        };
        snap.changed_since = self.changed_since.as_ref().map(|(since, names)| {
            let mut nodes: Vec<NodeId> = names.iter().filter_map(|n| snap.nodes.id(n)).collect();
            nodes.sort_unstable();
            nodes.dedup();
            ChangedNodes {
                since: *since,
                nodes,
            }
        });
        snap.pdbs = self.pdbs.clone();
        snap.resource_quotas = self.resource_quotas.clone();
        snap.numatopologies = self.numatopologies.clone();
        snap.numa_held = self.numa_held.clone();
        snap.namespaces = Arc::new(self.namespaces.clone());
        snap.storage = self.storage.clone();
        snap.workload_selectors = self.workload_selectors.clone();
        self.build_queues(&mut snap.queues);
        match self.unchanged_tables(&snap.nodes) {
            Some(tables) => {
                snap.jobs = tables.jobs;
                snap.tasks = tables.tasks;
                snap.sub_jobs = tables.sub_jobs;
            }
            None => {
                let (mut jobs, mut tasks) = self.build_jobs_and_tasks(&snap.nodes, &snap.queues);
                snap.sub_jobs = Arc::new(build_sub_jobs(&mut jobs, &mut tasks));
                snap.jobs = Arc::new(jobs);
                snap.tasks = Arc::new(tasks);
            }
        }
        self.build_hyper_nodes(&mut snap);
        snap
    }

    fn build_node_tables(&self) -> NodeTables {
        let mut nodes = NodeTable::default();
        self.build_nodes(&mut nodes);
        let labels = LabelIndex::build(nodes.labels.iter(), nodes.len());
        let taints = TaintIndex::build(nodes.taints.iter(), nodes.len());
        let total = nodes.total_allocatable();
        NodeTables {
            nodes: Arc::new(nodes),
            labels: Arc::new(labels),
            taints: Arc::new(taints),
            total,
        }
    }

    fn build_nodes(&self, t: &mut NodeTable) {
        // A name given twice keeps its first place and object.
        let mut nodes: Vec<&Arc<Node>> = Vec::with_capacity(self.nodes.len());
        for n in self.nodes.iter().map(|n| &**n) {
            if !t.by_name.contains_key(&n.metadata.name) {
                t.by_name
                    .insert(n.metadata.name.clone(), NodeId(nodes.len() as u32));
                nodes.push(n);
            }
        }
        // Rows from the nodes' memos (derived for nodes that changed), columns in parallel.
        let rows: Vec<Arc<NodeRow>> = nodes.par_iter().map(|n| NodeRow::of(n)).collect();
        t.name = nodes.par_iter().map(|n| n.metadata.name.clone()).collect();
        t.labels = nodes
            .par_iter()
            .map(|n| n.metadata.labels.clone())
            .collect();
        t.taints = nodes.par_iter().map(|n| n.spec.taints.clone()).collect();
        t.unschedulable = nodes.par_iter().map(|n| n.spec.unschedulable).collect();
        t.allocatable = rows.par_iter().map(|r| r.allocatable.clone()).collect();
        t.capacity = rows.par_iter().map(|r| r.capacity.clone()).collect();
        t.images = rows.par_iter().map(|r| r.images.clone()).collect();
        t.annotations = rows.par_iter().map(|r| r.annotations.clone()).collect();
        t.usage = vec![None; t.name.len()];
        for m in &self.node_metrics {
            let Some(n) = t.id(&m.metadata.name) else {
                continue;
            };
            t.usage[n.idx()] = Some(NodeUsage::of(m, &t.allocatable[n.idx()]));
        }
    }

    fn build_queues(&self, t: &mut QueueTable) {
        let mut qs: Vec<&Arc<Queue>> = self.queues.iter().collect();
        qs.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        qs.dedup_by(|a, b| a.metadata.name == b.metadata.name);
        for q in qs {
            t.by_name
                .insert(q.metadata.name.clone(), QueueId(t.name.len() as u32));
            t.name.push(q.metadata.name.clone());
            t.weight.push(q.spec.weight);
            t.priority.push(q.spec.priority);
            t.capability.push(resource_opt(&q.spec.capability));
            t.deserved.push(resource_opt(&q.spec.deserved));
            t.guarantee.push(resource_opt(&q.spec.guarantee.resource));
            t.reclaimable.push(q.spec.reclaimable.unwrap_or(true));
            t.parent.push(q.spec.parent.clone());
            let state = if q.status.state.is_empty() {
                "Open".to_string()
            } else {
                q.status.state.clone()
            };
            t.open.push(state == "Open");
            t.state.push(state);
            t.created
                .push(q.metadata.creation_timestamp.unwrap_or_default());
            t.object.push(q.clone());
        }
    }

    fn build_jobs_and_tasks(
        &self,
        nodes: &Arc<NodeTable>,
        queues: &QueueTable,
    ) -> (JobTable, TaskTable) {
        // Looked up once per job (foldhash: the default SipHash was a twentieth of a contended
        // snapshot).
        let mut pc_value: HashMap<&str, i32, FixedState> = HashMap::default();
        let mut default_priority = 0;
        for pc in &self.priority_classes {
            pc_value.insert(pc.metadata.name.as_str(), pc.value);
            if pc.global_default {
                default_priority = pc.value;
            }
        }
        // Jobs: PodGroups whose queue exists, by UID; rows (from the PodGroups' memos), sort
        // and columns in parallel.
        let mut pgs: Vec<JobSource> = self
            .pod_groups
            .par_iter()
            .filter_map(|pg| {
                let pg: &Arc<PodGroup> = pg;
                let row = JobRow::lent(pg);
                let qname = if row.queue.is_empty() {
                    &self.default_queue
                } else {
                    &*row.queue
                };
                let q = queues.id(qname)?;
                Some((row.uid_prefix, row, pg, q))
            })
            .collect();
        sort_by_uid(&mut pgs);
        if let Some(seed) = self.id_seed {
            let hasher = FixedState::with_seed(seed);
            pgs.sort_by_cached_key(|(_, row, _, _)| hasher.hash_one(&*row.uid));
        }
        let priority_of = |pg: &PodGroup| {
            if pg.spec.priority_class_name.is_empty() {
                default_priority
            } else {
                pc_value
                    .get(pg.spec.priority_class_name.as_str())
                    .copied()
                    .unwrap_or(default_priority)
            }
        };
        let mut jobs = job_columns(&pgs, priority_of);
        let j = &mut jobs;
        // Tasks: by job, each job's pods in task order, then the pods of no session job. The
        // groups come sorted (from the cache's index, or grouped here from loose pods), so
        // placing them takes one lookup per group.
        let grouped;
        let index = match self.pods_by_group {
            Some(index) if self.pods.is_empty() => index,
            given => {
                let given = given.into_iter().flat_map(|i| i.groups().flat_map(|g| g.2));
                grouped = PodsByGroup::from_pods(given.chain(self.pods.iter().map(|p| &**p)));
                &grouped
            }
        };
        // Each job's pods: two lookups a job, on the pool, by the names as the UID prefix
        // beside the job holds them when they fit (the names' own bytes lie one allocation
        // each over the heap). Pods left over (naming no PodGroup, or one not in the session)
        // are the jobless ones, found only when there are some.
        let mut members: Vec<&[Arc<Pod>]> = pgs
            .par_iter()
            .zip(&j.namespace)
            .zip(&j.name)
            .map(|((job, namespace), name)| {
                let (namespace, name) = job
                    .0
                    .key_parts(namespace, name)
                    .unwrap_or((namespace, name));
                match name {
                    "" => &[][..],
                    name => index.members(namespace, name),
                }
            })
            .collect();
        // Shuffled ids: each job's task ids too.
        let shuffled: Vec<Vec<Arc<Pod>>>;
        if let Some(seed) = self.id_seed {
            let hasher = FixedState::with_seed(seed);
            shuffled = members
                .iter()
                .map(|pods| {
                    let mut pods = pods.to_vec();
                    pods.sort_by_cached_key(|p| hasher.hash_one(&p.metadata.uid));
                    pods
                })
                .collect();
            members = shuffled.iter().map(Vec::as_slice).collect();
        }
        let in_jobs: usize = members.iter().map(|m| m.len()).sum();
        let mut jobless: Vec<&Arc<Pod>> = Vec::new();
        if in_jobs < index.len() {
            let jobs: HashSet<(&str, &str), FixedState> = j
                .namespace
                .iter()
                .zip(&j.name)
                .map(|(namespace, name)| (&**namespace, &**name))
                .collect();
            for (namespace, group, pods) in index.groups() {
                if group.is_empty() || !jobs.contains(&(namespace, group)) {
                    jobless.extend(pods);
                }
            }
            jobless.par_sort_by(|a, b| task_order(a, b));
        }
        // Each task row comes from the earlier snapshot when its pod is the very same version
        // as then, else from its pod's memo (derived for pods that changed).
        let earlier = self
            .earlier_tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let reuse = match &earlier {
            Some(e) => earlier_reuse(e, &j.uid, &members),
            None => vec![Reuse::Nothing; members.len()],
        };
        let fresh = |p| Source::Fresh(p, TaskRow::lent(p));
        let rows = in_jobs + jobless.len();
        let sources: Vec<Source> = if reuse.iter().any(|r| !matches!(r, Reuse::Nothing)) {
            members
                .par_iter()
                .zip(&reuse)
                .flat_map_iter(|(&pods, reuse)| job_sources(pods, reuse))
                .chain(jobless.par_iter().map(|&p| fresh(p)))
                .collect()
        } else {
            // Every row fresh (a first snapshot): collected by index, with no pieces to join.
            let pods: Vec<&Arc<Pod>> = members.iter().copied().flatten().chain(jobless).collect();
            pods.par_iter().map(|&p| fresh(p)).collect()
        };
        // A job whose rows are an earlier job's, whole, has that job's task sums.
        let carried: Vec<Option<usize>> = reuse
            .iter()
            .map(|r| match *r {
                Reuse::Whole { job, .. } => Some(job),
                Reuse::Nothing | Reuse::Runs(_) => None,
            })
            .collect();
        let earlier_jobs = earlier.as_ref().map(|e| Arc::clone(&e.jobs));
        let released = &self.released;
        // The earlier task table is moved from when nothing else holds it, else copied from.
        let shared_tasks;
        let (earlier_tasks, node_ids) = match earlier {
            Some(e) => {
                // Node ids of the earlier snapshot, in this one (when the nodes changed).
                let node_ids: Option<Vec<Option<NodeId>>> = (!Arc::ptr_eq(&e.nodes, nodes))
                    .then(|| e.nodes.name.iter().map(|n| nodes.id(n)).collect());
                released
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(Box::new(e.jobs));
                let tasks = match Arc::try_unwrap(e.tasks) {
                    Ok(owned) => Earlier::Owned(Box::new(owned)),
                    Err(shared) => {
                        shared_tasks = shared;
                        Earlier::Shared(&shared_tasks)
                    }
                };
                (tasks, node_ids)
            }
            None => (Earlier::None, None),
        };
        let mut t = task_columns(
            &sources,
            nodes,
            earlier_tasks,
            node_ids.as_deref(),
            released,
        );
        // Job j's tasks are the rows from its first one on: the jobs' rows come first, in order.
        jobs.tasks = IdLists::from_lengths(
            members.iter().map(|m| m.len()),
            (0..in_jobs as u32).map(TaskId).collect(),
        );
        t.job = members
            .par_iter()
            .enumerate()
            .flat_map_iter(|(job, m)| std::iter::repeat_n(Some(JobId(job as u32)), m.len()))
            .chain(rayon::iter::repeat_n(None, rows - in_jobs))
            .collect();
        t.sub_job = vec![None; rows];
        jobs.task_sums = job_task_sums(&jobs, &t, &carried, earlier_jobs.as_deref());
        (jobs, t)
    }

    fn build_hyper_nodes(&self, snap: &mut Snapshot) {
        let nodes = &snap.nodes;
        let h = &mut snap.hyper_nodes;
        let mut hns: Vec<&Arc<HyperNode>> = self.hyper_nodes.iter().collect();
        hns.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        hns.dedup_by(|a, b| a.metadata.name == b.metadata.name);
        for hn in &hns {
            h.by_name
                .insert(hn.metadata.name.clone(), HyperNodeId(h.name.len() as u32));
            h.name.push(hn.metadata.name.clone());
            h.tier.push(hn.spec.tier);
            h.tier_name.push(hn.spec.tier_name.clone());
            h.parent.push(None);
            h.children.push(Vec::new());
            h.real_nodes.push(FixedBitSet::with_capacity(nodes.len()));
        }
        let mut direct: Vec<FixedBitSet> = vec![FixedBitSet::with_capacity(nodes.len()); hns.len()];
        for (i, hn) in hns.iter().enumerate() {
            for m in &hn.spec.members {
                let sel = &m.selector;
                if m.type_ == "HyperNode" {
                    if let Some(child) = sel
                        .exact_match
                        .as_ref()
                        .and_then(|e| h.by_name.get(&e.name).copied())
                        && h.parent[child.idx()].is_none()
                        && child.idx() != i
                    {
                        h.parent[child.idx()] = Some(HyperNodeId(i as u32));
                        h.children[i].push(child);
                    }
                    continue;
                }
                // Go's regexp.MatchString: an unanchored search; a bad pattern matches nothing.
                let regex = sel
                    .regex_match
                    .as_ref()
                    .and_then(|r| regex::Regex::new(&r.pattern).ok());
                // An empty label selector matches nothing here.
                let labels = sel
                    .label_match
                    .as_ref()
                    .filter(|l| !l.match_labels.is_empty() || !l.match_expressions.is_empty());
                for n in nodes.ids() {
                    let name = &nodes.name[n.idx()];
                    let hit = sel.exact_match.as_ref().is_some_and(|e| &e.name == name)
                        || regex.as_ref().is_some_and(|re| re.is_match(name))
                        || labels.is_some_and(|l| selects(Some(l), &nodes.labels[n.idx()]));
                    if hit {
                        direct[i].insert(n.idx());
                    }
                }
            }
        }
        // Virtual top: parent of every parentless hyper-node, holds all nodes.
        let max_tier = h.tier.iter().copied().max().unwrap_or(0);
        let top = HyperNodeId(h.name.len() as u32);
        h.by_name.insert(CLUSTER_TOP.to_string(), top);
        h.name.push(CLUSTER_TOP.to_string());
        h.tier.push(max_tier + 1);
        h.tier_name.push(String::new());
        h.parent.push(None);
        h.children.push(Vec::new());
        let mut all = FixedBitSet::with_capacity(nodes.len());
        all.insert_range(..);
        h.real_nodes.push(all);
        for i in 0..hns.len() {
            if h.parent[i].is_none() {
                h.parent[i] = Some(top);
                h.children[top.idx()].push(HyperNodeId(i as u32));
            }
        }
        // Real nodes: own members plus descendants', bottom-up by tier.
        let mut order: Vec<usize> = (0..hns.len()).collect();
        order.sort_by_key(|&i| h.tier[i]);
        for i in order {
            let mut set = direct[i].clone();
            for c in h.children[i].clone() {
                set.union_with(&h.real_nodes[c.idx()]);
            }
            h.real_nodes[i] = set;
        }
        h.real_node_list = h
            .real_nodes
            .iter()
            .map(|s| s.ones().map(|n| NodeId(n as u32)).collect())
            .collect();
        let mut tiers: Vec<i32> = h.tier.clone();
        tiers.sort();
        tiers.dedup();
        h.tiers = tiers;
        // Volcano only looks at hyper-nodes of the smallest tier overall.
        let min_tier = h.tiers[0];
        h.lowest_of_node = (0..nodes.len())
            .map(|n| {
                (0..h.name.len())
                    .find(|&hn| h.tier[hn] == min_tier && h.real_nodes[hn].contains(n))
                    .map(|hn| HyperNodeId(hn as u32))
            })
            .collect();
    }
}

/// The sub-jobs when no job has a policy (nearly always): one default sub-job per job with
/// tasks, in job order, built column by column on the pool. A job's default sub-job has the
/// job's UID as its own and as its group's, and every task of the job.
fn default_sub_jobs(jobs: &mut JobTable, tasks: &mut TaskTable) -> SubJobTable {
    let with_tasks: Vec<usize> = (0..jobs.len())
        .filter(|&j| !jobs.tasks[j].is_empty())
        .collect();
    let uid: Vec<Arc<str>> = with_tasks
        .par_iter()
        .map(|&j| jobs.uid[j].clone())
        .collect();
    let sub_jobs = SubJobTable {
        gid: uid.clone(),
        uid,
        job: with_tasks.iter().map(|&j| JobId(j as u32)).collect(),
        min_available: with_tasks.iter().map(|&j| jobs.min_available[j]).collect(),
        match_index: vec![0; with_tasks.len()],
        network_topology: with_tasks
            .par_iter()
            .map(|&j| jobs.network_topology[j].clone())
            .collect(),
        tasks: jobs.tasks.without_empty_rows(),
        is_default: vec![true; with_tasks.len()],
    };
    for (s, ts) in sub_jobs.tasks.iter().enumerate() {
        for t in ts {
            tasks.sub_job[t.idx()] = Some(SubJobId(s as u32));
        }
    }
    jobs.sub_jobs = IdLists::from_lengths(
        jobs.tasks.iter().map(|ts| usize::from(!ts.is_empty())),
        (0..with_tasks.len() as u32).map(SubJobId).collect(),
    );
    sub_jobs
}

/// A job's default sub-job: its UID is the job's, and so is its group id.
struct DefaultSubJob {
    uid: Arc<str>,
    topology: Option<NetworkTopology>,
    tasks: Vec<TaskId>,
}

/// Sub-jobs: a job's tasks split by its PodGroup's `subGroupPolicy` (or one default sub-job).
fn build_sub_jobs(jobs: &mut JobTable, tasks: &mut TaskTable) -> SubJobTable {
    if !jobs.has_sub_group_policy.iter().any(|&p| p) {
        return default_sub_jobs(jobs, tasks);
    }
    // Without a policy (nearly every job) every task goes to the default sub-job, none without
    // tasks; those rows are copied out on the pool, then numbered in job order.
    let defaults: Vec<Option<DefaultSubJob>> = (0..jobs.len())
        .into_par_iter()
        .map(|j| {
            let plain = !jobs.has_sub_group_policy[j] && !jobs.tasks[j].is_empty();
            plain.then(|| DefaultSubJob {
                uid: jobs.uid[j].clone(),
                topology: jobs.network_topology[j].clone(),
                tasks: jobs.tasks[j].to_vec(),
            })
        })
        .collect();
    let mut sub_jobs = SubJobTable::default();
    let s = &mut sub_jobs;
    // Each sub-job's tasks and each job's sub-jobs, gathered as they are found.
    let mut rows: Vec<Vec<TaskId>> = Vec::new();
    let mut of_job: Vec<Vec<SubJobId>> = vec![Vec::new(); jobs.len()];
    for (j, default) in defaults.into_iter().enumerate() {
        let job = JobId(j as u32);
        if !jobs.has_sub_group_policy[j] {
            if let Some(d) = default {
                let id = s.push(
                    d.uid.clone(),
                    job,
                    d.uid,
                    jobs.min_available[j],
                    0,
                    d.topology,
                    true,
                );
                for &t in &d.tasks {
                    tasks.sub_job[t.idx()] = Some(id);
                }
                rows.push(d.tasks);
                of_job[j].push(id);
            }
            continue;
        }
        let juid = jobs.uid[j].clone();
        let pg = jobs.podgroup[j].clone();
        let mut default: Option<SubJobId> = None;
        let mut by_uid: BTreeMap<String, SubJobId> = BTreeMap::new();
        for &t in &jobs.tasks[j] {
            let pod = &tasks.pod[t.idx()];
            let mut target = None;
            for policy in &pg.spec.sub_group_policy {
                if policy.match_label_keys.is_empty() {
                    continue;
                }
                if policy.label_selector.is_some()
                    && !selects(policy.label_selector.as_ref(), &pod.metadata.labels)
                {
                    continue;
                }
                let values: Option<Vec<&str>> = policy
                    .match_label_keys
                    .iter()
                    .map(|k| {
                        pod.metadata
                            .labels
                            .get(k)
                            .filter(|v| !v.is_empty())
                            .map(|v| v.as_str())
                    })
                    .collect();
                let Some(values) = values else { continue };
                let uid = format!("{juid}/{}-{}", policy.name, values.join("-"));
                target = Some(*by_uid.entry(uid.clone()).or_insert_with(|| {
                    rows.push(Vec::new());
                    s.push(
                        uid.into(),
                        job,
                        format!("{juid}/{}", policy.name).into(),
                        policy.sub_group_size.unwrap_or(1),
                        values.first().and_then(|v| v.parse().ok()).unwrap_or(0),
                        topology_of(&policy.network_topology),
                        false,
                    )
                }));
                break;
            }
            let target = target.unwrap_or_else(|| {
                *default.get_or_insert_with(|| {
                    rows.push(Vec::new());
                    s.push(
                        juid.clone(),
                        job,
                        juid.clone(),
                        // Beside policy groups, the default sub-job needs one task.
                        1,
                        0,
                        jobs.network_topology[j].clone(),
                        true,
                    )
                })
            });
            rows[target.idx()].push(t);
            tasks.sub_job[t.idx()] = Some(target);
        }
        of_job[j].extend(default);
        of_job[j].extend(by_uid.values().copied());
    }
    sub_jobs.tasks = IdLists::from_rows(&rows);
    jobs.sub_jobs = IdLists::from_rows(&of_job);
    sub_jobs
}
