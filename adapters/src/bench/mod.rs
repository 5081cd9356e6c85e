//! `tephra bench`: scheduling cycles on a workload with per-phase timing. Cycle 1 sees every
//! pending pod, on a cache warmed up as the scheduler's is once its initial lists are in (unless
//! `--cold`); each later cycle first applies the workload's churn. Cycles run inside a
//! dedicated rayon pool of the requested size, which the engine's parallel loops use.

mod cpu_time;
mod cycle;
mod decision_log;
mod report;
mod rss;

use std::sync::Arc;
use std::time::Instant;

use tephra_engine::config::SchedulerConfig;
use tephra_engine::framework::{NodeSampling, PluginRegistry, SessionOptions};

use crate::InputError;
use crate::offline::DEFAULT_QUEUE;
use crate::warm_up::warm_up;
use crate::workload::{ChurnStep, Workload};
pub use cycle::{CycleTiming, timed_cycle};
pub use report::{write_json, write_text};
pub use rss::peak_rss_bytes;

/// How to run a benchmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchOptions {
    /// Threads of the rayon pool the cycles run in.
    pub threads: usize,
    pub cycles: u32,
    /// Keep every cycle's decisions as sorted text (`--decisions`).
    pub record_decisions: bool,
    /// Run the engine's plain path (see `SessionOptions::disable_class_caches`).
    pub disable_class_caches: bool,
    /// Start cycle 1 on a cache that has built nothing yet (no `warm_up`).
    pub cold: bool,
    /// Volcano's node sampling (`None`: every feasible node, tephra's default).
    pub node_sampling: Option<NodeSampling>,
}

/// What a benchmark measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchRun {
    pub workload: String,
    pub threads: usize,
    pub cycles: Vec<CycleTiming>,
    /// The churn applied before cycles 2, 3, ...
    pub churn: Vec<ChurnStep>,
    /// Sorted decisions of every cycle, when recorded.
    pub decisions: Option<String>,
    pub peak_rss_bytes: Option<u64>,
    /// The cache's warm-up once the cluster is loaded (`None`: started cold).
    pub warm_up_ms: Option<f64>,
}

/// Runs `options.cycles` cycles of `workload` under `conf`.
pub fn run_bench(
    mut workload: Workload,
    conf: SchedulerConfig,
    registry: &PluginRegistry,
    options: &BenchOptions,
) -> Result<BenchRun, InputError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .thread_name(|i| format!("tephra-worker-{i}"))
        .build()
        .map_err(|e| InputError::new("--threads", e))?;
    let conf = Arc::new(conf);
    let mut run = BenchRun {
        workload: workload.name.clone(),
        threads: options.threads,
        cycles: Vec::new(),
        churn: Vec::new(),
        decisions: options.record_decisions.then(String::new),
        peak_rss_bytes: None,
        warm_up_ms: None,
    };
    let shared = SessionOptions {
        disable_class_caches: options.disable_class_caches,
        node_sampling: options.node_sampling,
        ..Default::default()
    };
    // As the scheduler does once its initial lists are in.
    if !options.cold {
        let state = &mut workload.state;
        let start = Instant::now();
        let carryover = shared.carryover.clone();
        pool.install(|| warm_up(state, DEFAULT_QUEUE, &conf, registry, carryover))
            .map_err(|e| InputError::new("scheduler configuration", e))?;
        run.warm_up_ms = Some(start.elapsed().as_secs_f64() * 1e3);
    }
    for cycle in 1..=options.cycles {
        if cycle > 1 {
            run.churn.push(workload.churn.step(&mut workload.state));
        }
        let state = &mut workload.state;
        let (timing, decisions) = pool
            .install(|| timed_cycle(state, &conf, registry, cycle, &shared))
            .map_err(|e| InputError::new("scheduler configuration", e))?;
        if let Some(log) = &mut run.decisions {
            decision_log::append_cycle(log, cycle, &decisions);
        }
        run.cycles.push(timing);
    }
    run.peak_rss_bytes = peak_rss_bytes();
    Ok(run)
}
