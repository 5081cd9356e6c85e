//! chaos-etcd-restart: etcd killed (SIGKILL) mid-run, with vc-scheduler's bindings in flight,
//! and started again a few seconds later while gangs keep arriving (their creation retried
//! while the API server refuses it); a read the API server cannot answer without etcd shows
//! the outage was real. The final check finds every pod bound once, none lost.

use std::time::Duration;

use anyhow::{Result, ensure};

use super::final_check::{Expected, final_check};
use super::{Arrivals, GANGS, staged};
use crate::cluster::wait_for;
use crate::ctx::{CHART_CONF, Ctx};
use crate::fault_proxy::FaultProxy;
use crate::kwok::KwokProc;

const NAME: &str = "chaos-etcd-restart";
const NS: &str = "e2e-chaos-etcd-restart";
const NODES: &str = "cer";
/// How long vc-scheduler schedules before etcd is killed.
const BEFORE_KILL: Duration = Duration::from_secs(7);
/// How long etcd stays down.
const DOWN: Duration = Duration::from_secs(4);

pub async fn run(ctx: &Ctx) -> Result<()> {
    staged(ctx, NAME, NS, NODES, |c, k| Box::pin(body(c, k))).await
}

/// Runs `kill` with `args`; true when it succeeded.
async fn kill(args: &[&str]) -> Result<bool> {
    Ok(tokio::process::Command::new("kill")
        .args(args)
        .stderr(std::process::Stdio::null())
        .status()
        .await?
        .success())
}

async fn kill_etcd(ctx: &Ctx) -> Result<()> {
    let pid = std::fs::read_to_string(ctx.env.work.join("etcd.pid"))?
        .trim()
        .to_string();
    ensure!(kill(&["-9", &pid]).await?, "kill -9 etcd ({pid}) failed");
    while kill(&["-0", &pid]).await? {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

async fn body(ctx: &Ctx, kwok: &mut KwokProc) -> Result<()> {
    let proxy = FaultProxy::start(&ctx.env).await?;
    let kubeconfig = proxy.kubeconfig(&ctx.env, NAME, &ctx.token)?;
    let conf = ctx.write_conf(NAME, CHART_CONF)?;
    let selector = format!("--node-selector=e2e:{NODES}");
    let mut s = ctx.scheduler_with_kubeconfig(NAME, &conf, &[&selector], &kubeconfig)?;
    let arrivals = Arrivals::start(&ctx.cluster, NS, 0..GANGS);
    tokio::time::sleep(BEFORE_KILL).await;
    proxy.hold_bindings(true);
    wait_for("bindings in flight", Duration::from_secs(30), || async {
        Ok(proxy.waiting_bindings() > 0)
    })
    .await?;
    let in_flight = proxy.waiting_bindings();
    kill_etcd(ctx).await?;
    proxy.hold_bindings(false);
    let probe = tokio::time::timeout(DOWN / 2, ctx.cluster.get("v1", "Namespace", "", NS)).await;
    ensure!(
        !matches!(probe, Ok(Ok(_))),
        "the API server read a namespace with etcd down"
    );
    tokio::time::sleep(DOWN / 2).await;
    let status = tokio::process::Command::new(&ctx.env.etcd_start)
        .status()
        .await?;
    ensure!(status.success(), "restarting etcd: {status}");
    ctx.cluster.wait_ready(Duration::from_secs(60)).await?;
    let refused = arrivals.finish().await?;
    s.check_alive()?;
    println!(
        "       {NAME}: etcd down {DOWN:?} with {in_flight} bindings in flight; the API server refused {refused} of the driver's creations and answered vc-scheduler 5xx or not at all {} times",
        proxy.upstream_errors()
    );

    let expected = Expected {
        ns: NS,
        nodes: NODES,
        gangs: (0..GANGS).collect(),
        proxies: vec![&proxy],
    };
    final_check(ctx, NAME, &expected, &mut s, kwok).await?;
    s.stop().await
}
