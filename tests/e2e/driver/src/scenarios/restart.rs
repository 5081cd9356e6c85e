//! The API server restarted in the middle of a run: pods keep coming while it is down; in
//! the end every pod is bound, none twice, and vc-scheduler is still running.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Result, ensure};

use super::{cleaning, wait_bound};
use crate::cluster::{pod, pod_group};
use crate::ctx::{CHART_CONF, Ctx};

const NS: &str = "e2e-restart";
const JOBS: usize = 30;
const PODS_PER_JOB: usize = 10;

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "restart", body(ctx)).await
}

async fn restart_apiserver(ctx: &Ctx) -> Result<()> {
    let pid_file = ctx.env.work.join("apiserver.pid");
    let pid = std::fs::read_to_string(&pid_file)?.trim().to_string();
    // SIGKILL: a crash, which also spares the minute a graceful stop waits for watches.
    tokio::process::Command::new("kill")
        .arg("-9")
        .arg(&pid)
        .status()
        .await?;
    while tokio::process::Command::new("kill")
        .arg("-0")
        .arg(&pid)
        .status()
        .await?
        .success()
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    tokio::process::Command::new(&ctx.env.apiserver_start)
        .status()
        .await?;
    ctx.cluster.wait_ready(Duration::from_secs(120)).await
}

async fn job(ctx: &Ctx, j: usize) -> Result<()> {
    let name = format!("job{j}");
    let mut objects = vec![pod_group(NS, &name, "default", PODS_PER_JOB as i32)];
    objects
        .extend((0..PODS_PER_JOB).map(|i| pod(NS, &format!("{name}-{i}"), &name, "100m", "128Mi")));
    ctx.cluster.create_all(objects).await
}

async fn body(ctx: &Ctx) -> Result<()> {
    ctx.cluster.nodes("restart", 10, "8", "32Gi").await?;
    let conf = ctx.write_conf("restart", CHART_CONF)?;
    let mut s = ctx.scheduler("apiserver-restart", &conf, &["--node-selector=e2e:restart"])?;
    for j in 0..JOBS / 2 {
        job(ctx, j).await?;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    restart_apiserver(ctx).await?;
    for j in JOBS / 2..JOBS {
        job(ctx, j).await?;
    }
    wait_bound(
        ctx,
        NS,
        "job",
        JOBS * PODS_PER_JOB,
        Duration::from_secs(120),
    )
    .await?;
    s.check_alive()?;
    let mut scheduled: HashMap<String, usize> = HashMap::new();
    for e in ctx.cluster.events(NS).await? {
        if e.reason.as_deref() == Some("Scheduled")
            && e.involved_object.kind.as_deref() == Some("Pod")
        {
            *scheduled
                .entry(e.involved_object.name.unwrap_or_default())
                .or_default() += e.count.unwrap_or(1) as usize;
        }
    }
    let twice: Vec<_> = scheduled.iter().filter(|(_, n)| **n > 1).collect();
    ensure!(twice.is_empty(), "pods bound twice: {twice:?}");
    s.stop().await
}
