//! `tephra dashboard` in a real browser: headless Chromium loads the page from `file://` and
//! the test reads back, from the DOM the page's script fills (`#dashboard-summary`), every
//! chart drawn with its point count and every script or console error. It fails on an error,
//! on a chart with no points, and on a canvas left without a chart. Screenshots are kept as
//! artefacts: `target/dashboard/history.png` (the committed perf/history) and
//! `target/dashboard/every-kind.png` (a history with every kind of record).
//!
//! The browser is `$TEPHRA_CHROMIUM`, else the first of `chromium`, `chromium-browser`,
//! `google-chrome` on `PATH` (Debian: `apt-get install chromium`; scripts/test installs it).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tephra_adapters::dashboard::NO_PEER_RUNS;
use tephra_adapters::history::{
    E2eRecord, Machine, PeerMode, PeerRecord, Provenance, SCHEMA, Spread, append_record,
};

const BROWSERS: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("adapters/ sits in the repository")
        .to_path_buf()
}

/// Where the pages and screenshots go: `target/dashboard/`.
fn artefacts() -> PathBuf {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    let dir = target.join("dashboard");
    std::fs::create_dir_all(&dir).expect("create target/dashboard");
    dir
}

fn browser() -> PathBuf {
    if let Some(path) = std::env::var_os("TEPHRA_CHROMIUM") {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    BROWSERS
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "no headless browser for the dashboard test: none of {BROWSERS:?} is on PATH and \
                 TEPHRA_CHROMIUM is not set; install Chromium (Debian: apt-get install chromium)"
            )
        })
}

/// Runs the browser headless on `page` with `args`; returns stdout and stderr.
fn chromium(page: &Path, profile: &Path, args: &[&str]) -> (String, String) {
    let url = format!("file://{}", page.display());
    let out = Command::new(browser())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(&url)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", browser().display()));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "{} failed on {url}:\n{stderr}",
        browser().display()
    );
    (stdout, stderr)
}

/// What the page says it drew, `(chart id, points)` per chart, and its DOM.
fn drawn(page: &Path, screenshot: &Path) -> (Vec<(String, u64)>, String) {
    let profile = page.with_extension("profile");
    let (dom, log) = chromium(page, &profile, &["--dump-dom"]);
    let uncaught: Vec<&str> = log.lines().filter(|l| l.contains("Uncaught")).collect();
    assert!(
        uncaught.is_empty(),
        "script errors in the browser log: {uncaught:#?}"
    );
    let start = dom
        .find("<pre id=\"dashboard-summary\">")
        .unwrap_or_else(|| panic!("no #dashboard-summary in the DOM of {}", page.display()));
    let text = &dom[start..];
    let text = &text[text.find('>').expect("tag end") + 1..text.find("</pre>").expect("</pre>")];
    let summary: Value = serde_json::from_str(&text.replace("&quot;", "\"").replace("&amp;", "&"))
        .unwrap_or_else(|e| panic!("the page wrote no summary ({e}): {text:?}"));
    assert_eq!(
        summary["errors"],
        Value::Array(Vec::new()),
        "errors on the page"
    );
    let charts: Vec<(String, u64)> = summary["charts"]
        .as_array()
        .expect("charts")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().expect("id").to_string(),
                c["points"].as_u64().expect("points"),
            )
        })
        .collect();
    let empty: Vec<&String> = charts
        .iter()
        .filter(|(_, n)| *n == 0)
        .map(|(id, _)| id)
        .collect();
    assert!(empty.is_empty(), "charts drawn without points: {empty:?}");
    assert_eq!(
        charts.len(),
        dom.matches("<canvas").count(),
        "a canvas without a chart"
    );
    chromium(
        page,
        &profile,
        &[
            &format!("--screenshot={}", screenshot.display()),
            "--window-size=1400,3400",
        ],
    );
    assert!(
        screenshot.is_file(),
        "no screenshot at {}",
        screenshot.display()
    );
    let _ = std::fs::remove_dir_all(&profile);
    (charts, dom)
}

/// `tephra dashboard --history DIR -o OUT`; returns the page.
fn render(history: &Path, out: &Path) -> PathBuf {
    let status = Command::new(env!("CARGO_BIN_EXE_tephra"))
        .arg("dashboard")
        .arg("--history")
        .arg(history)
        .arg("-o")
        .arg(out)
        .status()
        .expect("run tephra");
    assert!(status.success(), "tephra dashboard failed");
    out.join("index.html")
}

#[test]
fn the_committed_history_draws_every_chart_with_points() {
    let dir = artefacts();
    let page = render(&root().join("perf/history"), &dir.join("history"));
    let (charts, dom) = drawn(&page, &dir.join("history.png"));
    let ids: Vec<&str> = charts.iter().map(|(id, _)| id.as_str()).collect();
    for wanted in [
        "cycle-first-large",
        "cycle-steady-medium",
        "peak-rss",
        "placements-first",
    ] {
        assert!(ids.contains(&wanted), "{wanted} not drawn: {ids:?}");
    }
    if root().join("perf/history/e2e.jsonl").exists() {
        assert!(ids.contains(&"e2e-throughput"), "no e2e chart: {ids:?}");
    }
    if !root().join("perf/history/peer.jsonl").exists() {
        assert!(
            dom.contains(NO_PEER_RUNS),
            "no note in place of the Volcano chart"
        );
    }
}

fn provenance(commit: &str) -> Provenance {
    Provenance {
        schema: SCHEMA,
        commit: commit.into(),
        dirty: false,
        date: "2026-12-03T12:00:00Z".into(),
        machine: Machine {
            nproc: 2,
            cpu_model: None,
            memory_bytes: None,
        },
    }
}

/// The committed bench and e2e records, plus peer records in both modes at two made-up
/// commits (test data, not measurements), so every chart of the page is drawn.
fn every_kind(dir: &Path) {
    std::fs::create_dir_all(dir).expect("create history");
    let committed = root().join("perf/history");
    for file in ["bench.jsonl", "e2e.jsonl"] {
        if committed.join(file).exists() {
            std::fs::copy(committed.join(file), dir.join(file))
                .expect("copy the committed history");
        }
    }
    let e2e = dir.join("e2e.jsonl");
    for (commit, pods_per_s) in [("aaaaaaaaaaaa", 900.0), ("bbbbbbbbbbbb", 1000.0)] {
        let record = E2eRecord {
            provenance: provenance(commit),
            scenario: "throughput".into(),
            nodes: 10,
            pods: 100,
            pods_per_s,
            binding_pods_per_s: pods_per_s * 2.0,
            api_ceiling_pods_per_s: 3000.0,
            api_ceiling_concurrency: 64,
            status_catch_up_s: 1.0,
            creation_to_bound_ms: None,
            first_bind_s: None,
            last_bind_s: None,
            api_writes: None,
            running_pods: None,
            caches_synced_s: None,
            binds_by_scheduler: None,
            volcano_commit: None,
        };
        append_record(&e2e, &record).expect("append e2e");
        for (mode, ms) in [(PeerMode::Sampling, 300.0), (PeerMode::AllNodes, 900.0)] {
            let record = PeerRecord {
                provenance: provenance(commit),
                volcano_commit: Some("test".into()),
                workload: "medium".into(),
                mode,
                volcano_first_cycle_ms: Spread {
                    median: ms,
                    min: ms,
                    max: ms,
                    n: 1,
                },
                tephra_first_cycle_ms: Spread {
                    median: 30.0,
                    min: 30.0,
                    max: 30.0,
                    n: 1,
                },
                binds_volcano: 100,
                binds_tephra: 100,
            };
            append_record(&dir.join("peer.jsonl"), &record).expect("append peer");
        }
    }
}

#[test]
fn a_history_of_every_kind_draws_the_e2e_and_volcano_charts() {
    let dir = artefacts();
    let history = dir.join("every-kind-history");
    let _ = std::fs::remove_dir_all(&history);
    every_kind(&history);
    let page = render(&history, &dir.join("every-kind"));
    let (charts, _) = drawn(&page, &dir.join("every-kind.png"));
    let points = |id: &str| charts.iter().find(|(c, _)| c == id).map(|(_, n)| *n);
    assert_eq!(points("volcano-ratio"), Some(4), "{charts:?}");
    assert!(
        points("e2e-throughput").is_some_and(|n| n >= 6),
        "{charts:?}"
    );
    assert!(
        charts.iter().any(|(id, _)| id.starts_with("threads-")),
        "{charts:?}"
    );
}
