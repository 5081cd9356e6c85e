//! chaos-watch-expired: mid-run vc-scheduler's watches are cut and their return held while the
//! driver deletes bound gangs (gangs keep arriving meanwhile); then each watch is asked from a
//! resourceVersion the API server no longer holds, and the server answers 410 Gone, as after a
//! compaction. vc-scheduler must re-list, and learn from the lists alone of the deletions it saw
//! no event for and of the gangs made meanwhile: the final check finds its cache holding every
//! pod where the API server has it, and none of the deleted ones.

use std::time::Duration;

use anyhow::{Result, ensure};

use super::final_check::{Expected, final_check};
use super::{Arrivals, GANG_SIZE, GANGS, gang_name, staged};
use crate::cluster::wait_for;
use crate::ctx::{CHART_CONF, Ctx};
use crate::fault_proxy::FaultProxy;
use crate::kwok::KwokProc;
use crate::scenarios::wait_bound;

const NAME: &str = "chaos-watch-expired";
const NS: &str = "e2e-chaos-watch-expired";
const NODES: &str = "cwe";
/// How long vc-scheduler schedules before its watches expire.
const BEFORE_EXPIRY: Duration = Duration::from_secs(8);
/// Gangs `0..DELETED` are deleted while the watches are down.
const DELETED: usize = 6;
/// How long the watches stay down.
const DOWN: Duration = Duration::from_secs(3);
const PODS_PATH: &str = "/api/v1/pods";

pub async fn run(ctx: &Ctx) -> Result<()> {
    staged(ctx, NAME, NS, NODES, |c, k| Box::pin(body(c, k))).await
}

async fn delete_gang(ctx: &Ctx, g: usize) -> Result<()> {
    let name = gang_name(g);
    for i in 0..GANG_SIZE {
        ctx.cluster.delete_pod(NS, &format!("{name}-{i}")).await?;
    }
    ctx.cluster
        .delete("scheduling.volcano.sh/v1beta1", "PodGroup", NS, &name)
        .await
}

async fn body(ctx: &Ctx, kwok: &mut KwokProc) -> Result<()> {
    let proxy = FaultProxy::start(&ctx.env).await?;
    let kubeconfig = proxy.kubeconfig(&ctx.env, NAME, &ctx.token)?;
    let conf = ctx.write_conf(NAME, CHART_CONF)?;
    let selector = format!("--node-selector=e2e:{NODES}");
    let mut s = ctx.scheduler_with_kubeconfig(NAME, &conf, &[&selector], &kubeconfig)?;
    let arrivals = Arrivals::start(&ctx.cluster, NS, 0..GANGS);
    tokio::time::sleep(BEFORE_EXPIRY).await;
    for g in 0..DELETED {
        let prefix = format!("{}-", gang_name(g));
        wait_bound(ctx, NS, &prefix, GANG_SIZE, Duration::from_secs(30)).await?;
    }
    let pod_lists = proxy.reads_of(PODS_PATH);
    let cut = proxy.expire_watches();
    ensure!(cut > 0, "no watch was open to cut");
    futures::future::try_join_all((0..DELETED).map(|g| delete_gang(ctx, g))).await?;
    tokio::time::sleep(DOWN).await;
    proxy.release_watches();
    wait_for(
        "vc-scheduler to be told its watch expired",
        Duration::from_secs(30),
        || async { Ok(s.log_text().contains("too old resource version")) },
    )
    .await?;
    wait_for(
        "vc-scheduler to re-list pods",
        Duration::from_secs(30),
        || async { Ok(proxy.reads_of(PODS_PATH) > pod_lists) },
    )
    .await?;
    println!(
        "       {NAME}: {cut} watches cut, {} answered 410 Gone; {DELETED} bound gangs deleted meanwhile",
        proxy.injected_of("watch expired")
    );
    arrivals.finish().await?;
    let expected = Expected {
        ns: NS,
        nodes: NODES,
        gangs: (DELETED..GANGS).collect(),
        proxies: vec![&proxy],
    };
    final_check(ctx, NAME, &expected, &mut s, kwok).await?;
    s.stop().await
}
