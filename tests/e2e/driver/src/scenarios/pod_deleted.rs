//! Pods deleted while vc-scheduler is placing them (between its snapshot and its binds): no
//! crash, the others are bound, and the cache (SIGUSR1 dump) keeps none of the deleted pods.

use std::time::Duration;

use anyhow::{Result, ensure};

use super::{cleaning, wait_bound};
use crate::cluster::{pod, pod_group};
use crate::ctx::{CHART_CONF, Ctx};

const NS: &str = "e2e-deleted";
const PODS: usize = 200;

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "deleted", body(ctx)).await
}

async fn body(ctx: &Ctx) -> Result<()> {
    ctx.cluster.nodes("deleted", 10, "8", "32Gi").await?;
    let conf = ctx.write_conf("deleted", CHART_CONF)?;
    let mut s = ctx.scheduler(
        "pod-deleted",
        &conf,
        &["--node-selector=e2e:deleted", "--schedule-period=200ms"],
    )?;
    let mut objects = Vec::new();
    for i in 0..PODS {
        objects.push(pod_group(NS, &format!("p{i}"), "default", 1));
        objects.push(pod(NS, &format!("p{i}"), &format!("p{i}"), "100m", "128Mi"));
    }
    ctx.cluster.create_all(objects).await?;
    // Delete every odd pod as fast as possible while the scheduler works on them.
    let deletions = (0..PODS)
        .filter(|i| i % 2 == 1)
        .map(|i| async move { ctx.cluster.delete_pod(NS, &format!("p{i}")).await });
    futures::future::try_join_all(deletions).await?;
    wait_bound(ctx, NS, "p", PODS / 2, Duration::from_secs(60)).await?;
    s.check_alive()?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let dump = super::metrics::dump_now(ctx, &s).await?;
    let cached: Vec<String> = dump["pods"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter(|p| p["metadata"]["namespace"] == NS)
                .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    ensure!(
        cached.len() == PODS / 2,
        "the cache holds {} pods of {NS}, want {}",
        cached.len(),
        PODS / 2
    );
    let failed_binds = s
        .log_text()
        .lines()
        .filter(|l| l.contains("failed to bind"))
        .count();
    println!(
        "       pod-deleted-before-bind: {failed_binds} binds refused because the pod was gone"
    );
    s.stop().await
}
