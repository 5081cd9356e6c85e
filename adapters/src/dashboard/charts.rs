//! What the dashboard draws, worked out from the history: sections of charts, each chart its
//! labels and data sets, ready for the page's script to hand to Chart.js. A section with
//! nothing to draw carries a note saying what is missing instead.

use serde::Serialize;

use crate::history::{BenchRecord, CycleFigures, History, Provenance};

/// The named sizes, in the order the page shows them; other workloads follow by name.
const NAMED_ORDER: [&str; 4] = ["small", "medium", "large", "medium-contended"];

/// The note of the Volcano section when no peer record exists.
pub const NO_PEER_RUNS: &str = "no peer runs recorded";
/// The note of the e2e section when no e2e record exists.
pub const NO_E2E_RUNS: &str = "no e2e runs recorded";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub title: String,
    pub charts: Vec<Chart>,
    /// Shown instead of charts when there are none.
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chart {
    /// Unique on the page; the browser test finds charts by it.
    pub id: String,
    pub title: String,
    pub kind: ChartKind,
    pub x_title: String,
    pub y_title: String,
    pub labels: Vec<String>,
    pub datasets: Vec<Dataset>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChartKind {
    /// Bars with their data sets stacked (a cycle's phases).
    StackedBar,
    Bar,
    Line,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dataset {
    pub label: String,
    /// One value per label; `None` where the data set has none.
    pub data: Vec<Option<f64>>,
}

/// The commit axis: a record's commit, starred when the checkout was dirty.
fn commit_label(p: &Provenance) -> String {
    let short = p.commit.get(..8).unwrap_or(&p.commit);
    if p.dirty {
        format!("{short}*")
    } else {
        short.to_string()
    }
}

/// Distinct commit labels of `records` in the order first seen (the files are appended to,
/// so this is the order of the runs).
fn commits<'a>(records: impl Iterator<Item = &'a Provenance>) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for p in records {
        let label = commit_label(p);
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    labels
}

/// The workloads of the bench records, named sizes first.
fn workloads(bench: &[BenchRecord]) -> Vec<String> {
    let mut names: Vec<String> = bench.iter().map(|r| r.workload.clone()).collect();
    names.sort_by_key(|w| {
        let rank = NAMED_ORDER
            .iter()
            .position(|n| n == w)
            .unwrap_or(NAMED_ORDER.len());
        (rank, w.clone())
    });
    names.dedup();
    names
}

/// Per commit, the value `pick` gives of the last matching record at that commit.
fn per_commit<'a, R: 'a>(
    labels: &[String],
    records: impl Iterator<Item = &'a R>,
    provenance: impl Fn(&R) -> &Provenance,
    pick: impl Fn(&R) -> Option<f64>,
) -> Vec<Option<f64>> {
    let mut data = vec![None; labels.len()];
    for r in records {
        let label = commit_label(provenance(r));
        if let (Some(i), Some(v)) = (labels.iter().position(|l| *l == label), pick(r)) {
            data[i] = Some(v);
        }
    }
    data
}

/// Every section of the page.
pub fn sections(history: &History) -> Vec<Section> {
    let mut out = vec![cycle_times(history), thread_scaling(&history.bench)];
    let rss = workload_lines(
        &history.bench,
        "peak-rss",
        "peak RSS, median",
        "MiB",
        &|r| r.peak_rss_bytes.map(|s| s.median / f64::from(1 << 20)),
    );
    out.push(section(
        "Peak RSS",
        rss.into_iter().collect(),
        "no bench runs recorded",
    ));
    out.push(placements(&history.bench));
    out.push(e2e(history));
    out.push(volcano_ratio(history));
    out
}

fn note(title: &str, note: &str) -> Section {
    Section {
        title: title.into(),
        charts: Vec::new(),
        note: Some(note.into()),
    }
}

fn section(title: &str, charts: Vec<Chart>, empty: &str) -> Section {
    if charts.is_empty() {
        return note(title, empty);
    }
    Section {
        title: title.into(),
        charts,
        note: None,
    }
}

/// The phases of a cycle as stacked bars per commit, per workload, for the first and the
/// steady cycle.
fn cycle_times(history: &History) -> Section {
    let mut charts = Vec::new();
    for w in workloads(&history.bench) {
        let records: Vec<&BenchRecord> = history.bench.iter().filter(|r| r.workload == w).collect();
        let labels = commits(records.iter().map(|r| &r.provenance));
        let groups: [(&str, &str, PickFigures); 2] = [
            ("first", "first cycle", |r| Some(&r.first_cycle)),
            ("steady", "steady cycle", |r| r.steady_cycle.as_ref()),
        ];
        for (id, name, figures) in groups {
            let mut phases: Vec<String> = vec!["snapshot".into(), "open".into()];
            for r in &records {
                for a in figures(r).into_iter().flat_map(|f| &f.actions_ms) {
                    if !phases.contains(&a.action) {
                        phases.push(a.action.clone());
                    }
                }
            }
            phases.push("close".into());
            let datasets: Vec<Dataset> = phases
                .iter()
                .map(|phase| Dataset {
                    label: phase.clone(),
                    data: per_commit(
                        &labels,
                        records.iter().copied(),
                        |r| &r.provenance,
                        |r| phase_ms(figures(r)?, phase),
                    ),
                })
                .collect();
            if datasets.iter().all(|d| d.data.iter().all(Option::is_none)) {
                continue;
            }
            charts.push(Chart {
                id: format!("cycle-{id}-{w}"),
                title: format!("{w}: {name}, median ms per phase"),
                kind: ChartKind::StackedBar,
                x_title: "commit".into(),
                y_title: "ms".into(),
                labels: labels.clone(),
                datasets,
            });
        }
    }
    section("Cycle time per commit", charts, "no bench runs recorded")
}

/// A group of cycles of a record (first, steady).
type PickFigures = fn(&BenchRecord) -> Option<&CycleFigures>;

fn phase_ms(f: &CycleFigures, phase: &str) -> Option<f64> {
    match phase {
        "snapshot" => Some(f.snapshot_ms.median),
        "open" => Some(f.open_ms.median),
        "close" => Some(f.close_ms.median),
        action => f
            .actions_ms
            .iter()
            .find(|a| a.action == action)
            .map(|a| a.ms.median),
    }
}

/// The first cycle against the thread count, of each workload's last record measured at more
/// than one.
fn thread_scaling(bench: &[BenchRecord]) -> Section {
    let mut charts = Vec::new();
    for w in workloads(bench) {
        let Some(r) = bench
            .iter()
            .rev()
            .find(|r| r.workload == w && r.thread_scaling.len() > 1)
        else {
            continue;
        };
        let points = &r.thread_scaling;
        let mut datasets = vec![Dataset {
            label: "first cycle total".into(),
            data: points.iter().map(|p| Some(p.total_ms.median)).collect(),
        }];
        if points.iter().all(|p| p.allocate_ms.is_some()) {
            datasets.push(Dataset {
                label: "allocate".into(),
                data: points
                    .iter()
                    .map(|p| p.allocate_ms.map(|s| s.median))
                    .collect(),
            });
        }
        charts.push(Chart {
            id: format!("threads-{w}"),
            title: format!(
                "{w}: first cycle by threads (commit {})",
                commit_label(&r.provenance)
            ),
            kind: ChartKind::Line,
            x_title: "threads".into(),
            y_title: "median ms".into(),
            labels: points.iter().map(|p| p.threads.to_string()).collect(),
            datasets,
        });
    }
    section(
        "Thread scaling (1 → N)",
        charts,
        "no run measured at more than one thread count",
    )
}

/// One line per workload over the commits.
fn workload_lines(
    bench: &[BenchRecord],
    id: &str,
    title: &str,
    unit: &str,
    pick: &dyn Fn(&BenchRecord) -> Option<f64>,
) -> Option<Chart> {
    let labels = commits(bench.iter().map(|r| &r.provenance));
    let datasets: Vec<Dataset> = workloads(bench)
        .into_iter()
        .map(|w| Dataset {
            data: per_commit(
                &labels,
                bench.iter().filter(|r| r.workload == w),
                |r| &r.provenance,
                pick,
            ),
            label: w,
        })
        .filter(|d| d.data.iter().any(Option::is_some))
        .collect();
    (!datasets.is_empty()).then(|| Chart {
        id: id.into(),
        title: title.into(),
        kind: ChartKind::Line,
        x_title: "commit".into(),
        y_title: unit.into(),
        labels,
        datasets,
    })
}

/// Binds per second of cycle time, first and steady cycle.
fn placements(bench: &[BenchRecord]) -> Section {
    let first = workload_lines(
        bench,
        "placements-first",
        "first cycle, median binds per second",
        "placements/s",
        &|r| Some(r.first_cycle.placements_per_s.median),
    );
    let steady = workload_lines(
        bench,
        "placements-steady",
        "steady cycle, median binds per second",
        "placements/s",
        &|r| r.steady_cycle.as_ref().map(|s| s.placements_per_s.median),
    );
    section(
        "Placements per second",
        first.into_iter().chain(steady).collect(),
        "no bench runs recorded",
    )
}

/// vc-scheduler's pods per second through a real API server against that server's own
/// binding ceiling, in the `throughput` scenario (the other scenarios measure other workloads).
fn e2e(history: &History) -> Section {
    let title = "End-to-end pods per second (e2e throughput)";
    let records: Vec<&crate::history::E2eRecord> = history
        .e2e
        .iter()
        .filter(|r| r.scenario == "throughput")
        .collect();
    if records.is_empty() {
        return note(title, NO_E2E_RUNS);
    }
    let labels = commits(records.iter().map(|r| &r.provenance));
    let line = |label: &str, pick: fn(&crate::history::E2eRecord) -> f64| Dataset {
        label: label.into(),
        data: per_commit(
            &labels,
            records.iter().copied(),
            |r| &r.provenance,
            |r| Some(pick(r)),
        ),
    };
    let chart = Chart {
        id: "e2e-throughput".into(),
        title: "pods bound per second against the API server's ceiling".into(),
        kind: ChartKind::Bar,
        x_title: "commit".into(),
        y_title: "pods/s".into(),
        labels: labels.clone(),
        datasets: vec![
            line("vc-scheduler, from start", |r| r.pods_per_s),
            line("vc-scheduler, first to last bind", |r| r.binding_pods_per_s),
            line("API server ceiling (plain client)", |r| {
                r.api_ceiling_pods_per_s
            }),
        ],
    };
    section(title, vec![chart], NO_E2E_RUNS)
}

/// Volcano's first cycle over tephra's, per workload and node-search mode.
fn volcano_ratio(history: &History) -> Section {
    let title = "Volcano's first cycle over tephra's";
    let records = &history.peer;
    if records.is_empty() {
        return note(title, NO_PEER_RUNS);
    }
    let labels = commits(records.iter().map(|r| &r.provenance));
    let mut series: Vec<(String, crate::history::PeerMode)> = Vec::new();
    for r in records {
        if !series.iter().any(|(w, m)| *w == r.workload && *m == r.mode) {
            series.push((r.workload.clone(), r.mode));
        }
    }
    let datasets = series
        .into_iter()
        .map(|(w, mode)| Dataset {
            label: format!("{w} ({})", mode_name(mode)),
            data: per_commit(
                &labels,
                records.iter().filter(|r| r.workload == w && r.mode == mode),
                |r| &r.provenance,
                |r| Some(r.ratio()),
            ),
        })
        .collect();
    let chart = Chart {
        id: "volcano-ratio".into(),
        title: "how many times longer Volcano's first cycle takes".into(),
        kind: ChartKind::Line,
        x_title: "commit".into(),
        y_title: "Volcano ms / tephra ms".into(),
        labels,
        datasets,
    };
    section(title, vec![chart], NO_PEER_RUNS)
}

fn mode_name(mode: crate::history::PeerMode) -> &'static str {
    match mode {
        crate::history::PeerMode::Sampling => "sampling",
        crate::history::PeerMode::AllNodes => "all nodes",
    }
}
