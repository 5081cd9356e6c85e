//! HyperNodes, watched live: a gang whose PodGroup asks for a hard network topology within
//! tier 1 lands inside one tier-1 HyperNode of the cluster's topology.
//!
//! Four 2-cpu nodes: s0 = {hn-0, hn-1} and s1 = {hn-2, hn-3} at tier 1, s2 = {s0, s1} at tier
//! 2. A pod of another scheduler already holds 1 cpu of hn-0, so only s1 can hold the 4-pod,
//! 1-cpu gang whole; without the topology, nodeorder would spread it over all four nodes.

use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::{Value, json};

use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group, queue};
use crate::ctx::Ctx;

const NS: &str = "e2e-hypernode";

const CONF: &str = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n  - name: conformance\n- plugins:\n  - name: drf\n    enablePreemptable: false\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: network-topology-aware\n";

pub async fn run(ctx: &Ctx) -> Result<()> {
    let result = cleaning(ctx, NS, "hn", body(ctx)).await;
    for h in ["e2e-s0", "e2e-s1", "e2e-s2"] {
        ctx.cluster
            .delete("topology.volcano.sh/v1alpha1", "HyperNode", "", h)
            .await?;
    }
    result
}

fn hyper_node(name: &str, tier: i32, member_type: &str, members: &[&str]) -> Value {
    let members: Vec<Value> = members
        .iter()
        .map(|m| json!({"type": member_type, "selector": {"exactMatch": {"name": m}}}))
        .collect();
    json!({"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
        "metadata": {"name": name}, "spec": {"tier": tier, "members": members}})
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    c.nodes("hn", 4, "2", "16Gi").await?;
    c.create_all(vec![
        hyper_node("e2e-s0", 1, "Node", &["hn-0", "hn-1"]),
        hyper_node("e2e-s1", 1, "Node", &["hn-2", "hn-3"]),
        hyper_node("e2e-s2", 2, "HyperNode", &["e2e-s0", "e2e-s1"]),
        queue("hn-q", 1),
    ])
    .await?;
    c.create(&json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "other", "namespace": NS},
        "spec": {"nodeName": "hn-0", "containers": [{"name": "c", "image": "e2e/none",
            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}))
        .await?;
    let mut group = pod_group(NS, "gang", "hn-q", 4);
    group["spec"]["networkTopology"] = json!({"mode": "hard", "highestTierAllowed": 1});
    let mut objects = vec![group];
    objects.extend((0..4).map(|i| pod(NS, &format!("gang-{i}"), "gang", "1", "1Gi")));
    c.create_all(objects).await?;
    let conf = ctx.write_conf("hypernode", CONF)?;
    let mut s = ctx.scheduler("hypernode", &conf, &["--node-selector=e2e:hn"])?;
    wait_bound(ctx, NS, "gang-", 4, Duration::from_secs(30)).await?;
    let p = placements(ctx, NS).await?;
    let outside: Vec<_> = p
        .iter()
        .filter(|(k, v)| k.starts_with("gang-") && !matches!(v.as_str(), "hn-2" | "hn-3"))
        .collect();
    ensure!(
        outside.is_empty(),
        "gang pods outside HyperNode e2e-s1: {outside:?}"
    );
    s.check_alive()?;
    s.stop().await
}
