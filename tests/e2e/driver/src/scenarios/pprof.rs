//! `--enable-pprof` on `--listen-address`: a CPU profile taken while the scheduler binds gangs
//! is one `go tool pprof` reads, naming tephra's functions; the next cycles' profile has a phase
//! per configured action; `heap` answers as documented; one profile runs at a time; bad
//! parameters are refused.

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};

use super::{cleaning, wait_bound};
use crate::cluster::{pod, pod_group};
use crate::ctx::{CHART_CONF, Ctx};
use crate::proc::http_get_any;

const NS: &str = "e2e-pprof";

/// CHART_CONF's phases, in the order a cycle runs them.
const PHASES: [&str; 6] = [
    "snapshot", "open", "enqueue", "allocate", "backfill", "close",
];

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "pprof", body(ctx)).await
}

/// `gangs` PodGroups `<prefix>-<g>` of `size` pods of `cpu` each.
fn gangs(prefix: &str, gangs: usize, size: usize, cpu: &str) -> Vec<serde_json::Value> {
    let mut objects = Vec::new();
    for g in 0..gangs {
        let group = format!("{prefix}-{g}");
        objects.push(pod_group(NS, &group, "default", size as i32));
        objects.extend((0..size).map(|i| pod(NS, &format!("{group}-{i}"), &group, cpu, "1Gi")));
    }
    objects
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    c.nodes("pprof", 8, "8", "32Gi").await?;
    // Gangs no node can hold stay pending: every cycle tries them again.
    let mut objects = gangs("never", 4, 4, "16");
    objects.extend(gangs("first", 1, 4, "1"));
    c.create_all(objects).await?;
    let conf = ctx.write_conf("pprof", CHART_CONF)?;
    let mut s = ctx.scheduler(
        "pprof",
        &conf,
        &[
            "--node-selector=e2e:pprof",
            "--enable-pprof=true",
            "--schedule-period=200ms",
        ],
    )?;
    let port = s.metrics_port;
    wait_bound(ctx, NS, "first-", 4, Duration::from_secs(30)).await?;

    let (code, body) = http_get_any(port, "/debug/pprof/profile?seconds=0", secs(5)).await?;
    ensure!(code == 400, "seconds=0: {code}");
    ensure!(
        text(&body).contains("seconds=0: expected a whole number from 1 to 59"),
        "seconds=0: {}",
        text(&body)
    );

    let profile = tokio::spawn(http_get_any(
        port,
        "/debug/pprof/profile?seconds=5",
        secs(30),
    ));
    tokio::time::sleep(secs(1)).await;
    let (code, body) = http_get_any(port, "/debug/pprof/cycle?n=1", secs(5)).await?;
    ensure!(
        code == 409,
        "a second profile alongside the first: {code} {}",
        text(&body)
    );
    c.create_all(gangs("during", 8, 4, "1")).await?;
    let (code, profile) = profile.await??;
    ensure!(code == 200, "profile: {code} {}", text(&profile));
    wait_bound(ctx, NS, "during-", 32, Duration::from_secs(30)).await?;
    let file = ctx.env.work.join("pprof-cpu.pb");
    std::fs::write(&file, &profile)?;
    let top = tokio::process::Command::new("go")
        .args(["tool", "pprof", "-top"])
        .arg(&ctx.env.vc_scheduler)
        .arg(&file)
        .output()
        .await
        .context("running go tool pprof")?;
    let report = text(&top.stdout);
    ensure!(
        top.status.success(),
        "go tool pprof: {}{report}",
        text(&top.stderr)
    );
    let tephra_lines = report.lines().filter(|l| l.contains("tephra")).count();
    if tephra_lines == 0 {
        let traces = tokio::process::Command::new("go")
            .args(["tool", "pprof", "-traces"])
            .arg(&file)
            .output()
            .await
            .context("running go tool pprof")?;
        let traces = text(&traces.stdout);
        let head: Vec<&str> = traces.lines().take(80).collect();
        bail!(
            "go tool pprof -top names no tephra function:\n{report}\nthe first samples:\n{}",
            head.join("\n")
        );
    }

    let (code, body) = http_get_any(port, "/debug/pprof/cycle?n=2", secs(60)).await?;
    ensure!(code == 200, "cycle: {code} {}", text(&body));
    let doc: serde_json::Value = serde_json::from_slice(&body).context("cycle: not JSON")?;
    let names = |phases: &serde_json::Value| -> Vec<String> {
        phases
            .as_array()
            .map(|ps| {
                ps.iter()
                    .map(|p| p["phase"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    ensure!(
        names(&doc["phases"]) == PHASES,
        "cycle phases: {}",
        doc["phases"]
    );
    let cycles = doc["cycles"].as_array().context("cycle: no cycles")?;
    ensure!(
        cycles.len() == 2,
        "cycle?n=2 profiled {} cycles",
        cycles.len()
    );
    for cycle in cycles {
        ensure!(
            names(&cycle["phases"]) == PHASES,
            "a cycle's phases: {cycle}"
        );
    }
    for phase in doc["phases"].as_array().into_iter().flatten() {
        let svg = phase["svg"].as_str().unwrap_or("");
        ensure!(svg.contains("<svg"), "phase {} has no SVG", phase["phase"]);
    }

    let (code, body) = http_get_any(port, "/debug/pprof/heap", secs(5)).await?;
    ensure!(
        code == 501 && text(&body).contains("no heap profile"),
        "heap: {code} {}",
        text(&body)
    );
    let (code, body) = http_get_any(port, "/debug/pprof/heap?debug=1", secs(5)).await?;
    let heap = text(&body);
    let rss: u64 = heap
        .lines()
        .find_map(|l| l.strip_prefix("current_rss_bytes "))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    ensure!(code == 200 && rss > 0, "heap?debug=1: {code} {heap}");
    let stats = heap.split("# mimalloc statistics\n").nth(1).unwrap_or("");
    ensure!(
        !stats.trim().is_empty(),
        "heap?debug=1 lacks mimalloc's statistics: {heap}"
    );

    let (code, body) = http_get_any(port, "/debug/pprof/flamegraph?seconds=1", secs(15)).await?;
    ensure!(
        code == 200 && text(&body).contains("</svg>"),
        "flamegraph: {code}"
    );
    s.check_alive()?;
    s.stop().await
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
