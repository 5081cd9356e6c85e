//! PodDisruptionBudgets, watched live: a preemption that would break a budget does not happen,
//! and once the budget allows one disruption the same preemption takes the pod it allows.
//!
//! One 4-cpu node runs two low-priority pods of one job (2 cpu each, `app: db` and
//! `app: cache`); a high-priority pod asks for 2 cpu. Each pod has a budget that allows no
//! disruption, so `preempt` with the `pdb` plugin finds no victim. Then the `db` budget allows
//! one: the scheduler evicts `l-db` and leaves `l-cache`. The disruption controller, which keeps
//! a budget's `disruptionsAllowed`, does not run here, so the driver writes it.

use std::time::Duration;

use anyhow::{Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group, queue, wait_for};
use crate::ctx::Ctx;

const NS: &str = "e2e-pdb";

/// Volcano's preempt with the `pdb` plugin voting on victims in the first tier.
const CONF: &str = "actions: \"enqueue, allocate, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n  - name: conformance\n  - name: pdb\n- plugins:\n  - name: predicates\n  - name: nodeorder\n";

pub async fn run(ctx: &Ctx) -> Result<()> {
    let result = cleaning(ctx, NS, "pdb", body(ctx)).await;
    for pc in ["e2e-pdb-high", "e2e-pdb-low"] {
        ctx.cluster
            .delete("scheduling.k8s.io/v1", "PriorityClass", "", pc)
            .await?;
    }
    result
}

fn with_priority(mut pod: Value, class: &str, app: Option<&str>) -> Value {
    pod["spec"]["priorityClassName"] = json!(class);
    if let Some(app) = app {
        pod["metadata"]["labels"] = json!({ "app": app });
    }
    pod
}

fn budget(app: &str) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": app, "namespace": NS},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}}})
}

async fn allow_disruptions(ctx: &Ctx, app: &str, allowed: i32) -> Result<()> {
    ctx.cluster
        .patch_status(
            "policy/v1",
            "PodDisruptionBudget",
            NS,
            app,
            json!({"disruptionsAllowed": allowed, "currentHealthy": 1, "desiredHealthy": 1,
                   "expectedPods": 1, "observedGeneration": 1}),
        )
        .await
}

/// Whether the scheduler has evicted the pod: it is gone, being deleted, or marked as a
/// disruption target.
fn evicted(pods: &[Pod], name: &str) -> bool {
    let Some(p) = pods
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some(name))
    else {
        return true;
    };
    p.metadata.deletion_timestamp.is_some()
        || p.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.type_ == "DisruptionTarget" && c.status == "True")
            })
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    c.nodes("pdb", 1, "4", "16Gi").await?;
    c.create_all(vec![
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
               "metadata": {"name": "e2e-pdb-high"}, "value": 1000}),
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
               "metadata": {"name": "e2e-pdb-low"}, "value": 10}),
        queue("pdb-q", 1),
        budget("db"),
        budget("cache"),
    ])
    .await?;
    allow_disruptions(ctx, "db", 0).await?;
    allow_disruptions(ctx, "cache", 0).await?;
    let mut low = pod_group(NS, "low", "pdb-q", 1);
    low["spec"]["priorityClassName"] = json!("e2e-pdb-low");
    c.create_all(vec![
        low,
        with_priority(
            pod(NS, "l-db", "low", "2", "1Gi"),
            "e2e-pdb-low",
            Some("db"),
        ),
        with_priority(
            pod(NS, "l-cache", "low", "2", "1Gi"),
            "e2e-pdb-low",
            Some("cache"),
        ),
    ])
    .await?;
    let conf = ctx.write_conf("pdb", CONF)?;
    let mut s = ctx.scheduler("pdb", &conf, &["--node-selector=e2e:pdb"])?;
    wait_bound(ctx, NS, "l-", 2, Duration::from_secs(30)).await?;
    for name in ["l-db", "l-cache"] {
        c.set_phase(NS, name, "Running").await?;
    }
    let mut high = pod_group(NS, "high", "pdb-q", 1);
    high["spec"]["priorityClassName"] = json!("e2e-pdb-high");
    c.create_all(vec![
        high,
        with_priority(pod(NS, "h", "high", "2", "1Gi"), "e2e-pdb-high", None),
    ])
    .await?;
    // Both budgets allow nothing: several cycles pass and no pod is evicted.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let pods = c.pods(NS).await?;
    for name in ["l-db", "l-cache"] {
        ensure!(
            !evicted(&pods, name),
            "{name} was evicted though its budget allows no disruption"
        );
    }
    ensure!(
        placements(ctx, NS)
            .await?
            .get("h")
            .is_some_and(String::is_empty),
        "h was bound with no room on the node"
    );
    // The db budget now allows one disruption: preemption takes l-db, never l-cache.
    allow_disruptions(ctx, "db", 1).await?;
    wait_for(
        "l-db to be evicted",
        Duration::from_secs(30),
        || async move { Ok(evicted(&ctx.cluster.pods(NS).await?, "l-db")) },
    )
    .await?;
    ensure!(
        !evicted(&c.pods(NS).await?, "l-cache"),
        "l-cache was evicted though its budget allows no disruption"
    );
    // No kubelet finishes the graceful deletion; the driver does, and h takes the room.
    c.delete_pod(NS, "l-db").await?;
    wait_bound(ctx, NS, "h", 1, Duration::from_secs(30)).await?;
    ensure!(
        !evicted(&c.pods(NS).await?, "l-cache"),
        "l-cache was evicted after h was placed"
    );
    s.check_alive()?;
    s.stop().await
}
