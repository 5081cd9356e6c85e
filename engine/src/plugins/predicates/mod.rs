//! The `predicates` plugin: kube-scheduler's filters in Volcano's order, with its status
//! handling (Volcano: pkg/scheduler/plugins/predicates/predicates.go).
//!
//! PrePredicate runs the PreFilters (NodeAffinity, NodePorts, InterPodAffinity,
//! NodeVolumeLimits, VolumeZone, PodTopologySpread, VolumeBinding) and keeps their results in
//! the task's `CycleState` for the session. Predicate then checks the pod count (recorded,
//! evaluation continues), the stable filters (NodeUnschedulable, NodeAffinity, TaintToleration;
//! optionally memoised per pod template) and the rest (NodePorts, InterPodAffinity,
//! NodeVolumeLimits, VolumeZone, PodTopologySpread, VolumeBinding); a status coded U&U, Error,
//! Wait or Skip stops the evaluation. The plugin keeps its kube node map in step through the
//! allocate and deallocate events, and there, as VolumeBinding's Reserve and Unreserve, assumes
//! and reverts the volumes a placement takes; at close it leaves each bound task's volume work
//! for its bind (Volcano: pkg/scheduler/plugins/predicates/predicates.go, InitPlugin and the
//! allocate event handler).

mod arguments;
mod cycle_state;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

use fixedbitset::FixedBitSet;
use foldhash::fast::FixedState;
use rayon::prelude::*;

use self::arguments::PredicateArgs;
use self::cycle_state::{CycleState, PreFiltered, SkipSet};
use super::k8s::volume_binding::{self, Assumed, AssumedVolumes, PodVolumes};
use super::k8s::{Cluster, ClusterView};
use super::k8s::{inter_pod_affinity, node_affinity, node_ports, node_unschedulable};
use super::k8s::{spread_filter, taint_toleration, volume_limits, volume_zone};
use crate::config::{ArgumentError, Arguments};
use crate::framework::{FitError, Plugin, SessionState, Status, StatusCode, VolumeBinds};
use crate::model::{NodeId, TaskId};
use crate::snapshot::SignatureId;

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
    /// Each task's cycle state, kept for the whole session as `ssn.GetCycleState` keeps it
    /// (read for every node a task is checked against, from many threads at once). A column by
    /// task, sized when the first state is kept: a job's tasks are neighbours in it, where a
    /// hash map spread 100k inserts of a contended allocate over cold buckets.
    states: RwLock<KeptStates>,
    /// The states that hold nothing but skips, one shared copy per skip set (most pending
    /// tasks have no affinity, ports or spread constraints).
    skips_only: [OnceLock<Arc<CycleState>>; SkipSet::COUNT],
    /// Cycle states saved while a preemption dry run changes them.
    saved: Mutex<HashMap<TaskId, Arc<CycleState>>>,
    /// Stable-filter outcome per (node, pod template), filled when `predicate.CacheEnable`.
    cache: Mutex<HashMap<(NodeId, String), bool>>,
    /// The PreFilter answers that depend on the task's signature alone, per signature: a task
    /// of a signature seen before takes them without reading its pod, cache misses per task of
    /// a contended allocate.
    by_signature: Mutex<HashMap<SignatureId, SignatureAnswers, FixedState>>,
    /// The volumes and claims the session's placements assumed (VolumeBinding's Reserve).
    assumed: AssumedVolumes,
    /// Per placed task with volume work: what it assumed and the work its bind needs.
    reserved: HashMap<TaskId, (Assumed, PodVolumes)>,
}

/// What `predicate` reads on every call, under one lock (a second lock word would be a second
/// line the checking threads pass between them).
#[derive(Debug, Default)]
struct KeptStates {
    /// By task.
    tasks: Vec<Option<Arc<CycleState>>>,
    /// Per signature, the nodes that pass the stable filters (NodeUnschedulable, NodeAffinity,
    /// TaintToleration) outright, when `static_feasible` worked them out exactly: a class
    /// re-ranks a node after each placement, and a node's labels and taints do not change in a
    /// session.
    stable_passes: HashMap<SignatureId, FixedBitSet, FixedState>,
}

/// PreFilter answers read from the task's signature alone: the node selector and node affinity
/// (NodeAffinity), the containers' host ports and restart policies (NodePorts).
#[derive(Debug, Clone)]
struct SignatureAnswers {
    node_affinity: node_affinity::PreFilterAnswer,
    node_ports: Option<Vec<node_ports::HostPort>>,
    /// The whole PrePredicate state and outcome, when the signature decides them
    /// (`signature_state`), shared by its tasks.
    state: Arc<OnceLock<PrePredicated>>,
}

/// A PrePredicate's kept state and its outcome.
type PrePredicated = (Arc<CycleState>, Result<(), FitError>);

/// Builds the plugin from its arguments.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Predicates::new(PredicateArgs::parse(args)?)))
}

/// Locks a map; a poisoned lock is still usable (the maps hold no invariant across entries).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The cycle states, to read.
fn read<T>(m: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|p| p.into_inner())
}

/// The cycle states, for change.
fn write<T>(m: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|p| p.into_inner())
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
        reason: which.missing_state().into(),
    }
}

impl Predicates {
    fn new(args: PredicateArgs) -> Predicates {
        Predicates {
            args,
            view: ClusterView::default(),
            states: RwLock::new(KeptStates::default()),
            skips_only: std::array::from_fn(|_| OnceLock::new()),
            saved: Mutex::new(HashMap::new()),
            cache: Mutex::new(HashMap::new()),
            by_signature: Mutex::new(HashMap::default()),
            assumed: AssumedVolumes::default(),
            reserved: HashMap::new(),
        }
    }

    /// Moves `task` on or off its node in `preemptor`'s inter-pod affinity counts.
    fn simulate_move(&self, ssn: &SessionState, preemptor: TaskId, task: TaskId, delta: i64) {
        let Some(node) = ssn.tasks.node[task] else {
            return;
        };
        let c = Cluster::new(ssn, &self.view);
        let mut states = write(&self.states);
        let Some(Some(state)) = states.tasks.get_mut(preemptor.idx()) else {
            return;
        };
        if let Some(ipa) = Arc::make_mut(state).inter_pod_affinity.as_mut() {
            inter_pod_affinity::update_with_pod(ipa, &c, preemptor, task, c.labels(node), delta);
        }
    }

    /// VolumeBinding's Reserve: assumes the volumes `task` takes on its node, as its filter
    /// found them there, unless every claim of the pod is bound already.
    fn reserve_volumes(&mut self, ssn: &SessionState, task: TaskId) {
        if !self.args.volume_binding || !ssn.snap.tasks.claims[task.idx()] {
            return;
        }
        let (Some(node), Some(state)) = (ssn.tasks.node[task], self.state_of(task)) else {
            return;
        };
        let Some(claims) = &state.volume_binding else {
            return;
        };
        let storage = &ssn.snap.storage;
        if volume_binding::all_bound(storage, &ssn.snap.tasks.pod[task.idx()]) {
            return;
        }
        let (name, labels) = (
            &*ssn.snap.nodes.name[node.idx()],
            &ssn.snap.nodes.labels[node.idx()],
        );
        if let Ok(volumes) = volume_binding::find(storage, &self.assumed, claims, name, labels) {
            let assumed = self.assumed.assume(&volumes, name);
            self.reserved.insert(task, (assumed, volumes));
        }
    }

    fn state_of(&self, task: TaskId) -> Option<Arc<CycleState>> {
        read(&self.states).tasks.get(task.idx()).cloned().flatten()
    }

    /// Keeps `state` as `task`'s.
    fn keep_state(&self, ssn: &SessionState, task: TaskId, state: Arc<CycleState>) {
        let tasks = &mut write(&self.states).tasks;
        if tasks.len() <= task.idx() {
            tasks.resize(ssn.snap.tasks.len().max(task.idx() + 1), None);
        }
        tasks[task.idx()] = Some(state);
    }

    /// `state` to keep: a skips-only state is shared, not allocated per task.
    fn stored(&self, state: CycleState) -> Arc<CycleState> {
        match state.skips_only() {
            Some(skip) => self.skips_only[skip.index()]
                .get_or_init(|| Arc::new(state))
                .clone(),
            None => Arc::new(state),
        }
    }

    /// The state and outcome of `task`'s PrePredicate when its signature decides them, shared
    /// by the signature's tasks: the pod sets no inter-pod term and no existing pod's required
    /// anti-affinity is in play, so InterPodAffinity and PodTopologySpread skip, and the other
    /// PreFilters read the signature alone. Whatever state the task had is the same (a state
    /// only grows by these answers, and only inter-pod state is changed by a preemption's dry
    /// run). Each task of a placement allocated its own state before, a fresh page of memory
    /// every dozen tasks in a first cycle.
    fn signature_state(&self, c: &Cluster, task: TaskId) -> Option<PrePredicated> {
        if c.ssn.snap.tasks.inter_pod[task.idx()]
            || self.claims_matter(c.ssn, task)
            || !self.view.nodes_with_required_anti_affinity().is_empty()
        {
            return None;
        }
        let signature = c.ssn.snap.tasks.signature[task.idx()];
        let known = lock(&self.by_signature)
            .get(&signature)
            .map(|a| a.state.clone());
        let cell = known.unwrap_or_else(|| self.signature_answers(c, task).state);
        let shared = cell.get_or_init(|| {
            let mut state = CycleState::default();
            let result = self.run_pre_filters(c, task, &mut state);
            (self.stored(state), result)
        });
        Some(shared.clone())
    }

    /// True when `task`'s pod names claims and a volume filter runs: its PreFilter answers and
    /// its fit on a node then depend on its claims and on the volumes other placements took.
    fn claims_matter(&self, ssn: &SessionState, task: TaskId) -> bool {
        self.args.volumes() && ssn.snap.tasks.claims[task.idx()]
    }

    /// `task`'s signature answers, worked out once per signature in a session.
    fn signature_answers(&self, c: &Cluster, task: TaskId) -> SignatureAnswers {
        let signature = c.ssn.snap.tasks.signature[task.idx()];
        if let Some(answers) = lock(&self.by_signature).get(&signature) {
            return answers.clone();
        }
        let pod = c.pod(task);
        let answers = SignatureAnswers {
            node_affinity: node_affinity::pre_filter_memoised(pod),
            node_ports: node_ports::pre_filter(pod),
            state: Arc::default(),
        };
        lock(&self.by_signature).insert(signature, answers.clone());
        answers
    }

    fn run_pre_filters(
        &self,
        c: &Cluster,
        task: TaskId,
        state: &mut CycleState,
    ) -> Result<(), FitError> {
        use PreFiltered::*;
        let answers = self.signature_answers(c, task);
        if self.args.node_affinity
            && let Some(s) = pre_filtered(state, NodeAffinity, answers.node_affinity)?
        {
            state.node_affinity = Some(s);
        }
        if self.args.node_ports
            && let Some(p) = pre_filtered(state, NodePorts, Ok(answers.node_ports))?
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
        // A pod without claims skips the volume filters without being read.
        let claims = c.ssn.snap.tasks.claims[task.idx()];
        let storage = &c.ssn.snap.storage;
        if self.args.node_volume_limits {
            let applies = claims && volume_limits::applies(c.pod(task));
            pre_filtered(state, NodeVolumeLimits, Ok(applies.then_some(())))?;
        }
        if self.args.volume_zone {
            let r = if claims {
                volume_zone::pre_filter(storage, c.pod(task))
            } else {
                Ok(None)
            };
            if let Some(t) = pre_filtered(state, VolumeZone, r)? {
                state.volume_zone = Some(Arc::new(t));
            }
        }
        if self.args.pod_topology_spread
            && let Some(s) =
                pre_filtered(state, PodTopologySpread, spread_filter::pre_filter(c, task))?
        {
            state.topology_spread = Some(s);
        }
        if self.args.volume_binding {
            let r = if claims {
                volume_binding::pre_filter(storage, c.pod(task))
            } else {
                Ok(None)
            };
            if let Some(claims) = pre_filtered(state, VolumeBinding, r)? {
                state.volume_binding = Some(Arc::new(claims));
            }
        }
        // DynamicResources, which Volcano runs whenever kube's DynamicResourceAllocation gate
        // is on (locked on since 1.35): tephra allocates no dynamic resources, so a pod that
        // claims some is refused, not placed without its devices.
        if !c.pod(task).spec.resource_claims.is_empty() {
            return Err(FitError::new(
                StatusCode::Error,
                "plugin DynamicResources pre-predicates failed the pod claims dynamic resources \
                 (spec.resourceClaims), which tephra does not allocate",
            ));
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
        if self.args.node_affinity && !state.skip.contains(PreFiltered::NodeAffinity) {
            // Without a PreFilter state kube computes the requirement on the spot.
            let fallback;
            let required = match &state.node_affinity {
                Some(r) => r.as_ref(),
                None => {
                    fallback = node_affinity::RequiredNodeAffinity::of(pod);
                    &fallback
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
            && c.ssn.snap.taints.repels(node)
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

    /// NodePorts, InterPodAffinity, PodTopologySpread, until one aborts.
    fn other_filters(
        &self,
        c: &Cluster,
        task: TaskId,
        node: NodeId,
        state: &CycleState,
        statuses: &mut Vec<Status>,
    ) {
        let skip = |f| state.skip.contains(f);
        if self.args.node_ports && !skip(PreFiltered::NodePorts) {
            let r = match &state.node_ports {
                None => Err(missing(PreFiltered::NodePorts)),
                Some(wanted) => node_ports::filter(
                    wanted,
                    &node_ports::used_ports(c.pods_on(node).iter().map(|&t| c.pod(t))),
                ),
            };
            if record(statuses, r) {
                return;
            }
        }
        if self.args.pod_affinity && !skip(PreFiltered::InterPodAffinity) {
            let r = match &state.inter_pod_affinity {
                None => Err(missing(PreFiltered::InterPodAffinity)),
                Some(s) => inter_pod_affinity::filter(s, c.labels(node)),
            };
            if record(statuses, r) {
                return;
            }
        }
        let storage = &c.ssn.snap.storage;
        if self.args.node_volume_limits && !skip(PreFiltered::NodeVolumeLimits) {
            let on_node = c.pods_on(node).iter().map(|&t| c.pod(t));
            let r = volume_limits::filter(storage, c.pod(task), c.name(node), on_node);
            if record(statuses, r) {
                return;
            }
        }
        if self.args.volume_zone && !skip(PreFiltered::VolumeZone) {
            // Without a PreFilter state kube reads the pod's volumes on the spot.
            let r = match &state.volume_zone {
                Some(t) => volume_zone::filter(t, c.labels(node)),
                None => volume_zone::pre_filter(storage, c.pod(task))
                    .and_then(|t| volume_zone::filter(&t.unwrap_or_default(), c.labels(node))),
            };
            if record(statuses, r) {
                return;
            }
        }
        if self.args.pod_topology_spread && !skip(PreFiltered::PodTopologySpread) {
            let r = match &state.topology_spread {
                None => Err(missing(PreFiltered::PodTopologySpread)),
                Some(s) => spread_filter::filter(s, &c.pod(task).metadata.labels, c.labels(node)),
            };
            if record(statuses, r) {
                return;
            }
        }
        if self.args.volume_binding && !skip(PreFiltered::VolumeBinding) {
            let r = match &state.volume_binding {
                None => Err(missing(PreFiltered::VolumeBinding)),
                Some(claims) => volume_binding::find(
                    storage,
                    &self.assumed,
                    claims,
                    c.name(node),
                    c.labels(node),
                )
                .map(|_| ()),
            };
            record(statuses, r);
        }
    }

    /// `predicate` of one node with the states read.
    fn check_node(
        &self,
        c: &Cluster,
        states: &KeptStates,
        task: TaskId,
        node: NodeId,
    ) -> Result<(), FitError> {
        let ssn = c.ssn;
        let none = CycleState::default();
        let state = states
            .tasks
            .get(task.idx())
            .and_then(Option::as_deref)
            .unwrap_or(&none);
        let mut statuses = Vec::new();
        if ssn.snap.nodes.max_task_num(node) <= c.pods_on(node).len() as f64 {
            statuses.push(Status {
                code: StatusCode::Unschedulable,
                reason: POD_NUMBER_EXCEEDED.into(),
            });
        }
        let passes_stable = states
            .stable_passes
            .get(&ssn.snap.tasks.signature[task.idx()])
            .is_some_and(|passes| passes.contains(node.idx()));
        let (stable, fit) = if passes_stable {
            (Vec::new(), true)
        } else {
            self.cached_stable_filters(c, task, node, state)
        };
        statuses.extend(stable);
        if fit {
            self.other_filters(c, task, node, state, &mut statuses);
        }
        if statuses.is_empty() {
            Ok(())
        } else {
            Err(FitError {
                statuses: statuses.into(),
            })
        }
    }
}

impl Plugin for Predicates {
    fn name(&self) -> &str {
        "predicates"
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        self.view = ClusterView::open(ssn, true);
    }

    /// Node-local unless inter-pod affinity or topology spread is in play (those read other
    /// nodes' pods): the pod has (anti-)affinity or spread constraints, or some existing pod's
    /// required anti-affinity could reject it; or unless the pod names claims (a volume one
    /// placement takes changes the pod's fit on other nodes, and its claims are not part of its
    /// signature).
    fn node_local(&self, ssn: &SessionState, task: TaskId) -> bool {
        // A pod without inter-pod terms (nearly all) is answered without reading it.
        let own_terms = ssn.snap.tasks.inter_pod[task.idx()];
        let pod = &ssn.snap.tasks.pod[task.idx()];
        let affinity = own_terms && self.view.info(task).has_pod_affinity
            || !self.view.nodes_with_required_anti_affinity().is_empty();
        let spread = own_terms && !pod.spec.topology_spread_constraints.is_empty();
        !(self.args.pod_affinity && affinity
            || self.args.pod_topology_spread && spread
            || self.claims_matter(ssn, task))
    }

    /// Nodes that pass the pod's `nodeSelector` (part of NodeAffinity), NodeUnschedulable and
    /// TaintToleration: filters over what a session never changes. The selector is set algebra
    /// on the snapshot's label index; the other two run the functions `predicate` runs, on the
    /// nodes left (TaintToleration only on nodes with a repelling taint, as `predicate` does).
    /// When the selector is all of the pod's NodeAffinity, the set is exactly the nodes that
    /// pass the three, and `predicate` skips them on its nodes (`KeptStates::stable_passes`).
    fn static_feasible(&self, ssn: &SessionState, task: TaskId) -> Option<FixedBitSet> {
        let snap = &ssn.snap;
        let pod = &snap.tasks.pod[task.idx()];
        let mut candidates = FixedBitSet::with_capacity(snap.nodes.len());
        candidates.insert_range(..);
        if self.args.node_affinity {
            for (key, value) in &pod.spec.node_selector {
                match snap.labels.with_value(key, value) {
                    Some(nodes) => nodes.retain_in(&mut candidates),
                    None => candidates.clear(),
                }
            }
        }
        let passes = |&n: &usize| {
            node_unschedulable::filter(pod, snap.nodes.unschedulable[n]).is_ok()
                && (!self.args.taint_toleration
                    || !snap.taints.repels(NodeId(n as u32))
                    || taint_toleration::filter(pod, &snap.nodes.taints[n]).is_ok())
        };
        let candidates: Vec<usize> = candidates.ones().collect();
        let feasible: Vec<usize> = candidates.into_par_iter().filter(passes).collect();
        let feasible: FixedBitSet = feasible.into_iter().collect();
        // Exactly the stable filters' passes when the selector is all of NodeAffinity, and no
        // per-template cache may answer for another pod of the template instead.
        if !self.args.cache && (!self.args.node_affinity || node_affinity::selector_only(pod)) {
            let mut passes = feasible.clone();
            passes.grow(snap.nodes.len());
            write(&self.states)
                .stable_passes
                .insert(snap.tasks.signature[task.idx()], passes);
        }
        Some(feasible)
    }

    fn pre_predicate(&self, ssn: &SessionState, task: TaskId) -> Result<(), FitError> {
        let c = Cluster::new(ssn, &self.view);
        if let Some((state, result)) = self.signature_state(&c, task) {
            self.keep_state(ssn, task, state);
            return result;
        }
        let mut state = self
            .state_of(task)
            .map(|s| s.as_ref().clone())
            .unwrap_or_default();
        let result = self.run_pre_filters(&c, task, &mut state);
        let state = self.stored(state);
        self.keep_state(ssn, task, state);
        result
    }

    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        let c = Cluster::new(ssn, &self.view);
        // Read in place: cloning the shared state's Arc from every thread checking the task's
        // nodes would make its reference count the contended line of the scan.
        self.check_node(&c, &read(&self.states), task, node)
    }

    /// The states are read once a batch: threads scanning a class's nodes together took the
    /// lock node by node, and its reader count was the line they contended on (a `large`
    /// cycle's node checks ran no faster on two threads than on one).
    fn predicate_nodes(
        &self,
        ssn: &SessionState,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Vec<Result<(), FitError>> {
        let c = Cluster::new(ssn, &self.view);
        let states = read(&self.states);
        nodes
            .iter()
            .map(|&n| self.check_node(&c, &states, task, n))
            .collect()
    }

    fn simulation_begin(&self, _ssn: &SessionState, preemptor: TaskId) {
        let state = self.state_of(preemptor).unwrap_or_default();
        lock(&self.saved).insert(preemptor, state);
    }

    fn simulate_remove_task(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        task: TaskId,
    ) -> Result<(), String> {
        self.simulate_move(ssn, preemptor, task, -1);
        Ok(())
    }

    fn simulate_add_task(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        task: TaskId,
    ) -> Result<(), String> {
        self.simulate_move(ssn, preemptor, task, 1);
        Ok(())
    }

    fn simulation_end(&self, ssn: &SessionState, preemptor: TaskId) {
        if let Some(state) = lock(&self.saved).remove(&preemptor) {
            self.keep_state(ssn, preemptor, state);
        }
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        self.reserve_volumes(ssn, task);
        self.view.on_allocate(ssn, task);
        Ok(())
    }

    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        if let Some((assumed, _)) = self.reserved.remove(&task) {
            self.assumed.revert(assumed);
        }
        self.view.on_deallocate(ssn, task);
    }

    /// Leaves each placed task's volume work for its bind.
    fn on_session_close(&mut self, ssn: &mut SessionState) {
        for (task, (_, volumes)) in self.reserved.drain() {
            let binds = VolumeBinds {
                volumes: volumes
                    .bindings
                    .iter()
                    .map(|(pv, claim)| {
                        let m = &claim.metadata.meta;
                        let claim = crate::api::ClaimReference {
                            namespace: m.namespace.clone(),
                            name: m.name.clone(),
                            uid: m.uid.clone(),
                        };
                        (pv.metadata.name.clone(), claim)
                    })
                    .collect(),
                provisions: volumes
                    .provisions
                    .iter()
                    .map(|c| {
                        (
                            c.metadata.meta.namespace.clone(),
                            c.metadata.meta.name.clone(),
                        )
                    })
                    .collect(),
                bind_timeout: self.args.bind_timeout,
            };
            ssn.volume_binds.insert(task, binds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::{FitErrors, Session, Statement};
    use crate::harness::find::{node_id, task};
    use crate::harness::objects::{JOB, node, pod, running_pod};
    use crate::harness::{conf, session};

    const ANTI_WORKER: &str = "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {role: worker}}, topologyKey: kubernetes.io/hostname}]}}";

    fn open(args: &str, objects: &[String]) -> Session {
        session(
            &conf("predicates", args),
            &[JOB.to_string(), objects.concat()].concat(),
        )
    }

    /// PrePredicate then Predicate of `ns/<pod>` on `node`, as `(code, reason)` pairs.
    fn check(ssn: &Session, pod: &str, node: &str) -> Vec<(StatusCode, String)> {
        let t = task(ssn, &format!("ns/{pod}"));
        ssn.pre_predicate(t).expect("pre-predicate");
        match ssn.predicate(t, node_id(ssn, node)) {
            Ok(()) => Vec::new(),
            Err(e) => e
                .statuses
                .iter()
                .map(|s| (s.code, s.reason.to_string()))
                .collect(),
        }
    }

    fn one(code: StatusCode, reason: &str) -> Vec<(StatusCode, String)> {
        vec![(code, reason.to_string())]
    }

    const CPU: &str = "cpu: '4', memory: 4Gi, pods: '10'";

    #[test]
    fn a_full_node_is_recorded_and_evaluation_continues() {
        let ssn = open(
            "",
            &[
                "- {kind: Node, metadata: {name: n1}, spec: {taints: [{key: k, value: v, effect: NoSchedule}]}, status: {allocatable: {cpu: '4', pods: '1'}}}\n".to_string(),
                running_pod("old", "n1", "", "tolerations: [{operator: Exists}]"),
                pod("p", "", ""),
            ],
        );
        let got = check(&ssn, "p", "n1");
        assert_eq!(
            got,
            vec![
                (
                    StatusCode::Unschedulable,
                    "node(s) pod number exceeded".to_string()
                ),
                (
                    StatusCode::UnschedulableAndUnresolvable,
                    "node(s) had untolerated taint(s)".to_string()
                ),
            ]
        );
    }

    #[test]
    fn a_node_without_a_pods_allocatable_takes_no_pod() {
        let ssn = open("", &[node("n1", "", "cpu: '4'"), pod("p", "", "")]);
        assert_eq!(
            check(&ssn, "p", "n1"),
            one(StatusCode::Unschedulable, "node(s) pod number exceeded")
        );
    }

    #[test]
    fn a_cordoned_node_is_unresolvable_and_stops_evaluation() {
        let ssn = open(
            "",
            &[
                "- {kind: Node, metadata: {name: n1}, spec: {unschedulable: true, taints: [{key: k, effect: NoSchedule}]}, status: {allocatable: {pods: '10'}}}\n".to_string(),
                pod("p", "", ""),
            ],
        );
        assert_eq!(
            check(&ssn, "p", "n1"),
            one(
                StatusCode::UnschedulableAndUnresolvable,
                "node(s) were unschedulable"
            )
        );
    }

    #[test]
    fn a_node_selector_mismatch_is_unresolvable() {
        let ssn = open(
            "",
            &[
                node("n1", "zone: a", CPU),
                node("n2", "zone: b", CPU),
                pod("p", "", "nodeSelector: {zone: a}"),
            ],
        );
        assert!(check(&ssn, "p", "n1").is_empty());
        assert_eq!(
            check(&ssn, "p", "n2"),
            one(
                StatusCode::UnschedulableAndUnresolvable,
                "node(s) didn't match Pod's node affinity/selector"
            )
        );
    }

    /// `static_feasible`, then the predicate on each node, as a class ranks them.
    fn check_after_static_set(ssn: &Session, pod: &str, nodes: &[&str]) -> Vec<bool> {
        let t = task(ssn, &format!("ns/{pod}"));
        ssn.pre_predicate(t).expect("pre-predicate");
        ssn.static_feasible(t)
            .expect("predicates gives a static set");
        nodes
            .iter()
            .map(|n| ssn.predicate(t, node_id(ssn, n)).is_ok())
            .collect()
    }

    #[test]
    fn the_static_set_answers_the_stable_filters_of_a_selector_only_pod() {
        let ssn = open(
            "",
            &[
                node("n1", "zone: a", CPU),
                node("n2", "zone: b", CPU),
                "- {kind: Node, metadata: {name: n3, labels: {zone: a}}, spec: {unschedulable: true}, status: {allocatable: {cpu: '4', pods: '10'}}}\n".to_string(),
                pod("p", "", "nodeSelector: {zone: a}"),
            ],
        );
        assert_eq!(
            check_after_static_set(&ssn, "p", &["n1", "n2", "n3"]),
            [true, false, false]
        );
    }

    #[test]
    fn a_node_in_the_static_set_still_fails_required_terms_the_set_does_not_cover() {
        let terms = "nodeSelector: {zone: a}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}]}}}";
        let ssn = open(
            "",
            &[
                node("n1", "zone: a, disk: hdd", CPU),
                node("n2", "zone: a, disk: ssd", CPU),
                pod("p", "", terms),
            ],
        );
        assert_eq!(
            check_after_static_set(&ssn, "p", &["n1", "n2"]),
            [false, true]
        );
    }

    #[test]
    fn tasks_of_one_signature_without_inter_pod_terms_share_one_pre_predicate_state() {
        let ssn = open(
            "",
            &[
                node("n1", "zone: a", CPU),
                pod("a", "", "nodeSelector: {zone: a}"),
                pod("b", "", "nodeSelector: {zone: a}"),
                pod("c", "", ANTI_WORKER),
                pod("d", "", ANTI_WORKER),
            ],
        );
        let mut plugin = Predicates::new(PredicateArgs::parse(&Arguments::default()).unwrap());
        plugin.on_session_open(&ssn.state);
        let state = |name: &str| {
            let t = task(&ssn, &format!("ns/{name}"));
            plugin.pre_predicate(&ssn.state, t).expect("pre-predicate");
            plugin.state_of(t).expect("a kept state")
        };
        let (a, b) = (state("a"), state("b"));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(a.node_affinity.is_some());
        assert!(a.skip.contains(PreFiltered::InterPodAffinity));
        let (c, d) = (state("c"), state("d"));
        assert!(c.inter_pod_affinity.is_some());
        assert!(!Arc::ptr_eq(&c, &d));
        assert!(Arc::ptr_eq(&state("a"), &a), "asked again, the same state");
    }

    #[test]
    fn an_untolerated_taint_is_unresolvable_unless_the_filter_is_disabled() {
        let objects = [
            "- {kind: Node, metadata: {name: n1}, spec: {taints: [{key: k, value: v, effect: NoExecute}]}, status: {allocatable: {pods: '10'}}}\n".to_string(),
            pod("p", "", ""),
        ];
        assert_eq!(
            check(&open("", &objects), "p", "n1"),
            one(
                StatusCode::UnschedulableAndUnresolvable,
                "node(s) had untolerated taint(s)"
            )
        );
        assert!(
            check(
                &open("predicate.TaintTolerationEnable: false", &objects),
                "p",
                "n1"
            )
            .is_empty()
        );
    }

    #[test]
    fn a_taken_host_port_is_unschedulable_and_does_not_stop_evaluation() {
        let port = "containers: [{ports: [{containerPort: 80, hostPort: 8080}]}]";
        let ssn = open(
            "",
            &[
                node("n1", "kubernetes.io/hostname: n1", CPU),
                running_pod("web", "n1", "role: worker", port),
                pod("p", "role: worker", &format!("{port}, {ANTI_WORKER}")),
            ],
        );
        assert_eq!(
            check(&ssn, "p", "n1"),
            vec![
                (
                    StatusCode::Unschedulable,
                    "node(s) didn't have free ports for the requested pod ports".to_string()
                ),
                (
                    StatusCode::Unschedulable,
                    "node(s) didn't match pod anti-affinity rules".to_string()
                ),
            ]
        );
    }

    #[test]
    fn required_affinity_without_a_peer_is_unresolvable_except_for_the_first_of_a_group() {
        let affinity = "affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: db}}, topologyKey: zone}]}}";
        let ssn = open(
            "",
            &[
                node("n1", "zone: a", CPU),
                node("n2", "zone: b", CPU),
                running_pod("db", "n1", "app: db", ""),
                pod("web", "app: web", affinity),
                pod("db2", "app: db", affinity),
            ],
        );
        assert!(check(&ssn, "web", "n1").is_empty());
        assert_eq!(
            check(&ssn, "web", "n2"),
            one(
                StatusCode::UnschedulableAndUnresolvable,
                "node(s) didn't match pod affinity rules"
            )
        );
        let alone = open(
            "",
            &[
                node("n1", "zone: a", CPU),
                node("n2", "", CPU),
                pod("db2", "app: db", affinity),
            ],
        );
        assert!(
            check(&alone, "db2", "n1").is_empty(),
            "no peer anywhere and the pod matches its own terms"
        );
        assert_eq!(
            check(&alone, "db2", "n2").len(),
            1,
            "but the node still needs the topology key"
        );
    }

    #[test]
    fn existing_pods_anti_affinity_rejects_the_pod() {
        let ssn = open(
            "",
            &[
                node("n1", "kubernetes.io/hostname: n1", CPU),
                node("n2", "kubernetes.io/hostname: n2", CPU),
                running_pod("w1", "n1", "role: worker", ANTI_WORKER),
                pod("p", "role: worker", ""),
            ],
        );
        assert_eq!(
            check(&ssn, "p", "n1"),
            one(
                StatusCode::Unschedulable,
                "node(s) didn't satisfy existing pods anti-affinity rules"
            )
        );
        assert!(check(&ssn, "p", "n2").is_empty());
    }

    #[test]
    fn topology_spread_rejects_skew_and_nodes_without_the_key() {
        let spread = "topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: x}}}]";
        let ssn = open(
            "",
            &[
                node("n1", "zone: a", CPU),
                node("n2", "zone: b", CPU),
                node("n3", "", CPU),
                running_pod("x1", "n1", "app: x", ""),
                running_pod("x2", "n1", "app: x", ""),
                pod("p", "app: x", spread),
            ],
        );
        assert_eq!(
            check(&ssn, "p", "n1"),
            one(
                StatusCode::Unschedulable,
                "node(s) didn't match pod topology spread constraints"
            )
        );
        assert!(check(&ssn, "p", "n2").is_empty());
        assert_eq!(
            check(&ssn, "p", "n3"),
            one(
                StatusCode::UnschedulableAndUnresolvable,
                "node(s) didn't match pod topology spread constraints (missing required label)"
            )
        );
    }

    #[test]
    fn conflicting_node_name_pins_fail_the_pre_predicate() {
        let pins = "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [a]}, {key: metadata.name, operator: In, values: [b]}]}]}}}";
        let ssn = open("", &[node("n1", "", CPU), pod("p", "", pins)]);
        let err = ssn.pre_predicate(task(&ssn, "ns/p")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin NodeAffinity pre-predicates failed pod affinity terms conflict"
        );
        assert!(err.has_any(&[StatusCode::Error]));
    }

    #[test]
    fn a_pod_claiming_dynamic_resources_is_refused_and_its_twin_without_claims_is_not() {
        let claims = "resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]";
        let ssn = open(
            "",
            &[node("n1", "", CPU), pod("p", "", claims), pod("q", "", "")],
        );
        let err = ssn.pre_predicate(task(&ssn, "ns/p")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("plugin DynamicResources pre-predicates failed"),
            "{err}"
        );
        assert!(
            ssn.pre_predicate(task(&ssn, "ns/q")).is_ok(),
            "same signature otherwise"
        );
    }

    #[test]
    fn filters_without_a_pre_predicate_report_missing_state() {
        let ssn = open(
            "",
            &[
                node("n1", "", CPU),
                pod("p", "", "containers: [{ports: [{hostPort: 80}]}]"),
            ],
        );
        let err = ssn
            .predicate(task(&ssn, "ns/p"), node_id(&ssn, "n1"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "reading \"PreFilterNodePorts\" from cycleState: not found"
        );
        assert!(err.has_any(&[StatusCode::Error]));
    }

    #[test]
    fn the_stable_filter_cache_answers_for_the_same_pod_template() {
        let template =
            "annotations: {scheduling.k8s.io/group-name: pg, volcano.sh/template-uid: t1}";
        let objects = [
            "- {kind: Node, metadata: {name: n1}, spec: {taints: [{key: k, effect: NoSchedule}]}, status: {allocatable: {pods: '10'}}}\n".to_string(),
            pod("a", "", "").replace("annotations: {scheduling.k8s.io/group-name: pg}", template),
            pod("b", "", "").replace("annotations: {scheduling.k8s.io/group-name: pg}", template),
        ];
        let ssn = open("predicate.CacheEnable: true", &objects);
        assert_eq!(
            check(&ssn, "a", "n1"),
            one(
                StatusCode::UnschedulableAndUnresolvable,
                "node(s) had untolerated taint(s)"
            )
        );
        assert_eq!(
            check(&ssn, "b", "n1"),
            one(
                StatusCode::Error,
                "plugin equivalence cache predicates failed"
            )
        );
    }

    /// Conformance predicates/event-handler-pod-deallocate, at the plugin level.
    #[test]
    fn a_discarded_allocation_leaves_the_node_map() {
        let worker = |name: &str, cpu: &str, extra: &str| {
            pod(
                name,
                "role: worker",
                &format!(
                    "{extra}containers: [{{resources: {{requests: {{cpu: '{cpu}'}}}}}}], {ANTI_WORKER}"
                ),
            )
        };
        let mut ssn = open(
            "",
            &[
                node(
                    "node1",
                    "selector: worker, kubernetes.io/hostname: node1",
                    "cpu: '14', memory: 14Gi, pods: '10'",
                ),
                node(
                    "node2",
                    "kubernetes.io/hostname: node2",
                    "cpu: '3', memory: 3Gi, pods: '10'",
                ),
                worker("worker-1", "3", "nodeSelector: {selector: worker}, "),
                worker("worker-2", "5", ""),
                worker("worker-3", "4", ""),
            ],
        );
        assert_eq!(
            check(&ssn, "worker-1", "node2").len(),
            1,
            "node2 lacks the selector label"
        );
        assert!(check(&ssn, "worker-1", "node1").is_empty());
        let mut stmt = Statement::new();
        let (w1, node1) = (task(&ssn, "ns/worker-1"), node_id(&ssn, "node1"));
        stmt.allocate(&mut ssn, w1, node1).unwrap();
        assert_eq!(
            check(&ssn, "worker-2", "node1"),
            one(
                StatusCode::Unschedulable,
                "node(s) didn't match pod anti-affinity rules"
            )
        );
        stmt.discard(&mut ssn);
        assert!(check(&ssn, "worker-3", "node1").is_empty());
    }

    #[test]
    fn an_evicted_pod_frees_its_host_port() {
        let port = "containers: [{ports: [{hostPort: 8080}]}]";
        let mut ssn = open(
            "",
            &[
                node("n1", "", CPU),
                running_pod("old", "n1", "", port),
                pod("p", "", port),
            ],
        );
        assert_eq!(check(&ssn, "p", "n1").len(), 1);
        let mut stmt = Statement::new();
        let old = task(&ssn, "ns/old");
        stmt.evict(&mut ssn, old, "preempt").unwrap();
        assert!(check(&ssn, "p", "n1").is_empty());
    }

    /// Conformance predicates/pod-anti-affinity-pod-anti-affinity, the allocate half.
    #[test]
    fn a_full_node_with_an_anti_affine_peer_reports_both_reasons() {
        let ssn = open(
            "",
            &[
                node(
                    "n1",
                    "kubernetes.io/hostname: node1",
                    "cpu: '12', memory: 12G, pods: '2'",
                ),
                running_pod(
                    "worker-1",
                    "n1",
                    "role: worker",
                    &format!(
                        "containers: [{{resources: {{requests: {{cpu: '3'}}}}}}], {ANTI_WORKER}"
                    ),
                ),
                running_pod(
                    "worker-2",
                    "n1",
                    "",
                    "containers: [{resources: {requests: {cpu: '3'}}}]",
                ),
                pod(
                    "worker-3",
                    "role: worker",
                    &format!(
                        "containers: [{{resources: {{requests: {{cpu: '3'}}}}}}], {ANTI_WORKER}"
                    ),
                ),
            ],
        );
        let t = task(&ssn, "ns/worker-3");
        ssn.pre_predicate(t).unwrap();
        let n1 = node_id(&ssn, "n1");
        let err = ssn.predicate(t, n1).unwrap_err();
        assert!(
            !err.has_any(&[StatusCode::UnschedulableAndUnresolvable]),
            "preemption may still try the node"
        );
        let errors = FitErrors {
            nodes: [(n1, err)].into_iter().collect(),
            ..Default::default()
        };
        assert_eq!(
            errors.summary(1),
            "0/1 nodes are unavailable: 1 node(s) didn't match pod anti-affinity rules, 1 node(s) pod number exceeded."
        );
    }

    const LOCAL_CLASS: &str = "- {kind: StorageClass, metadata: {name: local}, provisioner: kubernetes.io/no-provisioner, volumeBindingMode: WaitForFirstConsumer}\n";

    /// An available local volume on node `n1`.
    const PV_ON_N1: &str = "- {kind: PersistentVolume, metadata: {name: pv1}, spec: {capacity: {storage: 10Gi}, accessModes: [ReadWriteOnce], storageClassName: local, nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]}}}, status: {phase: Available}}\n";

    /// An unbound claim `ns/<name>` of the local class.
    fn claim(name: &str) -> String {
        format!(
            "- {{kind: PersistentVolumeClaim, metadata: {{name: {name}, namespace: ns, uid: {name}}}, spec: {{accessModes: [ReadWriteOnce], storageClassName: local, resources: {{requests: {{storage: 1Gi}}}}}}}}\n"
        )
    }

    fn with_claim(claim: &str) -> String {
        format!("volumes: [{{name: d, persistentVolumeClaim: {{claimName: {claim}}}}}]")
    }

    fn local_volume_session(args: &str) -> Session {
        open(
            args,
            &[
                node("n1", "kubernetes.io/hostname: n1", CPU),
                node("n2", "kubernetes.io/hostname: n2", CPU),
                LOCAL_CLASS.to_string(),
                PV_ON_N1.to_string(),
                claim("ca"),
                claim("cb"),
                pod("a", "", &with_claim("ca")),
                pod("b", "", &with_claim("cb")),
            ],
        )
    }

    #[test]
    fn a_volume_one_placement_takes_is_gone_for_the_next_until_the_placement_is_undone() {
        let mut ssn = local_volume_session("");
        let bind_conflict = one(
            StatusCode::UnschedulableAndUnresolvable,
            "node(s) didn't find available persistent volumes to bind",
        );
        assert!(check(&ssn, "b", "n1").is_empty());
        assert_eq!(check(&ssn, "b", "n2"), bind_conflict);
        let mut stmt = Statement::new();
        let (a, n1) = (task(&ssn, "ns/a"), node_id(&ssn, "n1"));
        ssn.pre_predicate(a).unwrap();
        stmt.allocate(&mut ssn, a, n1).unwrap();
        assert_eq!(
            check(&ssn, "b", "n1"),
            bind_conflict,
            "pv1 is assumed for ca"
        );
        stmt.discard(&mut ssn);
        assert!(
            check(&ssn, "b", "n1").is_empty(),
            "the assumption is reverted"
        );
    }

    #[test]
    fn a_pod_with_claims_is_not_node_local_unless_every_volume_filter_is_off() {
        let ssn = local_volume_session("");
        assert!(!ssn.node_local(task(&ssn, "ns/a")));
        let off = local_volume_session(
            "predicate.VolumeBindingEnable: false, predicate.VolumeZoneEnable: false, predicate.NodeVolumeLimitsEnable: false",
        );
        assert!(off.node_local(task(&off, "ns/a")));
        assert!(check(&off, "b", "n2").is_empty());
    }

    #[test]
    fn a_missing_claim_fails_the_pre_predicate_at_the_first_volume_filter() {
        let ssn = open(
            "",
            &[node("n1", "", CPU), pod("p", "", &with_claim("gone"))],
        );
        let err = ssn.pre_predicate(task(&ssn, "ns/p")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin VolumeZone pre-predicates failed persistentvolumeclaim \"gone\" not found"
        );
    }
}
