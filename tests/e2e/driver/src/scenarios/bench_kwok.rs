//! bench-kwok: vc-scheduler with the chart's configuration on thousands of kwok nodes through
//! the real API server, on the arriving gangs of `gang_stream` (a burst waiting at start, then
//! gangs at a fixed rate). The API server's own binding ceiling is measured in the same run
//! (`throughput`'s plain client). Per part of the stream it prints pods bound per second,
//! creation to bound p50/p90/p99, process start to the first and last bind, and vc-scheduler's
//! API writes by kind, and appends one record per part to the benchmark history when
//! `TEPHRA_HISTORY` names its file. Run on request only (`tests/e2e/run bench-kwok`, or
//! `bench-kwok-short` at a tenth of the size).

use std::time::Duration;

use anyhow::Result;

use super::cleaning;
use super::gang_stream::{Size, ceiling, make_nodes, play};
use crate::ctx::{CHART_CONF, Ctx};
use crate::history;
use crate::kwok::KwokProc;

const NS: &str = "e2e-bench-kwok";
const CEILING_NS: &str = "e2e-bench-ceiling";
const NODE_PREFIX: &str = "bk";

pub const FULL: Size = Size {
    name: "bench-kwok",
    nodes: 5000,
    burst_gangs: 500,
    rate_gangs: 1000,
    rate_pods_per_s: 500.0,
    run_for: "30s",
    timeout: Duration::from_secs(600),
};

pub const SHORT: Size = Size {
    name: "bench-kwok-short",
    nodes: 500,
    burst_gangs: 50,
    rate_gangs: 100,
    rate_pods_per_s: 500.0,
    run_for: "5s",
    timeout: Duration::from_secs(120),
};

pub async fn run(ctx: &Ctx, size: Size) -> Result<()> {
    let result = cleaning(ctx, NS, NODE_PREFIX, body(ctx, size)).await;
    ctx.cluster.clear_namespace(CEILING_NS).await?;
    result
}

async fn body(ctx: &Ctx, size: Size) -> Result<()> {
    let tag = size.name;
    make_nodes(ctx, &size, NODE_PREFIX).await?;
    let ceiling = ceiling(ctx, &size, CEILING_NS).await?;
    let mut kwok = KwokProc::start(&ctx.env, tag)?;
    let conf = ctx.write_conf(tag, CHART_CONF)?;
    let selector = format!("--node-selector=e2e:{NODE_PREFIX}");
    let mut played = play(ctx, tag, NS, &size, ceiling, &mut kwok, || {
        Ok(vec![ctx.scheduler(tag, &conf, &[selector.as_str()])?])
    })
    .await?;
    for part in [&played.burst, &played.rate] {
        let record = part.record(tag, &size, ceiling, played.catch_up_s);
        if let Some(path) = history::append_if_asked(&ctx.env, record)? {
            println!(
                "       {tag}: {} record appended to {}",
                part.name,
                path.display()
            );
        }
    }
    played.stop().await?;
    kwok.stop().await
}
