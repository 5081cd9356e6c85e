//! In-process profiling, shared by `vc-scheduler`'s `/debug/pprof` endpoints and
//! `tephra bench --flamegraph`: CPU profiles in pprof's protobuf format, flamegraphs, a
//! flamegraph per scheduling-cycle phase, and what mimalloc says about the heap.
//!
//! The sampler is pprof-rs's: a `SIGPROF` handler and one `ITIMER_PROF` interval timer for the
//! whole process, so one profile runs at a time (`claim_profiler`). Nothing runs, and nothing is
//! sampled, until a profile is asked for.

mod claim;
mod cpu;
mod flamegraph;
mod heap;
mod phases;
mod samples;

pub use claim::{ProfilerBusy, ProfilerClaim, claim_profiler};
pub use cpu::{CPU_PROFILE_HZ, CpuProfile, record_cpu_profile};
pub use flamegraph::flamegraph_svg;
pub use heap::heap_stats_text;
pub use phases::{
    CycleTimings, PHASE_PROFILE_HZ, PhaseProfile, PhaseProfiled, PhaseProfiler, RenderedPhase,
};

/// The profiler could not start or could not read its samples.
#[derive(Debug, thiserror::Error)]
#[error("profiler: {0}")]
pub struct ProfileError(#[from] pprof::Error);
