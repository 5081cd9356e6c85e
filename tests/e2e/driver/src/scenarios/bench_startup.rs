//! bench-startup: vc-scheduler started on a cluster that is already full, timed from process
//! start to its first bind (Volcano's issue 5819: 8 minutes on 5,000 nodes and 140,000 pods).
//! kwok runs the cluster's pods: gangs of ten, bound at creation (`spec.nodeName`) and Running
//! before the scheduler starts, with their PodGroups; a few pending gangs wait for it. The
//! figures are process start to caches synced (every watched kind listed), to the first bind
//! and to the last pending pod bound, then until every PodGroup's status is written, and the
//! API server's binding ceiling in the same run. The two sizes differ tenfold in nodes and pods, so their
//! times side by side show whether start-up grows with the initial list and no faster. Run on
//! request only (`tests/e2e/run bench-startup`, or `bench-startup-short` at a tenth).

use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use serde_json::json;
use tephra_adapters::history::E2eRecord;

use super::bind_watch::BindWatch;
use super::cleaning;
use super::throughput::{CEILING_CONCURRENCY, binding_ceiling};
use crate::api_writes::api_writes;
use crate::cluster::{Cluster, pod, pod_group};
use crate::ctx::{CHART_CONF, Ctx};
use crate::history;
use crate::kwok::{KwokProc, fake_nodes};

/// The running pods' namespace; the pending gangs have `PENDING_NS`.
const RUNNING_NS: &str = "e2e-startup-running";
const PENDING_NS: &str = "e2e-startup";
const CEILING_NS: &str = "e2e-startup-ceiling";
/// Bindings of the ceiling measurement.
const CEILING_PODS: usize = 2000;
const NODE_PREFIX: &str = "su";
const GANG_SIZE: usize = 10;
/// Gangs waiting when the scheduler starts.
const PENDING_GANGS: usize = 10;
/// A running pod's request: ten of them leave room on a node (8 CPUs, 32Gi) for pending gangs.
const RUNNING_CPU: &str = "500m";

/// A run's size.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    name: &'static str,
    nodes: usize,
    /// Gangs of ten Running when the scheduler starts.
    running_gangs: usize,
    /// The longest wait for kwok to run the pods, and for the scheduler to bind.
    timeout: Duration,
}

pub const FULL: Size = Size {
    name: "bench-startup",
    nodes: 5000,
    running_gangs: 5000,
    timeout: Duration::from_secs(900),
};

pub const SHORT: Size = Size {
    name: "bench-startup-short",
    nodes: 500,
    running_gangs: 500,
    timeout: Duration::from_secs(300),
};

pub async fn run(ctx: &Ctx, size: Size) -> Result<()> {
    let result = cleaning(ctx, PENDING_NS, NODE_PREFIX, body(ctx, size)).await;
    ctx.cluster.clear_large_namespace(RUNNING_NS).await?;
    ctx.cluster.clear_namespace(CEILING_NS).await?;
    result
}

/// Gang `g` of the running pods, each bound at creation to node `g % nodes` (ten pods of a gang
/// on one node: the spread does not matter to start-up, the count does).
fn running_gang(g: usize, nodes: usize) -> Vec<serde_json::Value> {
    let name = format!("r{g}");
    let node = format!("{NODE_PREFIX}-{}", g % nodes);
    let mut objects = vec![pod_group(RUNNING_NS, &name, "default", GANG_SIZE as i32)];
    objects.extend((0..GANG_SIZE).map(|i| {
        let mut p = pod(
            RUNNING_NS,
            &format!("{name}-{i}"),
            &name,
            RUNNING_CPU,
            "1Gi",
        );
        p["spec"]["nodeName"] = json!(node);
        p
    }));
    objects
}

/// Seconds until every PodGroup, the running gangs' and the pending ones', is Running as the
/// API holds it: the status writes of the first cycles have been made.
async fn status_catch_up(ctx: &Ctx, running_gangs: usize, timeout: Duration) -> Result<f64> {
    let start = Instant::now();
    loop {
        let mut running = 0;
        for ns in [RUNNING_NS, PENDING_NS] {
            running += ctx
                .cluster
                .pod_groups(ns)
                .await?
                .iter()
                .filter(|pg| pg.pointer("/status/phase") == Some(&json!("Running")))
                .count();
        }
        if running == running_gangs + PENDING_GANGS {
            return Ok(start.elapsed().as_secs_f64());
        }
        ensure!(
            start.elapsed() < timeout,
            "{running} of {} PodGroups Running {timeout:?} after the last bind",
            running_gangs + PENDING_GANGS
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Waits until no pod of `ns` is Pending (kwok has run them all).
async fn wait_running(cluster: &Cluster, ns: &str, timeout: Duration) -> Result<()> {
    let api: Api<Pod> = Api::namespaced(cluster.client.clone(), ns);
    let start = Instant::now();
    loop {
        let pending = api
            .list(
                &ListParams::default()
                    .fields("status.phase=Pending")
                    .limit(1),
            )
            .await?;
        if pending.items.is_empty() {
            return Ok(());
        }
        ensure!(
            start.elapsed() < timeout,
            "kwok left pods of {ns} Pending after {timeout:?}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

async fn body(ctx: &Ctx, size: Size) -> Result<()> {
    let tag = size.name;
    let running_pods = size.running_gangs * GANG_SIZE;
    let t = Instant::now();
    fake_nodes(&ctx.cluster, NODE_PREFIX, size.nodes, "8", "32Gi").await?;
    ctx.cluster.namespace(RUNNING_NS).await?;
    let mut kwok = KwokProc::start(&ctx.env, tag)?;
    let objects = (0..size.running_gangs)
        .flat_map(|g| running_gang(g, size.nodes))
        .collect();
    ctx.cluster.create_all(objects).await?;
    wait_running(&ctx.cluster, RUNNING_NS, size.timeout).await?;
    kwok.check_alive()?;
    println!(
        "       {tag}: {} kwok nodes and {running_pods} Running pods in {} PodGroups made in {:.1}s",
        size.nodes,
        size.running_gangs,
        t.elapsed().as_secs_f64()
    );
    let names: Vec<String> = (0..PENDING_GANGS)
        .flat_map(|g| (0..GANG_SIZE).map(move |i| format!("p{g}-{i}")))
        .collect();
    let mut objects = Vec::new();
    for g in 0..PENDING_GANGS {
        let name = format!("p{g}");
        objects.push(pod_group(PENDING_NS, &name, "default", GANG_SIZE as i32));
        objects.extend(
            (0..GANG_SIZE).map(|i| pod(PENDING_NS, &format!("{name}-{i}"), &name, "1", "1Gi")),
        );
    }
    ctx.cluster.create_all(objects).await?;
    let pending = names.len();

    let conf = ctx.write_conf(tag, CHART_CONF)?;
    let mut watch = BindWatch::start(&ctx.cluster, PENDING_NS);
    let start = Instant::now();
    let mut s = ctx.scheduler(tag, &conf, &[&format!("--node-selector=e2e:{NODE_PREFIX}")])?;
    let mut synced = None;
    let bound = loop {
        if synced.is_none() && s.log_text().contains("caches synced") {
            synced = Some(start.elapsed());
        }
        let bound = watch.bound(&names);
        if bound.len() == pending {
            break bound;
        }
        s.check_alive()?;
        watch.check_alive()?;
        ensure!(
            start.elapsed() < size.timeout,
            "{} of {pending} pending pods bound {:?} after vc-scheduler started",
            bound.len(),
            size.timeout
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    drop(watch);
    let first = bound.iter().min().map_or(Duration::ZERO, |t| *t - start);
    let last = bound.iter().max().map_or(Duration::ZERO, |t| *t - start);
    let synced = synced.unwrap_or(last);
    let catch_up = status_catch_up(ctx, size.running_gangs, size.timeout).await?;
    println!(
        "       {tag}: vc-scheduler on {} nodes and {running_pods} running pods: caches synced {:.2}s, first bind {:.2}s, all {pending} pending pods bound {:.2}s after process start; every PodGroup's status written {catch_up:.1}s later",
        size.nodes,
        synced.as_secs_f64(),
        first.as_secs_f64(),
        last.as_secs_f64()
    );
    for l in s.log_text().lines().filter(|l| l.contains("warmed up in")) {
        println!("       {tag}: {}", l.split("INFO ").last().unwrap_or(l));
    }
    // The API server's speed in this run, beside the start-up it served.
    let ceiling =
        binding_ceiling(ctx, CEILING_NS, CEILING_PODS, |i| format!("ceiling-{i}")).await?;
    println!(
        "       {tag}: API server binding ceiling (plain client, {CEILING_CONCURRENCY} in flight): {ceiling:.0} pods/s"
    );
    let writes = api_writes(&s.http_get("/metrics").await?);
    let appended = history::append_if_asked(&ctx.env, |provenance| E2eRecord {
        provenance,
        scenario: tag.into(),
        nodes: size.nodes as u32,
        pods: pending as u32,
        pods_per_s: pending as f64 / last.as_secs_f64().max(1e-3),
        binding_pods_per_s: pending as f64 / (last - first).as_secs_f64().max(1e-3),
        api_ceiling_pods_per_s: ceiling,
        api_ceiling_concurrency: CEILING_CONCURRENCY as u32,
        status_catch_up_s: catch_up,
        creation_to_bound_ms: None,
        first_bind_s: Some(first.as_secs_f64()),
        last_bind_s: Some(last.as_secs_f64()),
        api_writes: Some(writes),
        binds_by_scheduler: None,
        running_pods: Some(running_pods as u32),
        caches_synced_s: Some(synced.as_secs_f64()),
        volcano_commit: None,
    })?;
    if let Some(path) = appended {
        println!("       {tag}: record appended to {}", path.display());
    }
    s.check_alive()?;
    kwok.check_alive()?;
    s.stop().await?;
    kwok.stop().await
}
