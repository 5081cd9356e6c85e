//! Throughput through the real API server: 5,000 pods (500 gangs of 10) on 1,000 nodes, bound
//! by vc-scheduler, and the API server's own binding ceiling measured in the same run by a
//! plain client posting bindings for as many other pods. `throughput-5k` (on request) does the
//! same with 10,000 pods on 5,000 nodes: every pod exists before vc-scheduler starts, so its
//! binds are timed at the API server's pace, not at the pace pods are created (bench-kwok's
//! burst creates its pods while they are bound). Prints the figures and the API writes
//! vc-scheduler made per cycle, fails when it made more writes of a kind than Volcano's rules
//! make for the same decisions, and appends the figures to the benchmark history when
//! `TEPHRA_HISTORY` names its file (`crate::history`).

use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use futures::{StreamExt, TryStreamExt};
use serde_json::json;

use super::bind_watch::BindWatch;
use super::cleaning;
use crate::api_writes::{api_writes, count};
use crate::cluster::{pod, pod_group};
use crate::ctx::{CHART_CONF, Ctx};
use crate::history;
use tephra_adapters::history::E2eRecord;

const NS: &str = "e2e-throughput";
const CEILING_NS: &str = "e2e-ceiling";
const GANG_SIZE: usize = 10;
/// Bindings in flight at once for the ceiling measurement.
pub(super) const CEILING_CONCURRENCY: usize = 64;

/// A run's size.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    /// The scenario's name, in its lines and its history record.
    name: &'static str,
    nodes: usize,
    /// Gangs of `GANG_SIZE` pods.
    gangs: usize,
}

/// The suite's run.
pub const SUITE: Size = Size {
    name: "throughput",
    nodes: 1000,
    gangs: 500,
};

/// The same at 5,000 nodes, with twice the pods: the bind path timed at a large cluster's size.
pub const AT_5K: Size = Size {
    name: "throughput-5k",
    nodes: 5000,
    gangs: 1000,
};

pub async fn run(ctx: &Ctx, size: Size) -> Result<()> {
    cleaning(ctx, NS, "tp", body(ctx, size)).await?;
    ctx.cluster.clear_namespace(CEILING_NS).await
}

/// Pods per second a plain client gets from the API server posting bindings for `n` pods of
/// namespace `ns` (made for it, then deleted), pod `i` to node `node(i)`. The pod watch that
/// times a scheduler's binds (`BindWatch`) watches these pods too, so what it costs the API
/// server weighs on the ceiling as on the scheduler it is compared with.
pub(super) async fn binding_ceiling(
    ctx: &Ctx,
    ns: &str,
    n: usize,
    node: impl Fn(usize) -> String,
) -> Result<f64> {
    ctx.cluster.namespace(ns).await?;
    let watch = BindWatch::start(&ctx.cluster, ns);
    let pods = (0..n).map(|i| {
        let mut p = pod(ns, &format!("c{i}"), "none", "1", "1Gi");
        p["spec"]["schedulerName"] = json!("e2e-nobody");
        p
    });
    ctx.cluster.create_all(pods.collect()).await?;
    let start = Instant::now();
    let node = &node;
    futures::stream::iter(0..n)
        .map(|i| async move { ctx.cluster.bind(ns, &format!("c{i}"), &node(i)).await })
        .buffer_unordered(CEILING_CONCURRENCY)
        .try_collect::<Vec<_>>()
        .await?;
    let rate = n as f64 / start.elapsed().as_secs_f64();
    drop(watch);
    ctx.cluster.clear_namespace(ns).await?;
    Ok(rate)
}

/// What Volcano writes for the same decisions. Cycle 1 binds every pod: per pod a binding and
/// a `Scheduled` event; per PodGroup an update (its tasks are still Binding, so the phase is
/// Inqueue) and, the phase being Inqueue, an `Unschedulable` warning; the status of the queue
/// and of its parent `root`. Cycle 2 sees the pods Bound: per PodGroup an update to Running and
/// a `Scheduled` event. Later cycles write nothing. (At start-up both create the `root` and
/// `default` queues when missing; earlier scenarios made them here.)
fn volcano_writes(size: Size) -> Vec<(String, f64)> {
    let pods = (size.gangs * GANG_SIZE) as f64;
    let groups = size.gangs as f64;
    vec![
        ("create pods/binding".into(), pods),
        ("create events".into(), pods + 2.0 * groups),
        ("update podgroups".into(), 2.0 * groups),
        ("update queues/status".into(), 2.0),
    ]
}

async fn body(ctx: &Ctx, size: Size) -> Result<()> {
    let Size { name, nodes, gangs } = size;
    let t = Instant::now();
    ctx.cluster.nodes("tp", nodes, "8", "32Gi").await?;
    let ceiling = binding_ceiling(ctx, CEILING_NS, gangs * GANG_SIZE, |i| {
        format!("tp-{}", i % nodes)
    })
    .await?;
    let mut objects = Vec::new();
    for g in 0..gangs {
        objects.push(pod_group(NS, &format!("g{g}"), "default", GANG_SIZE as i32));
        objects.extend(
            (0..GANG_SIZE).map(|i| pod(NS, &format!("g{g}-{i}"), &format!("g{g}"), "1", "1Gi")),
        );
    }
    ctx.cluster.create_all(objects).await?;
    println!(
        "       {name}: {nodes} nodes and {} pods created in {:.1}s",
        gangs * GANG_SIZE,
        t.elapsed().as_secs_f64()
    );
    let conf = ctx.write_conf(name, CHART_CONF)?;
    let mut watch = BindWatch::start(&ctx.cluster, NS);
    let start = Instant::now();
    let mut s = ctx.scheduler(name, &conf, &["--node-selector=e2e:tp"])?;
    let n = gangs * GANG_SIZE;
    let names: Vec<String> = (0..gangs)
        .flat_map(|g| (0..GANG_SIZE).map(move |i| format!("g{g}-{i}")))
        .collect();
    let bound = loop {
        let bound = watch.bound(&names);
        if bound.len() == n {
            break bound;
        }
        s.check_alive()?;
        watch.check_alive()?;
        ensure!(
            start.elapsed() < Duration::from_secs(300),
            "only {} of {n} pods bound after 300s",
            bound.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    drop(watch);
    let first = bound.iter().min().map_or(Duration::ZERO, |t| *t - start);
    let total = bound.iter().max().map_or(Duration::ZERO, |t| *t - start);
    // Status writes run off the critical path: they have caught up when every PodGroup is
    // Running as the API holds it and no write was made for two seconds (two cycles).
    let drain_start = Instant::now();
    let volcano = volcano_writes(size);
    let (mut made, mut last_write) = (-1.0, drain_start);
    loop {
        let now: f64 = api_writes(&s.http_get("/metrics").await?).values().sum();
        if now != made {
            (made, last_write) = (now, Instant::now());
        } else if last_write.elapsed() >= Duration::from_secs(2) {
            let running = ctx
                .cluster
                .pod_groups(NS)
                .await?
                .iter()
                .filter(|pg| pg.pointer("/status/phase") == Some(&json!("Running")))
                .count();
            if running == gangs {
                break;
            }
        }
        s.check_alive()?;
        ensure!(
            drain_start.elapsed() < Duration::from_secs(120),
            "status writes still being made 120s after the last bind"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let catch_up = last_write - drain_start;
    let cycle_lines: Vec<String> = s
        .log_text()
        .lines()
        .filter(|l| l.contains(" bound in "))
        .map(str::to_string)
        .collect();
    println!(
        "       {name}: API server binding ceiling (plain client, {CEILING_CONCURRENCY} in flight): {ceiling:.0} pods/s"
    );
    println!(
        "       {name}: vc-scheduler bound {n} pods on {nodes} nodes in {:.1}s from process start ({:.0} pods/s); binds ran {:.1}s after the first ({:.0} pods/s, {:.0}% of the ceiling)",
        total.as_secs_f64(),
        n as f64 / total.as_secs_f64(),
        (total - first).as_secs_f64(),
        n as f64 / (total - first).as_secs_f64().max(1e-3),
        100.0 * n as f64 / (total - first).as_secs_f64().max(1e-3) / ceiling,
    );
    for l in &cycle_lines {
        println!("       {name}: {}", l.split("INFO ").last().unwrap_or(l));
    }
    println!(
        "       {name}: status writes caught up {:.1}s after the last bind",
        catch_up.as_secs_f64()
    );
    let metrics = s.http_get("/metrics").await?;
    let ours = api_writes(&metrics);
    println!(
        "       {name}: API writes of the whole run, tephra vs Volcano for the same decisions:"
    );
    for (what, n) in &volcano {
        let mine = count(&ours, what);
        println!("       {name}:   {what:<24} tephra {mine:>6}  Volcano {n:>6}");
    }
    for (what, n) in ours
        .iter()
        .filter(|(w, _)| *w != "create queues" && !volcano.iter().any(|(v, _)| v == *w))
    {
        println!(
            "       {name}:   {what:<24} tephra {n:>6}  (client-go's event correlation, same rule)"
        );
    }
    for (what, n) in &volcano {
        let mine = count(&ours, what);
        ensure!(
            mine <= *n,
            "{mine} {what} where Volcano's rules make {n} for the same decisions"
        );
    }
    let appended = history::append_if_asked(&ctx.env, |provenance| E2eRecord {
        provenance,
        scenario: name.into(),
        nodes: nodes as u32,
        pods: n as u32,
        pods_per_s: n as f64 / total.as_secs_f64(),
        binding_pods_per_s: n as f64 / (total - first).as_secs_f64().max(1e-3),
        api_ceiling_pods_per_s: ceiling,
        api_ceiling_concurrency: CEILING_CONCURRENCY as u32,
        status_catch_up_s: catch_up.as_secs_f64(),
        creation_to_bound_ms: history::bound_quantiles(&metrics),
        first_bind_s: Some(first.as_secs_f64()),
        last_bind_s: Some(total.as_secs_f64()),
        api_writes: Some(ours.clone()),
        running_pods: None,
        caches_synced_s: None,
        binds_by_scheduler: None,
        volcano_commit: None,
    })?;
    if let Some(path) = appended {
        println!("       {name}: record appended to {}", path.display());
    }
    s.check_alive()?;
    s.stop().await
}
