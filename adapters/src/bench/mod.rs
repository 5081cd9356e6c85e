//! `tephra bench`: scheduling cycles on a workload with per-phase timing. Cycle 1 sees every
//! pending pod, on a cache warmed up as the scheduler's is once its initial lists are in (unless
//! `--cold`); each later cycle first applies the workload's churn. Cycles run inside a
//! dedicated rayon pool of the requested size, which the engine's parallel loops use. With
//! `--flamegraph DIR` the cycles' phases are profiled in-process (`profiling::PhaseProfiler`)
//! and drawn into DIR.

mod cpu_time;
mod cycle;
mod decision_log;
mod flamegraphs;
mod report;
mod rss;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tephra_cache::cycle::{CycleDriver, CycleError};
use tephra_engine::config::SchedulerConfig;
use tephra_engine::framework::{NodeSampling, PluginRegistry};

use crate::InputError;
use crate::offline::DEFAULT_QUEUE;
use crate::profiling::{PHASE_PROFILE_HZ, PhaseProfiler, claim_profiler};
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
    /// Start cycle 1 on a cache that has built nothing yet (no warm-up).
    pub cold: bool,
    /// Run every cycle again from scratch and fail on a difference (`CycleDriver::checking`).
    pub checking: bool,
    /// Draw a flamegraph per phase into this directory (`--flamegraph`).
    pub flamegraph: Option<PathBuf>,
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
    /// The flamegraphs written (`--flamegraph`), one per phase.
    pub flamegraphs: Vec<PathBuf>,
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
        flamegraphs: Vec::new(),
    };
    let driver = CycleDriver::new(conf, DEFAULT_QUEUE)
        .disable_class_caches(options.disable_class_caches)
        .node_sampling(options.node_sampling)
        .checking(options.checking);
    // As the scheduler does once its initial lists are in.
    if !options.cold {
        let state = &mut workload.state;
        let start = Instant::now();
        pool.install(|| driver.warm_up(state, registry))
            .map_err(|e| InputError::new("scheduler configuration", e))?;
        run.warm_up_ms = Some(start.elapsed().as_secs_f64() * 1e3);
    }
    let mut profiler = match &options.flamegraph {
        Some(dir) => {
            let origin = || format!("--flamegraph {}", dir.display());
            let claim = claim_profiler("tephra bench --flamegraph")
                .map_err(|e| InputError::new(origin(), e))?;
            let profiler = PhaseProfiler::start(claim, PHASE_PROFILE_HZ)
                .map_err(|e| InputError::new(origin(), e))?;
            Some(profiler)
        }
        None => None,
    };
    for cycle in 1..=options.cycles {
        if cycle > 1 {
            run.churn.push(workload.churn.step(&mut workload.state));
        }
        let state = &mut workload.state;
        let (timing, decisions) = pool
            .install(|| timed_cycle(&driver, state, registry, cycle, profiler.as_mut()))
            .map_err(|e| match e {
                CycleError::Config(e) => InputError::new("scheduler configuration", e),
                checked => InputError::new(format!("cycle {cycle}"), checked),
            })?;
        if let Some(log) = &mut run.decisions {
            decision_log::append_cycle(log, cycle, &decisions);
        }
        run.cycles.push(timing);
    }
    run.peak_rss_bytes = peak_rss_bytes();
    if let (Some(profiler), Some(dir)) = (profiler, &options.flamegraph) {
        run.flamegraphs = flamegraphs::write_phase_flamegraphs(profiler.finish(), dir)?;
    }
    Ok(run)
}
