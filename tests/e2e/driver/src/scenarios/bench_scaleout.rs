//! bench-scaleout: one vc-scheduler against three node-sharded ones on the same arriving gangs
//! (`gang_stream`, bench-kwok's stream) over thousands of kwok nodes, with the API server's
//! binding ceiling measured in the same run. Three NodeShards split the nodes in thirds, as
//! Volcano's sharding controller would write them. Setup `single` runs one unsharded scheduler;
//! setup `sharded` runs three with `--scheduler-sharding-mode=hard`, each on its own shard, over
//! the same gangs in a fresh namespace. Both check that every pod was bound exactly once and no
//! node held more than its room; `sharded` also that each scheduler bound only on its shard's
//! nodes (from their logs). Prints a table of both setups, and appends one record per setup and
//! part to the benchmark history when `TEPHRA_HISTORY` names its file. Run on request only
//! (`tests/e2e/run bench-scaleout`, or `bench-scaleout-short` at a tenth of the size).

use std::collections::HashSet;

use anyhow::{Result, ensure};
use tephra_adapters::history::Machine;

use super::gang_stream::{GANG_SIZE, Part, Played, Size, ceiling, make_nodes, play};
use super::sharding::{delete_shards, set_shards};
use super::throughput::CEILING_CONCURRENCY;
use crate::ctx::{CHART_CONF, Ctx};
use crate::history;
use crate::kwok::KwokProc;

const SINGLE_NS: &str = "e2e-scaleout-single";
const SHARDED_NS: &str = "e2e-scaleout-sharded";
const CEILING_NS: &str = "e2e-scaleout-ceiling";
const NODE_PREFIX: &str = "so";
/// The NodeShards, one per sharded scheduler, and the scheduler processes' names.
const SHARDS: [&str; 3] = ["scaleout-a", "scaleout-b", "scaleout-c"];

pub const FULL: Size = Size::full("bench-scaleout");

pub const SHORT: Size = Size::short("bench-scaleout-short");

pub async fn run(ctx: &Ctx, size: Size) -> Result<()> {
    let result = body(ctx, size).await;
    result.and(clean(ctx).await)
}

/// Removes what the run made, whatever its outcome.
async fn clean(ctx: &Ctx) -> Result<()> {
    for ns in [SINGLE_NS, SHARDED_NS, CEILING_NS] {
        ctx.cluster.clear_large_namespace(ns).await?;
    }
    ctx.cluster.delete_nodes(NODE_PREFIX).await?;
    delete_shards(ctx, &SHARDS).await
}

/// The nodes of each shard: `SHARDS` split `prefix-0..n` in contiguous thirds.
fn shard_nodes(n: usize) -> Vec<Vec<String>> {
    let k = SHARDS.len();
    (0..k)
        .map(|j| {
            (j * n / k..(j + 1) * n / k)
                .map(|i| format!("{NODE_PREFIX}-{i}"))
                .collect()
        })
        .collect()
}

/// Each scheduler of `played` bound only on the nodes of its shard, and each bound some.
fn check_shards(played: &Played, shards: &[Vec<String>]) -> Result<()> {
    for (shard, nodes) in SHARDS.iter().zip(shards) {
        let nodes: HashSet<&str> = nodes.iter().map(String::as_str).collect();
        let made = played.binds.get(*shard).map_or(&[][..], Vec::as_slice);
        ensure!(!made.is_empty(), "{shard} bound no pod");
        let outside: Vec<_> = made
            .iter()
            .filter(|(_, node)| !nodes.contains(node.as_str()))
            .take(5)
            .collect();
        ensure!(
            outside.is_empty(),
            "{shard} bound outside its shard: {outside:?}"
        );
    }
    Ok(())
}

fn ms(q: Option<f64>) -> String {
    q.map_or("-".into(), |v| format!("{v:.0}"))
}

/// One row of the table.
fn row(setup: &str, part: &Part, ceiling: f64) -> String {
    let q = part.phase.creation_to_bound();
    let binds: Vec<String> = part.binds.values().map(u64::to_string).collect();
    format!(
        "| {setup} | {} | {} | {} | {:.0} | {:.0}% | {} | {} | {} | {} |",
        part.binds.len(),
        part.phase.name,
        part.phase.pods(),
        part.phase.pods_per_s(),
        100.0 * part.phase.pods_per_s() / ceiling,
        ms(q.map(|q| q.p50)),
        ms(q.map(|q| q.p99)),
        binds.join(" / "),
        part.refused,
    )
}

fn print_table(size: &Size, ceiling: f64, setups: &[(&str, &Played)]) {
    let tag = size.name;
    let machine = Machine::this();
    let cpu = machine.cpu_model.as_deref().unwrap_or("unknown CPU");
    let lines = [
        format!(
            "{} kwok nodes; a burst of {} pods in gangs of {GANG_SIZE} waiting at start, then {} pods at {:.0} pods/s asked, each running {}.",
            size.nodes,
            size.burst_gangs * GANG_SIZE,
            size.rate_gangs * GANG_SIZE,
            size.rate_pods_per_s,
            size.run_for
        ),
        format!(
            "One machine of {} cores ({cpu}) runs etcd, the API server, kwok, the driver and every scheduler.",
            machine.nproc
        ),
        format!(
            "API server binding ceiling in the same run (plain client, {CEILING_CONCURRENCY} in flight): {ceiling:.0} pods/s."
        ),
        String::new(),
        "| setup | schedulers | part | pods | pods/s bound | of ceiling | creation→bound p50 ms | p99 ms | binds by scheduler | refused binds |".into(),
        "|---|---|---|---|---|---|---|---|---|---|".into(),
    ];
    for line in lines {
        println!("       {tag}: {line}");
    }
    for (setup, played) in setups {
        for part in [&played.burst, &played.rate] {
            println!("       {tag}: {}", row(setup, part, ceiling));
        }
    }
}

async fn body(ctx: &Ctx, size: Size) -> Result<()> {
    let tag = size.name;
    make_nodes(ctx, &size, NODE_PREFIX).await?;
    let shards = shard_nodes(size.nodes);
    let specs: Vec<Vec<&str>> = shards
        .iter()
        .map(|nodes| nodes.iter().map(String::as_str).collect())
        .collect();
    let specs: Vec<(&str, &[&str])> = SHARDS
        .iter()
        .zip(&specs)
        .map(|(shard, nodes)| (*shard, nodes.as_slice()))
        .collect();
    set_shards(ctx, &specs).await?;
    let ceiling = ceiling(ctx, &size, CEILING_NS).await?;
    let mut kwok = KwokProc::start(&ctx.env, tag)?;
    let conf = ctx.write_conf(tag, CHART_CONF)?;
    let selector = format!("--node-selector=e2e:{NODE_PREFIX}");

    let single_label = format!("{tag}/single");
    let mut single = play(
        ctx,
        &single_label,
        SINGLE_NS,
        &size,
        ceiling,
        &mut kwok,
        || {
            Ok(vec![ctx.scheduler(
                &format!("{tag}-single"),
                &conf,
                &[selector.as_str()],
            )?])
        },
    )
    .await?;
    single.stop().await?;
    append_history(ctx, &size, ceiling, &single_label, &single)?;
    ctx.cluster.clear_large_namespace(SINGLE_NS).await?;

    let sharded_label = format!("{tag}/sharded");
    let mut sharded = play(
        ctx,
        &sharded_label,
        SHARDED_NS,
        &size,
        ceiling,
        &mut kwok,
        || {
            SHARDS
                .iter()
                .map(|shard| {
                    let mode = "--scheduler-sharding-mode=hard".to_string();
                    let name = format!("--scheduler-sharding-name={shard}");
                    ctx.scheduler(
                        shard,
                        &conf,
                        &[mode.as_str(), name.as_str(), selector.as_str()],
                    )
                })
                .collect()
        },
    )
    .await?;
    check_shards(&sharded, &shards)?;
    sharded.stop().await?;
    kwok.stop().await?;
    append_history(ctx, &size, ceiling, &sharded_label, &sharded)?;
    print_table(
        &size,
        ceiling,
        &[("single", &single), ("sharded", &sharded)],
    );
    Ok(())
}

/// Appends a record per part of one setup to the history, when asked.
fn append_history(
    ctx: &Ctx,
    size: &Size,
    ceiling: f64,
    label: &str,
    played: &Played,
) -> Result<()> {
    for part in [&played.burst, &played.rate] {
        let record = part.record(label, size, ceiling, played.catch_up_s);
        if let Some(path) = history::append_if_asked(&ctx.env, record)? {
            println!(
                "       {label}: {} record appended to {}",
                part.phase.name,
                path.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn the_shards_split_every_node_once_in_thirds() {
        let shards = shard_nodes(10);
        let sizes: Vec<usize> = shards.iter().map(Vec::len).collect();
        assert_eq!(sizes, [3, 3, 4]);
        let all: BTreeMap<&str, usize> =
            shards
                .iter()
                .flatten()
                .fold(BTreeMap::new(), |mut seen, n| {
                    *seen.entry(n.as_str()).or_default() += 1;
                    seen
                });
        assert_eq!(all.len(), 10);
        assert!(all.values().all(|&n| n == 1));
        assert_eq!(shards[0][0], "so-0");
        assert_eq!(shards[2][3], "so-9");
    }
}
