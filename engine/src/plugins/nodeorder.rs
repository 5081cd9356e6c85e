//! The `nodeorder` plugin (Volcano: pkg/scheduler/plugins/nodeorder/nodeorder.go): kube-scheduler's scorers, each normalised to [0, 100],
//! multiplied by its integer weight and summed per node (batch node order), plus image locality
//! per node (node order). A weight of 0 disables a scorer; a scorer that skips adds 0.
//!
//! The plugin scores against its own kube node map. Volcano refreshes that map only through the
//! `predicates` event handlers, so without predicates in the configuration the scores see the
//! pods placed at session open and nothing placed since.

use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, SessionState};
use crate::model::{NodeId, TaskId};
use crate::plugins::k8s::image_locality::ImageSpread;
use crate::plugins::k8s::normalize::{MAX_NODE_SCORE, MIN_NODE_SCORE};
use crate::plugins::k8s::resource_fit::Strategy;
use crate::plugins::k8s::{
    Cluster, ClusterView, NodeScores, balanced_allocation, inter_pod_affinity_score, node_affinity,
    resource_fit, spread_score, taint_toleration,
};

/// Scorer weights (`<name>.weight` arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weights {
    pub least_requested: i64,
    pub most_requested: i64,
    pub balanced_resource: i64,
    pub node_affinity: i64,
    pub pod_affinity: i64,
    pub taint_toleration: i64,
    pub pod_topology_spread: i64,
    pub image_locality: i64,
}

impl Weights {
    /// Reads the weights; a non-integer value is refused.
    pub fn parse(args: &Arguments) -> Result<Weights, ArgumentError> {
        let w = |key: &str, default: i64| args.int(key).map(|v| v.unwrap_or(default));
        Ok(Weights {
            least_requested: w("leastrequested.weight", 1)?,
            most_requested: w("mostrequested.weight", 0)?,
            balanced_resource: w("balancedresource.weight", 1)?,
            node_affinity: w("nodeaffinity.weight", 2)?,
            pod_affinity: w("podaffinity.weight", 2)?,
            taint_toleration: w("tainttoleration.weight", 3)?,
            pod_topology_spread: w("podtopologyspread.weight", 2)?,
            image_locality: w("imagelocality.weight", 1)?,
        })
    }
}

/// The batch scorers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scorer {
    LeastAllocated,
    MostAllocated,
    BalancedAllocation,
    NodeAffinity,
    InterPodAffinity,
    TaintToleration,
    PodTopologySpread,
}

impl Scorer {
    const ALL: [Scorer; 7] = [
        Scorer::LeastAllocated,
        Scorer::MostAllocated,
        Scorer::BalancedAllocation,
        Scorer::NodeAffinity,
        Scorer::InterPodAffinity,
        Scorer::TaintToleration,
        Scorer::PodTopologySpread,
    ];

    /// The kube plugin name, for error messages.
    fn name(self) -> &'static str {
        match self {
            Scorer::LeastAllocated => "NodeResourcesFit_LeastAllocated",
            Scorer::MostAllocated => "NodeResourcesFit_MostAllocated",
            Scorer::BalancedAllocation => "NodeResourcesBalancedAllocation",
            Scorer::NodeAffinity => "NodeAffinity",
            Scorer::InterPodAffinity => "InterPodAffinity",
            Scorer::TaintToleration => "TaintToleration",
            Scorer::PodTopologySpread => "PodTopologySpread",
        }
    }

    fn weight(self, w: &Weights) -> i64 {
        match self {
            Scorer::LeastAllocated => w.least_requested,
            Scorer::MostAllocated => w.most_requested,
            Scorer::BalancedAllocation => w.balanced_resource,
            Scorer::NodeAffinity => w.node_affinity,
            Scorer::InterPodAffinity => w.pod_affinity,
            Scorer::TaintToleration => w.taint_toleration,
            Scorer::PodTopologySpread => w.pod_topology_spread,
        }
    }

    /// The normalised scores of `nodes`; `None` when the scorer skips (PreScore Skip).
    fn scores(
        self,
        c: &Cluster,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Result<Option<NodeScores>, String> {
        let pod = c.pod(task);
        // The scorers that never skip a single node keep its score inline; the others hand over
        // their vector as it is.
        let inline =
            |scores: Result<Option<Vec<i64>>, String>| scores.map(|s| s.map(NodeScores::from_vec));
        match self {
            Scorer::LeastAllocated => Ok(Some(resource_fit::scores(
                c,
                task,
                nodes,
                Strategy::LeastAllocated,
            ))),
            Scorer::MostAllocated => Ok(Some(resource_fit::scores(
                c,
                task,
                nodes,
                Strategy::MostAllocated,
            ))),
            Scorer::BalancedAllocation => Ok(balanced_allocation::scores(c, task, nodes)),
            // Without preferred terms (the task table says so) it skips, as `preferred_scores`
            // would after reading the pod: that read was a cache miss per task placed.
            Scorer::NodeAffinity if !c.ssn.snap.tasks.preferred_node_affinity[task.idx()] => {
                Ok(None)
            }
            Scorer::NodeAffinity => inline(node_affinity::preferred_scores(
                pod,
                nodes.iter().map(|&n| (c.name(n), c.labels(n))),
            )),
            Scorer::InterPodAffinity => inline(inter_pod_affinity_score::scores(c, task, nodes)),
            Scorer::TaintToleration => {
                let taints = &c.ssn.snap.nodes.taints;
                Ok(Some(taint_toleration::scores(
                    pod,
                    nodes.iter().map(|&n| taints[n.idx()].as_slice()),
                )))
            }
            Scorer::PodTopologySpread => inline(spread_score::scores(c, task, nodes)),
        }
    }
}

/// The plugin.
#[derive(Debug)]
pub struct NodeOrder {
    weights: Weights,
    view: ClusterView,
    images: ImageSpread,
    /// Some node has a `PreferNoSchedule` taint (then taint scores are normalised across nodes).
    prefer_no_schedule: bool,
}

/// Builds the plugin from its arguments.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(NodeOrder {
        weights: Weights::parse(args)?,
        view: ClusterView::default(),
        images: ImageSpread::default(),
        prefer_no_schedule: false,
    }))
}

impl Plugin for NodeOrder {
    fn name(&self) -> &str {
        "nodeorder"
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        let predicates = ssn
            .config
            .tiers
            .iter()
            .flat_map(|t| &t.plugins)
            .any(|p| p.name == "predicates");
        self.view = ClusterView::open(ssn, predicates);
        self.images = ImageSpread::of(ssn.snap.nodes.images.iter().map(|i| i.as_ref()));
        self.prefer_no_schedule = ssn
            .snap
            .nodes
            .taints
            .iter()
            .flatten()
            .any(|t| t.effect == "PreferNoSchedule");
    }

    /// Node-local unless a scorer that is normalised across nodes or reads other nodes' pods
    /// has something to score: preferred node affinity, inter-pod affinity, topology spread
    /// (the pod's own constraints, or the system defaults when its Services or workload select
    /// pods), `PreferNoSchedule` taints. Resource scorers and image locality read one node.
    fn node_local(&self, ssn: &SessionState, task: TaskId) -> bool {
        // A pod without inter-pod terms (nearly all) is answered without reading it.
        let w = &self.weights;
        let tasks = &ssn.snap.tasks;
        let own_terms = tasks.inter_pod[task.idx()];
        let pod = &tasks.pod[task.idx()];
        let preferred = tasks.preferred_node_affinity[task.idx()];
        let pod_affinity = own_terms && self.view.info(task).has_pod_affinity
            || !self.view.nodes_with_affinity().is_empty();
        let selectors = &ssn.snap.workload_selectors;
        let spread = own_terms && !pod.spec.topology_spread_constraints.is_empty()
            || !selectors.is_empty() && selectors.default_selector(pod).is_some();
        (w.node_affinity == 0 || !preferred)
            && (w.pod_affinity == 0 || !pod_affinity)
            && (w.pod_topology_spread == 0 || !spread)
            && (w.taint_toleration == 0 || !self.prefer_no_schedule)
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        self.view.on_allocate(ssn, task);
        Ok(())
    }

    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        self.view.on_deallocate(ssn, task);
    }

    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        if self.weights.image_locality == 0 {
            return Some(Ok(0.0));
        }
        let score = self.images.score(
            &ssn.snap.tasks.pod[task.idx()],
            &ssn.snap.nodes.images[node.idx()],
        );
        Some(Ok(score as f64 * self.weights.image_locality as f64))
    }

    fn batch_node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Option<Result<Vec<f64>, String>> {
        let c = Cluster::new(ssn, &self.view);
        let mut total = vec![0.0; nodes.len()];
        for scorer in Scorer::ALL {
            let weight = scorer.weight(&self.weights);
            if weight == 0 {
                continue;
            }
            let scores = match scorer.scores(&c, task, nodes) {
                Err(e) => return Some(Err(e)),
                Ok(None) => continue,
                Ok(Some(s)) => s,
            };
            for ((t, s), &n) in total.iter_mut().zip(scores).zip(nodes) {
                if !(MIN_NODE_SCORE..=MAX_NODE_SCORE).contains(&s) {
                    let name = scorer.name();
                    return Some(Err(format!(
                        "{name} returns an invalid score {s} for node {}",
                        c.name(n)
                    )));
                }
                *t += (s * weight) as f64;
            }
        }
        Some(Ok(total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::{Session, Statement};
    use crate::harness::find::{all_nodes, node_id, task};
    use crate::harness::objects::{JOB, node, pod, running_pod};
    use crate::harness::{conf, session};

    const KEYS: [&str; 8] = [
        "leastrequested.weight",
        "mostrequested.weight",
        "balancedresource.weight",
        "nodeaffinity.weight",
        "podaffinity.weight",
        "tainttoleration.weight",
        "podtopologyspread.weight",
        "imagelocality.weight",
    ];

    /// Arguments with every weight 0 but `key`.
    fn only(key: &str, weight: i64) -> String {
        KEYS.iter()
            .map(|k| format!("{k}: {}", if *k == key { weight } else { 0 }))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn open(arguments: &str, objects: &[String]) -> Session {
        session(
            &conf("nodeorder", arguments),
            &[JOB.to_string(), objects.concat()].concat(),
        )
    }

    /// Node-order plus batch node-order totals of `ns/<pod>` over every node.
    fn totals(ssn: &Session, pod: &str) -> Vec<f64> {
        let t = task(ssn, &format!("ns/{pod}"));
        let nodes = all_nodes(ssn);
        let batch = ssn.batch_node_order(t, &nodes).expect("batch node order");
        nodes
            .iter()
            .zip(batch)
            .map(|(&n, b)| b + ssn.node_order(t, n))
            .collect()
    }

    /// The node with the strictly highest total.
    fn best(ssn: &Session, pod: &str) -> String {
        let scores = totals(ssn, pod);
        let top = scores.iter().copied().fold(f64::MIN, f64::max);
        let winners: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] == top).collect();
        assert_eq!(winners.len(), 1, "no strict winner in {scores:?}");
        ssn.state.snap.nodes.name[winners[0]].clone()
    }

    const REQ_1G: &str = "containers: [{resources: {requests: {cpu: '1', memory: 1G}}}]";

    #[test]
    fn conformance_balanced_allocation_prefers_the_balanced_node() {
        let ssn = open(
            &only("balancedresource.weight", 10),
            &[
                node("n1", "", "cpu: '2', memory: 2Gi, pods: '10'"),
                node("n2", "", "cpu: '4', memory: 2Gi, pods: '10'"),
                pod(
                    "p1",
                    "",
                    "containers: [{resources: {requests: {cpu: '1', memory: 1Gi}}}]",
                ),
            ],
        );
        assert_eq!(totals(&ssn, "p1"), vec![750.0, 680.0]);
        assert_eq!(best(&ssn, "p1"), "n1");
    }

    #[test]
    fn conformance_most_allocated_prefers_the_fuller_node() {
        let ssn = open(
            &only("mostrequested.weight", 1),
            &[
                node("n1", "", "cpu: '2', memory: 4Gi, pods: '10'"),
                node("n2", "", "cpu: '4', memory: 8Gi, pods: '10'"),
                pod("p1", "", REQ_1G),
            ],
        );
        assert_eq!(totals(&ssn, "p1"), vec![36.0, 18.0]);
        assert_eq!(best(&ssn, "p1"), "n1");
    }

    #[test]
    fn conformance_node_affinity_prefers_the_labeled_node() {
        let preferred = "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, preference: {matchExpressions: [{key: zone, operator: In, values: [zone1]}]}}]}}";
        let ssn = open(
            &only("nodeaffinity.weight", 10),
            &[
                node("n1", "zone: zone1", "cpu: '2', memory: 4Gi, pods: '10'"),
                node("n2", "zone: zone2", "cpu: '2', memory: 4Gi, pods: '10'"),
                pod("p1", "", &format!("{REQ_1G}, {preferred}")),
            ],
        );
        assert_eq!(totals(&ssn, "p1"), vec![1000.0, 0.0]);
        assert_eq!(best(&ssn, "p1"), "n1");
    }

    #[test]
    fn conformance_taint_toleration_prefers_the_untainted_node() {
        let ssn = open(
            &only("tainttoleration.weight", 10),
            &[
                node("n1", "", "cpu: '2', memory: 4Gi, pods: '10'"),
                "- {kind: Node, metadata: {name: n2}, spec: {taints: [{key: key1, value: value1, effect: PreferNoSchedule}]}, status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}}\n".to_string(),
                pod("p1", "", REQ_1G),
            ],
        );
        assert_eq!(totals(&ssn, "p1"), vec![1000.0, 0.0]);
        assert_eq!(best(&ssn, "p1"), "n1");
    }

    #[test]
    fn conformance_pod_topology_spread_prefers_the_emptiest_zone() {
        let spread = "topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: foo}}}]";
        let alloc = "cpu: '4', memory: 4Gi, pods: '10'";
        let ssn = open(
            &only("podtopologyspread.weight", 10),
            &[
                node("n1", "zone: zone1", alloc),
                node("n2", "zone: zone2", alloc),
                node("n3", "zone: zone3", alloc),
                running_pod("p1", "n1", "app: foo", REQ_1G),
                running_pod("p2", "n1", "app: foo", REQ_1G),
                running_pod("p3", "n2", "app: foo", REQ_1G),
                pod("p4", "app: foo", &format!("{REQ_1G}, {spread}")),
            ],
        );
        assert_eq!(totals(&ssn, "p4"), vec![0.0, 330.0, 1000.0]);
        assert_eq!(best(&ssn, "p4"), "n3");
    }

    #[test]
    fn least_allocated_uses_non_zero_defaults_for_missing_requests() {
        let ssn = open(
            &only("leastrequested.weight", 1),
            &[
                node("n1", "", "cpu: '2', memory: 4Gi, pods: '10'"),
                node("n2", "", "cpu: '4', memory: 4Gi, pods: '10'"),
                pod(
                    "p1",
                    "",
                    "containers: [{resources: {requests: {cpu: '1', memory: 1Gi}}}]",
                ),
                pod("empty", "", "containers: [{}]"),
            ],
        );
        assert_eq!(totals(&ssn, "p1"), vec![62.0, 75.0]);
        // 100m cpu and 200Mi: cpu 95 and 97 (97.5 truncated), memory 95 (95.1 truncated).
        assert_eq!(totals(&ssn, "empty"), vec![95.0, 96.0]);
    }

    #[test]
    fn balanced_allocation_skips_a_pod_without_requests() {
        let ssn = open(
            &only("balancedresource.weight", 1),
            &[
                node("n1", "", "cpu: '2', memory: 4Gi, pods: '10'"),
                pod("empty", "", "containers: [{}]"),
            ],
        );
        assert_eq!(totals(&ssn, "empty"), vec![0.0]);
    }

    #[test]
    fn preferred_pod_affinity_scores_the_peers_domain() {
        let preferred = "affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, podAffinityTerm: {labelSelector: {matchLabels: {app: db}}, topologyKey: zone}}]}}";
        let ssn = open(
            &only("podaffinity.weight", 1),
            &[
                node("n1", "zone: a", "pods: '10'"),
                node("n2", "zone: a", "pods: '10'"),
                node("n3", "zone: b", "pods: '10'"),
                running_pod("db", "n1", "app: db", ""),
                pod("web", "", preferred),
            ],
        );
        assert_eq!(totals(&ssn, "web"), vec![100.0, 100.0, 0.0]);
    }

    #[test]
    fn existing_pods_preferred_anti_affinity_repels_the_pod() {
        let repel = "affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, podAffinityTerm: {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}}]}}";
        let ssn = open(
            &only("podaffinity.weight", 2),
            &[
                node("n1", "kubernetes.io/hostname: n1", "pods: '10'"),
                node("n2", "kubernetes.io/hostname: n2", "pods: '10'"),
                running_pod("cache", "n1", "app: cache", repel),
                pod("web", "app: web", ""),
                pod("other", "app: other", ""),
            ],
        );
        assert_eq!(totals(&ssn, "web"), vec![0.0, 200.0]);
        assert_eq!(
            totals(&ssn, "other"),
            vec![0.0, 0.0],
            "no term matches: the scorer skips"
        );
    }

    #[test]
    fn image_locality_scores_per_node() {
        let ssn = open(
            &only("imagelocality.weight", 1),
            &[
                "- {kind: Node, metadata: {name: n1}, status: {allocatable: {pods: '10'}, images: [{names: ['app:v1'], sizeBytes: 524288000}]}}\n".to_string(),
                node("n2", "", "pods: '10'"),
                pod("p", "", "containers: [{image: 'app:v1'}]"),
            ],
        );
        let mb: i64 = 1024 * 1024;
        let expected = (100 * (250 * mb - 23 * mb) / (1000 * mb - 23 * mb)) as f64;
        assert_eq!(totals(&ssn, "p"), vec![expected, 0.0]);
    }

    #[test]
    fn a_bad_preferred_term_fails_the_whole_batch() {
        let bad = "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: zone, operator: Near, values: [a]}]}}]}}";
        let ssn = open("", &[node("n1", "", "pods: '10'"), pod("p", "", bad)]);
        assert_eq!(
            ssn.batch_node_order(task(&ssn, "ns/p"), &all_nodes(&ssn)),
            None
        );
    }

    #[test]
    fn without_predicates_scores_see_only_the_session_open_pods() {
        let objects = [
            JOB.to_string(),
            node("n1", "", "cpu: '2', memory: 4Gi, pods: '10'"),
            node("n2", "", "cpu: '2', memory: 4Gi, pods: '10'"),
            pod("a", "", REQ_1G),
            pod("b", "", REQ_1G),
        ]
        .concat();
        let weights = only("mostrequested.weight", 1);
        let with_predicates = format!(
            "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n  - name: nodeorder\n    arguments: {{{weights}}}\n"
        );
        for (config, moves) in [
            (conf("nodeorder", &weights), false),
            (with_predicates, true),
        ] {
            let mut ssn = session(&config, &objects);
            let (a, n1) = (task(&ssn, "ns/a"), node_id(&ssn, "n1"));
            Statement::new().allocate(&mut ssn, a, n1).unwrap();
            let scores = totals(&ssn, "b");
            assert_eq!(scores[0] > scores[1], moves, "{scores:?}");
        }
    }

    #[test]
    fn weights_default_and_refuse_non_integers() {
        let w = Weights::parse(&Arguments::default()).unwrap();
        assert_eq!(
            w,
            Weights {
                least_requested: 1,
                most_requested: 0,
                balanced_resource: 1,
                node_affinity: 2,
                pod_affinity: 2,
                taint_toleration: 3,
                pod_topology_spread: 2,
                image_locality: 1,
            }
        );
        let bad = Arguments(serde_saphyr::from_str("nodeaffinity.weight: 1.5\n").unwrap());
        assert_eq!(Weights::parse(&bad).unwrap_err().key, "nodeaffinity.weight");
    }
}
