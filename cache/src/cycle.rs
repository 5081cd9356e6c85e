//! One scheduling cycle, written once for every caller (the `vc-scheduler` loop, `tephra
//! simulate` and `bench`, the scenario runner, the criterion benches): snapshot the cluster
//! state, open a session, run the configured actions, close it into `Decisions`, and assume
//! them into the state. Callers watch the phases through a `CycleObserver` (timings, metrics,
//! profiles, conformance probes) instead of writing the sequence again.
//!
//! The driver owns what a scheduler keeps from cycle to cycle: the configuration (swapped on
//! reload), the timers and the carryover. In checking mode it also runs every cycle a second
//! time from scratch and fails on any difference (`check`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tephra_engine::actions;
use tephra_engine::api::Time;
use tephra_engine::config::{Action, ConfigError, SchedulerConfig};
use tephra_engine::framework::{
    Carryover, Decisions, NodeSampling, PluginRegistry, Session, SessionOptions, Timers,
};
use tephra_engine::snapshot::Snapshot;

use crate::ClusterState;

/// A step of a cycle, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Snapshot,
    Open,
    Action(Action),
    Close,
}

impl Phase {
    /// `snapshot`, `open`, the action's configuration name, `close`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Snapshot => "snapshot",
            Phase::Open => "open",
            Phase::Action(a) => a.name(),
            Phase::Close => "close",
        }
    }
}

/// Watches a cycle. Every method has an empty default, so an observer implements what it
/// needs.
pub trait CycleObserver {
    /// `phase` is about to start.
    fn phase_started(&mut self, _phase: Phase) {}
    /// `phase` ended after `took`.
    fn phase_finished(&mut self, _phase: Phase, _took: Duration) {}
    /// The session is open and no action ran yet (hook-level probes). What this does to the
    /// session is part of the cycle: in checking mode it is called again on the session from
    /// scratch, after the cycle, to do the same there.
    fn opened(&mut self, _session: &mut Session) {}
    /// Every action ran and the session is not closed yet.
    fn acted(&mut self, _session: &Session) {}
}

/// Observes nothing.
impl CycleObserver for () {}

/// Each phase's duration, in the order they ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseTimes(pub Vec<(Phase, Duration)>);

impl PhaseTimes {
    /// The duration of `phase` (zero when it did not run).
    pub fn of(&self, phase: Phase) -> Duration {
        self.0
            .iter()
            .filter(|(p, _)| *p == phase)
            .map(|(_, d)| *d)
            .sum()
    }

    /// Every phase together.
    pub fn total(&self) -> Duration {
        self.0.iter().map(|(_, d)| *d).sum()
    }
}

impl CycleObserver for PhaseTimes {
    fn phase_finished(&mut self, phase: Phase, took: Duration) {
        self.0.push((phase, took));
    }
}

/// Two observers, each told everything, the first first.
impl<A: CycleObserver, B: CycleObserver> CycleObserver for (A, B) {
    fn phase_started(&mut self, phase: Phase) {
        self.0.phase_started(phase);
        self.1.phase_started(phase);
    }
    fn phase_finished(&mut self, phase: Phase, took: Duration) {
        self.0.phase_finished(phase, took);
        self.1.phase_finished(phase, took);
    }
    fn opened(&mut self, session: &mut Session) {
        self.0.opened(session);
        self.1.opened(session);
    }
    fn acted(&mut self, session: &Session) {
        self.0.acted(session);
        self.1.acted(session);
    }
}

/// Passes on only `opened`: the checking mode's session from scratch gets the cycle's probes
/// and nothing else.
struct OpenedOnly<'a>(&'a mut dyn CycleObserver);

impl CycleObserver for OpenedOnly<'_> {
    fn opened(&mut self, session: &mut Session) {
        self.0.opened(session);
    }
}

/// Why a cycle gave no decisions.
#[derive(Debug)]
pub enum CycleError {
    /// The configuration cannot open a session (a plugin refused its arguments).
    Config(ConfigError),
    /// Checking mode: the cycle decided otherwise than the same cycle from scratch.
    CheckFailed(String),
}

impl std::fmt::Display for CycleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CycleError::Config(e) => write!(f, "cannot open a session: {e}"),
            CycleError::CheckFailed(why) => write!(f, "checking mode: {why}"),
        }
    }
}

impl std::error::Error for CycleError {}

impl From<ConfigError> for CycleError {
    fn from(e: ConfigError) -> Self {
        CycleError::Config(e)
    }
}

/// What one cycle saw and decided.
#[derive(Debug)]
pub struct Cycle {
    pub snapshot: Arc<Snapshot>,
    pub decisions: Decisions,
}

impl Cycle {
    /// Assumes the decisions into `state` and returns them. The snapshot goes first: it holds
    /// every pod version it listed, and assuming gives each decided pod a new version, so kept
    /// it would hold two versions of every decided pod (a contended first cycle decides 200k);
    /// the task table `state` keeps of it then lets go of the replaced ones
    /// (`Decisions::replaced_tasks`).
    pub fn assume(self, state: &mut ClusterState, now: Time) -> Decisions {
        let Cycle {
            snapshot,
            decisions,
        } = self;
        drop(snapshot);
        state.assume(&decisions, now);
        decisions
    }
}

/// Runs cycles with the state a scheduler keeps between them.
#[derive(Debug)]
pub struct CycleDriver {
    conf: Arc<SchedulerConfig>,
    default_queue: String,
    node_sampling: Option<NodeSampling>,
    timers: Arc<Timers>,
    carryover: Arc<Carryover>,
    disable_class_caches: bool,
    checking: bool,
}

impl CycleDriver {
    /// A driver for `conf` whose PodGroups without a queue go to `default_queue`, with fresh
    /// timers started at the zero time and an empty carryover.
    pub fn new(conf: Arc<SchedulerConfig>, default_queue: &str) -> Self {
        CycleDriver {
            conf,
            default_queue: default_queue.to_string(),
            node_sampling: None,
            timers: Arc::new(Timers::default()),
            carryover: Arc::default(),
            disable_class_caches: false,
            checking: false,
        }
    }

    /// Timers of a scheduler started at `started`.
    pub fn started_at(mut self, started: Time) -> Self {
        self.timers = Arc::new(Timers::new(started));
        self
    }

    /// Volcano's node sampling (`None`: every feasible node).
    pub fn node_sampling(mut self, sampling: Option<NodeSampling>) -> Self {
        self.node_sampling = sampling;
        self
    }

    /// Runs the engine's plain path (`SessionOptions::disable_class_caches`).
    pub fn disable_class_caches(mut self, disable: bool) -> Self {
        self.disable_class_caches = disable;
        self
    }

    /// Checking mode: every cycle is run again from scratch (`ClusterState::from_scratch`, an
    /// empty carryover, the class caches off, a copy of the timers as they were, job and task ids
    /// in an order drawn from the cycle's time) and its decisions must equal the cycle's, or the
    /// cycle fails with `CycleError::CheckFailed`; each job's task sums the snapshot carried over
    /// from the one before must also be what its tasks add up to. So whatever a cycle carries or
    /// patches from the one before (the cache's kept tables and memos, the carried node and job
    /// sums and classes, the patched close) is checked against the value computed from nothing,
    /// and no decision may hang on how ids were assigned. Costs a second, slow cycle: for tests
    /// and debugging.
    pub fn checking(mut self, on: bool) -> Self {
        self.checking = on;
        self
    }

    /// The configuration in force.
    pub fn conf(&self) -> &Arc<SchedulerConfig> {
        &self.conf
    }

    /// Swaps the configuration (a reload); the carried values are the engine's to drop, as
    /// they are keyed by what they depend on.
    pub fn set_conf(&mut self, conf: Arc<SchedulerConfig>) {
        self.conf = conf;
    }

    /// What the scheduler does once its initial lists are in, before its first cycle: the
    /// cache builds every row (`ClusterState::warm_up`), then one session is opened and closed
    /// on its second snapshot, running no action, and what it decides is dropped.
    ///
    /// A cycle builds its tables, node sums and decisions in memory the process has not
    /// touched yet, and the kernel zeroes each fresh page as it is first touched; the
    /// allocator keeps what the warm-up frees, so the first cycle reuses it as every later
    /// cycle reuses the memory of the one before. The session also leaves the kube view's
    /// per-node sums in the carryover, so the first cycle, like every later one, sums again
    /// only the nodes that changed since. It gets timers of its own, so no plugin's interval
    /// starts from it. Fails only when the configuration cannot open a session.
    pub fn warm_up(
        &self,
        state: &mut ClusterState,
        registry: &PluginRegistry,
    ) -> Result<(), ConfigError> {
        let options = SessionOptions {
            uid: "tephra-warm-up".into(),
            timers: Arc::new(Timers::default()),
            carryover: self.carryover.clone(),
            ..Default::default()
        };
        let mut opened = Ok(());
        state.warm_up(&self.default_queue, |snap| {
            opened = Session::open(Arc::new(snap), self.conf.clone(), registry, options)
                .map(|session| drop(session.close()));
        });
        opened
    }

    /// One cycle at `now` with session UID `uid`, its decisions assumed into `state` and
    /// returned (`decide`, then `Cycle::assume`).
    pub fn run(
        &self,
        state: &mut ClusterState,
        registry: &PluginRegistry,
        now: Time,
        uid: Arc<str>,
        observer: &mut dyn CycleObserver,
    ) -> Result<Decisions, CycleError> {
        let cycle = self.decide(state, registry, now, uid, observer)?;
        Ok(cycle.assume(state, now))
    }

    /// One cycle at `now`, its decisions returned and not assumed: `state` keeps its objects
    /// (its kept tables move on to this cycle's snapshot).
    pub fn decide(
        &self,
        state: &mut ClusterState,
        registry: &PluginRegistry,
        now: Time,
        uid: Arc<str>,
        observer: &mut dyn CycleObserver,
    ) -> Result<Cycle, CycleError> {
        let reference = self.checking.then(|| {
            let mut fresh = state.from_scratch();
            fresh.shuffle_ids(now.0 as u64);
            (fresh, Timers::clone(&self.timers))
        });
        let options = SessionOptions {
            now,
            uid: uid.clone(),
            node_sampling: self.node_sampling,
            timers: self.timers.clone(),
            carryover: self.carryover.clone(),
            disable_class_caches: self.disable_class_caches,
        };
        let cycle = self.session(state, registry, options, observer)?;
        if let Some((mut fresh, timers)) = reference {
            let snap = &cycle.snapshot;
            if let Some(stale) = snap.jobs.stale_task_sums(&snap.tasks) {
                return Err(CycleError::CheckFailed(format!(
                    "the snapshot at {} carried stale sums: {stale}",
                    now.0
                )));
            }
            let options = SessionOptions {
                now,
                uid,
                node_sampling: self.node_sampling,
                timers: Arc::new(timers),
                carryover: Arc::default(),
                disable_class_caches: true,
            };
            let mut same_probes = OpenedOnly(observer);
            let from_scratch = self.session(&mut fresh, registry, options, &mut same_probes)?;
            if let Some(difference) = first_difference(&cycle.decisions, &from_scratch.decisions) {
                return Err(CycleError::CheckFailed(format!(
                    "the cycle at {} decided otherwise than the same cycle from scratch: \
                     {difference}",
                    now.0
                )));
            }
        }
        Ok(cycle)
    }

    /// Snapshot, open, actions, close, each phase timed and shown to `observer`.
    fn session(
        &self,
        state: &mut ClusterState,
        registry: &PluginRegistry,
        options: SessionOptions,
        observer: &mut dyn CycleObserver,
    ) -> Result<Cycle, CycleError> {
        observer.phase_started(Phase::Snapshot);
        let start = Instant::now();
        let snapshot = Arc::new(state.snapshot(&self.default_queue));
        observer.phase_finished(Phase::Snapshot, start.elapsed());

        observer.phase_started(Phase::Open);
        let start = Instant::now();
        let mut session = Session::open(snapshot.clone(), self.conf.clone(), registry, options)?;
        observer.phase_finished(Phase::Open, start.elapsed());
        observer.opened(&mut session);

        for &action in &self.conf.actions {
            let phase = Phase::Action(action);
            observer.phase_started(phase);
            let start = Instant::now();
            actions::run(&mut session, action);
            observer.phase_finished(phase, start.elapsed());
        }
        observer.acted(&session);

        observer.phase_started(Phase::Close);
        let start = Instant::now();
        let decisions = session.close();
        observer.phase_finished(Phase::Close, start.elapsed());
        Ok(Cycle {
            snapshot,
            decisions,
        })
    }
}

/// The first decision in which `a` and `b` differ, field by field in `Decisions` order, or
/// `None` when they decided the same (the metrics, which hold timings, and the replaced rows,
/// which are ids, are not compared).
/// Binds, evictions and queues are compared in order: they come in the order Volcano decides
/// them. The rest come in job or task id order, which the session from scratch draws afresh
/// (`ClusterState::shuffle_ids`), so they are compared as sets.
fn first_difference(a: &Decisions, b: &Decisions) -> Option<String> {
    fn differ_as_sets<T: std::fmt::Debug>(what: &str, a: &[T], b: &[T]) -> Option<String> {
        let sorted = |v: &[T]| {
            let mut lines: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
            lines.sort_unstable();
            lines
        };
        differ(what, &sorted(a), &sorted(b))
    }
    fn differ<T: PartialEq + std::fmt::Debug>(what: &str, a: &[T], b: &[T]) -> Option<String> {
        if a == b {
            return None;
        }
        let at = a.iter().zip(b).position(|(x, y)| x != y);
        Some(match at {
            Some(i) => format!("{what}[{i}]: {:?} where from scratch {:?}", a[i], b[i]),
            None => format!(
                "{} {what} where from scratch {} (first extra: {:?})",
                a.len(),
                b.len(),
                a.get(b.len())
                    .map(|x| format!("{x:?}"))
                    .or_else(|| b.get(a.len()).map(|x| format!("{x:?}")))
            ),
        })
    }
    differ("binds", &a.binds, &b.binds)
        .or_else(|| differ("evictions", &a.evictions, &b.evictions))
        .or_else(|| differ_as_sets("pipelined", &a.pipelined, &b.pipelined))
        .or_else(|| differ_as_sets("pod_groups", &a.pod_groups, &b.pod_groups))
        .or_else(|| differ("queues", &a.queues, &b.queues))
        .or_else(|| differ_as_sets("pod_conditions", &a.pod_conditions, &b.pod_conditions))
        .or_else(|| differ_as_sets("events", &a.events, &b.events))
        .or_else(|| differ_as_sets("numa_bookings", &a.numa_bookings, &b.numa_bookings))
}
