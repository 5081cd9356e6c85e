//! Gang scheduling: a gang that fits is bound whole; one that does not is never bound in
//! part, cycle after cycle. PodGroup phases, conditions and the events Volcano writes.

use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::Value;

use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group, queue, wait_for};
use crate::ctx::{CHART_CONF, Ctx};

const NS: &str = "e2e-gang";

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "gang", body(ctx)).await
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    c.nodes("gang", 2, "4", "16Gi").await?;
    c.create(&queue("gang-q", 1)).await?;
    let mut objects = vec![
        pod_group(NS, "fits", "gang-q", 4),
        pod_group(NS, "too-big", "gang-q", 6),
    ];
    objects.extend((0..4).map(|i| pod(NS, &format!("fits-{i}"), "fits", "1", "1Gi")));
    objects.extend((0..6).map(|i| pod(NS, &format!("too-big-{i}"), "too-big", "1", "1Gi")));
    c.create_all(objects).await?;
    let conf = ctx.write_conf("gang", CHART_CONF)?;
    let mut s = ctx.scheduler("gang", &conf, &["--node-selector=e2e:gang"])?;
    wait_bound(ctx, NS, "fits-", 4, Duration::from_secs(30)).await?;
    // Four free CPUs stay; the six-pod gang must never get part of them.
    for _ in 0..5 {
        let p = placements(ctx, NS).await?;
        let partial = p
            .iter()
            .filter(|(k, v)| k.starts_with("too-big-") && !v.is_empty())
            .count();
        ensure!(partial == 0, "{partial} pods of the 6-pod gang were bound");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let fits = c.pod_group(NS, "fits").await?;
    ensure!(
        fits["status"]["phase"] == "Running",
        "fits: phase {}",
        fits["status"]["phase"]
    );
    let too_big = c.pod_group(NS, "too-big").await?;
    ensure!(
        too_big["status"]["phase"] == "Inqueue",
        "too-big: phase {}",
        too_big["status"]["phase"]
    );
    let unschedulable = too_big["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Unschedulable"))
        .cloned()
        .unwrap_or(Value::Null);
    ensure!(
        unschedulable["status"] == "True",
        "too-big: no Unschedulable condition: {}",
        too_big["status"]
    );
    let message = unschedulable["message"].as_str().unwrap_or("");
    ensure!(
        message.contains("/6 tasks in gang unschedulable"),
        "too-big condition message: {message}"
    );
    wait_for("Volcano's events", Duration::from_secs(15), || async move {
        let events = ctx.cluster.events(NS).await?;
        let has = |kind: &str, name: &str, reason: &str| {
            events.iter().any(|e| {
                e.involved_object.kind.as_deref() == Some(kind)
                    && e.involved_object.name.as_deref() == Some(name)
                    && e.reason.as_deref() == Some(reason)
            })
        };
        Ok(has("PodGroup", "fits", "Scheduled")
            && has("PodGroup", "too-big", "Unschedulable")
            && has("Pod", "fits-0", "Scheduled")
            && has("Pod", "too-big-0", "FailedScheduling"))
    })
    .await?;
    let pods = c.pods(NS).await?;
    let pending = pods
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some("too-big-0"));
    let condition = pending
        .and_then(|p| p.status.as_ref())
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "PodScheduled"))
        .cloned();
    // Volcano's reasons: `Schedulable` for a task placed in the discarded gang attempt,
    // `Unschedulable` for one that found no node.
    ensure!(
        condition.as_ref().is_some_and(|c| c.status == "False"
            && matches!(c.reason.as_deref(), Some("Schedulable" | "Unschedulable"))),
        "too-big-0: PodScheduled condition {condition:?}"
    );
    s.check_alive()?;
    s.stop().await
}
