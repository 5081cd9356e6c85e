//! chaos-api-errors: while gangs arrive, a share of vc-scheduler's requests meet 429s, 500s,
//! connections dropped before the request goes on, and answers lost after the request landed
//! (a binding that succeeded though vc-scheduler saw it fail); then the faults stop, and the
//! final check finds every pod bound once, none lost.

use std::time::Duration;

use anyhow::{Result, ensure};

use super::final_check::{Expected, final_check};
use super::{Arrivals, GANGS, staged};
use crate::ctx::{CHART_CONF, Ctx};
use crate::fault_proxy::{FaultProxy, Shares};
use crate::kwok::KwokProc;

const NAME: &str = "chaos-api-errors";
const NS: &str = "e2e-chaos-api-errors";
const NODES: &str = "cae";
/// 18% of requests meet a fault.
const SHARES: Shares = Shares {
    too_many_requests: 0.05,
    server_error: 0.05,
    dropped: 0.04,
    answer_lost: 0.04,
};
/// How long the faults go on after the last gang arrived, so its bindings meet them too.
const AFTER_ARRIVALS: Duration = Duration::from_secs(3);

pub async fn run(ctx: &Ctx) -> Result<()> {
    staged(ctx, NAME, NS, NODES, |c, k| Box::pin(body(c, k))).await
}

async fn body(ctx: &Ctx, kwok: &mut KwokProc) -> Result<()> {
    let proxy = FaultProxy::start(&ctx.env).await?;
    let kubeconfig = proxy.kubeconfig(&ctx.env, NAME, &ctx.token)?;
    let conf = ctx.write_conf(NAME, CHART_CONF)?;
    proxy.set_shares(SHARES);
    let selector = format!("--node-selector=e2e:{NODES}");
    let mut s = ctx.scheduler_with_kubeconfig(NAME, &conf, &[&selector], &kubeconfig)?;
    Arrivals::start(&ctx.cluster, NS, 0..GANGS).finish().await?;
    tokio::time::sleep(AFTER_ARRIVALS).await;
    proxy.set_shares(Shares::default());
    let injected = proxy.injected();
    println!("       {NAME}: faults injected: {injected:?}");
    for kind in ["429", "500", "dropped", "answer lost", "binding fault"] {
        ensure!(
            injected.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} injected: {injected:?}"
        );
    }
    let expected = Expected {
        ns: NS,
        nodes: NODES,
        gangs: (0..GANGS).collect(),
        proxies: vec![&proxy],
    };
    final_check(ctx, NAME, &expected, &mut s, kwok).await?;
    s.stop().await
}
