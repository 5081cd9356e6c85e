//! The scenarios, one file each, in the order they run.

mod bench_kwok;
mod bench_scaleout;
mod bench_startup;
mod bind_watch;
mod binds;
mod chaos;
mod cli;
mod deviceshare_gpu;
mod gang;
mod gang_stream;
mod hyper_node;
mod kwok_smoke;
mod leader;
mod metrics;
mod metrics_complete;
mod metrics_source;
mod node_selector;
mod pdb;
mod pod_deleted;
mod pprof;
mod proportion;
mod reload;
mod resource_quota;
mod restart;
mod sharding;
mod tephra_chart;
mod throughput;
mod unknown_plugin;
mod volcano_chart;
mod volume_binding;

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Result;
use futures::future::BoxFuture;

use crate::cluster::{node_of, wait_for};
use crate::ctx::Ctx;

/// A scenario: its name and its body.
pub type Scenario = for<'a> fn(&'a Ctx) -> BoxFuture<'a, Result<()>>;

pub const ALL: &[(&str, Scenario)] = &[
    ("cli", |c| Box::pin(cli::run(c))),
    ("volcano-chart", |c| Box::pin(volcano_chart::run(c))),
    ("tephra-chart", |c| Box::pin(tephra_chart::run(c))),
    ("gang", |c| Box::pin(gang::run(c))),
    ("proportion", |c| Box::pin(proportion::run(c))),
    ("node-selector", |c| Box::pin(node_selector::run(c))),
    ("pdb-blocks-eviction", |c| Box::pin(pdb::run(c))),
    ("resource-quota", |c| Box::pin(resource_quota::run(c))),
    ("hypernode-gang", |c| Box::pin(hyper_node::run(c))),
    ("hot-reload", |c| Box::pin(reload::run(c))),
    ("metrics", |c| Box::pin(metrics::run(c))),
    ("unknown-plugin-skipped", |c| {
        Box::pin(unknown_plugin::run(c))
    }),
    ("metrics-source", |c| Box::pin(metrics_source::run(c))),
    ("metrics-complete", |c| Box::pin(metrics_complete::run(c))),
    ("pprof", |c| Box::pin(pprof::run(c))),
    ("leader-election", |c| Box::pin(leader::run(c))),
    ("apiserver-restart", |c| Box::pin(restart::run(c))),
    ("pod-deleted-before-bind", |c| Box::pin(pod_deleted::run(c))),
    ("volume-binding", |c| Box::pin(volume_binding::run(c))),
    ("deviceshare-gpu", |c| Box::pin(deviceshare_gpu::run(c))),
    ("sharding-hard", |c| Box::pin(sharding::run_hard(c))),
    ("sharding-soft", |c| Box::pin(sharding::run_soft(c))),
    ("sharding-reshard", |c| Box::pin(sharding::run_reshard(c))),
    ("throughput", |c| {
        Box::pin(throughput::run(c, throughput::SUITE))
    }),
    ("kwok-smoke", |c| Box::pin(kwok_smoke::run(c))),
    ("chaos-leader-kill", |c| Box::pin(chaos::leader_kill(c))),
    ("chaos-etcd-restart", |c| Box::pin(chaos::etcd_restart(c))),
    ("chaos-watch-expired", |c| Box::pin(chaos::watch_expired(c))),
    ("chaos-api-errors", |c| Box::pin(chaos::api_errors(c))),
    ("chaos-bind-conflict", |c| Box::pin(chaos::bind_conflict(c))),
];

/// Scenarios run only when named: benchmarks too long for the suite.
pub const ON_REQUEST: &[(&str, Scenario)] = &[
    ("bench-kwok", |c| {
        Box::pin(bench_kwok::run(c, bench_kwok::FULL))
    }),
    ("bench-kwok-short", |c| {
        Box::pin(bench_kwok::run(c, bench_kwok::SHORT))
    }),
    ("bench-startup", |c| {
        Box::pin(bench_startup::run(c, bench_startup::FULL))
    }),
    ("bench-startup-short", |c| {
        Box::pin(bench_startup::run(c, bench_startup::SHORT))
    }),
    ("bench-scaleout", |c| {
        Box::pin(bench_scaleout::run(c, bench_scaleout::FULL))
    }),
    ("bench-scaleout-short", |c| {
        Box::pin(bench_scaleout::run(c, bench_scaleout::SHORT))
    }),
    ("throughput-5k", |c| {
        Box::pin(throughput::run(c, throughput::AT_5K))
    }),
];

/// Pod name → node ("" when pending) in namespace `ns`.
pub async fn placements(ctx: &Ctx, ns: &str) -> Result<BTreeMap<String, String>> {
    Ok(ctx
        .cluster
        .pods(ns)
        .await?
        .iter()
        .map(|p| {
            (
                p.metadata.name.clone().unwrap_or_default(),
                node_of(p).to_string(),
            )
        })
        .collect())
}

/// Waits until every pod whose name starts with `prefix` in `ns` is bound (`n` of them).
pub async fn wait_bound(
    ctx: &Ctx,
    ns: &str,
    prefix: &str,
    n: usize,
    timeout: Duration,
) -> Result<()> {
    wait_for(
        &format!("{n} pods {ns}/{prefix}* to be bound"),
        timeout,
        || async move {
            let p = placements(ctx, ns).await?;
            Ok(p.iter()
                .filter(|(k, v)| k.starts_with(prefix) && !v.is_empty())
                .count()
                == n)
        },
    )
    .await
}

/// Runs `body`, then removes the namespace's pods and PodGroups and the scenario's nodes,
/// whatever the outcome.
pub async fn cleaning<F>(ctx: &Ctx, ns: &str, nodes: &str, body: F) -> Result<()>
where
    F: std::future::Future<Output = Result<()>>,
{
    ctx.cluster.namespace(ns).await?;
    let result = body.await;
    ctx.cluster.clear_namespace(ns).await?;
    ctx.cluster.delete_nodes(nodes).await?;
    result
}
