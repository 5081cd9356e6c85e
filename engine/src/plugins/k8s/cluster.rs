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
//!
//! The session-open map is built once per snapshot (`Snapshot::derived`), and every plugin's view
//! (predicates and nodeorder each keep one) starts from it. Its per-node sums are taken from the
//! session before for the nodes not listed as changed since (`Snapshot::changed_since`), and left
//! in the carryover for the next. Parsed pods are read from the pods' memos when asked for; a
//! pending task's kube requests come from its signature's, without reading its pod. The per-node
//! pod lists (`NodePods`) and request sums (`RequestedByNode`) are shared by every view, each view
//! copying out only the nodes it changes (`NodeCopies`); a view keeps no per-task record of its
//! placements: the node's own list says whether a task is there.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use foldhash::fast::FixedState;
use rayon::prelude::*;

use super::node_copies::NodeCopies;
use super::node_pods::NodePods;
use super::pod_info::PodInfo;
use super::requests::{NamedAmounts, PodResource};
use crate::api::{Pod, StringMap};
use crate::framework::SessionState;
use crate::model::{NodeId, TaskId, TaskStatus};
use crate::snapshot::{SignatureId, TaskTable};

/// Every task's parsed pod, looked up when first asked for: each pod is parsed once per version
/// of it and kept in the pod's memo across snapshots, and a session reads few of them (those
/// of the pending tasks and of the pods on the nodes it changes).
#[derive(Debug, Default)]
pub struct PodInfos {
    tasks: Arc<TaskTable>,
    /// Parsed pods whose memo had no free slot (the engine's own values leave one).
    unmemoised: OnceLock<Vec<OnceLock<PodInfo>>>,
    /// The pending tasks' kube requests by signature (`requests`).
    pending_requests: OnceLock<HashMap<SignatureId, PodResource, FixedState>>,
}

impl PodInfos {
    fn get(&self, t: TaskId) -> &PodInfo {
        let pod = &self.tasks.pod[t.idx()];
        if let Some(info) = pod.memo.get_or_init_ref(|| PodInfo::new(pod)) {
            return info;
        }
        let n = self.tasks.len();
        let unmemoised = self
            .unmemoised
            .get_or_init(|| (0..n).map(|_| OnceLock::new()).collect());
        unmemoised[t.idx()].get_or_init(|| PodInfo::new(pod))
    }

    /// A task's kube requests. Equal signatures have equal requests, so a pending task's come
    /// from a map of the pending tasks' few signatures, and its pod's memo is not read: that
    /// first read was a cache miss for every task allocate placed.
    fn requests(&self, t: TaskId) -> &PodResource {
        let pending = self.pending_requests.get_or_init(|| {
            let mut by_signature = HashMap::default();
            for (i, status) in self.tasks.status.iter().enumerate() {
                if *status == TaskStatus::Pending {
                    let t = TaskId(i as u32);
                    by_signature
                        .entry(self.tasks.signature[i])
                        .or_insert_with(|| self.get(t).resource.clone());
                }
            }
            by_signature
        });
        match pending.get(&self.tasks.signature[t.idx()]) {
            Some(r) => r,
            None => &self.get(t).resource,
        }
    }
}

/// What one node's pods add up to at session open.
#[derive(Debug, Clone, Default)]
struct NodeSums {
    requested: Arc<NodeRequested>,
    /// Some pod has pod (anti-)affinity.
    affinity: bool,
    /// Some pod has required anti-affinity.
    required_anti_affinity: bool,
}

/// Kube requests by task signature, as far as one worker has looked them up. Equal signatures
/// have equal containers, init containers and overhead, so equal kube requests: a node's pods
/// are summed from the few signatures they share instead of from 400k scattered pod memos.
type RequestsBySignature<'a> = HashMap<SignatureId, &'a PodResource, FixedState>;

impl NodeSums {
    fn of<'a>(
        infos: &'a PodInfos,
        tasks: &[TaskId],
        by_signature: &mut RequestsBySignature<'a>,
    ) -> NodeSums {
        let mut sums = NodeSums::default();
        let requested = Arc::make_mut(&mut sums.requested);
        let columns = &infos.tasks;
        for &t in tasks {
            // Only a pod with inter-pod terms can have (anti-)affinity; its own info says which.
            if columns.inter_pod[t.idx()] {
                let info = infos.get(t);
                requested.add(&info.resource, 1);
                sums.affinity |= info.has_pod_affinity;
                sums.required_anti_affinity |= !info.required_anti_affinity.is_empty();
            } else {
                let signature = columns.signature[t.idx()];
                let resource = *by_signature
                    .entry(signature)
                    .or_insert_with(|| &infos.get(t).resource);
                requested.add(resource, 1);
            }
        }
        sums
    }
}

/// Each node's summed requests as one view sees them: the session-open sums, shared by every
/// view of the snapshot (and left for the next session), and this view's copies of the nodes it
/// changed. A vector of per-node handles, cloned for every view, touched 50k reference counts
/// per view at open and again at close.
#[derive(Debug, Clone, Default)]
struct RequestedByNode {
    open: Arc<Vec<NodeSums>>,
    copies: NodeCopies<NodeRequested>,
}

impl RequestedByNode {
    fn new(open: Arc<Vec<NodeSums>>) -> RequestedByNode {
        RequestedByNode {
            copies: NodeCopies::new(open.len()),
            open,
        }
    }

    fn get(&self, n: NodeId) -> &NodeRequested {
        match self.copies.get(n) {
            Some(copy) => copy,
            None => &self.open[n.idx()].requested,
        }
    }

    /// Node `n`'s sums, copied out of the shared ones first if this view has not changed them.
    fn get_mut(&mut self, n: NodeId) -> &mut NodeRequested {
        let open = &self.open;
        self.copies
            .get_mut(n, || NodeRequested::clone(&open[n.idx()].requested))
    }
}

/// Each node's sums at the open of the session on snapshot `serial`, left for the next session
/// (`Carryover`): a node the next snapshot does not list as changed since has the same pods,
/// so the same sums, and 400k pods need not be read again.
struct OpenNodeSums {
    serial: u64,
    per_node: Arc<Vec<NodeSums>>,
}

/// One plugin's copy of the kube node map (empty until the session opens). Per-node entries are
/// shared with the other views of the session until this view changes them.
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    infos: Arc<PodInfos>,
    pods: NodePods,
    /// Σ requests of each node's pods, kept in step with `pods` (scorers read it per node and
    /// per task, so it must not be recomputed from the pods each time).
    requested: RequestedByNode,
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
        let mut view = if ssn.nodes.changes().is_empty() {
            ssn.snap
                .derived
                .get_or_init(|| OpenMap(ClusterView::build(ssn, true)))
                .0
                .clone()
        } else {
            ClusterView::build(ssn, false)
        };
        view.live = live;
        view
    }

    /// The view of the session as it is; `at_open` when that is the snapshot's session-open
    /// state, whose per-node sums are then taken from the session before for the nodes that did
    /// not change, and left for the next.
    fn build(ssn: &SessionState, at_open: bool) -> ClusterView {
        let infos = ssn.snap.derived.get_or_init(|| PodInfos {
            tasks: ssn.snap.tasks.clone(),
            unmemoised: OnceLock::new(),
            pending_requests: OnceLock::new(),
        });
        let pods = ssn.nodes.tasks.as_slice();
        let carryover = &ssn.options.carryover;
        let earlier = match (at_open, &ssn.snap.changed_since) {
            (true, Some(since)) => carryover
                .take::<OpenNodeSums>()
                .filter(|e| e.serial == since.since && e.per_node.len() == pods.len())
                .map(|e| (e.per_node, &since.nodes)),
            _ => None,
        };
        let pod_infos: &PodInfos = &infos;
        let sum = |by_signature: &mut _, n: usize| NodeSums::of(pod_infos, &pods[n], by_signature);
        let per_node: Vec<NodeSums> = match earlier {
            // The earlier sums, this session's own once the session before is gone (a copy while
            // it is not): only the changed nodes are summed again, in place.
            Some((sums, changed)) => {
                let mut sums = Arc::unwrap_or_clone(sums);
                let fresh: Vec<(NodeId, NodeSums)> = changed
                    .par_iter()
                    .map_init(RequestsBySignature::default, |by_signature, &n| {
                        (n, sum(by_signature, n.idx()))
                    })
                    .collect();
                for (n, node_sums) in fresh {
                    sums[n.idx()] = node_sums;
                }
                sums
            }
            None => (0..pods.len())
                .into_par_iter()
                .map_init(RequestsBySignature::default, sum)
                .collect(),
        };
        let nodes_where = |f: fn(&NodeSums) -> bool| -> Vec<NodeId> {
            (0..per_node.len())
                .filter(|&n| f(&per_node[n]))
                .map(|n| NodeId(n as u32))
                .collect()
        };
        let with_affinity = nodes_where(|s| s.affinity);
        let with_required_anti_affinity = nodes_where(|s| s.required_anti_affinity);
        let per_node = Arc::new(per_node);
        if at_open && ssn.snap.serial != 0 {
            carryover.put(OpenNodeSums {
                serial: ssn.snap.serial,
                per_node: per_node.clone(),
            });
        }
        let requested = RequestedByNode::new(per_node);
        ClusterView {
            pods: NodePods::new(pods),
            infos,
            requested,
            with_affinity: Arc::new(with_affinity),
            with_required_anti_affinity: Arc::new(with_required_anti_affinity),
            live: false,
        }
    }

    /// Allocate/pipeline/un-evict handler: the task's pod joins its node, unless it is there.
    pub fn on_allocate(&mut self, ssn: &SessionState, t: TaskId) {
        let Some(n) = ssn.tasks.node[t] else {
            return;
        };
        if !self.live || self.pods.get(n).contains(&t) {
            return;
        }
        self.pods.push(n, t);
        self.requested.get_mut(n).add(self.infos.requests(t), 1);
    }

    /// Evict/un-pipeline/un-allocate handler: the task's pod leaves its node. The session still
    /// names the node when the handlers run, and the view holds a task on no other node than
    /// the one the session names (it follows every placement), so the node's own list says
    /// whether the task is there; no per-task column of this view's placements is kept (a
    /// copy per view, 400k entries, at every open).
    pub fn on_deallocate(&mut self, ssn: &SessionState, t: TaskId) {
        let Some(n) = ssn.tasks.node[t] else {
            return;
        };
        if !self.live || !self.pods.get(n).contains(&t) {
            return;
        }
        self.pods.remove(n, t);
        self.requested.get_mut(n).add(self.infos.requests(t), -1);
    }

    /// The pods (tasks) on a node.
    pub fn pods(&self, n: NodeId) -> &[TaskId] {
        self.pods.get(n)
    }

    /// A task's parsed pod.
    pub fn info(&self, t: TaskId) -> &PodInfo {
        self.infos.get(t)
    }

    /// A task's kube requests (its parsed pod's `resource`).
    pub fn requests(&self, t: TaskId) -> &PodResource {
        self.infos.requests(t)
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
    requested: NamedAmounts,
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

    /// The snapshot's namespaces, for affinity terms' namespace selectors.
    pub fn namespaces(&self) -> &'a crate::snapshot::NamespaceTable {
        &self.ssn.snap.namespaces
    }

    /// A node's labels.
    pub fn labels(&self, n: NodeId) -> &'a StringMap {
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

    /// A task's kube requests.
    pub fn requests(&self, t: TaskId) -> &'a PodResource {
        self.view.requests(t)
    }

    /// The tasks whose pods are on a node.
    pub fn pods_on(&self, n: NodeId) -> &'a [TaskId] {
        self.view.pods(n)
    }

    /// Σ requests of the pods on a node.
    pub fn requested(&self, n: NodeId) -> &'a NodeRequested {
        self.view.requested.get(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Statement;
    use crate::harness::find::{node_id, task};
    use crate::harness::objects::{JOB, node, pod, running_pod};
    use crate::harness::{conf, session};

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
        live.on_deallocate(&ssn.state, p);
        assert!(live.pods(n2).is_empty());
    }

    #[test]
    fn a_tasks_requests_are_its_parsed_pods_whether_taken_by_signature_or_from_the_pod() {
        let cpu = |m: u32| format!("containers: [{{resources: {{requests: {{cpu: {m}m}}}}}}]");
        let objects = [
            JOB.to_string(),
            node("n1", "", "pods: '10'"),
            pod("p1", "", &cpu(250)),
            pod("p2", "", &cpu(250)),
            pod("p3", "", &cpu(500)),
            running_pod("r", "n1", "", &cpu(750)),
        ]
        .concat();
        let ssn = session(&conf("nodeorder", ""), &objects);
        let view = ClusterView::open(&ssn.state, true);
        for name in ["p1", "p2", "p3", "r"] {
            let t = task(&ssn, &format!("ns/{name}"));
            assert_eq!(view.requests(t), &view.info(t).resource, "{name}");
        }
        let cpu_of = |name: &str| view.requests(task(&ssn, &format!("ns/{name}"))).get("cpu");
        assert_eq!([cpu_of("p2"), cpu_of("p3"), cpu_of("r")], [250, 500, 750]);
    }

    #[test]
    fn a_views_change_to_a_nodes_sums_is_its_own_and_leaves_the_shared_sums() {
        let mut sums = NodeSums::default();
        Arc::make_mut(&mut sums.requested).non0_cpu = 100;
        let shared = Arc::new(vec![sums.clone(), sums]);
        let mut view = RequestedByNode::new(shared.clone());
        let other = view.clone();
        view.get_mut(NodeId(1)).non0_cpu += 50;
        view.get_mut(NodeId(1)).non0_cpu += 50;
        assert_eq!(view.get(NodeId(1)).non0_cpu, 200);
        assert_eq!(view.get(NodeId(0)).non0_cpu, 100);
        assert_eq!(other.get(NodeId(1)).non0_cpu, 100);
        assert_eq!(shared[1].requested.non0_cpu, 100);
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

    #[test]
    fn a_node_sums_every_pod_whether_it_shares_a_signature_or_has_inter_pod_terms() {
        let quarter = "containers: [{resources: {requests: {cpu: 250m, memory: 1Gi}}}]";
        let anti = "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {a: b}}, topologyKey: zone}]}}";
        let objects = [
            JOB.to_string(),
            node("n1", "", "pods: '10'"),
            running_pod("a", "n1", "", quarter),
            running_pod("b", "n1", "", quarter),
            running_pod(
                "c",
                "n1",
                "",
                "containers: [{resources: {requests: {cpu: '1'}}}]",
            ),
            running_pod(
                "anti",
                "n1",
                "",
                &format!("{anti}, containers: [{{resources: {{requests: {{cpu: 2}}}}}}]"),
            ),
        ]
        .concat();
        let ssn = session(&conf("nodeorder", ""), &objects);
        let signature = |key: &str| ssn.state.snap.tasks.signature[task(&ssn, key).idx()];
        assert_eq!(signature("ns/a"), signature("ns/b"));
        let view = ClusterView::open(&ssn.state, true);
        let requested = Cluster::new(&ssn.state, &view).requested(node_id(&ssn, "n1"));
        assert_eq!(requested.get("cpu"), 250 + 250 + 1000 + 2000);
        assert_eq!(requested.get("memory"), 2 << 30);
        assert_eq!(
            view.nodes_with_required_anti_affinity(),
            &[node_id(&ssn, "n1")]
        );
    }

    #[test]
    fn sums_of_nodes_not_listed_as_changed_come_from_the_session_before() {
        use crate::framework::{Carryover, SessionOptions};
        use crate::harness::Harness;
        use std::sync::Arc;
        let carryover = Arc::new(Carryover::default());
        let options = || SessionOptions {
            carryover: carryover.clone(),
            ..Default::default()
        };
        let cpu = "containers: [{resources: {requests: {cpu: 250m}}}]";
        let objects = |on_n2: &str| {
            [
                JOB.to_string(),
                node("n1", "", "pods: '10'"),
                node("n2", "", "pods: '10'"),
                running_pod("a", "n1", "", cpu),
                running_pod("b", on_n2, "", cpu),
            ]
            .concat()
        };
        let requested = |ssn: &crate::framework::Session, n: &str| {
            let view = ClusterView::open(&ssn.state, true);
            Cluster::new(&ssn.state, &view)
                .requested(node_id(ssn, n))
                .get("cpu")
        };
        let conf = conf("nodeorder", "");
        let first = Harness::new(&conf).manifests(&objects("n2"));
        let first = first.open_with(options()).unwrap();
        assert_eq!(requested(&first, "n2"), 250);
        // Pod b moves to n1; a snapshot that does not list n2 keeps n2's sums.
        let serial = first.state.snap.serial;
        let second = Harness::new(&conf).manifests(&objects("n1"));
        let second = second.nodes_changed_since(serial, &["n1"]);
        let second = second.open_with(options()).unwrap();
        assert_eq!(requested(&second, "n1"), 500, "listed: summed again");
        assert_eq!(requested(&second, "n2"), 250, "not listed: taken over");
        // Listing both gives the sums built afresh.
        let serial = second.state.snap.serial;
        let third = Harness::new(&conf).manifests(&objects("n1"));
        let third = third.nodes_changed_since(serial, &["n1", "n2"]);
        let third = third.open_with(options()).unwrap();
        assert_eq!((requested(&third, "n1"), requested(&third, "n2")), (500, 0));
        // With the session before gone, its sums are this one's, changed nodes summed in place.
        let serial = third.state.snap.serial;
        drop(third);
        let fourth = Harness::new(&conf).manifests(&objects("n2"));
        let fourth = fourth.nodes_changed_since(serial, &["n2"]);
        let fourth = fourth.open_with(options()).unwrap();
        assert_eq!(
            (requested(&fourth, "n1"), requested(&fourth, "n2")),
            (500, 250),
            "n1 not listed: taken over; n2 listed: summed again"
        );
    }
}
