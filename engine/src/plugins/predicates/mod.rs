//! The `predicates` plugin: kube-scheduler's filters in Volcano's order, with its status
//! handling (spec §6.5).
//!
//! PrePredicate runs the PreFilters (NodeAffinity, NodePorts, InterPodAffinity,
//! PodTopologySpread) and keeps their results in the task's `CycleState` for the session.
//! Predicate then checks the pod count (recorded, evaluation continues), the stable filters
//! (NodeUnschedulable, NodeAffinity, TaintToleration; optionally memoised per pod template) and
//! the rest (NodePorts, InterPodAffinity, PodTopologySpread); a status coded U&U, Error, Wait or
//! Skip stops the evaluation. The plugin keeps its kube node map in step through the allocate
//! and deallocate events.

mod arguments;
mod cycle_state;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use self::arguments::PredicateArgs;
use self::cycle_state::{CycleState, PreFiltered};
use super::k8s::{
    Cluster, ClusterView, inter_pod_affinity, node_affinity, node_ports, node_unschedulable,
};
use super::k8s::{spread_filter, taint_toleration};
use crate::config::{ArgumentError, Arguments};
use crate::framework::{FitError, Plugin, SessionState, Status, StatusCode};
use crate::model::{NodeId, TaskId};

/// Volcano's reason when the node already runs its `pods` allocatable.
pub const POD_NUMBER_EXCEEDED: &str = "node(s) pod number exceeded";
/// Volcano's reason for a memoised stable-filter failure.
pub const CACHED_FAILURE: &str = "plugin equivalence cache predicates failed";
/// The pod annotation the stable-filter cache is keyed by.
pub const TEMPLATE_UID_KEY: &str = "volcano.sh/template-uid";

/// The plugin.
#[derive(Debug)]
pub struct Predicates {
    args: PredicateArgs,
    view: ClusterView,
    states: Mutex<HashMap<TaskId, Arc<CycleState>>>,
    cache: Mutex<HashMap<(NodeId, String), bool>>,
}

/// Builds the plugin from its arguments.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Predicates {
        args: PredicateArgs::parse(args)?,
        view: ClusterView::default(),
        states: Mutex::new(HashMap::new()),
        cache: Mutex::new(HashMap::new()),
    }))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `ShouldAbort`.
fn aborts(code: StatusCode) -> bool {
    matches!(
        code,
        StatusCode::UnschedulableAndUnresolvable
            | StatusCode::Error
            | StatusCode::Wait
            | StatusCode::Skip
    )
}

/// Records a failed filter; true when it stops the evaluation.
fn record(statuses: &mut Vec<Status>, result: Result<(), Status>) -> bool {
    match result {
        Ok(()) => false,
        Err(s) => {
            let stop = aborts(s.code);
            statuses.push(s);
            stop
        }
    }
}

/// A PreFilter outcome: Skip joins the skip set, a failure fails the PrePredicate.
fn pre_filtered<T>(
    state: &mut CycleState,
    which: PreFiltered,
    r: Result<Option<T>, Status>,
) -> Result<Option<T>, FitError> {
    match r {
        Ok(None) => {
            state.skip.insert(which);
            Ok(None)
        }
        Ok(some) => Ok(some),
        Err(s) => Err(FitError::new(
            StatusCode::Error,
            format!("plugin {} pre-predicates failed {}", which.name(), s.reason),
        )),
    }
}

fn missing(which: PreFiltered) -> Status {
    Status {
        code: StatusCode::Error,
        reason: which.missing_state(),
    }
}

impl Predicates {
    fn state_of(&self, task: TaskId) -> Arc<CycleState> {
        lock(&self.states).get(&task).cloned().unwrap_or_default()
    }

    fn run_pre_filters(
        &self,
        c: &Cluster,
        task: TaskId,
        state: &mut CycleState,
    ) -> Result<(), FitError> {
        let pod = c.pod(task);
        use PreFiltered::*;
        if self.args.node_affinity
            && let Some(s) = pre_filtered(state, NodeAffinity, node_affinity::pre_filter(pod))?
        {
            state.node_affinity = Some(s);
        }
        if self.args.node_ports
            && let Some(p) = pre_filtered(state, NodePorts, Ok(node_ports::pre_filter(pod)))?
        {
            state.node_ports = Some(p);
        }
        if self.args.pod_affinity
            && let Some(s) = pre_filtered(
                state,
                InterPodAffinity,
                inter_pod_affinity::pre_filter(c, task),
            )?
        {
            state.inter_pod_affinity = Some(s);
        }
        if self.args.pod_topology_spread
            && let Some(s) =
                pre_filtered(state, PodTopologySpread, spread_filter::pre_filter(c, task))?
        {
            state.topology_spread = Some(s);
        }
        Ok(())
    }

    /// NodeUnschedulable, NodeAffinity, TaintToleration: their statuses and whether none aborted.
    fn stable_filters(
        &self,
        c: &Cluster,
        task: TaskId,
        node: NodeId,
        state: &CycleState,
    ) -> (Vec<Status>, bool) {
        let pod = c.pod(task);
        let nodes = &c.ssn.snap.nodes;
        let mut statuses = Vec::new();
        if record(
            &mut statuses,
            node_unschedulable::filter(pod, nodes.unschedulable[node.idx()]),
        ) {
            return (statuses, false);
        }
        if self.args.node_affinity && !state.skip.contains(&PreFiltered::NodeAffinity) {
            let computed;
            let required = match &state.node_affinity {
                Some(r) => r,
                None => {
                    computed = node_affinity::RequiredNodeAffinity::of(pod);
                    &computed
                }
            };
            if record(
                &mut statuses,
                node_affinity::filter(required, c.name(node), c.labels(node)),
            ) {
                return (statuses, false);
            }
        }
        if self.args.taint_toleration
            && record(
                &mut statuses,
                taint_toleration::filter(pod, &nodes.taints[node.idx()]),
            )
        {
            return (statuses, false);
        }
        (statuses, true)
    }

    /// The stable filters through the per-template cache when it is on and the pod has a
    /// template UID.
    fn cached_stable_filters(
        &self,
        c: &Cluster,
        task: TaskId,
        node: NodeId,
        state: &CycleState,
    ) -> (Vec<Status>, bool) {
        if !self.args.cache {
            return self.stable_filters(c, task, node, state);
        }
        let template = c
            .pod(task)
            .metadata
            .annotations
            .get(TEMPLATE_UID_KEY)
            .filter(|u| !u.is_empty());
        let key = template.map(|u| (node, u.clone()));
        match key.as_ref().and_then(|k| lock(&self.cache).get(k).copied()) {
            Some(true) => (Vec::new(), true),
            Some(false) => (
                vec![Status {
                    code: StatusCode::Error,
                    reason: CACHED_FAILURE.into(),
                }],
                false,
            ),
            None => {
                let (statuses, fit) = self.stable_filters(c, task, node, state);
                if let Some(k) = key {
                    lock(&self.cache).insert(k, fit);
                }
                (statuses, fit)
            }
        }
    }

    /// NodePorts, InterPodAffinity, PodTopologySpread; true when one aborted.
    fn other_filters(
        &self,
        c: &Cluster,
        task: TaskId,
        node: NodeId,
        state: &CycleState,
        statuses: &mut Vec<Status>,
    ) -> bool {
        let skip = |f| state.skip.contains(&f);
        if self.args.node_ports && !skip(PreFiltered::NodePorts) {
            let r = match &state.node_ports {
                None => Err(missing(PreFiltered::NodePorts)),
                Some(wanted) => node_ports::filter(
                    wanted,
                    &node_ports::used_ports(c.pods_on(node).iter().map(|&t| c.pod(t))),
                ),
            };
            if record(statuses, r) {
                return true;
            }
        }
        if self.args.pod_affinity && !skip(PreFiltered::InterPodAffinity) {
            let r = match &state.inter_pod_affinity {
                None => Err(missing(PreFiltered::InterPodAffinity)),
                Some(s) => inter_pod_affinity::filter(s, c.labels(node)),
            };
            if record(statuses, r) {
                return true;
            }
        }
        if self.args.pod_topology_spread && !skip(PreFiltered::PodTopologySpread) {
            let r = match &state.topology_spread {
                None => Err(missing(PreFiltered::PodTopologySpread)),
                Some(s) => spread_filter::filter(s, &c.pod(task).metadata.labels, c.labels(node)),
            };
            if record(statuses, r) {
                return true;
            }
        }
        false
    }
}

impl Plugin for Predicates {
    fn name(&self) -> &str {
        "predicates"
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        self.view = ClusterView::open(ssn, true);
    }

    fn pre_predicate(&self, ssn: &SessionState, task: TaskId) -> Result<(), FitError> {
        let c = Cluster::new(ssn, &self.view);
        let mut state = self.state_of(task).as_ref().clone();
        let result = self.run_pre_filters(&c, task, &mut state);
        lock(&self.states).insert(task, Arc::new(state));
        result
    }

    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        let c = Cluster::new(ssn, &self.view);
        let state = self.state_of(task);
        let mut statuses = Vec::new();
        if ssn.snap.nodes.max_task_num(node) <= c.pods_on(node).len() as f64 {
            statuses.push(Status {
                code: StatusCode::Unschedulable,
                reason: POD_NUMBER_EXCEEDED.into(),
            });
        }
        let (stable, fit) = self.cached_stable_filters(&c, task, node, &state);
        statuses.extend(stable);
        if fit {
            self.other_filters(&c, task, node, &state, &mut statuses);
        }
        if statuses.is_empty() {
            Ok(())
        } else {
            Err(FitError { statuses })
        }
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        self.view.on_allocate(ssn, task);
        Ok(())
    }

    fn on_deallocate(&mut self, _ssn: &SessionState, task: TaskId) {
        self.view.on_deallocate(task);
    }
}
