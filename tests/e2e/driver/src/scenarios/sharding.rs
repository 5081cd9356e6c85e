//! Node sharding: several vc-schedulers over one cluster, each on the nodes of its NodeShard.
//! `sharding-hard`: two hard-sharded schedulers race for the same pods; each pod is bound once,
//! by the scheduler whose shard holds its node, and each reports its nodes in its shard's
//! status. `sharding-soft`: a scheduler whose shard is full places outside it.
//! `sharding-reshard`: the NodeShards are rewritten while pods are pending; a node changes
//! schedulers only once its old scheduler reports it gave it up, and no pod is lost or bound
//! twice.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::{Value, json};

use super::binds::bound_once;
use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group, wait_for};
use crate::ctx::{CHART_CONF, Ctx};
use crate::proc::SchedulerProc;

const SHARD_API: &str = "shard.volcano.sh/v1alpha1";

pub async fn run_hard(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, "e2e-shard-hard", "shard-hard", hard(ctx)).await
}

pub async fn run_soft(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, "e2e-shard-soft", "shard-soft", soft(ctx)).await
}

pub async fn run_reshard(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, "e2e-reshard", "reshard", reshard(ctx)).await
}

fn node_shard(name: &str, nodes: &[&str]) -> Value {
    json!({"apiVersion": SHARD_API, "kind": "NodeShard", "metadata": {"name": name},
        "spec": {"nodesDesired": nodes}})
}

/// Creates or rewrites the NodeShards, as the sharding controller would (once the API server
/// serves the kind, which the context applied last).
pub(super) async fn set_shards(ctx: &Ctx, shards: &[(&str, &[&str])]) -> Result<()> {
    wait_for(
        "NodeShards to be served",
        Duration::from_secs(60),
        || async {
            Ok(ctx
                .cluster
                .get(SHARD_API, "NodeShard", "", "none")
                .await
                .is_ok())
        },
    )
    .await?;
    for (name, nodes) in shards {
        match ctx.cluster.get(SHARD_API, "NodeShard", "", name).await? {
            Some(_) => {
                let spec = json!({"spec": {"nodesDesired": nodes}});
                ctx.cluster
                    .merge((SHARD_API, "NodeShard"), ("", name), false, &spec)
                    .await?
            }
            None => ctx.cluster.create(&node_shard(name, nodes)).await?,
        }
    }
    Ok(())
}

pub(super) async fn delete_shards(ctx: &Ctx, names: &[&str]) -> Result<()> {
    for name in names {
        ctx.cluster.delete(SHARD_API, "NodeShard", "", name).await?;
    }
    Ok(())
}

/// A NodeShard's `status.nodesInUse`, as its scheduler reported it.
async fn in_use(ctx: &Ctx, shard: &str) -> Result<BTreeSet<String>> {
    let o = ctx
        .cluster
        .get(SHARD_API, "NodeShard", "", shard)
        .await?
        .unwrap_or_default();
    Ok(o["status"]["nodesInUse"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect())
}

/// Waits until the scheduler of `shard` reports exactly `nodes` in use.
async fn wait_in_use(ctx: &Ctx, shard: &str, nodes: &[&str]) -> Result<()> {
    let want: BTreeSet<String> = nodes.iter().map(|n| n.to_string()).collect();
    wait_for(
        &format!("NodeShard {shard} to report {nodes:?} in use"),
        Duration::from_secs(30),
        || async { Ok(in_use(ctx, shard).await? == want) },
    )
    .await
}

fn sharded(mode: &str, shard: &str, nodes: &str) -> [String; 3] {
    [
        format!("--scheduler-sharding-mode={mode}"),
        format!("--scheduler-sharding-name={shard}"),
        format!("--node-selector=e2e:{nodes}"),
    ]
}

fn start(ctx: &Ctx, name: &str, conf: &std::path::Path, flags: &[String]) -> Result<SchedulerProc> {
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    ctx.scheduler(name, conf, &flags)
}

fn job(ns: &str, name: &str, pods: usize, min: i32, cpu: &str) -> Vec<Value> {
    let mut objects = vec![pod_group(ns, name, "default", min)];
    objects.extend((0..pods).map(|i| pod(ns, &format!("{name}-{i}"), name, cpu, "1Gi")));
    objects
}

async fn hard(ctx: &Ctx) -> Result<()> {
    const NS: &str = "e2e-shard-hard";
    let c = &ctx.cluster;
    c.nodes("shard-hard", 4, "2", "8Gi").await?;
    let (a_nodes, b_nodes) = (
        ["shard-hard-0", "shard-hard-1"],
        ["shard-hard-2", "shard-hard-3"],
    );
    set_shards(ctx, &[("shard-a", &a_nodes), ("shard-b", &b_nodes)]).await?;
    let conf = ctx.write_conf("shard-hard", CHART_CONF)?;
    let mut a = start(
        ctx,
        "shard-a",
        &conf,
        &sharded("hard", "shard-a", "shard-hard"),
    )?;
    let mut b = start(
        ctx,
        "shard-b",
        &conf,
        &sharded("hard", "shard-b", "shard-hard"),
    )?;
    wait_in_use(ctx, "shard-a", &a_nodes).await?;
    wait_in_use(ctx, "shard-b", &b_nodes).await?;
    // Eight one-CPU pods fill the eight CPUs; both schedulers see every pod.
    let mut objects = Vec::new();
    for i in 0..8 {
        objects.extend(job(NS, &format!("j{i}"), 1, 1, "1"));
    }
    c.create_all(objects).await?;
    wait_bound(ctx, NS, "j", 8, Duration::from_secs(60)).await?;
    // Binds still in flight when the last pod was seen bound are in the logs a moment later.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let binds = bound_once(ctx, NS, &[&a, &b]).await?;
    for (scheduler, nodes) in [("shard-a", &a_nodes), ("shard-b", &b_nodes)] {
        let made = &binds[scheduler];
        ensure!(
            made.iter().all(|(_, n)| nodes.contains(&n.as_str())),
            "{scheduler} bound outside its shard: {made:?}"
        );
        ensure!(
            made.len() == 4,
            "{scheduler} made {} binds, want 4: {made:?}",
            made.len()
        );
    }
    a.check_alive()?;
    b.check_alive()?;
    a.stop().await?;
    b.stop().await?;
    delete_shards(ctx, &["shard-a", "shard-b"]).await
}

async fn soft(ctx: &Ctx) -> Result<()> {
    const NS: &str = "e2e-shard-soft";
    let c = &ctx.cluster;
    c.nodes("shard-soft", 2, "2", "8Gi").await?;
    set_shards(ctx, &[("shard-s", &["shard-soft-0"])]).await?;
    let conf = ctx.write_conf("shard-soft", CHART_CONF)?;
    let mut s = start(
        ctx,
        "shard-s",
        &conf,
        &sharded("soft", "shard-s", "shard-soft"),
    )?;
    wait_in_use(ctx, "shard-s", &["shard-soft-0"]).await?;
    // Three one-CPU pods in one gang: two fill the shard's node, the third goes outside it.
    c.create_all(job(NS, "g", 3, 3, "1")).await?;
    wait_bound(ctx, NS, "g-", 3, Duration::from_secs(30)).await?;
    let placed = placements(ctx, NS).await?;
    let on = |node: &str| placed.values().filter(|n| *n == node).count();
    ensure!(
        on("shard-soft-0") == 2 && on("shard-soft-1") == 1,
        "want two pods in the shard and one outside: {placed:?}"
    );
    s.check_alive()?;
    s.stop().await?;
    delete_shards(ctx, &["shard-s"]).await
}

async fn reshard(ctx: &Ctx) -> Result<()> {
    const NS: &str = "e2e-reshard";
    let c = &ctx.cluster;
    c.nodes("reshard", 4, "4", "16Gi").await?;
    let n = ["reshard-0", "reshard-1", "reshard-2", "reshard-3"];
    set_shards(ctx, &[("reshard-a", &n[..2]), ("reshard-b", &n[2..])]).await?;
    let conf = ctx.write_conf("reshard", CHART_CONF)?;
    let mut a = start(
        ctx,
        "reshard-a",
        &conf,
        &sharded("hard", "reshard-a", "reshard"),
    )?;
    let mut b = start(
        ctx,
        "reshard-b",
        &conf,
        &sharded("hard", "reshard-b", "reshard"),
    )?;
    wait_in_use(ctx, "reshard-a", &n[..2]).await?;
    wait_in_use(ctx, "reshard-b", &n[2..]).await?;
    c.create_all(job(NS, "first", 4, 4, "1")).await?;
    wait_bound(ctx, NS, "first-", 4, Duration::from_secs(30)).await?;
    // A gang arrives and, while it is pending, reshard-1 moves from a to b.
    c.create_all(job(NS, "second", 4, 4, "1")).await?;
    set_shards(ctx, &[("reshard-a", &n[..1]), ("reshard-b", &n[1..])]).await?;
    wait_bound(ctx, NS, "second-", 4, Duration::from_secs(60)).await?;
    wait_in_use(ctx, "reshard-a", &n[..1]).await?;
    wait_in_use(ctx, "reshard-b", &n[1..]).await?;
    // Then every node moves to b; a, with an empty shard, binds nothing more.
    set_shards(ctx, &[("reshard-a", &[]), ("reshard-b", &n)]).await?;
    wait_in_use(ctx, "reshard-a", &[]).await?;
    wait_in_use(ctx, "reshard-b", &n).await?;
    c.create_all(job(NS, "third", 4, 4, "1")).await?;
    wait_bound(ctx, NS, "third-", 4, Duration::from_secs(30)).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let binds = bound_once(ctx, NS, &[&a, &b]).await?;
    let third_by_a: Vec<_> = binds["reshard-a"]
        .iter()
        .filter(|(p, _)| p.starts_with("third-"))
        .collect();
    ensure!(
        third_by_a.is_empty(),
        "reshard-a bound {third_by_a:?} after its shard was emptied"
    );
    let placed = placements(ctx, NS).await?;
    ensure!(
        placed.keys().filter(|p| p.starts_with("first-")).count() == 4,
        "a pod of the first gang went missing: {placed:?}"
    );
    a.check_alive()?;
    b.check_alive()?;
    a.stop().await?;
    b.stop().await?;
    delete_shards(ctx, &["reshard-a", "reshard-b"]).await
}
