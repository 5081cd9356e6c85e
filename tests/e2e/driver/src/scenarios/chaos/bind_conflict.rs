//! chaos-bind-conflict: while gangs arrive, every 8th binding vc-scheduler sends is preceded by
//! someone else's binding of the same pod to one of a few tainted nodes, which vc-scheduler
//! sees but never places a pod on itself; vc-scheduler's own binding is answered 409. It must
//! take the pod as bound where the other put it and free the node it had assumed: the final
//! check finds every pod bound once, no node over its allocatable, and the cache holding each
//! pod where the API server has it.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::{Result, ensure};
use serde_json::json;

use super::final_check::{Expected, final_check};
use super::{Arrivals, GANG_SIZE, GANGS, NODE_CPU, NODE_MEMORY, staged};
use crate::ctx::{CHART_CONF, Ctx};
use crate::fault_proxy::{FaultProxy, Steal};
use crate::kwok::{KwokProc, fake_nodes_with};

const NAME: &str = "chaos-bind-conflict";
const NS: &str = "e2e-chaos-bind-conflict";
const NODES: &str = "cbc";
/// The other binder's nodes, tainted, each taking `GANG_SIZE` pods of one cpu at most.
const TAINTED: usize = 16;
const STEAL_EVERY: u64 = 8;

pub async fn run(ctx: &Ctx) -> Result<()> {
    staged(ctx, NAME, NS, NODES, |c, k| Box::pin(body(c, k))).await
}

fn tainted(i: usize) -> String {
    format!("{NODES}t-{i}")
}

async fn body(ctx: &Ctx, kwok: &mut KwokProc) -> Result<()> {
    let names: Vec<String> = (0..TAINTED).map(tainted).collect();
    let spec = json!({"taints": [{"key": "tephra.e2e/other-binder", "effect": "NoSchedule"}]});
    let resources = json!({"cpu": NODE_CPU, "memory": NODE_MEMORY, "pods": "110"});
    fake_nodes_with(&ctx.cluster, NODES, &names, &spec, &resources).await?;
    let proxy = FaultProxy::start(&ctx.env).await?;
    let cluster = ctx.cluster.clone();
    let steal: Steal = Arc::new(move |k, ns, pod| {
        let cluster = cluster.clone();
        Box::pin(async move { cluster.bind(&ns, &pod, &tainted(k / GANG_SIZE)).await })
    });
    proxy.steal_bindings(STEAL_EVERY, TAINTED * GANG_SIZE, steal);
    let kubeconfig = proxy.kubeconfig(&ctx.env, NAME, &ctx.token)?;
    let conf = ctx.write_conf(NAME, CHART_CONF)?;
    let selector = format!("--node-selector=e2e:{NODES}");
    let mut s = ctx.scheduler_with_kubeconfig(NAME, &conf, &[&selector], &kubeconfig)?;
    Arrivals::start(&ctx.cluster, NS, 0..GANGS).finish().await?;
    let expected = Expected {
        ns: NS,
        nodes: NODES,
        gangs: (0..GANGS).collect(),
        proxies: vec![&proxy],
    };
    final_check(ctx, NAME, &expected, &mut s, kwok).await?;
    let stolen: BTreeSet<String> = proxy.stolen_pods().into_iter().collect();
    ensure!(!stolen.is_empty(), "no binding was preceded by another's");
    let refused: BTreeSet<String> = proxy
        .bind_answers()
        .into_iter()
        .filter(|a| a.status == Some(409))
        .map(|a| a.pod)
        .collect();
    let unrefused: Vec<_> = stolen.difference(&refused).collect();
    ensure!(
        unrefused.is_empty(),
        "vc-scheduler's bindings of pods bound by another were not answered 409: {unrefused:?}"
    );
    println!(
        "       {NAME}: {} pods bound by another first, vc-scheduler's bindings of each answered 409",
        stolen.len()
    );
    s.stop().await
}
