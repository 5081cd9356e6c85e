//! The `nodeorder` plugin (spec §6.8): kube-scheduler's scorers, each normalised to [0, 100],
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
    Cluster, ClusterView, balanced_allocation, inter_pod_affinity_score, node_affinity,
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
    ) -> Result<Option<Vec<i64>>, String> {
        let pod = c.pod(task);
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
            Scorer::NodeAffinity => node_affinity::preferred_scores(
                pod,
                nodes.iter().map(|&n| (c.name(n), c.labels(n))),
            ),
            Scorer::InterPodAffinity => inter_pod_affinity_score::scores(c, task, nodes),
            Scorer::TaintToleration => {
                let taints = &c.ssn.snap.nodes.taints;
                Ok(Some(taint_toleration::scores(
                    pod,
                    nodes.iter().map(|&n| taints[n.idx()].as_slice()),
                )))
            }
            Scorer::PodTopologySpread => spread_score::scores(c, task, nodes),
        }
    }
}

/// The plugin.
#[derive(Debug)]
pub struct NodeOrder {
    weights: Weights,
    view: ClusterView,
    images: ImageSpread,
}

/// Builds the plugin from its arguments.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(NodeOrder {
        weights: Weights::parse(args)?,
        view: ClusterView::default(),
        images: ImageSpread::default(),
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
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        self.view.on_allocate(ssn, task);
        Ok(())
    }

    fn on_deallocate(&mut self, _ssn: &SessionState, task: TaskId) {
        self.view.on_deallocate(task);
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
