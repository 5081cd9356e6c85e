//! The run loop (Volcano: pkg/scheduler/scheduler.go, Run and runOnce): apply what the watches
//! sent, reload the configuration if its directory changed, run one cycle on a snapshot, send
//! its binds on their way, sleep until `--schedule-period` after the session ended, again.
//! Sessions never overlap; a cycle's binds run in the background while the loop sleeps and the
//! next session decides (Volcano: cache/cache.go, BindTask binds in a goroutine), and one round
//! of binds is in flight at a time. Waiting for the round before is part of the period, not
//! added to it: Volcano's `wait.Until` counts the period from when `runOnce` returns, and
//! `runOnce` never waits for a bind. When a round is back, its outcomes are judged and the
//! cycle's status writes go to the background writer.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use tephra_adapters::profiling::PhaseProfiled;
use tephra_cache::cycle::CycleDriver;
use tephra_cache::{ClusterEvent, ClusterState, ObjectKind, Sharding, meta_of};
use tephra_engine::api::{ClusterObject, Time};
use tephra_engine::config::SchedulerConfig;
use tephra_engine::framework::{
    Bind, Decisions, EventObject, NodeSampling, PluginRegistry, PodConditionUpdate,
};
use tokio::sync::mpsc;

use crate::conf::ConfSource;
use crate::cycle_profile::{ActiveCycleProfile, CycleProfileRequests};
use crate::metrics::{CyclePhases, Metrics, TaskStage, ms, unix_millis};
use crate::metrics_source::MetricsSource;
use crate::raw::RawStore;
use crate::reload::ReloadWatch;
use crate::watch::Feed;
use crate::writes::bind_concurrency::{BindConcurrency, BindRound, is_push_back};
use crate::writes::volume_wait::{Progress, VolumeWait};
use crate::writes::volumes::WrittenVersions;
use crate::writes::{self, EventWrite, StatusBatch, StatusWriter, Writer, Written};

/// What the loop needs from the flags.
#[derive(Debug, Clone)]
pub struct LoopSettings {
    pub scheduler_name: String,
    pub default_queue: String,
    pub schedule_period: Duration,
    pub resource_sync_timeout: Duration,
    /// Volcano's node sampling, when its flags ask for it; `None`: every feasible node.
    pub node_sampling: Option<NodeSampling>,
    pub dump_dir: Option<PathBuf>,
    pub watched: Vec<ObjectKind>,
    /// `--scheduler-sharding-mode` and `--scheduler-sharding-name`.
    pub sharding: Sharding,
}

/// A PodScheduled condition as written: reason, message and nominated node.
type WrittenCondition = (&'static str, Arc<str>, Option<String>);

/// How a bind's first round went.
enum BindOutcome {
    Bound,
    /// The binding call failed.
    BindFailed(kube::Error),
    /// The volume work before it failed (kube's reason).
    PreBindFailed(String),
    /// Its volumes are written; it now waits for the PV controller (`VolumeWait`).
    VolumesWritten(WrittenVersions),
}

/// Bind calls of one round, each with its outcome, when it started and how long its call took.
type BindResults = Vec<(Bind, BindOutcome, Instant, Duration)>;

/// A round of binds as it came back: its calls, and when it started and ended (it may be
/// judged later, after a session).
struct RoundBack {
    results: BindResults,
    started: Instant,
    ended: Instant,
}

/// A cycle's round of binds on its way, with what judging it needs.
struct BindsInFlight {
    calls: tokio::task::JoinHandle<RoundBack>,
    /// The binds, to put back should the round's task fail.
    binds: Vec<Bind>,
    /// The cycle's status writes, sent once the binds are judged.
    batch: StatusBatch,
    cycle: u64,
    /// When the cycle started and how long its session took, for its log line.
    cycle_start: Instant,
    session_time: Duration,
}

/// The scheduler loop's state; it is the only writer of the cache.
pub struct Scheduler {
    pub settings: LoopSettings,
    pub state: ClusterState,
    raw: RawStore,
    /// Runs each cycle; holds the configuration in force, the clocks that outlive a session
    /// (the rescheduling plugin's interval, from the start) and what one session leaves for
    /// the next (equivalence classes, node sums; the engine checks that it still applies).
    driver: CycleDriver,
    conf_source: ConfSource,
    reload: Option<ReloadWatch>,
    registry: PluginRegistry,
    feed: mpsc::Receiver<Feed>,
    /// Node usage from the configured monitoring system, sent into the feed.
    metrics_source: MetricsSource,
    writer: Writer,
    status: StatusWriter,
    /// Objects as the API answered our status writes.
    written: mpsc::UnboundedReceiver<Written>,
    /// PodGroups and queues with a status write on its way: the cycle that queued the last one.
    pending: HashMap<(ObjectKind, String, String), u64>,
    metrics: Metrics,
    dump_requested: Arc<AtomicBool>,
    /// The PodScheduled condition last written for each pod, by namespace and name.
    condition_memo: HashMap<(Arc<str>, Arc<str>), WrittenCondition>,
    cycle: u64,
    session_prefix: String,
    /// Binds whose volumes are written, waiting for the PV controller before the pod is bound.
    volume_waits: Vec<VolumeWait>,
    /// Binds in flight at once, sized from the API server's answers to earlier rounds.
    bind_window: BindConcurrency,
    /// The last cycle's round of binds while it is on its way.
    binds_in_flight: Option<BindsInFlight>,
    /// When the next cycle starts: `--schedule-period` after the last session ended.
    next_cycle: Instant,
    cycle_profiles: Option<Arc<CycleProfileRequests>>,
    /// A `/debug/pprof/cycle` request being served across cycles.
    cycle_profile: Option<ActiveCycleProfile>,
}

/// A round of bind calls, each its latency and whether the API server pushed it back.
fn bind_round(calls: impl Iterator<Item = (Duration, bool)>) -> BindRound {
    let mut latencies = Vec::new();
    let mut pushed_back = 0;
    for (took, push_back) in calls {
        latencies.push(took);
        pushed_back += usize::from(push_back);
    }
    latencies.sort_unstable();
    BindRound {
        sent: latencies.len(),
        pushed_back,
        median: latencies
            .get(latencies.len() / 2)
            .copied()
            .unwrap_or_default(),
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// The parts a `Scheduler` is built from.
pub struct Parts {
    pub settings: LoopSettings,
    pub conf: SchedulerConfig,
    pub conf_source: ConfSource,
    pub reload: Option<ReloadWatch>,
    pub registry: PluginRegistry,
    pub feed: mpsc::Receiver<Feed>,
    pub metrics_source: MetricsSource,
    pub writer: Writer,
    pub metrics: Metrics,
    pub dump_requested: Arc<AtomicBool>,
    /// `/debug/pprof/cycle`'s mailbox (with `--enable-pprof`).
    pub cycle_profiles: Option<Arc<CycleProfileRequests>>,
}

impl Scheduler {
    pub fn new(p: Parts) -> Scheduler {
        let (status, written) = StatusWriter::spawn(p.writer.clone(), &p.settings.scheduler_name);
        let session_prefix = crate::leader::identity();
        let driver = CycleDriver::new(Arc::new(p.conf), &p.settings.default_queue)
            .started_at(Time(unix_now()))
            .node_sampling(p.settings.node_sampling);
        let mut state = ClusterState::new();
        state.set_sharding(p.settings.sharding.clone());
        Scheduler {
            settings: p.settings,
            state,
            raw: RawStore::default(),
            driver,
            conf_source: p.conf_source,
            reload: p.reload,
            registry: p.registry,
            feed: p.feed,
            metrics_source: p.metrics_source,
            writer: p.writer,
            status,
            written,
            pending: HashMap::new(),
            metrics: p.metrics,
            dump_requested: p.dump_requested,
            condition_memo: HashMap::new(),
            cycle: 0,
            session_prefix,
            volume_waits: Vec::new(),
            bind_window: BindConcurrency::default(),
            binds_in_flight: None,
            next_cycle: Instant::now(),
            cycle_profiles: p.cycle_profiles,
            cycle_profile: None,
        }
    }

    /// Applies one feed item; returns the kind when it reports a completed first list.
    fn apply(&mut self, item: Feed) -> Option<ObjectKind> {
        if let Feed::Event(event, _) = &item {
            self.metrics_source.observe(event);
        }
        match item {
            Feed::Synced(kind) => return Some(kind),
            Feed::Event(ClusterEvent::Upsert(mut object), raw) => {
                let (ns, name) = {
                    let m = meta_of(&object);
                    (m.namespace.clone(), m.name.clone())
                };
                if let ClusterObject::Pod(pod) = &mut object
                    && pod.spec.node_name.is_empty()
                    && let Some(cached) = self.state.pod(&ns, &name)
                    && !cached.spec.node_name.is_empty()
                    && cached.metadata.uid == pod.metadata.uid
                {
                    // Our own bind is newer than this event (Volcano keeps its assumption too).
                    pod.spec.node_name = cached.spec.node_name.clone();
                }
                self.observe_arrival(&object);
                let kind = ObjectKind::of(&object);
                if let Some(raw) = &raw
                    && self
                        .raw
                        .held(kind, &ns, &name)
                        .is_some_and(|held| !raw.is_newer_than(held))
                {
                    // A state we already hold (our own write's answer came before its echo).
                    return None;
                }
                if let Some(raw) = raw {
                    self.raw.upsert(kind, &ns, &name, raw);
                }
                if !self.pending.contains_key(&(kind, ns, name)) {
                    self.state.apply_event(ClusterEvent::Upsert(object));
                }
            }
            Feed::Event(
                ClusterEvent::Delete {
                    kind,
                    namespace,
                    name,
                },
                _,
            ) => {
                if matches!(kind, ObjectKind::Pod | ObjectKind::PodGroup) {
                    let gone = self.raw.object_ref(kind, &namespace, &name);
                    self.status.send(StatusBatch {
                        gone: vec![gone],
                        ..Default::default()
                    });
                }
                self.observe_removal(kind, &namespace, &name);
                self.raw.remove(kind, &namespace, &name);
                self.pending
                    .remove(&(kind, namespace.clone(), name.clone()));
                self.condition_memo
                    .remove(&(namespace.as_str().into(), name.as_str().into()));
                self.state.apply_event(ClusterEvent::Delete {
                    kind,
                    namespace,
                    name,
                });
            }
        }
        None
    }

    /// The metrics an object's arrival feeds (Volcano: cache/event_handlers.go): an unbound
    /// pod's first sighting, and every PodGroup add or update its job's scheduling start.
    fn observe_arrival(&self, object: &ClusterObject) {
        match object {
            ClusterObject::Pod(pod)
                if pod.spec.node_name.is_empty()
                    && self
                        .state
                        .pod(&pod.metadata.namespace, &pod.metadata.name)
                        .is_none() =>
            {
                if let Some(created) = pod.metadata.creation_timestamp {
                    self.metrics
                        .task_reached(TaskStage::Watched, created, unix_millis());
                }
            }
            ClusterObject::PodGroup(pg) => {
                let m = &pg.metadata;
                self.metrics.job_seen(
                    &m.namespace,
                    &m.name,
                    self.queue_of(&pg.spec.queue),
                    m.creation_timestamp.unwrap_or_default(),
                );
            }
            _ => {}
        }
    }

    /// A PodGroup's queue, the default queue when it names none.
    fn queue_of<'a>(&'a self, queue: &'a str) -> &'a str {
        if queue.is_empty() {
            &self.settings.default_queue
        } else {
            queue
        }
    }

    /// The series a deleted PodGroup or queue leaves behind go with it.
    fn observe_removal(&self, kind: ObjectKind, namespace: &str, name: &str) {
        match kind {
            ObjectKind::PodGroup => {
                if let Some(pg) = self.state.pod_group(namespace, name) {
                    self.metrics
                        .forget_job(namespace, name, self.queue_of(&pg.spec.queue));
                }
            }
            ObjectKind::Queue => self.metrics.forget_queue(name),
            _ => {}
        }
    }

    /// Applies the API's answers to our status writes, then everything the watches sent.
    fn drain_feed(&mut self) {
        while let Ok(w) = self.written.try_recv() {
            self.on_written(w);
        }
        while let Ok(item) = self.feed.try_recv() {
            self.apply(item);
        }
    }

    /// An answer to a status write. While a later cycle's write of the same PodGroup or queue
    /// is still on its way, the cache keeps that cycle's assumed status; the last answer (or
    /// failure) hands the object back to the API's view.
    fn on_written(&mut self, w: Written) {
        let key = (w.kind, w.namespace, w.name);
        let latest = self.pending.get(&key).is_some_and(|&seq| w.seq >= seq);
        if latest {
            self.pending.remove(&key);
        }
        let converted = match w.object {
            Some(object) => crate::objects::convert(key.0, object),
            None if latest => match self.raw.held(key.0, &key.1, &key.2) {
                Some(raw) => crate::objects::convert_kept(key.0, raw.clone()),
                None => return,
            },
            None => return,
        };
        match converted {
            Ok(c) => {
                self.apply(Feed::Event(
                    ClusterEvent::Upsert(c.object.clone()),
                    Some(c.raw),
                ));
                if latest && w.kind != ObjectKind::Pod {
                    self.state.apply_event(ClusterEvent::Upsert(c.object));
                }
            }
            Err(e) => tracing::warn!("cannot read back a written object: {e}"),
        }
    }

    /// Waits until every watched kind has been listed once, or the sync timeout (0: no limit).
    pub async fn wait_for_sync(&mut self) {
        let started = Instant::now();
        let mut missing: Vec<ObjectKind> = self.settings.watched.clone();
        let deadline = (!self.settings.resource_sync_timeout.is_zero())
            .then(|| Instant::now() + self.settings.resource_sync_timeout);
        while !missing.is_empty() {
            let next = match deadline {
                Some(d) => match tokio::time::timeout_at(d.into(), self.feed.recv()).await {
                    Ok(item) => item,
                    Err(_) => {
                        tracing::warn!("resource sync timeout: still listing {missing:?}");
                        return;
                    }
                },
                None => self.feed.recv().await,
            };
            let Some(item) = next else { return };
            if let Some(kind) = self.apply(item) {
                missing.retain(|k| *k != kind);
            }
        }
        tracing::info!("caches synced in {:.2?}", started.elapsed());
    }

    fn maybe_reload(&mut self) -> Result<(), String> {
        if !self.reload.as_ref().is_some_and(ReloadWatch::take) {
            return Ok(());
        }
        match self.conf_source.reload(&self.registry) {
            Ok(Some(checked)) => {
                tracing::info!(
                    "scheduler configuration reloaded: actions {:?}",
                    checked.config.actions
                );
                self.metrics.show_config_problems(&checked.set_aside);
                self.metrics_source.reconfigure(&checked.config.metrics);
                self.driver.set_conf(Arc::new(checked.config));
            }
            Ok(None) => {}
            Err(e) if self.conf_source.refusal_is_fatal() => return Err(e.to_string()),
            Err(e) => tracing::error!("{e}; keeping the last valid scheduler configuration"),
        }
        Ok(())
    }

    fn maybe_dump(&self) {
        if !self.dump_requested.swap(false, Ordering::SeqCst) {
            return;
        }
        if let Some(dir) = &self.settings.dump_dir {
            match crate::dump::dump(&self.state, dir, unix_now()) {
                Ok(p) => tracing::info!("cache dumped to {}", p.display()),
                Err(e) => tracing::error!("cache dump: {e}"),
            }
        }
    }

    /// Runs cycles until a fatal error (a refused configuration without fallback).
    pub async fn run(mut self) -> Result<(), String> {
        self.wait_for_sync().await;
        self.metrics_source.start();
        let start = Instant::now();
        let warmed = self.driver.warm_up(&mut self.state, &self.registry);
        match warmed {
            Ok(()) => tracing::info!("warmed up in {:?}", start.elapsed()),
            Err(e) => tracing::error!("warm-up: cannot open a session: {e}"),
        }
        loop {
            self.drain_feed();
            self.report_node_shard();
            self.finish_volume_waits().await;
            self.maybe_reload()?;
            self.maybe_dump();
            self.run_once().await;
            self.sleep_period().await;
        }
    }

    /// Sleeps until the next cycle is due (at once when waiting for the round before took the
    /// whole period). A round of binds that comes back meanwhile is judged at once, so the
    /// cycle's status writes go out without waiting for the next cycle.
    async fn sleep_period(&mut self) {
        let wake = tokio::time::sleep_until(self.next_cycle.into());
        tokio::pin!(wake);
        if let Some(mut round) = self.binds_in_flight.take() {
            tokio::select! {
                () = &mut wake => {
                    self.binds_in_flight = Some(round);
                    return;
                }
                results = &mut round.calls => self.judge_binds(round, results),
            }
        }
        wake.await;
    }

    /// Writes the status of this scheduler's NodeShard when the NodeShards changed it (between
    /// cycles, as Volcano holds the write until its session ends), off the loop.
    fn report_node_shard(&mut self) {
        let Some(shard) = self.state.node_shard_status_update() else {
            return;
        };
        let Some(raw) = self
            .raw
            .get(ObjectKind::NodeShard, "", &shard.metadata.name)
        else {
            return;
        };
        let object = writes::node_shard::node_shard_status_write(raw, &shard.status);
        let w = self.writer.clone();
        tokio::spawn(async move { writes::node_shard::write_node_shard_status(&w, object).await });
    }

    /// One cycle: session, actions, close, assume, bind, status writes.
    pub async fn run_once(&mut self) {
        if self.cycle_profile.is_none() {
            self.cycle_profile = self
                .cycle_profiles
                .as_deref()
                .and_then(ActiveCycleProfile::pick_up);
        }
        let start = Instant::now();
        self.cycle += 1;
        let now = Time(unix_now());
        let uid = format!("{}-{}", self.session_prefix, self.cycle).into();
        let mut observer = PhaseProfiled {
            observer: CyclePhases {
                metrics: &self.metrics,
                start,
            },
            profiler: self.cycle_profile.as_mut().map(|p| &mut p.profiler),
        };
        let cycle = self
            .driver
            .decide(&mut self.state, &self.registry, now, uid, &mut observer);
        self.next_cycle = Instant::now() + self.settings.schedule_period;
        self.end_profiled_cycle();
        let decisions = match cycle {
            Ok(cycle) => {
                let snap = &cycle.snapshot;
                tracing::debug!(
                    "cycle {}: {} nodes, {} queues, {} jobs, {} tasks",
                    self.cycle,
                    snap.nodes.len(),
                    snap.queues.len(),
                    snap.jobs.len(),
                    snap.tasks.len()
                );
                cycle.assume(&mut self.state, now)
            }
            Err(e) => {
                tracing::error!("{e}");
                return;
            }
        };
        let session_time = start.elapsed();
        self.metrics
            .e2e_scheduling_latency
            .observe(ms(session_time));
        self.observe_assumed(&decisions.binds);
        let batch = self.status_batch(&decisions);
        for e in &decisions.evictions {
            if let Some(raw) = self.raw.get(ObjectKind::Pod, &e.namespace, &e.name) {
                let (w, reason, scheduler) = (
                    self.writer.clone(),
                    e.reason.clone(),
                    self.settings.scheduler_name.clone(),
                );
                tokio::spawn(async move { writes::evict(&w, &raw, &reason, &scheduler).await });
            }
        }
        self.metrics
            .record_session(&decisions.metrics, unix_millis());
        self.finish_binds().await;
        if decisions.binds.is_empty() {
            self.status.send(batch);
            return;
        }
        let round = BindsInFlight {
            calls: self.send_binds(&decisions.binds),
            binds: decisions.binds,
            batch,
            cycle: self.cycle,
            cycle_start: start,
            session_time,
        };
        self.binds_in_flight = Some(round);
    }

    /// Waits for the round of binds on its way, if any, and judges it.
    async fn finish_binds(&mut self) {
        if let Some(mut round) = self.binds_in_flight.take() {
            let results = (&mut round.calls).await;
            self.judge_binds(round, results);
        }
    }

    /// A round of binds is back: sizes the next round's window from it, records each bind's
    /// outcome (a failed one puts its pod back, so the next cycle schedules it again), and
    /// hands the cycle's status writes to the writer, after its binds.
    fn judge_binds(
        &mut self,
        round: BindsInFlight,
        back: Result<RoundBack, tokio::task::JoinError>,
    ) {
        let mut batch = round.batch;
        let RoundBack {
            results,
            started,
            ended,
        } = match back {
            Ok(back) => back,
            Err(e) => {
                // Whatever the API server holds now comes back through the watches.
                tracing::error!("cycle {}: the round of binds failed: {e}", round.cycle);
                for b in &round.binds {
                    self.roll_back(b, String::new(), true, &mut batch);
                }
                self.status.send(batch);
                return;
            }
        };
        let calls = results
            .iter()
            .filter_map(|(_, outcome, _, took)| match outcome {
                BindOutcome::Bound => Some((*took, false)),
                BindOutcome::BindFailed(e) => Some((*took, is_push_back(e))),
                _ => None,
            });
        self.bind_window.after(bind_round(calls));
        for (b, outcome, call_started, took) in results {
            match outcome {
                BindOutcome::Bound => self.bound(&b, took, &mut batch),
                BindOutcome::BindFailed(e) => self.bind_failed(&b, &e, &mut batch),
                BindOutcome::PreBindFailed(why) => self.pre_bind_failed(&b, &why, &mut batch),
                BindOutcome::VolumesWritten(written) => {
                    let timeout = b
                        .volumes
                        .as_ref()
                        .map_or(Duration::ZERO, |v| v.bind_timeout);
                    self.volume_waits.push(VolumeWait {
                        bind: b,
                        written,
                        started: call_started,
                        deadline: Instant::now() + timeout,
                    });
                }
            }
        }
        self.status.send(batch);
        tracing::info!(
            "cycle {}: {} bound in {:?} (session {:?}, binds {:?})",
            round.cycle,
            round.binds.len(),
            ended - round.cycle_start,
            round.session_time,
            ended - started
        );
    }

    /// A cycle's phases are over: a `/debug/pprof/cycle` profile that has all its cycles is
    /// answered.
    fn end_profiled_cycle(&mut self) {
        if let Some(active) = &mut self.cycle_profile {
            active.profiler.leave();
        }
        self.cycle_profile = self
            .cycle_profile
            .take()
            .and_then(ActiveCycleProfile::after_cycle);
    }

    /// Each task the session committed to a node reached the Assumed stage (Volcano:
    /// framework/statement.go, allocate).
    fn observe_assumed(&self, binds: &[Bind]) {
        for b in binds {
            self.task_reached(b, TaskStage::Assumed);
        }
    }

    /// The pod of `b` reached `stage` now, counted from its creation as the cache holds it.
    fn task_reached(&self, b: &Bind, stage: TaskStage) {
        if let Some(created) = self
            .state
            .pod(&b.namespace, &b.name)
            .and_then(|p| p.metadata.creation_timestamp)
        {
            self.metrics.task_reached(stage, created, unix_millis());
        }
    }

    /// True when `predicates`, Volcano's one pre-binder, is configured.
    fn has_pre_binder(&self) -> bool {
        self.driver
            .conf()
            .tiers
            .iter()
            .flat_map(|t| &t.plugins)
            .any(|p| p.name == "predicates")
    }

    /// A bind's pre-bind step took `took` (Volcano: cache/cache.go, executePreBind): no time
    /// for a pod without volumes, the volume writes and the wait for the PV controller for one
    /// with them.
    fn observe_pre_bind(&self, b: &Bind, took: Duration) {
        if !self.has_pre_binder() {
            return;
        }
        self.metrics
            .scheduling_stage_duration
            .with_label_values(&["PreBind"])
            .observe(ms(took));
        self.task_reached(b, TaskStage::PreBound);
    }

    /// Sends a cycle's binds on their way with bounded concurrency, in the background. A bind
    /// with volume work writes its volumes and claims and then waits for the PV controller
    /// (`finish_volume_waits`) before the pod is bound.
    fn send_binds(&mut self, binds: &[Bind]) -> tokio::task::JoinHandle<RoundBack> {
        for b in binds.iter().filter(|b| b.volumes.is_none()) {
            self.observe_pre_bind(b, Duration::ZERO);
        }
        let raw = &self.raw;
        let with_volumes: Vec<_> = binds
            .iter()
            .cloned()
            .map(|b| {
                let volumes = b
                    .volumes
                    .as_ref()
                    .map(|work| writes::volumes::volume_writes(raw, work, &b.node))
                    .transpose();
                (b, volumes)
            })
            .collect();
        let w = self.writer.clone();
        let limit = self.bind_window.limit();
        let binding = self.writer.binds.binding();
        tokio::spawn(async move {
            let _binding = binding;
            let started = Instant::now();
            let results = futures::stream::iter(with_volumes)
                .map(|(b, volumes)| {
                    let w = w.clone();
                    async move {
                        let t = Instant::now();
                        let outcome = match volumes {
                            Err(why) => BindOutcome::PreBindFailed(why),
                            Ok(Some(work)) => {
                                match writes::volumes::bind_volumes(&w, &work).await {
                                    Ok(written) => BindOutcome::VolumesWritten(written),
                                    Err(e) => BindOutcome::PreBindFailed(e.to_string()),
                                }
                            }
                            Ok(None) => match writes::bind(&w, &b).await {
                                Ok(()) => BindOutcome::Bound,
                                Err(e) => BindOutcome::BindFailed(e),
                            },
                        };
                        (b, outcome, t, t.elapsed())
                    }
                })
                .buffer_unordered(limit)
                .collect()
                .await;
            RoundBack {
                results,
                started,
                ended: Instant::now(),
            }
        })
    }

    /// Judges the binds waiting for their volumes against what the watches delivered: binds
    /// the pods whose volumes are bound, and puts back those whose binding cannot complete or
    /// ran out of time (kube's volume binder checks once a second, as this loop comes round).
    async fn finish_volume_waits(&mut self) {
        if self.volume_waits.is_empty() {
            return;
        }
        // One round of binds in flight at a time, so the window means what it says.
        self.finish_binds().await;
        let now = Instant::now();
        let mut batch = StatusBatch {
            seq: self.cycle,
            ..Default::default()
        };
        let mut ready = Vec::new();
        for wait in std::mem::take(&mut self.volume_waits) {
            let labels = self.state.node(&wait.bind.node).map(|n| &n.metadata.labels);
            match wait.check(&self.raw, labels) {
                Progress::Ready => ready.push(wait),
                Progress::Waiting if now < wait.deadline => self.volume_waits.push(wait),
                Progress::Waiting => self.pre_bind_failed(
                    &wait.bind,
                    "binding volumes: context deadline exceeded",
                    &mut batch,
                ),
                Progress::Failed(why) => {
                    self.pre_bind_failed(&wait.bind, &format!("binding volumes: {why}"), &mut batch)
                }
            }
        }
        for wait in &ready {
            self.observe_pre_bind(&wait.bind, wait.started.elapsed());
        }
        let w = self.writer.clone();
        let _binding = self.writer.binds.binding();
        let results: Vec<(VolumeWait, Result<(), kube::Error>, Duration)> =
            futures::stream::iter(ready)
                .map(|wait| {
                    let w = w.clone();
                    async move {
                        let t = Instant::now();
                        let r = writes::bind(&w, &wait.bind).await;
                        (wait, r, t.elapsed())
                    }
                })
                .buffer_unordered(self.bind_window.limit())
                .collect()
                .await;
        let calls = results
            .iter()
            .map(|(_, r, took)| (*took, r.as_ref().is_err_and(is_push_back)));
        self.bind_window.after(bind_round(calls));
        for (wait, result, _) in results {
            match result {
                Ok(()) => self.bound(&wait.bind, wait.started.elapsed(), &mut batch),
                Err(e) => self.bind_failed(&wait.bind, &e, &mut batch),
            }
        }
        if !(batch.pods.is_empty() && batch.events.is_empty()) {
            self.status.send(batch);
        }
    }

    /// A pod bound: its metrics and the `Scheduled` event.
    fn bound(&mut self, b: &Bind, took: Duration, batch: &mut StatusBatch) {
        self.metrics
            .scheduling_stage_duration
            .with_label_values(&["Bind"])
            .observe(ms(took));
        self.task_reached(b, TaskStage::Bound);
        tracing::debug!("bound {}/{} to {}", b.namespace, b.name, b.node);
        batch.events.push(EventWrite {
            object: self.raw.object_ref(ObjectKind::Pod, &b.namespace, &b.name),
            type_: "Normal",
            reason: "Scheduled".into(),
            message: format!(
                "Successfully assigned {}/{} to {}",
                b.namespace, b.name, b.node
            ),
        });
    }

    /// The binding call failed (Volcano: cache/cache.go, Bind).
    fn bind_failed(&mut self, b: &Bind, e: &kube::Error, batch: &mut StatusBatch) {
        tracing::warn!(
            "failed to bind {}/{} to {}: {e}",
            b.namespace,
            b.name,
            b.node
        );
        let message = format!("failed to bind to node {}: {e}", b.node);
        self.roll_back(b, message, writes::is_status(e, 404), batch);
    }

    /// The volume work before the bind failed (Volcano: cache/cache.go, executePreBinds).
    fn pre_bind_failed(&mut self, b: &Bind, why: &str, batch: &mut StatusBatch) {
        let message = format!(
            "execute preBind for pod {}/{} failed: {why}, resync the task",
            b.namespace, b.name
        );
        tracing::warn!("{message}");
        self.roll_back(b, message, false, batch);
    }

    /// Puts the pod (and its volumes) back as the API holds them and, unless the pod is gone,
    /// records why on its PodScheduled condition.
    fn roll_back(&mut self, b: &Bind, message: String, gone: bool, batch: &mut StatusBatch) {
        self.restore_volumes(b);
        let Some(raw) = self.raw.get(ObjectKind::Pod, &b.namespace, &b.name) else {
            return;
        };
        match crate::objects::decode_object(ObjectKind::Pod, &raw) {
            Ok(object) => self.state.apply_event(ClusterEvent::Upsert(object)),
            Err(err) => tracing::warn!("cannot restore {}/{}: {err}", b.namespace, b.name),
        }
        if gone {
            return;
        }
        let condition = PodConditionUpdate {
            namespace: b.namespace.clone(),
            name: b.name.clone(),
            reason: "SchedulerError",
            message: message.into(),
            nominated_node: None,
        };
        let now = k8s_openapi::jiff::Timestamp::now().to_string();
        if let Some(pod) = writes::status::pod_condition_write(raw, &condition, &now) {
            batch.pods.push(pod);
        }
    }

    /// Puts the bind's volumes and claims back in the cache as the API last sent them (the
    /// cache assumed the bind's volume work).
    fn restore_volumes(&mut self, b: &Bind) {
        let Some(work) = &b.volumes else {
            return;
        };
        let volumes = work
            .volumes
            .iter()
            .map(|(name, _)| (ObjectKind::PersistentVolume, "", name.as_str()));
        let claims = work.provisions.iter().map(|(ns, name)| {
            (
                ObjectKind::PersistentVolumeClaim,
                ns.as_str(),
                name.as_str(),
            )
        });
        for (kind, ns, name) in volumes.chain(claims) {
            let Some(raw) = self.raw.get(kind, ns, name) else {
                continue;
            };
            match crate::objects::decode_object(kind, &raw) {
                Ok(object) => self.state.apply_event(ClusterEvent::Upsert(object)),
                Err(err) => tracing::warn!("cannot restore {kind} {ns}/{name}: {err}"),
            }
        }
    }

    /// The status writes of a cycle, each against the object as the API last sent it.
    fn status_batch(&mut self, d: &Decisions) -> StatusBatch {
        let mut batch = StatusBatch {
            seq: self.cycle,
            ..Default::default()
        };
        for pg in d.pod_groups.iter().filter(|pg| pg.changed) {
            let Some(raw) = self.raw.get(ObjectKind::PodGroup, &pg.namespace, &pg.name) else {
                continue;
            };
            let held = tracing::enabled!(tracing::Level::DEBUG)
                .then(|| raw.get("status").map(|s| s.to_string()).unwrap_or_default());
            if let Some(o) = writes::status::pod_group_write(raw, &pg.status) {
                if let Some(held) = held {
                    tracing::debug!(
                        "podgroup {}/{}: status {held} -> {}",
                        pg.namespace,
                        pg.name,
                        o["status"]
                    );
                }
                let key = (
                    ObjectKind::PodGroup,
                    pg.namespace.to_string(),
                    pg.name.to_string(),
                );
                self.pending.insert(key, self.cycle);
                batch.pod_groups.push(o);
            }
        }
        for q in &d.queues {
            if let Some(raw) = self.raw.get(ObjectKind::Queue, "", &q.name)
                && let Some(o) = writes::status::queue_write(raw, &q.allocated)
            {
                let key = (ObjectKind::Queue, String::new(), q.name.clone());
                self.pending.insert(key, self.cycle);
                batch.queues.push(o);
            }
        }
        let now = k8s_openapi::jiff::Timestamp::now().to_string();
        let mut memo = HashMap::new();
        for c in &d.pod_conditions {
            let key = (c.namespace.clone(), c.name.clone());
            let value = (c.reason, c.message.clone(), c.nominated_node.clone());
            let unchanged = self.condition_memo.get(&key) == Some(&value);
            if !unchanged
                && let Some(raw) = self.raw.get(ObjectKind::Pod, &c.namespace, &c.name)
                && let Some(pod) = writes::status::pod_condition_write(raw, c, &now)
            {
                batch.pods.push(pod);
                batch.events.push(EventWrite {
                    object: self.raw.object_ref(ObjectKind::Pod, &c.namespace, &c.name),
                    type_: "Warning",
                    reason: "FailedScheduling".into(),
                    message: c.message.to_string(),
                });
            }
            memo.insert(key, value);
        }
        self.condition_memo = memo;
        for e in &d.events {
            let (kind, ns, name) = match &e.object {
                EventObject::Pod { namespace, name } => (ObjectKind::Pod, namespace, name),
                EventObject::PodGroup { namespace, name } => {
                    (ObjectKind::PodGroup, namespace, name)
                }
            };
            batch.events.push(EventWrite {
                object: self.raw.object_ref(kind, ns, name),
                type_: e.type_,
                reason: e.reason.to_string(),
                message: e.message.to_string(),
            });
        }
        batch
    }
}
