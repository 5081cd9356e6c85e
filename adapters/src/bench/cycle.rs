//! One timed scheduling cycle through the cycle driver: snapshot, session open, each configured
//! action, close; then the decisions are assumed into the cluster state (untimed, as the API
//! writes would be).

use std::sync::Arc;

use tephra_cache::ClusterState;
use tephra_cache::cycle::{CycleDriver, CycleError, Phase, PhaseTimes};
use tephra_engine::api::Time;
use tephra_engine::framework::{Decisions, PluginRegistry};

use super::cpu_time::process_cpu_ns;
use crate::offline::START_TIME;
use crate::profiling::{PhaseProfiled, PhaseProfiler};

/// Where one cycle's time went, in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct CycleTiming {
    pub snapshot_ms: f64,
    pub open_ms: f64,
    /// Each configured action, in configuration order.
    pub actions_ms: Vec<(String, f64)>,
    pub close_ms: f64,
    /// Pods bound by the cycle.
    pub binds: usize,
    /// CPU time of every thread over snapshot … close (`None` where `/proc` does not say).
    pub cpu_ms: Option<f64>,
}

impl CycleTiming {
    /// Snapshot + open + actions + close: the cycle without API I/O.
    pub fn total_ms(&self) -> f64 {
        self.snapshot_ms
            + self.open_ms
            + self.actions_ms.iter().map(|(_, ms)| ms).sum::<f64>()
            + self.close_ms
    }

    fn of(times: &PhaseTimes, binds: usize, cpu_ms: Option<f64>) -> Self {
        let ms = |phase| times.of(phase).as_secs_f64() * 1e3;
        CycleTiming {
            snapshot_ms: ms(Phase::Snapshot),
            open_ms: ms(Phase::Open),
            actions_ms: times
                .0
                .iter()
                .filter(|(p, _)| matches!(p, Phase::Action(_)))
                .map(|(p, d)| (p.name().to_string(), d.as_secs_f64() * 1e3))
                .collect(),
            close_ms: ms(Phase::Close),
            binds,
            cpu_ms,
        }
    }
}

/// Runs cycle number `cycle` (1-based: the session clock is one second per cycle after
/// `START_TIME`, as `tephra simulate` does) through `driver`, which the cycles of one run share
/// (the carryover among them, as a scheduler loop would), and returns its timing and decisions.
/// A `profiler` profiles the cycle's phases (outside their timings).
pub fn timed_cycle(
    driver: &CycleDriver,
    state: &mut ClusterState,
    registry: &PluginRegistry,
    cycle: u32,
    profiler: Option<&mut PhaseProfiler>,
) -> Result<(CycleTiming, Decisions), CycleError> {
    let now = Time(START_TIME.0 + i64::from(cycle) - 1);
    let uid: Arc<str> = format!("tephra-cycle-{cycle}").into();
    let mut observer = PhaseProfiled {
        observer: PhaseTimes::default(),
        profiler,
    };
    let cpu_start = process_cpu_ns();
    let decided = driver.decide(state, registry, now, uid, &mut observer)?;
    let times = observer.observer;
    let cpu_ms = cpu_start
        .zip(process_cpu_ns())
        .map(|(a, b)| b.saturating_sub(a) as f64 / 1e6);
    let decisions = decided.assume(state, now);
    state.complete_offline();
    let timing = CycleTiming::of(&times, decisions.binds.len(), cpu_ms);
    Ok((timing, decisions))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::DEFAULT_QUEUE;
    use crate::workload::{GangMixed, gang_mixed::scheduler_conf, generate_state};

    #[test]
    fn a_cycle_times_every_configured_action_and_binds_pending_pods() {
        let g = GangMixed {
            nodes: 16,
            pending: 16,
            seed: 1,
        };
        let mut state = generate_state(&g);
        let driver = CycleDriver::new(Arc::new(scheduler_conf()), DEFAULT_QUEUE);
        let registry = tephra_engine::plugins::builtin_registry();
        let (t, d) = timed_cycle(&driver, &mut state, &registry, 1, None).unwrap();
        let names: Vec<&str> = t.actions_ms.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["enqueue", "allocate", "backfill"]);
        assert!(t.binds > 0 && t.binds == d.binds.len());
        assert!(t.total_ms() >= t.snapshot_ms + t.close_ms);
        let bound = state
            .pods()
            .filter(|p| !p.spec.node_name.is_empty())
            .count();
        assert_eq!(bound, g.counts().running_pods as usize + t.binds, "assumed");
    }
}
