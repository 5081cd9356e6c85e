//! The series a cycle's phases feed, as Volcano's scheduler loop feeds them (Volcano:
//! pkg/scheduler/scheduler.go, runOnce): the session's opening, counted from the cycle's start,
//! and each action's latency.

use std::time::{Duration, Instant};

use tephra_cache::cycle::{CycleObserver, Phase};

use super::{Metrics, ms};

/// Feeds `metrics` from one cycle that started at `start`.
pub struct CyclePhases<'a> {
    pub metrics: &'a Metrics,
    pub start: Instant,
}

impl CycleObserver for CyclePhases<'_> {
    fn phase_finished(&mut self, phase: Phase, took: Duration) {
        match phase {
            Phase::Open => self
                .metrics
                .open_session_duration
                .observe(ms(self.start.elapsed())),
            Phase::Action(action) => self
                .metrics
                .action_scheduling_latency
                .with_label_values(&[action.name()])
                .observe(ms(took)),
            Phase::Snapshot | Phase::Close => {}
        }
    }
}
