//! A configuration naming a plugin tephra does not know, and a plugin argument of the wrong
//! type, runs as Volcano runs it: the unknown plugin is skipped and the rest of the tiers still
//! decide (gang holds a gang below minMember pending while a complete gang binds), the bad
//! argument keeps its default, and each is logged once per load and shown on `/metrics`.

use std::time::Duration;

use anyhow::{Result, ensure};

use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group, queue};
use crate::ctx::Ctx;

const NS: &str = "e2e-unknown-plugin";

/// Volcano's chart configuration with an unknown plugin in the first tier and a binpack weight
/// that is not an integer.
const CONF: &str = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: no-such-plugin\n  - name: gang\n    enablePreemptable: false\n  - name: conformance\n- plugins:\n  - name: overcommit\n  - name: drf\n    enablePreemptable: false\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n    arguments:\n      binpack.weight: heavy\n";

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "unknown-plugin", body(ctx)).await
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    c.nodes("unknown-plugin", 2, "4", "16Gi").await?;
    c.create(&queue("unknown-plugin-q", 1)).await?;
    let mut objects = vec![
        pod_group(NS, "fits", "unknown-plugin-q", 4),
        pod_group(NS, "too-big", "unknown-plugin-q", 6),
    ];
    objects.extend((0..4).map(|i| pod(NS, &format!("fits-{i}"), "fits", "1", "1Gi")));
    objects.extend((0..6).map(|i| pod(NS, &format!("too-big-{i}"), "too-big", "1", "1Gi")));
    c.create_all(objects).await?;
    let conf = ctx.write_conf("unknown-plugin", CONF)?;
    let mut s = ctx.scheduler(
        "unknown-plugin",
        &conf,
        &["--node-selector=e2e:unknown-plugin"],
    )?;
    wait_bound(ctx, NS, "fits-", 4, Duration::from_secs(30)).await?;
    // Four free CPUs stay; gang, still configured, must never bind part of the six-pod gang.
    for _ in 0..5 {
        let p = placements(ctx, NS).await?;
        let partial = p
            .iter()
            .filter(|(k, v)| k.starts_with("too-big-") && !v.is_empty())
            .count();
        ensure!(partial == 0, "{partial} pods of the 6-pod gang were bound");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let too_big = c.pod_group(NS, "too-big").await?;
    ensure!(
        too_big["status"]["phase"] == "Inqueue",
        "too-big: phase {}",
        too_big["status"]["phase"]
    );
    let log = s.log_text();
    for needle in [
        "unknown plugin \"no-such-plugin\" in tier 0; skipped",
        "plugin binpack: argument binpack.weight: expected an integer",
    ] {
        let times = log.matches(needle).count();
        ensure!(
            times == 1,
            "{needle:?} logged {times} times, not once per load"
        );
    }
    for series in [
        "tephra_config_problems{action=\"\",argument=\"\",kind=\"unknown_plugin\",plugin=\"no-such-plugin\"}",
        "tephra_config_problems{action=\"\",argument=\"binpack.weight\",kind=\"argument\",plugin=\"binpack\"}",
    ] {
        let value = s.metric(series).await?;
        ensure!(value == 1.0, "{series} is {value}, not 1");
    }
    s.check_alive()?;
    s.stop().await
}
