//! One timed scheduling cycle: snapshot, session open, each configured action, close; then the
//! decisions are assumed into the cluster state (untimed, as the API writes would be).

use std::sync::Arc;
use std::time::Instant;

use tephra_cache::ClusterState;
use tephra_engine::actions;
use tephra_engine::api::Time;
use tephra_engine::config::{ConfigError, SchedulerConfig};
use tephra_engine::framework::{Decisions, PluginRegistry, Session, SessionOptions};

use super::cpu_time::process_cpu_ns;
use crate::offline::{DEFAULT_QUEUE, START_TIME};
use crate::profiling::PhaseProfiler;

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
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// Runs cycle number `cycle` (1-based: the session clock is one second per cycle after
/// `START_TIME`, as `tephra simulate` does) and returns its timing and decisions. The session
/// takes the rest of its options from `shared`, which the cycles of one run share (the class
/// carryover among them, as a scheduler loop would). A `profiler` is told each phase as it
/// starts and ends (outside the timings).
pub fn timed_cycle(
    state: &mut ClusterState,
    conf: &Arc<SchedulerConfig>,
    registry: &PluginRegistry,
    cycle: u32,
    shared: &SessionOptions,
    mut profiler: Option<&mut PhaseProfiler>,
) -> Result<(CycleTiming, Decisions), ConfigError> {
    let now = Time(START_TIME.0 + i64::from(cycle) - 1);
    let options = SessionOptions {
        now,
        uid: format!("tephra-cycle-{cycle}").into(),
        ..shared.clone()
    };
    if let Some(p) = profiler.as_deref_mut() {
        p.begin_cycle();
    }
    let mut enter = |phase: &str| {
        if let Some(p) = profiler.as_deref_mut() {
            p.enter(phase);
        }
    };
    let cpu_start = process_cpu_ns();
    enter("snapshot");
    let start = Instant::now();
    let snap = Arc::new(state.snapshot(DEFAULT_QUEUE));
    let snapshot_ms = ms_since(start);

    enter("open");
    let start = Instant::now();
    let mut ssn = Session::open(snap, conf.clone(), registry, options)?;
    let open_ms = ms_since(start);

    let mut actions_ms = Vec::new();
    for &action in &conf.actions {
        enter(action.name());
        let start = Instant::now();
        actions::run(&mut ssn, action);
        actions_ms.push((action.name().to_string(), ms_since(start)));
    }

    enter("close");
    let start = Instant::now();
    let decisions = ssn.close();
    let close_ms = ms_since(start);
    if let Some(p) = profiler {
        p.leave();
    }
    let cpu_ms = cpu_start
        .zip(process_cpu_ns())
        .map(|(a, b)| b.saturating_sub(a) as f64 / 1e6);

    state.assume(&decisions, now);
    state.complete_offline();
    let timing = CycleTiming {
        snapshot_ms,
        open_ms,
        actions_ms,
        close_ms,
        binds: decisions.binds.len(),
        cpu_ms,
    };
    Ok((timing, decisions))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{GangMixed, gang_mixed::scheduler_conf, generate_state};

    #[test]
    fn a_cycle_times_every_configured_action_and_binds_pending_pods() {
        let g = GangMixed {
            nodes: 16,
            pending: 16,
            seed: 1,
        };
        let mut state = generate_state(&g);
        let conf = Arc::new(scheduler_conf());
        let registry = tephra_engine::plugins::builtin_registry();
        let (t, d) = timed_cycle(
            &mut state,
            &conf,
            &registry,
            1,
            &SessionOptions::default(),
            None,
        )
        .unwrap();
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
