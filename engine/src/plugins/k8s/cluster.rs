//! The kube-scheduler view of the cluster inside a session (Volcano's `ssn.NodeMap` wrapped in a
//! plugin's snapshot): which pods each node holds, and the node lists kube precomputes.
//!
//! At session open every node holds the pods of all tasks accounted on it (any status, Releasing
//! and Pipelined included). Volcano keeps that map current only through the `predicates` event
//! handlers: allocate, pipeline and un-evict add the pod, evict, un-pipeline and un-allocate
//! remove it (so an evicted task leaves the view while it still occupies the node). A view built
//! with `live: false` ignores events and keeps the session-open pods, as nodeorder sees them when
//! predicates is not configured. The lists of nodes holding pods with (anti-)affinity are computed
//! once, at open, in both cases.

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;

use super::pod_info::PodInfo;
use super::requests::PodResource;
use crate::api::Pod;
use crate::framework::SessionState;
use crate::model::{NodeId, TaskId};

/// Every task's parsed pod, gathered once per snapshot and shared by the kube plugins; each
/// pod is parsed once per version of it (kept in the pod's memo across snapshots).
#[derive(Debug, Default)]
pub struct PodInfos(Vec<Arc<PodInfo>>);

impl std::ops::Deref for PodInfos {
    type Target = [Arc<PodInfo>];
    fn deref(&self) -> &[Arc<PodInfo>] {
        &self.0
    }
}

/// One plugin's copy of the kube node map (empty until the session opens). Per-node entries are
/// shared with the other views of the session until this view changes them.
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    infos: Arc<PodInfos>,
    pods: Vec<Arc<Vec<TaskId>>>,
    /// Σ requests of each node's pods, kept in step with `pods` (scorers read it per node and
    /// per task, so it must not be recomputed from the pods each time).
    requested: Vec<Arc<NodeRequested>>,
    placed: Vec<Option<NodeId>>,
    with_affinity: Arc<Vec<NodeId>>,
    with_required_anti_affinity: Arc<Vec<NodeId>>,
    live: bool,
}

/// The node map at session open, computed once per snapshot: every view of the snapshot starts
/// from it (predicates and nodeorder each keep one).
#[derive(Debug)]
struct OpenMap(ClusterView);

impl ClusterView {
    /// The view at session open; `live` makes it follow allocate/deallocate events.
    pub fn open(ssn: &SessionState, live: bool) -> ClusterView {
        // The shared map is the session-open one; a view opened after a node changed is built
        // from the session as it is.
        let mut view = if ssn.node_changes.is_empty() {
            ssn.snap
                .derived
                .get_or_init(|| OpenMap(ClusterView::build(ssn)))
                .0
                .clone()
        } else {
            ClusterView::build(ssn)
        };
        view.live = live;
        view
    }

    fn build(ssn: &SessionState) -> ClusterView {
        let infos = ssn.snap.derived.get_or_init(|| {
            PodInfos(
                ssn.snap
                    .tasks
                    .pod
                    .par_iter()
                    .map(|p| p.memo.get_or_init(|| PodInfo::new(p)))
                    .collect(),
            )
        });
        let pods = &ssn.node_tasks;
        let mut placed = vec![None; infos.len()];
        for (n, tasks) in pods.iter().enumerate() {
            for t in tasks {
                placed[t.idx()] = Some(NodeId(n as u32));
            }
        }
        // Per node: Σ requests, and whether some pod has (anti-)affinity / required
        // anti-affinity, in one parallel pass over each node's pods.
        let per_node: Vec<(Arc<NodeRequested>, bool, bool)> = pods
            .par_iter()
            .map(|ts| {
                let mut r = NodeRequested::default();
                let (mut affinity, mut required_anti) = (false, false);
                for t in ts {
                    let info = &infos[t.idx()];
                    r.add(&info.resource, 1);
                    affinity |= info.has_pod_affinity;
                    required_anti |= !info.required_anti_affinity.is_empty();
                }
                (Arc::new(r), affinity, required_anti)
            })
            .collect();
        let nodes_where = |f: fn(&(Arc<NodeRequested>, bool, bool)) -> bool| -> Vec<NodeId> {
            (0..per_node.len())
                .filter(|&n| f(&per_node[n]))
                .map(|n| NodeId(n as u32))
                .collect()
        };
        let with_affinity = nodes_where(|p| p.1);
        let with_required_anti_affinity = nodes_where(|p| p.2);
        let requested = per_node.into_iter().map(|p| p.0).collect();
        ClusterView {
            pods: pods.par_iter().map(|ts| Arc::new(ts.clone())).collect(),
            infos,
            requested,
            placed,
            with_affinity: Arc::new(with_affinity),
            with_required_anti_affinity: Arc::new(with_required_anti_affinity),
            live: false,
        }
    }

    /// Allocate/pipeline/un-evict handler: the task's pod joins its node.
    pub fn on_allocate(&mut self, ssn: &SessionState, t: TaskId) {
        let Some(n) = ssn.task_node[t.idx()] else {
            return;
        };
        if !self.live || self.placed[t.idx()].is_some() {
            return;
        }
        Arc::make_mut(&mut self.pods[n.idx()]).push(t);
        Arc::make_mut(&mut self.requested[n.idx()]).add(&self.infos[t.idx()].resource, 1);
        self.placed[t.idx()] = Some(n);
    }

    /// Evict/un-pipeline/un-allocate handler: the task's pod leaves its node.
    pub fn on_deallocate(&mut self, t: TaskId) {
        if !self.live {
            return;
        }
        let Some(n) = self.placed[t.idx()].take() else {
            return;
        };
        Arc::make_mut(&mut self.pods[n.idx()]).retain(|&x| x != t);
        Arc::make_mut(&mut self.requested[n.idx()]).add(&self.infos[t.idx()].resource, -1);
    }

    /// The pods (tasks) on a node.
    pub fn pods(&self, n: NodeId) -> &[TaskId] {
        &self.pods[n.idx()]
    }

    /// A task's parsed pod.
    pub fn info(&self, t: TaskId) -> &PodInfo {
        &self.infos[t.idx()]
    }

    /// Nodes that held a pod with pod (anti-)affinity at session open (`HavePodsWithAffinityList`).
    pub fn nodes_with_affinity(&self) -> &[NodeId] {
        &self.with_affinity
    }

    /// Nodes that held a pod with required anti-affinity at session open.
    pub fn nodes_with_required_anti_affinity(&self) -> &[NodeId] {
        &self.with_required_anti_affinity
    }
}

/// A node's summed requests, as `NodeInfo.Requested` / `NonZeroRequested`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeRequested {
    /// Real requests by resource name: a short list (a node's pods ask for two or three
    /// resources), cheaper to build for 50k nodes each session than a map.
    requested: Vec<(&'static str, i64)>,
    pub non0_cpu: i64,
    pub non0_mem: i64,
}

impl NodeRequested {
    /// Adds (`sign = 1`) or removes (`sign = -1`) one pod's requests.
    fn add(&mut self, r: &PodResource, sign: i64) {
        for &(k, v) in r.requested.iter() {
            match self.requested.iter_mut().find(|(name, _)| *name == k) {
                Some((_, sum)) => *sum += sign * v,
                None => self.requested.push((k, sign * v)),
            }
        }
        self.non0_cpu += sign * r.non0_cpu;
        self.non0_mem += sign * r.non0_mem;
    }

    /// The real request of `name` (0 when absent).
    pub fn get(&self, name: &str) -> i64 {
        self.requested
            .iter()
            .find(|(k, _)| *k == name)
            .map_or(0, |&(_, v)| v)
    }
}

/// The session and one view, with the lookups the kube algorithms need.
#[derive(Clone, Copy)]
pub struct Cluster<'a> {
    pub ssn: &'a SessionState,
    pub view: &'a ClusterView,
}

impl<'a> Cluster<'a> {
    /// Binds a view to the session.
    pub fn new(ssn: &'a SessionState, view: &'a ClusterView) -> Self {
        Cluster { ssn, view }
    }

    /// Every node of the snapshot (`NodeInfos().List()`).
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + use<> {
        self.ssn.snap.nodes.ids()
    }

    /// A node's labels.
    pub fn labels(&self, n: NodeId) -> &'a BTreeMap<String, String> {
        &self.ssn.snap.nodes.labels[n.idx()]
    }

    /// A node's name.
    pub fn name(&self, n: NodeId) -> &'a str {
        &self.ssn.snap.nodes.name[n.idx()]
    }

    /// A task's pod object.
    pub fn pod(&self, t: TaskId) -> &'a Pod {
        &self.ssn.snap.tasks.pod[t.idx()]
    }

    /// A task's parsed pod.
    pub fn info(&self, t: TaskId) -> &'a PodInfo {
        self.view.info(t)
    }

    /// The tasks whose pods are on a node.
    pub fn pods_on(&self, n: NodeId) -> &'a [TaskId] {
        self.view.pods(n)
    }

    /// Σ requests of the pods on a node.
    pub fn requested(&self, n: NodeId) -> &'a NodeRequested {
        &self.view.requested[n.idx()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Statement;
    use crate::plugins::testing::{JOB, conf, node, node_id, pod, running_pod, session, task};

    fn objects() -> String {
        let anti = "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {a: b}}, topologyKey: zone}]}}";
        [
            JOB.to_string(),
            node("n1", "", "pods: '10'"),
            node("n2", "", "pods: '10'"),
            running_pod("anti", "n1", "", anti),
            pod(
                "p",
                "",
                "containers: [{resources: {requests: {cpu: 250m}}}]",
            ),
        ]
        .concat()
    }

    #[test]
    fn a_live_view_follows_allocations_and_a_frozen_one_does_not() {
        let mut ssn = session(&conf("nodeorder", ""), &objects());
        let (p, n2) = (task(&ssn, "ns/p"), node_id(&ssn, "n2"));
        let mut live = ClusterView::open(&ssn.state, true);
        let mut frozen = ClusterView::open(&ssn.state, false);
        Statement::new().allocate(&mut ssn, p, n2).unwrap();
        live.on_allocate(&ssn.state, p);
        frozen.on_allocate(&ssn.state, p);
        assert_eq!(live.pods(n2), &[p]);
        assert!(frozen.pods(n2).is_empty());
        assert_eq!(
            Cluster::new(&ssn.state, &live).requested(n2).get("cpu"),
            250
        );
        live.on_deallocate(p);
        assert!(live.pods(n2).is_empty());
    }

    #[test]
    fn affinity_node_lists_are_taken_at_open() {
        let ssn = session(&conf("nodeorder", ""), &objects());
        let view = ClusterView::open(&ssn.state, true);
        assert_eq!(view.nodes_with_affinity(), &[node_id(&ssn, "n1")]);
        assert_eq!(
            view.nodes_with_required_anti_affinity(),
            &[node_id(&ssn, "n1")]
        );
    }
}
