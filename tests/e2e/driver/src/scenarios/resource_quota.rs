//! ResourceQuotas, watched live: the `resourcequota` plugin admits a job only while its
//! `minResources` fit its namespace's quota, and a quota raised later admits the job it held.
//!
//! The quota allows 2 cpu. Job `small` (1 cpu) is admitted and bound; job `big` (3 cpu) stays
//! Pending, its pod unbound, cycle after cycle. Then the quota allows 4 cpu and `big` is
//! admitted and bound. The quota controller, which keeps a quota's status, does not run here,
//! so the driver writes it; the API server's quota admission, which charges each pod as it is
//! created, sees 8 cpu allowed until both pods exist.

use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::{Value, json};

use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group, queue, wait_for};
use crate::ctx::Ctx;

const NS: &str = "e2e-quota";

/// Enqueue votes with `resourcequota`; gang and predicates place the admitted jobs.
const CONF: &str = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: resourcequota\n- plugins:\n  - name: predicates\n  - name: nodeorder\n";

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "quota", body(ctx)).await
}

fn with_min_cpu(mut pg: Value, cpu: &str) -> Value {
    pg["spec"]["minResources"] = json!({ "cpu": cpu });
    pg
}

/// Sets the quota's status: `cpu` allowed, nothing used.
async fn set_hard_cpu(ctx: &Ctx, cpu: &str) -> Result<()> {
    ctx.cluster
        .patch_status(
            "v1",
            "ResourceQuota",
            NS,
            "cpu",
            json!({"hard": {"cpu": cpu}, "used": {"cpu": "0"}}),
        )
        .await
}

async fn phase(ctx: &Ctx, name: &str) -> Result<String> {
    let pg = ctx.cluster.pod_group(NS, name).await?;
    Ok(pg["status"]["phase"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    c.nodes("quota", 1, "8", "16Gi").await?;
    c.create_all(vec![
        queue("quota-q", 1),
        json!({"apiVersion": "v1", "kind": "ResourceQuota",
               "metadata": {"name": "cpu", "namespace": NS},
               "spec": {"hard": {"cpu": "4"}}}),
    ])
    .await?;
    set_hard_cpu(ctx, "8").await?;
    c.create_all(vec![
        with_min_cpu(pod_group(NS, "small", "quota-q", 1), "1"),
        pod(NS, "small-0", "small", "1", "1Gi"),
        with_min_cpu(pod_group(NS, "big", "quota-q", 1), "3"),
        pod(NS, "big-0", "big", "3", "1Gi"),
    ])
    .await?;
    set_hard_cpu(ctx, "2").await?;
    let conf = ctx.write_conf("quota", CONF)?;
    let mut s = ctx.scheduler("quota", &conf, &["--node-selector=e2e:quota"])?;
    wait_bound(ctx, NS, "small-", 1, Duration::from_secs(30)).await?;
    // Several cycles: the 3-cpu job does not fit the 2-cpu quota and is never admitted.
    tokio::time::sleep(Duration::from_secs(5)).await;
    ensure!(
        placements(ctx, NS)
            .await?
            .get("big-0")
            .is_some_and(String::is_empty),
        "big-0 was bound beyond its namespace's quota"
    );
    let held = phase(ctx, "big").await?;
    ensure!(
        held.is_empty() || held == "Pending",
        "big is {held:?}, not Pending"
    );
    set_hard_cpu(ctx, "4").await?;
    wait_for(
        "big to be admitted",
        Duration::from_secs(30),
        || async move {
            Ok(matches!(
                phase(ctx, "big").await?.as_str(),
                "Inqueue" | "Running"
            ))
        },
    )
    .await?;
    wait_bound(ctx, NS, "big-", 1, Duration::from_secs(30)).await?;
    s.check_alive()?;
    s.stop().await
}
