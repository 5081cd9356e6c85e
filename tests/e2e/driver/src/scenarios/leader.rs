//! Leader election: two replicas, only the leader binds; the leader is killed, the other takes
//! the Lease over and binds what comes next; no pod is bound twice; each leader records a
//! `LeaderElection` event on the Lease, as client-go does.

use std::time::Duration;

use anyhow::{Result, ensure};

use super::{cleaning, wait_bound};
use crate::cluster::{pod, pod_group, wait_for};
use crate::ctx::{CHART_CONF, Ctx};
use crate::proc::SchedulerProc;

const NS: &str = "e2e-leader";
const BINDS: &str = "tephra_api_writes_total{resource=\"pods/binding\",verb=\"create\"}";
const ELECTION: [&str; 6] = [
    "--node-selector=e2e:leader",
    "--leader-elect=true",
    "--leader-elect-resource-namespace=volcano-system",
    "--leader-elect-lease-duration=6s",
    "--leader-elect-renew-deadline=4s",
    "--leader-elect-retry-period=1s",
];

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "leader", body(ctx)).await
}

async fn job(ctx: &Ctx, name: &str) -> Result<()> {
    let mut objects = vec![pod_group(NS, name, "default", 3)];
    objects.extend((0..3).map(|i| pod(NS, &format!("{name}-{i}"), name, "1", "1Gi")));
    ctx.cluster.create_all(objects).await
}

fn is_leader(s: &SchedulerProc) -> bool {
    s.log_text().contains("successfully acquired lease")
}

async fn body(ctx: &Ctx) -> Result<()> {
    ctx.cluster.nodes("leader", 2, "8", "32Gi").await?;
    let conf = ctx.write_conf("leader", CHART_CONF)?;
    let a = ctx.scheduler("leader-a", &conf, &ELECTION)?;
    let b = ctx.scheduler("leader-b", &conf, &ELECTION)?;
    wait_for("one replica to lead", Duration::from_secs(30), || async {
        Ok(is_leader(&a) || is_leader(&b))
    })
    .await?;
    let (mut leader, mut follower) = if is_leader(&a) { (a, b) } else { (b, a) };
    ensure!(!is_leader(&follower), "both replicas lead");
    let lease = ctx
        .cluster
        .get(
            "coordination.k8s.io/v1",
            "Lease",
            "volcano-system",
            "volcano",
        )
        .await?;
    ensure!(lease.is_some(), "no Lease volcano-system/volcano");
    job(ctx, "first").await?;
    wait_bound(ctx, NS, "first-", 3, Duration::from_secs(30)).await?;
    ensure!(
        follower.metric(BINDS).await? == 0.0,
        "the follower bound pods"
    );
    ensure!(
        leader.metric(BINDS).await? == 3.0,
        "the leader made {} binds for 3 pods",
        leader.metric(BINDS).await?
    );
    leader.stop().await?;
    wait_for(
        "the follower to take the lease over",
        Duration::from_secs(40),
        || async { Ok(is_leader(&follower)) },
    )
    .await?;
    job(ctx, "second").await?;
    wait_bound(ctx, NS, "second-", 3, Duration::from_secs(30)).await?;
    let binds = follower.metric(BINDS).await?;
    ensure!(
        binds == 3.0,
        "the new leader made {binds} binds for the 3 new pods (first job bound again?)"
    );
    let lease = ctx
        .cluster
        .get(
            "coordination.k8s.io/v1",
            "Lease",
            "volcano-system",
            "volcano",
        )
        .await?
        .unwrap_or_default();
    ensure!(
        lease["spec"]["leaseTransitions"].as_i64() >= Some(1),
        "lease transitions: {}",
        lease["spec"]
    );
    let elections = ctx
        .cluster
        .events("volcano-system")
        .await?
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("LeaderElection"))
        .count();
    ensure!(
        elections >= 2,
        "{elections} LeaderElection events on the Lease, want one per leader"
    );
    follower.check_alive()?;
    follower.stop().await
}
