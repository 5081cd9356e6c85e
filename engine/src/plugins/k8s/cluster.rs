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

use super::pod_info::PodInfo;
use super::requests::{Amounts, PodResource};
use crate::api::Pod;
use crate::framework::SessionState;
use crate::model::{NodeId, TaskId};

/// One plugin's copy of the kube node map (empty until the session opens).
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    infos: Vec<PodInfo>,
    pods: Vec<Vec<TaskId>>,
    /// Σ requests of each node's pods, kept with `pods`: scoring reads it for every node and
    /// task, and summing the pods each time made scoring O(pods on the node).
    requested: Vec<NodeRequested>,
    placed: Vec<Option<NodeId>>,
    with_affinity: Vec<NodeId>,
    with_required_anti_affinity: Vec<NodeId>,
    live: bool,
}

impl ClusterView {
    /// The view at session open; `live` makes it follow allocate/deallocate events.
    pub fn open(ssn: &SessionState, live: bool) -> ClusterView {
        let infos: Vec<PodInfo> = ssn.snap.tasks.pod.iter().map(|p| PodInfo::new(p)).collect();
        let pods = ssn.node_tasks.clone();
        let mut placed = vec![None; infos.len()];
        for (n, tasks) in pods.iter().enumerate() {
            for t in tasks {
                placed[t.idx()] = Some(NodeId(n as u32));
            }
        }
        let nodes_where = |f: &dyn Fn(&PodInfo) -> bool| -> Vec<NodeId> {
            (0..pods.len())
                .filter(|&n| pods[n].iter().any(|t| f(&infos[t.idx()])))
                .map(|n| NodeId(n as u32))
                .collect()
        };
        let requested = pods
            .iter()
            .map(|tasks| {
                let mut sum = NodeRequested::default();
                for t in tasks {
                    sum.add(&infos[t.idx()].resource);
                }
                sum
            })
            .collect();
        let with_affinity = nodes_where(&|i| i.has_pod_affinity);
        let with_required_anti_affinity = nodes_where(&|i| !i.required_anti_affinity.is_empty());
        ClusterView {
            infos,
            pods,
            requested,
            placed,
            with_affinity,
            with_required_anti_affinity,
            live,
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
        self.pods[n.idx()].push(t);
        self.requested[n.idx()].add(&self.infos[t.idx()].resource);
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
        self.pods[n.idx()].retain(|&x| x != t);
        self.requested[n.idx()].sub(&self.infos[t.idx()].resource);
    }

    /// The pods (tasks) on a node.
    pub fn pods(&self, n: NodeId) -> &[TaskId] {
        &self.pods[n.idx()]
    }

    /// A task's parsed pod.
    pub fn info(&self, t: TaskId) -> &PodInfo {
        &self.infos[t.idx()]
    }

    /// Σ requests of the pods on a node.
    pub fn requested(&self, n: NodeId) -> &NodeRequested {
        &self.requested[n.idx()]
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
    pub requested: Amounts,
    pub non0_cpu: i64,
    pub non0_mem: i64,
}

impl NodeRequested {
    /// The real request of `name` (0 when absent).
    pub fn get(&self, name: &str) -> i64 {
        self.requested.get(name).copied().unwrap_or(0)
    }

    /// Counts a pod on the node. Integer sums, so adding and removing in any order gives what
    /// summing the pods would.
    fn add(&mut self, pod: &PodResource) {
        for (k, v) in &pod.requested {
            match self.requested.get_mut(k) {
                Some(sum) => *sum += v,
                None => {
                    self.requested.insert(k.clone(), *v);
                }
            }
        }
        self.non0_cpu += pod.non0_cpu;
        self.non0_mem += pod.non0_mem;
    }

    /// Stops counting a pod on the node (a name whose sum returns to 0 reads as absent).
    fn sub(&mut self, pod: &PodResource) {
        for (k, v) in &pod.requested {
            if let Some(sum) = self.requested.get_mut(k) {
                *sum -= v;
            }
        }
        self.non0_cpu -= pod.non0_cpu;
        self.non0_mem -= pod.non0_mem;
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

    /// Σ requests of the pods on a node (`NodeInfo.Requested`).
    pub fn requested(&self, n: NodeId) -> &'a NodeRequested {
        self.view.requested(n)
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
        assert_eq!(
            live.requested(n2),
            ClusterView::open(&ssn.state, false).requested(n2),
            "kept sums equal the pods' sum at a fresh open"
        );
        assert_eq!(frozen.requested(n2).get("cpu"), 0);
        live.on_deallocate(p);
        assert!(live.pods(n2).is_empty());
        assert_eq!(live.requested(n2).get("cpu"), 0);
        assert_eq!(live.requested(n2).non0_cpu, 0);
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
