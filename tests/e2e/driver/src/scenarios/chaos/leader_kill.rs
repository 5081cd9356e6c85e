//! chaos-leader-kill: two replicas with leader election, each through a fault proxy of its own,
//! while gangs arrive. Mid-run the leader's bindings are held at its proxy; once some wait, the
//! leader is killed (SIGKILL, so it never gives the lease back) and the held bindings land after
//! it died, as requests already sent do. The standby takes the lease over within the lease
//! duration and two retry periods, and binds soon after (its watches list 2,000 nodes first);
//! the final check finds no pod bound twice and none lost.

use std::time::{Duration, Instant};

use anyhow::{Result, ensure};

use super::final_check::{Expected, final_check};
use super::{Arrivals, GANGS, leads, staged};
use crate::cluster::wait_for;
use crate::ctx::{CHART_CONF, Ctx};
use crate::fault_proxy::FaultProxy;
use crate::kwok::KwokProc;

const NAME: &str = "chaos-leader-kill";
const NS: &str = "e2e-chaos-leader-kill";
const NODES: &str = "clk";
const LEASE: Duration = Duration::from_secs(6);
const RETRY: Duration = Duration::from_secs(1);
const ELECTION: [&str; 5] = [
    "--leader-elect=true",
    "--leader-elect-resource-namespace=volcano-system",
    "--leader-elect-lease-duration=6s",
    "--leader-elect-renew-deadline=4s",
    "--leader-elect-retry-period=1s",
];
/// How long the leader schedules before its bindings are held.
const BEFORE_KILL: Duration = Duration::from_secs(6);
/// The standby's time from the lease to its first binding: watches listing 2,000 nodes and the
/// pods, the warm-up, and one schedule period.
const FIRST_BIND_AFTER_LEASE: Duration = Duration::from_secs(5);

pub async fn run(ctx: &Ctx) -> Result<()> {
    staged(ctx, NAME, NS, NODES, |c, k| Box::pin(body(c, k))).await
}

async fn body(ctx: &Ctx, kwok: &mut KwokProc) -> Result<()> {
    let conf = ctx.write_conf(NAME, CHART_CONF)?;
    let selector = format!("--node-selector=e2e:{NODES}");
    let mut args = vec![selector.as_str()];
    args.extend(ELECTION);
    let mut replicas = Vec::new();
    for replica in ["a", "b"] {
        let proxy = FaultProxy::start(&ctx.env).await?;
        let name = format!("{NAME}-{replica}");
        let kubeconfig = proxy.kubeconfig(&ctx.env, &name, &ctx.token)?;
        let s = ctx.scheduler_with_kubeconfig(&name, &conf, &args, &kubeconfig)?;
        replicas.push((s, proxy));
    }
    wait_for("one replica to lead", Duration::from_secs(60), || async {
        Ok(replicas.iter().any(|(s, _)| leads(&s.log_text())))
    })
    .await?;
    if !leads(&replicas[0].0.log_text()) {
        replicas.swap(0, 1);
    }
    let (mut standby, standby_proxy) = replicas.pop().expect("two replicas");
    let (mut leader, leader_proxy) = replicas.pop().expect("two replicas");
    ensure!(!leads(&standby.log_text()), "both replicas lead");
    let arrivals = Arrivals::start(&ctx.cluster, NS, 0..GANGS);
    tokio::time::sleep(BEFORE_KILL).await;
    leader_proxy.hold_bindings(true);
    wait_for(
        "the leader's bindings to wait",
        Duration::from_secs(30),
        || async { Ok(leader_proxy.waiting_bindings() > 0) },
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let in_flight = leader_proxy.waiting_bindings();
    leader.stop().await?;
    let killed = Instant::now();
    leader_proxy.hold_bindings(false);
    while !leads(&standby.log_text()) {
        standby.check_alive()?;
        ensure!(
            killed.elapsed() < LEASE * 3,
            "the standby has not taken the lease {:?} after the kill",
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let took_lease = killed.elapsed();
    wait_for(
        "the new leader's first binding",
        Duration::from_secs(30),
        || async {
            Ok(standby_proxy
                .bind_answers()
                .iter()
                .any(|a| a.status == Some(201)))
        },
    )
    .await?;
    let first_bind = killed.elapsed();
    let landed_after_kill = leader_proxy
        .bind_answers()
        .iter()
        .filter(|a| a.status == Some(201) && a.at > killed)
        .count();
    println!(
        "       {NAME}: leader killed with {in_flight} bindings in flight, {landed_after_kill} landed after its death; standby took the lease {:.1}s and bound {:.1}s after the kill",
        took_lease.as_secs_f64(),
        first_bind.as_secs_f64()
    );
    ensure!(
        landed_after_kill > 0,
        "none of the dead leader's bindings landed"
    );
    // The standby sees the last renewal within a retry period of it, takes the lease a lease
    // duration after that, and looks every retry period.
    ensure!(
        took_lease <= LEASE + RETRY * 2,
        "the standby took the lease {took_lease:?} after the kill, beyond the lease duration {LEASE:?} and two retry periods"
    );
    ensure!(
        first_bind <= took_lease + FIRST_BIND_AFTER_LEASE,
        "the new leader bound {first_bind:?} after the kill, {took_lease:?} after it took the lease"
    );
    arrivals.finish().await?;
    let expected = Expected {
        ns: NS,
        nodes: NODES,
        gangs: (0..GANGS).collect(),
        proxies: vec![&leader_proxy, &standby_proxy],
    };
    final_check(ctx, NAME, &expected, &mut standby, kwok).await?;
    standby.stop().await
}
