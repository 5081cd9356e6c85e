//! `/metrics` scraped after a few cycles: Volcano's names, types and labels; the SIGUSR1 cache
//! dump written to --cache-dump-dir.

use std::time::Duration;

use anyhow::{Result, ensure};

use super::{cleaning, wait_bound};
use crate::cluster::{pod, pod_group, wait_for};
use crate::ctx::{CHART_CONF, Ctx};
use crate::proc::SchedulerProc;

const NS: &str = "e2e-metrics";

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "metrics", body(ctx)).await
}

async fn body(ctx: &Ctx) -> Result<()> {
    ctx.cluster.nodes("metrics", 1, "4", "16Gi").await?;
    ctx.cluster
        .create_all(vec![
            pod_group(NS, "job", "default", 1),
            pod(NS, "job-0", "job", "1", "1Gi"),
        ])
        .await?;
    let conf = ctx.write_conf("metrics", CHART_CONF)?;
    let mut s = ctx.scheduler("metrics", &conf, &["--node-selector=e2e:metrics"])?;
    wait_bound(ctx, NS, "job-", 1, Duration::from_secs(30)).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let text = s.http_get("/metrics").await?;
    for expected in [
        "# TYPE volcano_e2e_scheduling_latency_milliseconds histogram",
        "volcano_e2e_scheduling_latency_milliseconds_bucket{le=\"1\"}",
        "volcano_e2e_scheduling_latency_milliseconds_bucket{le=\"4999.999999999997\"}",
        "# TYPE volcano_open_session_duration_milliseconds histogram",
        "volcano_action_scheduling_latency_milliseconds_count{action=\"allocate\"}",
        "volcano_action_scheduling_latency_milliseconds_count{action=\"enqueue\"}",
        "volcano_task_scheduling_latency_milliseconds_count{stage=\"Bound\"} 1",
        "volcano_scheduling_stage_duration_milliseconds_count{stage=\"Bind\"} 1",
        "# TYPE volcano_e2e_job_scheduling_latency_milliseconds histogram",
        "# TYPE volcano_total_preemption_attempts counter",
        "# TYPE volcano_unschedule_job_count gauge",
        "volcano_queue_allocated_milli_cpu{queue_name=\"default\"} 1000",
        "tephra_api_writes_total{resource=\"pods/binding\",verb=\"create\"} 1",
    ] {
        ensure!(text.contains(expected), "/metrics lacks {expected:?}");
    }
    let dump = dump_now(ctx, &s).await?;
    let has_pod = dump["pods"]
        .as_array()
        .is_some_and(|ps| ps.iter().any(|p| p["metadata"]["name"] == "job-0"));
    ensure!(has_pod, "the cache dump lacks pod job-0");
    s.check_alive()?;
    s.stop().await
}

/// Sends SIGUSR1 to `s` and returns the dump it writes to the work directory.
pub async fn dump_now(ctx: &Ctx, s: &SchedulerProc) -> Result<serde_json::Value> {
    let before = dumps(ctx)?;
    let pid = s.pid().unwrap_or_default();
    let status = tokio::process::Command::new("kill")
        .arg("-USR1")
        .arg(pid.to_string())
        .status()
        .await?;
    ensure!(status.success(), "kill -USR1 {pid} failed");
    wait_for("a cache dump", Duration::from_secs(10), || async {
        Ok(dumps(ctx)?.iter().any(|d| !before.contains(d)))
    })
    .await?;
    let newest = dumps(ctx)?
        .into_iter()
        .find(|d| !before.contains(d))
        .unwrap_or_default();
    Ok(serde_json::from_str(&std::fs::read_to_string(&newest)?)?)
}

fn dumps(ctx: &Ctx) -> Result<Vec<std::path::PathBuf>> {
    Ok(std::fs::read_dir(&ctx.env.work)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("snapshot-"))
        })
        .collect())
}
