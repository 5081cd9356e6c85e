//! Hot reload: placements follow the configuration file as it changes (binpack packs a job
//! onto one node, then a spreading configuration spreads the next), and an invalid file is
//! refused with the last valid configuration kept.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Result, ensure};

use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group, wait_for};
use crate::ctx::Ctx;
use crate::proc::SchedulerProc;

const NS: &str = "e2e-reload";

const BINPACK: &str = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: binpack\n    arguments:\n      binpack.weight: 10\n";
const SPREAD: &str = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: nodeorder\n    arguments:\n      leastrequested.weight: 10\n      mostrequested.weight: 0\n      balancedresource.weight: 0\n";
const INVALID: &str =
    "actions: \"enqueue, allocate, no-such-action\"\ntiers:\n- plugins:\n  - name: gang\n";

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "reload", body(ctx)).await
}

/// Creates job `name` of 4 one-CPU pods and returns the nodes they were bound to.
async fn job_nodes(ctx: &Ctx, name: &str) -> Result<BTreeSet<String>> {
    let mut objects = vec![pod_group(NS, name, "default", 4)];
    objects.extend((0..4).map(|i| pod(NS, &format!("{name}-{i}"), name, "1", "1Gi")));
    ctx.cluster.create_all(objects).await?;
    wait_bound(ctx, NS, &format!("{name}-"), 4, Duration::from_secs(30)).await?;
    let p = placements(ctx, NS).await?;
    Ok(p.iter()
        .filter(|(k, _)| k.starts_with(&format!("{name}-")))
        .map(|(_, v)| v.clone())
        .collect())
}

async fn wait_log(s: &SchedulerProc, needle: &str) -> Result<()> {
    wait_for(
        &format!("log line {needle:?}"),
        Duration::from_secs(20),
        || async move { Ok(s.log_text().contains(needle)) },
    )
    .await
}

async fn body(ctx: &Ctx) -> Result<()> {
    ctx.cluster.nodes("reload", 4, "8", "32Gi").await?;
    let conf = ctx.write_conf("reload", BINPACK)?;
    let mut s = ctx.scheduler("hot-reload", &conf, &["--node-selector=e2e:reload"])?;
    let packed = job_nodes(ctx, "packed").await?;
    ensure!(packed.len() == 1, "binpack spread the job over {packed:?}");
    ctx.write_conf("reload", SPREAD)?;
    wait_log(&s, "scheduler configuration reloaded").await?;
    let spread = job_nodes(ctx, "spread").await?;
    ensure!(
        spread.len() >= 3,
        "after switching to spreading the job used only {spread:?}"
    );
    ctx.write_conf("reload", INVALID)?;
    wait_log(&s, "keeping the last valid scheduler configuration").await?;
    ensure!(
        s.log_text().contains("no-such-action"),
        "the refusal does not name the culprit"
    );
    let kept = job_nodes(ctx, "kept").await?;
    ensure!(
        kept.len() >= 3,
        "after the invalid file the job used only {kept:?}"
    );
    s.check_alive()?;
    s.stop().await
}
