//! The arriving gangs of the kwok benchmarks (`bench-kwok`, `bench-scaleout`): a burst of gangs
//! of 10 waits when the schedulers start; then gangs arrive at a fixed rate, while kwok runs
//! each pod for a while and finishes it, so the cluster churns. `play` runs the stream in one
//! namespace against schedulers its caller starts, checks that every pod was bound once and no
//! node held more than it has room for, and returns each part's figures: pods bound per second,
//! creation to bound p50/p90/p99 (the driver's create call to the bind arriving on its watch),
//! the first and last bind, the schedulers' API writes and binds. `bench-kwok` puts the same
//! pieces together itself, one scheduler at a time, so that Volcano's is measured for what it
//! bound in its time rather than failed.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail, ensure};
use serde_json::json;
use tephra_adapters::history::{E2eRecord, Provenance, Quantiles};

mod phase;

pub use self::phase::Phase;
use super::bind_watch::BindWatch;
use super::binds::{bound_once, refused_of};
use super::throughput::{CEILING_CONCURRENCY, binding_ceiling};
use crate::api_writes::api_writes;
use crate::cluster::{Cluster, pod, pod_group};
use crate::ctx::Ctx;
use crate::kwok::{KwokProc, RUN_FOR, fake_nodes};
use crate::proc::SchedulerProc;

pub const GANG_SIZE: usize = 10;
/// A node's CPUs; every pod asks for one, so this is also the most pods a node may hold.
const NODE_CPUS: usize = 8;
const NODE_MEMORY: &str = "32Gi";
/// Gangs of the fixed-rate part being created at once, at most: where the API server falls
/// behind the rate, more would pile up requests until it drops connections.
const CREATING_AT_ONCE: usize = 16;

/// A run's size.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub name: &'static str,
    pub nodes: usize,
    /// Gangs created before the schedulers start.
    pub burst_gangs: usize,
    /// Gangs created afterwards at `rate_pods_per_s`.
    pub rate_gangs: usize,
    pub rate_pods_per_s: f64,
    /// How long kwok runs each pod before it succeeds (a Go duration).
    pub run_for: &'static str,
    /// The longest wait for a part's binds.
    pub timeout: Duration,
}

impl Size {
    /// The full stream: 5,000 nodes, a burst of 500 gangs, then 1,000 gangs at 500 pods/s, each
    /// pod running 30 s.
    pub const fn full(name: &'static str) -> Size {
        Size {
            name,
            nodes: 5000,
            burst_gangs: 500,
            rate_gangs: 1000,
            rate_pods_per_s: 500.0,
            run_for: "30s",
            timeout: Duration::from_secs(600),
        }
    }

    /// A tenth of it: 500 nodes, 50 gangs, then 100 at the same rate, each pod running 5 s.
    pub const fn short(name: &'static str) -> Size {
        Size {
            name,
            nodes: 500,
            burst_gangs: 50,
            rate_gangs: 100,
            rate_pods_per_s: 500.0,
            run_for: "5s",
            timeout: Duration::from_secs(120),
        }
    }

    pub(super) fn burst_pods(&self) -> usize {
        self.burst_gangs * GANG_SIZE
    }
}

/// Makes the run's Ready kwok nodes, `prefix-0..n`.
pub async fn make_nodes(ctx: &Ctx, size: &Size, prefix: &str) -> Result<()> {
    let t = Instant::now();
    let cpus = NODE_CPUS.to_string();
    fake_nodes(&ctx.cluster, prefix, size.nodes, &cpus, NODE_MEMORY).await?;
    println!(
        "       {}: {} kwok nodes created in {:.1}s",
        size.name,
        size.nodes,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The API server's binding ceiling with a plain client, over as many pods as the burst has,
/// in namespace `ns`; bound to nodes that do not exist, so kwok leaves them alone (the same
/// API work).
pub async fn ceiling(ctx: &Ctx, size: &Size, ns: &str) -> Result<f64> {
    let ceiling = binding_ceiling(ctx, ns, size.burst_pods(), |i| format!("ceiling-{i}")).await?;
    println!(
        "       {}: API server binding ceiling (plain client, {CEILING_CONCURRENCY} in flight): {ceiling:.0} pods/s",
        size.name
    );
    Ok(ceiling)
}

/// The objects of gang `g` in `ns`: its PodGroup and pods.
fn gang(ns: &str, g: usize, run_for: &str) -> Vec<serde_json::Value> {
    let name = format!("g{g}");
    let mut objects = vec![pod_group(ns, &name, "default", GANG_SIZE as i32)];
    objects.extend((0..GANG_SIZE).map(|i| {
        let mut p = pod(ns, &format!("{name}-{i}"), &name, "1", "1Gi");
        p["metadata"]["annotations"][RUN_FOR] = json!(run_for);
        p
    }));
    objects
}

/// The pods of `gangs`, in the order `gang` makes them.
pub(super) fn pod_names(gangs: std::ops::Range<usize>) -> Vec<String> {
    gangs
        .flat_map(|g| (0..GANG_SIZE).map(move |i| format!("g{g}-{i}")))
        .collect()
}

/// Creates gang `g`; returns when its pods were sent.
async fn create_gang(cluster: Cluster, ns: String, g: usize, run_for: &str) -> Result<Instant> {
    let mut objects = gang(&ns, g, run_for);
    let pods = objects.split_off(1);
    cluster.create_all(objects).await?;
    let sent = Instant::now();
    cluster.create_all(pods).await?;
    Ok(sent)
}

/// Waits until every pod of `pods` is bound or `timeout` passes; the bind time of each, `None`
/// for those not bound. Fails when `alive` (the processes at work) or the watch fails.
pub(super) async fn bound_within(
    watch: &mut BindWatch,
    pods: &[String],
    timeout: Duration,
    mut alive: impl FnMut() -> Result<()>,
) -> Result<Vec<Option<Instant>>> {
    let start = Instant::now();
    loop {
        let bound = watch.bound_each(pods);
        if bound.iter().all(Option::is_some) || start.elapsed() >= timeout {
            return Ok(bound);
        }
        alive()?;
        watch.check_alive()?;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until every pod of `pods` is bound; fails after `timeout` or when a process or the
/// watch ends.
async fn wait_bound(
    watch: &mut BindWatch,
    pods: &[String],
    timeout: Duration,
    schedulers: &mut [SchedulerProc],
    kwok: &mut KwokProc,
) -> Result<Vec<Option<Instant>>> {
    let bound = bound_within(watch, pods, timeout, || {
        for s in schedulers.iter_mut() {
            s.check_alive()?;
        }
        kwok.check_alive()
    })
    .await?;
    let done = bound.iter().flatten().count();
    ensure!(
        done == pods.len(),
        "only {done} of {} pods bound after {timeout:?}",
        pods.len()
    );
    Ok(bound)
}

/// The `q` quantile of `sorted` milliseconds (nearest rank).
fn rank(sorted: &[f64], q: f64) -> f64 {
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[i - 1]
}

pub(super) fn quantiles(mut ms: Vec<f64>) -> Option<Quantiles> {
    if ms.is_empty() {
        return None;
    }
    ms.sort_by(f64::total_cmp);
    Some(Quantiles {
        p50: rank(&ms, 0.5),
        p90: rank(&ms, 0.9),
        p99: rank(&ms, 0.99),
    })
}

/// Writes of `after` less those of `before`, by kind.
pub(super) fn writes_between(
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
) -> BTreeMap<String, f64> {
    after
        .iter()
        .map(|(k, n)| (k.clone(), n - before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, n)| *n > 0.0)
        .collect()
}

/// The API writes of all `schedulers` together, by kind.
async fn writes_of(schedulers: &[SchedulerProc]) -> Result<BTreeMap<String, f64>> {
    let mut sum = BTreeMap::new();
    for s in schedulers {
        for (what, n) in api_writes(&s.http_get("/metrics").await?) {
            *sum.entry(what).or_default() += n;
        }
    }
    Ok(sum)
}

/// One part of the stream: its figures, and which scheduler bound its pods.
pub struct Part {
    pub phase: Phase,
    /// The part's pods each scheduler bound, by scheduler.
    pub binds: BTreeMap<String, u64>,
    /// The part's bindings the API server refused, over all schedulers.
    pub refused: usize,
}

impl Part {
    fn print(&self, label: &str, ceiling: f64) {
        self.phase.print(&format!("{label}:"), ceiling);
        let binds: Vec<String> = self.binds.iter().map(|(s, n)| format!("{s} {n}")).collect();
        println!(
            "       {label}: {}: binds by scheduler: {}; refused by the API server: {}",
            self.phase.name,
            binds.join(", "),
            self.refused
        );
    }

    /// The part's history record, scenario `<label>/<part>`, made once where and when are
    /// known.
    pub fn record(
        &self,
        label: &str,
        size: &Size,
        ceiling: f64,
        catch_up: f64,
    ) -> impl FnOnce(Provenance) -> E2eRecord + use<> {
        let record = self
            .phase
            .record((label, size.nodes), ceiling, catch_up, None);
        let binds = self.binds.clone();
        move |provenance| E2eRecord {
            binds_by_scheduler: Some(binds),
            ..record(provenance)
        }
    }
}

/// What `play` leaves: the schedulers, still running, their binds, and the two parts.
pub struct Played {
    pub schedulers: Vec<SchedulerProc>,
    /// Scheduler → the pods it bound and where.
    pub binds: BTreeMap<String, Vec<(String, String)>>,
    pub burst: Part,
    pub rate: Part,
    /// Seconds after the last bind until every PodGroup was Running or Completed.
    pub catch_up_s: f64,
}

impl Played {
    /// Stops the schedulers.
    pub async fn stop(&mut self) -> Result<()> {
        for s in &mut self.schedulers {
            s.stop().await?;
        }
        Ok(())
    }
}

/// Seconds until the `groups` PodGroups of `ns` are Running or Completed as the API holds them;
/// after `timeout`, how many were.
pub(super) async fn status_catch_up(
    ctx: &Ctx,
    ns: &str,
    groups: usize,
    timeout: Duration,
) -> Result<std::result::Result<f64, usize>> {
    let start = Instant::now();
    loop {
        let settled = ctx
            .cluster
            .pod_groups(ns)
            .await?
            .iter()
            .filter(|pg| {
                let phase = pg.pointer("/status/phase").and_then(|p| p.as_str());
                matches!(phase, Some("Running" | "Completed"))
            })
            .count();
        if settled == groups {
            return Ok(Ok(start.elapsed().as_secs_f64()));
        }
        if start.elapsed() >= timeout {
            return Ok(Err(settled));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Creates the burst's gangs in `ns` all at once; returns when they were sent.
pub(super) async fn create_burst(ctx: &Ctx, label: &str, ns: &str, size: &Size) -> Result<Instant> {
    let t = Instant::now();
    let objects = (0..size.burst_gangs)
        .flat_map(|g| gang(ns, g, size.run_for))
        .collect();
    ctx.cluster.create_all(objects).await?;
    let sent = Instant::now();
    println!(
        "       {label}: burst of {} pods in {} gangs created in {:.1}s",
        size.burst_pods(),
        size.burst_gangs,
        t.elapsed().as_secs_f64()
    );
    Ok(sent)
}

/// Creates the fixed-rate gangs of `gangs` in `ns` at `size`'s rate; returns each pod's
/// creation time, in the order of `pod_names(gangs)`.
pub(super) async fn create_at_rate(
    ctx: &Ctx,
    label: &str,
    ns: &str,
    size: &Size,
    gangs: std::ops::Range<usize>,
) -> Result<Vec<Instant>> {
    let period = Duration::from_secs_f64(GANG_SIZE as f64 / size.rate_pods_per_s);
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let slots = Arc::new(tokio::sync::Semaphore::new(CREATING_AT_ONCE));
    let start = Instant::now();
    let mut creating = Vec::new();
    for g in gangs {
        ticker.tick().await;
        let slot = slots.clone().acquire_owned().await?;
        let (cluster, ns, run_for) = (ctx.cluster.clone(), ns.to_string(), size.run_for);
        creating.push(tokio::spawn(async move {
            let sent = create_gang(cluster, ns, g, run_for).await;
            drop(slot);
            sent
        }));
    }
    let mut created = Vec::new();
    for h in creating {
        let sent = h.await??;
        created.extend(std::iter::repeat_n(sent, GANG_SIZE));
    }
    let creation_rate = created.len() as f64 / start.elapsed().as_secs_f64();
    println!(
        "       {label}: fixed rate: {} pods created at {creation_rate:.0} pods/s (asked {:.0})",
        created.len(),
        size.rate_pods_per_s
    );
    Ok(created)
}

/// Runs the stream in the fresh namespace `ns` against the schedulers `start` starts once the
/// burst is created, with `kwok` running the pods; prints each part's figures under `label`,
/// against the API server's `ceiling`. Fails when a pod is not bound in time or not exactly once, or a node held more pods than
/// its CPUs.
pub async fn play(
    ctx: &Ctx,
    label: &str,
    ns: &str,
    size: &Size,
    ceiling: f64,
    kwok: &mut KwokProc,
    start: impl FnOnce() -> Result<Vec<SchedulerProc>>,
) -> Result<Played> {
    ctx.cluster.namespace(ns).await?;
    let mut watch = BindWatch::start(&ctx.cluster, ns);
    let burst_created = create_burst(ctx, label, ns, size).await?;
    let started = Instant::now();
    let mut schedulers = start()?;
    let burst_names = pod_names(0..size.burst_gangs);
    let burst_bound = wait_bound(
        &mut watch,
        &burst_names,
        size.timeout,
        &mut schedulers,
        kwok,
    )
    .await?;
    let after_burst = writes_of(&schedulers).await?;

    let rate_gangs = size.burst_gangs..size.burst_gangs + size.rate_gangs;
    let rate_start = Instant::now();
    let rate_created = create_at_rate(ctx, label, ns, size, rate_gangs.clone()).await?;
    let rate_names = pod_names(rate_gangs);
    let rate_bound =
        wait_bound(&mut watch, &rate_names, size.timeout, &mut schedulers, kwok).await?;
    let groups = size.burst_gangs + size.rate_gangs;
    let catch_up_s = match status_catch_up(ctx, ns, groups, size.timeout).await? {
        Ok(seconds) => seconds,
        Err(settled) => bail!(
            "{settled} of {groups} PodGroups Running or Completed after {:?}",
            size.timeout
        ),
    };
    let after = writes_of(&schedulers).await?;
    println!("       {label}: PodGroup statuses caught up {catch_up_s:.1}s after the last bind");

    let logged: Vec<&SchedulerProc> = schedulers.iter().collect();
    let binds = bound_once(ctx, ns, &logged).await?;
    let refused: Vec<String> = schedulers.iter().flat_map(|s| refused_of(s, ns)).collect();
    if let Some((node, held)) = watch.fullest() {
        ensure!(
            held <= NODE_CPUS,
            "{node} held {held} one-CPU pods at once, it has {NODE_CPUS} CPUs"
        );
    }
    let binds_among = |names: &[String]| -> (BTreeMap<String, u64>, usize) {
        let names: HashSet<&str> = names.iter().map(String::as_str).collect();
        let made = binds
            .iter()
            .map(|(s, made)| {
                let n = made.iter().filter(|(p, _)| names.contains(p.as_str()));
                (s.clone(), n.count() as u64)
            })
            .collect();
        let refused = refused.iter().filter(|p| names.contains(p.as_str()));
        (made, refused.count())
    };
    let (burst_binds, burst_refused) = binds_among(&burst_names);
    let (rate_binds, rate_refused) = binds_among(&rate_names);
    let burst = Part {
        phase: Phase {
            name: "burst",
            from: started,
            created: vec![burst_created; burst_names.len()],
            bound: burst_bound,
            writes: after_burst.clone(),
        },
        binds: burst_binds,
        refused: burst_refused,
    };
    let rate = Part {
        phase: Phase {
            name: "rate",
            from: rate_start,
            created: rate_created,
            bound: rate_bound,
            writes: writes_between(&after_burst, &after),
        },
        binds: rate_binds,
        refused: rate_refused,
    };
    burst.print(label, ceiling);
    rate.print(label, ceiling);
    for s in &mut schedulers {
        s.check_alive()?;
    }
    kwok.check_alive()?;
    Ok(Played {
        schedulers,
        binds,
        burst,
        rate,
        catch_up_s,
    })
}
