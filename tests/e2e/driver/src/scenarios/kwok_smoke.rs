//! kwok's fake nodes in the default suite: 500 nodes whose pods kwok runs, 320 pods in gangs of
//! 8. Every pod is bound exactly once and goes Running; the gangs that finish go Succeeded and
//! their PodGroups Completed, while the others' PodGroups stay Running.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use serde_json::json;

use super::cleaning;
use crate::api_writes::{api_writes, count};
use crate::cluster::{node_of, pod, pod_group, wait_for};
use crate::ctx::{CHART_CONF, Ctx};
use crate::kwok::{KwokProc, RUN_FOR, fake_nodes};

const NS: &str = "e2e-kwok-smoke";
const NODES: usize = 500;
const GANGS: usize = 40;
const GANG_SIZE: usize = 8;
/// Gangs `0..FINISHING` finish after `RUN_TIME`; the others run on.
const FINISHING: usize = 20;
const RUN_TIME: &str = "2s";

pub async fn run(ctx: &Ctx) -> Result<()> {
    let mut kwok = KwokProc::start(&ctx.env, "kwok-smoke")?;
    let result = cleaning(ctx, NS, "ks", body(ctx, &mut kwok)).await;
    kwok.stop().await?;
    result
}

/// Pods of the namespace by phase, and how many are bound.
async fn phases(ctx: &Ctx) -> Result<(BTreeMap<String, usize>, usize)> {
    let pods = ctx.cluster.pods(NS).await?;
    let mut by_phase = BTreeMap::new();
    for p in &pods {
        let phase = p.status.as_ref().and_then(|s| s.phase.clone());
        *by_phase.entry(phase.unwrap_or_default()).or_default() += 1;
    }
    let bound = pods.iter().filter(|p| !node_of(p).is_empty()).count();
    Ok((by_phase, bound))
}

async fn body(ctx: &Ctx, kwok: &mut KwokProc) -> Result<()> {
    let t = Instant::now();
    fake_nodes(&ctx.cluster, "ks", NODES, "8", "32Gi").await?;
    let mut objects = Vec::new();
    for g in 0..GANGS {
        objects.push(pod_group(NS, &format!("g{g}"), "default", GANG_SIZE as i32));
        objects.extend((0..GANG_SIZE).map(|i| {
            let mut p = pod(NS, &format!("g{g}-{i}"), &format!("g{g}"), "1", "1Gi");
            if g < FINISHING {
                p["metadata"]["annotations"][RUN_FOR] = json!(RUN_TIME);
            }
            p
        }));
    }
    ctx.cluster.create_all(objects).await?;
    println!(
        "       kwok-smoke: {NODES} nodes and {} pods created in {:.1}s",
        GANGS * GANG_SIZE,
        t.elapsed().as_secs_f64()
    );
    let conf = ctx.write_conf("kwok-smoke", CHART_CONF)?;
    let mut s = ctx.scheduler("kwok-smoke", &conf, &["--node-selector=e2e:ks"])?;
    let n = GANGS * GANG_SIZE;
    let finishing = FINISHING * GANG_SIZE;
    let start = Instant::now();
    loop {
        let (by_phase, bound) = phases(ctx).await?;
        let get = |p: &str| by_phase.get(p).copied().unwrap_or(0);
        if bound == n && get("Succeeded") == finishing && get("Running") == n - finishing {
            break;
        }
        s.check_alive()?;
        kwok.check_alive()?;
        ensure!(
            start.elapsed() < Duration::from_secs(60),
            "after 60s {bound} of {n} pods bound; pods by phase: {by_phase:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    println!(
        "       kwok-smoke: {n} pods bound and run by kwok {:.1}s after vc-scheduler started",
        start.elapsed().as_secs_f64()
    );
    let phase_of = |g: usize| async move {
        let pg = ctx.cluster.pod_group(NS, &format!("g{g}")).await?;
        anyhow::Ok(pg["status"]["phase"].as_str().unwrap_or("").to_string())
    };
    wait_for(
        "the PodGroups of finished gangs Completed, the others Running",
        Duration::from_secs(20),
        || async move {
            for g in 0..GANGS {
                let want = if g < FINISHING {
                    "Completed"
                } else {
                    "Running"
                };
                if phase_of(g).await? != want {
                    return Ok(false);
                }
            }
            Ok(true)
        },
    )
    .await?;
    let writes = api_writes(&s.http_get("/metrics").await?);
    let binds = count(&writes, "create pods/binding");
    ensure!(
        binds == n as f64,
        "{binds} bindings posted for {n} pods: {writes:?}"
    );
    s.check_alive()?;
    s.stop().await
}
