//! The records of the benchmark history, one JSON object per line (perf/history/README.md
//! documents the fields). Every record starts with where and when it was measured
//! (`Provenance`); a figure measured several times is kept as its median and range (`Spread`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The version of the record format written into every record's `schema`.
pub const SCHEMA: u32 = 1;

/// Where and when a record was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub schema: u32,
    /// The checkout's commit, abbreviated to 12 hex digits.
    pub commit: String,
    /// The checkout had uncommitted changes (the history folder itself not counted).
    pub dirty: bool,
    /// When the record was made, UTC, RFC 3339 (`2026-12-03T14:19:53Z`).
    pub date: String,
    pub machine: Machine,
}

/// The machine a record was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Cores this process may run on (`nproc`).
    pub nproc: u32,
    /// `model name` of `/proc/cpuinfo`, where known.
    pub cpu_model: Option<String>,
    /// `MemTotal` of `/proc/meminfo`, where known.
    pub memory_bytes: Option<u64>,
}

/// A figure measured `n` times: its median (the mean of the middle two for an even `n`) and
/// its range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: u32,
}

/// One workload's figures from several `tephra bench --json` runs of one binary
/// (`perf/history/bench.jsonl`, appended by `scripts/bench-targets`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRecord {
    #[serde(flatten)]
    pub provenance: Provenance,
    /// A named size (`small`, `medium`, `large`, `medium-contended`) or a manifest file.
    pub workload: String,
    /// `head` (the checkout's binary) or `base` (the other build `scripts/bench-targets`
    /// compares it with; `commit` is then that build's).
    pub variant: String,
    /// Threads of the scheduling pool in the runs the cycle figures come from.
    pub threads: u32,
    /// Runs at `threads`.
    pub runs: u32,
    /// Cycles per run.
    pub cycles: u32,
    /// Cycle 1 started on a cold cache (no warm-up).
    pub cold: bool,
    /// Cycle 1: every pending pod.
    pub first_cycle: CycleFigures,
    /// Cycles 2 and 3, after the churn; absent for a run of one cycle.
    pub steady_cycle: Option<CycleFigures>,
    /// The last three cycles of a run of more than four.
    pub late_steady_cycle: Option<CycleFigures>,
    /// The cache's warm-up before cycle 1; absent when started cold.
    pub warm_up_ms: Option<Spread>,
    pub peak_rss_bytes: Option<Spread>,
    /// The first cycle at each thread count measured, fewest threads first.
    pub thread_scaling: Vec<ThreadPoint>,
}

/// Per-phase times of a group of cycles over all runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CycleFigures {
    pub total_ms: Spread,
    pub snapshot_ms: Spread,
    pub open_ms: Spread,
    /// Each action of the configuration, in its order.
    pub actions_ms: Vec<ActionTime>,
    pub close_ms: Spread,
    pub binds: Spread,
    /// Binds per second of cycle time.
    pub placements_per_s: Spread,
}

/// One action's time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionTime {
    pub action: String,
    #[serde(flatten)]
    pub ms: Spread,
}

/// The first cycle at one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadPoint {
    pub threads: u32,
    pub total_ms: Spread,
    /// The `allocate` action alone, when the configuration runs it.
    pub allocate_ms: Option<Spread>,
}

/// One run of an end-to-end scenario against a real API server (`perf/history/e2e.jsonl`,
/// appended by the e2e driver when `TEPHRA_HISTORY` is set).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct E2eRecord {
    #[serde(flatten)]
    pub provenance: Provenance,
    /// The scenario (`throughput`).
    pub scenario: String,
    pub nodes: u32,
    pub pods: u32,
    /// Pods bound per second from vc-scheduler's start to the last bind.
    pub pods_per_s: f64,
    /// Pods bound per second from the first bind to the last.
    pub binding_pods_per_s: f64,
    /// Pods per second a plain client binds through the same API server in the same run: the
    /// ceiling any scheduler meets.
    pub api_ceiling_pods_per_s: f64,
    /// Bindings in flight at once in the ceiling measurement.
    pub api_ceiling_concurrency: u32,
    /// Seconds after the last bind until the status writes (PodGroups, queues, events) were
    /// all made.
    pub status_catch_up_s: f64,
    /// Pod creation to bound, estimated from vc-scheduler's
    /// `volcano_task_scheduling_latency_milliseconds{stage="Bound"}` histogram as Prometheus'
    /// `histogram_quantile` estimates it.
    pub creation_to_bound_ms: Option<Quantiles>,
    /// Seconds from vc-scheduler's start to its first bind; absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_bind_s: Option<f64>,
    /// Seconds from vc-scheduler's start to its last bind; absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_bind_s: Option<f64>,
    /// vc-scheduler's API writes over the run by `verb resource` (`update podgroups`); absent
    /// in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_writes: Option<BTreeMap<String, f64>>,
    /// Pods already bound and Running when vc-scheduler started (`bench-startup`); absent
    /// elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_pods: Option<u32>,
    /// Seconds from vc-scheduler's start until every watched kind was listed
    /// (`bench-startup`); absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches_synced_s: Option<f64>,
    /// The pods each scheduler bound, by scheduler (one entry per vc-scheduler process; several
    /// when sharded); absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binds_by_scheduler: Option<BTreeMap<String, u64>>,
    /// The Volcano commit whose own vc-scheduler the record measures (scenarios
    /// `bench-kwok/… volcano`; its `api_writes` are by HTTP method); absent for tephra's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volcano_commit: Option<String>,
}

/// Percentiles of a distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

/// One comparison with Volcano's scheduler run in-process on the same workload
/// (`perf/history/peer.jsonl`, written by the peer harness under `benches/peer/`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerRecord {
    #[serde(flatten)]
    pub provenance: Provenance,
    /// The Volcano commit the harness built, where known.
    pub volcano_commit: Option<String>,
    pub workload: String,
    /// How both schedulers searched nodes.
    pub mode: PeerMode,
    /// Volcano's first cycle, milliseconds.
    pub volcano_first_cycle_ms: Spread,
    /// tephra's first cycle on the same workload, in runs alternating with Volcano's.
    pub tephra_first_cycle_ms: Spread,
    /// Pods Volcano bound in its first cycle (the median, should the runs differ).
    pub binds_volcano: u64,
    /// Pods tephra bound in its first cycle: equal to Volcano's when both did the same work.
    pub binds_tephra: u64,
}

/// Volcano's node search: a sample of the feasible nodes as its default
/// `percentageOfNodesToFind` takes (Volcano: pkg/scheduler/util/scheduler_helper.go,
/// CalculateNumOfFeasibleNodesToFind), or every node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeerMode {
    Sampling,
    AllNodes,
}

impl PeerRecord {
    /// How many times longer Volcano's first cycle took than tephra's.
    pub fn ratio(&self) -> f64 {
        self.volcano_first_cycle_ms.median / self.tephra_first_cycle_ms.median
    }
}
