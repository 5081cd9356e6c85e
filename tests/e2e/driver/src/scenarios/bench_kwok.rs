//! bench-kwok: vc-scheduler with the chart's configuration on thousands of kwok nodes through
//! the real API server. A burst of gangs waits when vc-scheduler starts; then gangs arrive at a
//! fixed rate, while kwok runs the pods and finishes them on a schedule, so the cluster churns.
//! The API server's own binding ceiling is measured in the same run (`throughput`'s plain
//! client). Per phase it prints pods bound per second, creation to bound p50/p99 (the driver's
//! create call to the bind arriving on its watch), process start to the first and last bind,
//! and vc-scheduler's API writes by kind, and appends one record per phase to the benchmark
//! history when `TEPHRA_HISTORY` names its file. Run on request only (`tests/e2e/run
//! bench-kwok`, or `bench-kwok-short` at a tenth of the size).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use serde_json::json;
use tephra_adapters::history::{E2eRecord, Provenance, Quantiles};

use super::cleaning;
use super::throughput::{CEILING_CONCURRENCY, binding_ceiling};
use crate::api_writes::api_writes;
use crate::bind_times::BindTimes;
use crate::cluster::{Cluster, pod, pod_group};
use crate::ctx::{CHART_CONF, Ctx};
use crate::history;
use crate::kwok::{KwokProc, RUN_FOR, fake_nodes};
use crate::proc::SchedulerProc;

const NS: &str = "e2e-bench-kwok";
const CEILING_NS: &str = "e2e-bench-ceiling";
const NODE_PREFIX: &str = "bk";
const GANG_SIZE: usize = 10;
/// Gangs of the fixed-rate phase being created at once, at most: where the API server falls
/// behind the rate, more would pile up requests until it drops connections.
const CREATING_AT_ONCE: usize = 16;

/// A run's size.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    name: &'static str,
    nodes: usize,
    /// Gangs created before vc-scheduler starts.
    burst_gangs: usize,
    /// Gangs created afterwards at `rate_pods_per_s`.
    rate_gangs: usize,
    rate_pods_per_s: f64,
    /// How long kwok runs each pod before it succeeds (a Go duration).
    run_for: &'static str,
    /// The longest wait for a phase's binds.
    timeout: Duration,
}

pub const FULL: Size = Size {
    name: "bench-kwok",
    nodes: 5000,
    burst_gangs: 500,
    rate_gangs: 1000,
    rate_pods_per_s: 500.0,
    run_for: "30s",
    timeout: Duration::from_secs(600),
};

pub const SHORT: Size = Size {
    name: "bench-kwok-short",
    nodes: 500,
    burst_gangs: 50,
    rate_gangs: 100,
    rate_pods_per_s: 500.0,
    run_for: "5s",
    timeout: Duration::from_secs(120),
};

pub async fn run(ctx: &Ctx, size: Size) -> Result<()> {
    let result = cleaning(ctx, NS, NODE_PREFIX, body(ctx, size)).await;
    ctx.cluster.clear_namespace(CEILING_NS).await?;
    result
}

/// The objects of gang `g`: its PodGroup and pods.
fn gang(g: usize, run_for: &str) -> (serde_json::Value, Vec<serde_json::Value>) {
    let name = format!("g{g}");
    let pods = (0..GANG_SIZE)
        .map(|i| {
            let mut p = pod(NS, &format!("{name}-{i}"), &name, "1", "1Gi");
            p["metadata"]["annotations"][RUN_FOR] = json!(run_for);
            p
        })
        .collect();
    (pod_group(NS, &name, "default", GANG_SIZE as i32), pods)
}

fn pod_names(gangs: std::ops::Range<usize>) -> Vec<String> {
    gangs
        .flat_map(|g| (0..GANG_SIZE).map(move |i| format!("g{g}-{i}")))
        .collect()
}

/// Creates gang `g`; returns when its pods were sent.
async fn create_gang(cluster: Cluster, g: usize, run_for: &'static str) -> Result<Instant> {
    let (group, pods) = gang(g, run_for);
    cluster.create(&group).await?;
    let sent = Instant::now();
    cluster.create_all(pods).await?;
    Ok(sent)
}

/// Waits until every pod of `pods` is bound; fails after `timeout` or when a process exits.
async fn wait_bound(
    times: &BindTimes,
    pods: &[String],
    timeout: Duration,
    s: &mut SchedulerProc,
    kwok: &mut KwokProc,
) -> Result<Vec<Instant>> {
    let start = Instant::now();
    loop {
        let bound = times.of(pods);
        if bound.len() == pods.len() {
            return Ok(bound);
        }
        s.check_alive()?;
        kwok.check_alive()?;
        ensure!(
            start.elapsed() < timeout,
            "only {} of {} pods bound after {timeout:?}",
            bound.len(),
            pods.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The `q` quantile of `sorted` milliseconds (nearest rank).
fn rank(sorted: &[f64], q: f64) -> f64 {
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[i - 1]
}

fn quantiles(mut ms: Vec<f64>) -> Option<Quantiles> {
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
fn writes_between(
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
) -> BTreeMap<String, f64> {
    after
        .iter()
        .map(|(k, n)| (k.clone(), n - before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, n)| *n > 0.0)
        .collect()
}

/// One phase's figures.
struct Phase {
    name: &'static str,
    pods: usize,
    /// When the phase's clock starts: vc-scheduler's start for the burst, the first creation
    /// for the fixed rate.
    from: Instant,
    created: Vec<Instant>,
    bound: Vec<Instant>,
    writes: BTreeMap<String, f64>,
}

impl Phase {
    fn first(&self) -> Duration {
        self.bound
            .iter()
            .min()
            .map_or(Duration::ZERO, |t| *t - self.from)
    }

    fn last(&self) -> Duration {
        self.bound
            .iter()
            .max()
            .map_or(Duration::ZERO, |t| *t - self.from)
    }

    fn creation_to_bound(&self) -> Option<Quantiles> {
        let ms = self
            .created
            .iter()
            .zip(&self.bound)
            .map(|(c, b)| b.saturating_duration_since(*c).as_secs_f64() * 1000.0)
            .collect();
        quantiles(ms)
    }

    fn print(&self, size: &Size, ceiling: f64) {
        let tag = size.name;
        let span = self.last().as_secs_f64().max(1e-3);
        let binding = (self.last() - self.first()).as_secs_f64().max(1e-3);
        let rate = self.pods as f64 / span;
        println!(
            "       {tag}: {}: {} pods bound {:.1}s after the start ({rate:.0} pods/s, {:.0}% of the ceiling); first bind at {:.2}s, binds ran {binding:.1}s ({:.0} pods/s)",
            self.name,
            self.pods,
            span,
            100.0 * rate / ceiling,
            self.first().as_secs_f64(),
            self.pods as f64 / binding,
        );
        if let Some(q) = self.creation_to_bound() {
            println!(
                "       {tag}: {}: creation to bound p50 {:.0} ms, p90 {:.0} ms, p99 {:.0} ms",
                self.name, q.p50, q.p90, q.p99
            );
        }
        for (what, n) in &self.writes {
            println!(
                "       {tag}: {}:   {what:<24} {n:>7} ({:.2} per pod)",
                self.name,
                n / self.pods as f64
            );
        }
    }

    /// The phase's history record, made once where and when are known.
    fn record(
        &self,
        size: &Size,
        ceiling: f64,
        catch_up: f64,
    ) -> impl FnOnce(Provenance) -> E2eRecord {
        let span = self.last().as_secs_f64().max(1e-3);
        let binding = (self.last() - self.first()).as_secs_f64().max(1e-3);
        let scenario = format!("{}/{}", size.name, self.name);
        let (nodes, pods) = (size.nodes as u32, self.pods as u32);
        let creation_to_bound_ms = self.creation_to_bound();
        let (first, last) = (self.first().as_secs_f64(), self.last().as_secs_f64());
        let writes = self.writes.clone();
        move |provenance| E2eRecord {
            provenance,
            scenario,
            nodes,
            pods,
            pods_per_s: f64::from(pods) / span,
            binding_pods_per_s: f64::from(pods) / binding,
            api_ceiling_pods_per_s: ceiling,
            api_ceiling_concurrency: CEILING_CONCURRENCY as u32,
            status_catch_up_s: catch_up,
            creation_to_bound_ms,
            first_bind_s: Some(first),
            last_bind_s: Some(last),
            api_writes: Some(writes),
            running_pods: None,
            caches_synced_s: None,
        }
    }
}

/// Seconds until every PodGroup of the namespace is Running or Completed as the API holds it.
async fn status_catch_up(ctx: &Ctx, groups: usize, timeout: Duration) -> Result<f64> {
    let start = Instant::now();
    loop {
        let settled = ctx
            .cluster
            .pod_groups(NS)
            .await?
            .iter()
            .filter(|pg| {
                let phase = pg.pointer("/status/phase").and_then(|p| p.as_str());
                matches!(phase, Some("Running" | "Completed"))
            })
            .count();
        if settled == groups {
            return Ok(start.elapsed().as_secs_f64());
        }
        ensure!(
            start.elapsed() < timeout,
            "{settled} of {groups} PodGroups Running or Completed after {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn body(ctx: &Ctx, size: Size) -> Result<()> {
    let tag = size.name;
    let t = Instant::now();
    fake_nodes(&ctx.cluster, NODE_PREFIX, size.nodes, "8", "32Gi").await?;
    println!(
        "       {tag}: {} kwok nodes created in {:.1}s",
        size.nodes,
        t.elapsed().as_secs_f64()
    );
    let burst_pods = size.burst_gangs * GANG_SIZE;
    // Bound to nodes that do not exist, so kwok leaves them alone: the same API work.
    let ceiling = binding_ceiling(ctx, CEILING_NS, burst_pods, |i| format!("ceiling-{i}")).await?;
    println!(
        "       {tag}: API server binding ceiling (plain client, {CEILING_CONCURRENCY} in flight): {ceiling:.0} pods/s"
    );
    ctx.cluster.namespace(NS).await?;
    let mut kwok = KwokProc::start(&ctx.env, tag)?;
    let (times, watch) = BindTimes::start(&ctx.cluster, NS);
    let t = Instant::now();
    let mut objects = Vec::new();
    for g in 0..size.burst_gangs {
        let (group, pods) = gang(g, size.run_for);
        objects.push(group);
        objects.extend(pods);
    }
    ctx.cluster.create_all(objects).await?;
    let burst_created = Instant::now();
    println!(
        "       {tag}: burst of {burst_pods} pods in {} gangs created in {:.1}s",
        size.burst_gangs,
        t.elapsed().as_secs_f64()
    );
    let conf = ctx.write_conf(tag, CHART_CONF)?;
    let start = Instant::now();
    let mut s = ctx.scheduler(tag, &conf, &[&format!("--node-selector=e2e:{NODE_PREFIX}")])?;
    let burst_names = pod_names(0..size.burst_gangs);
    let bound = wait_bound(&times, &burst_names, size.timeout, &mut s, &mut kwok).await?;
    let after_burst = api_writes(&s.http_get("/metrics").await?);
    let burst = Phase {
        name: "burst",
        pods: burst_pods,
        from: start,
        created: vec![burst_created; burst_pods],
        bound,
        writes: after_burst.clone(),
    };
    burst.print(&size, ceiling);

    let rate_gangs = size.burst_gangs..size.burst_gangs + size.rate_gangs;
    let period = Duration::from_secs_f64(GANG_SIZE as f64 / size.rate_pods_per_s);
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let slots = Arc::new(tokio::sync::Semaphore::new(CREATING_AT_ONCE));
    let rate_start = Instant::now();
    let mut creating = Vec::new();
    for g in rate_gangs.clone() {
        ticker.tick().await;
        let slot = slots.clone().acquire_owned().await?;
        let (cluster, run_for) = (ctx.cluster.clone(), size.run_for);
        creating.push(tokio::spawn(async move {
            let sent = create_gang(cluster, g, run_for).await;
            drop(slot);
            sent
        }));
    }
    let mut created = Vec::new();
    for h in creating {
        let sent = h.await??;
        created.extend(std::iter::repeat_n(sent, GANG_SIZE));
    }
    let creation_rate = created.len() as f64 / rate_start.elapsed().as_secs_f64();
    println!(
        "       {tag}: fixed rate: {} pods created at {creation_rate:.0} pods/s (asked {:.0})",
        created.len(),
        size.rate_pods_per_s
    );
    let rate_names = pod_names(rate_gangs.clone());
    let bound = wait_bound(&times, &rate_names, size.timeout, &mut s, &mut kwok).await?;
    let all_groups = size.burst_gangs + size.rate_gangs;
    let catch_up = status_catch_up(ctx, all_groups, size.timeout).await?;
    let after = api_writes(&s.http_get("/metrics").await?);
    println!("       {tag}: PodGroup statuses caught up {catch_up:.1}s after the last bind");
    let rate = Phase {
        name: "rate",
        pods: rate_names.len(),
        from: rate_start,
        created,
        bound,
        writes: writes_between(&after_burst, &after),
    };
    rate.print(&size, ceiling);
    watch.abort();
    s.check_alive()?;
    kwok.check_alive()?;
    for phase in [&burst, &rate] {
        if let Some(path) =
            history::append_if_asked(&ctx.env, phase.record(&size, ceiling, catch_up))?
        {
            println!(
                "       {tag}: {} record appended to {}",
                phase.name,
                path.display()
            );
        }
    }
    s.stop().await?;
    kwok.stop().await
}
