//! A profile per scheduling-cycle phase (snapshot, open, each action, close) over some cycles.
//!
//! One sampler runs for all the cycles; each phase reads its counts as it is entered and as it
//! is left, and keeps the difference, so the samples of a phase add up over the cycles. Starting
//! and stopping the sampler at each phase instead would cost more than a short phase lasts: the
//! sampler builds its sample table anew on every stop. A phase lasts milliseconds, so the sampler
//! runs at a high rate (`PHASE_PROFILE_HZ`); the kernel delivers at most one sample per CPU per
//! timer tick, which caps the real rate (its `CONFIG_HZ`: 100 to 1000 per CPU second), so short
//! phases need many cycles for a useful graph.

use std::time::{Duration, Instant};

use pprof::{ProfilerGuard, ProfilerGuardBuilder};
use serde::Serialize;
use tephra_cache::cycle::{CycleObserver, Phase};
use tephra_engine::framework::Session;

use super::samples::{self, RawStacks};
use super::{ProfileError, ProfilerClaim, flamegraph_svg};

/// Samples per second of CPU time asked for while phases are profiled.
pub const PHASE_PROFILE_HZ: i32 = 4999;

/// One phase of one cycle: its name and how long it took, in milliseconds (the profiler's own
/// reads before and after are outside).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseTiming {
    pub phase: String,
    pub ms: f64,
}

/// The phases of one cycle, in the order they ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CycleTimings {
    pub phases: Vec<PhaseTiming>,
}

/// A phase being profiled.
struct OpenPhase {
    name: String,
    counts_at_entry: RawStacks,
    start: Instant,
}

/// Profiles the phases of the cycles it is told about (`begin_cycle`, `enter`, `leave`).
pub struct PhaseProfiler {
    guard: ProfilerGuard<'static>,
    hz: i32,
    open: Option<OpenPhase>,
    cycles: Vec<CycleTimings>,
    /// Samples per phase, phases in the order first seen.
    phases: Vec<(String, RawStacks)>,
    /// The first failure to read the sampler's counts (its samples are then missing).
    problem: Option<String>,
    /// Dropped after `guard`: the profiler stays claimed until the sampler has stopped.
    _claim: ProfilerClaim,
}

impl PhaseProfiler {
    /// Starts the sampler at `hz` per CPU second under `claim`.
    pub fn start(claim: ProfilerClaim, hz: i32) -> Result<PhaseProfiler, ProfileError> {
        let guard = ProfilerGuardBuilder::default()
            .frequency(hz)
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()?;
        Ok(PhaseProfiler {
            guard,
            hz,
            open: None,
            cycles: Vec::new(),
            phases: Vec::new(),
            problem: None,
            _claim: claim,
        })
    }

    /// A new cycle starts: the phases entered from now on are its.
    pub fn begin_cycle(&mut self) {
        self.leave();
        self.cycles.push(CycleTimings::default());
    }

    /// Cycles begun so far.
    pub fn cycles(&self) -> usize {
        self.cycles.len()
    }

    /// Phase `name` starts (a phase still open ends first).
    pub fn enter(&mut self, name: &str) {
        self.leave();
        let counts_at_entry = self.read();
        self.open = Some(OpenPhase {
            name: name.to_string(),
            counts_at_entry,
            start: Instant::now(),
        });
    }

    /// The open phase, if any, ends.
    pub fn leave(&mut self) {
        let Some(open) = self.open.take() else {
            return;
        };
        let ms = open.start.elapsed().as_secs_f64() * 1e3;
        let counts = self.read();
        let table = match self.phases.iter().position(|(n, _)| *n == open.name) {
            Some(i) => &mut self.phases[i].1,
            None => {
                self.phases.push((open.name.clone(), samples::empty()));
                &mut self.phases.last_mut().expect("just pushed").1
            }
        };
        samples::add_difference(table, &open.counts_at_entry, counts);
        if self.cycles.is_empty() {
            self.cycles.push(CycleTimings::default());
        }
        if let Some(cycle) = self.cycles.last_mut() {
            cycle.phases.push(PhaseTiming {
                phase: open.name,
                ms,
            });
        }
    }

    fn read(&mut self) -> RawStacks {
        samples::read(&self.guard).unwrap_or_else(|e| {
            self.problem.get_or_insert_with(|| e.to_string());
            samples::empty()
        })
    }

    /// Stops the sampler (releasing the claim) and returns what it gathered.
    pub fn finish(mut self) -> PhaseProfile {
        self.leave();
        PhaseProfile {
            hz: self.hz,
            cycles: self.cycles,
            phases: self.phases,
            problem: self.problem,
        }
    }
}

/// The cycle driver's phases: a snapshot starts a cycle.
impl CycleObserver for PhaseProfiler {
    fn phase_started(&mut self, phase: Phase) {
        if phase == Phase::Snapshot {
            self.begin_cycle();
        }
        self.enter(phase.name());
    }

    fn phase_finished(&mut self, _phase: Phase, _took: Duration) {
        self.leave();
    }
}

/// A cycle observer whose cycles are also profiled, phase by phase, while a profiler is given.
/// The profiler reads its samples before a phase starts and after it ends, outside the
/// driver's timing of the phase.
pub struct PhaseProfiled<'a, O> {
    pub observer: O,
    pub profiler: Option<&'a mut PhaseProfiler>,
}

impl<O: CycleObserver> CycleObserver for PhaseProfiled<'_, O> {
    fn phase_started(&mut self, phase: Phase) {
        if let Some(p) = self.profiler.as_deref_mut() {
            p.phase_started(phase);
        }
        self.observer.phase_started(phase);
    }

    fn phase_finished(&mut self, phase: Phase, took: Duration) {
        self.observer.phase_finished(phase, took);
        if let Some(p) = self.profiler.as_deref_mut() {
            p.phase_finished(phase, took);
        }
    }

    fn opened(&mut self, session: &mut Session) {
        self.observer.opened(session);
    }

    fn acted(&mut self, session: &Session) {
        self.observer.acted(session);
    }
}

/// The samples and timings of some cycles' phases, symbols not yet looked up.
pub struct PhaseProfile {
    pub hz: i32,
    pub cycles: Vec<CycleTimings>,
    phases: Vec<(String, RawStacks)>,
    /// Why some samples are missing, if they are.
    pub problem: Option<String>,
}

/// One phase's flamegraph over all the profiled cycles.
#[derive(Debug, Clone, Serialize)]
pub struct RenderedPhase {
    pub phase: String,
    pub samples: isize,
    pub svg: String,
}

impl PhaseProfile {
    /// The phases' names, in the order they first ran.
    pub fn phase_names(&self) -> Vec<&str> {
        self.phases.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Looks the stacks' symbols up and draws a flamegraph per phase (this takes a while: run
    /// it off the scheduling loop).
    pub fn render(self) -> Vec<RenderedPhase> {
        let cycles = self.cycles.len();
        self.phases
            .into_iter()
            .map(|(phase, raw)| {
                let stacks = samples::resolve(raw);
                let samples = samples::total(&stacks);
                let title = format!(
                    "tephra {phase}: {}, {} at up to {} Hz",
                    plural(cycles, "cycle"),
                    plural(samples.max(0) as usize, "sample"),
                    self.hz
                );
                let svg = flamegraph_svg(&title, &stacks);
                RenderedPhase {
                    phase,
                    samples,
                    svg,
                }
            })
            .collect()
    }
}

/// `n thing` or `n things`.
fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::claim::tests::serial;
    use super::super::claim_profiler;
    use super::*;

    #[inline(never)]
    fn busy_phase_work(duration: Duration) -> u64 {
        let start = Instant::now();
        let mut x = 7u64;
        while start.elapsed() < duration {
            for i in 0..10_000u64 {
                x = std::hint::black_box(x.rotate_left(5) ^ i);
            }
        }
        x
    }

    #[test]
    fn the_cycle_drivers_phases_reach_the_profiler_one_cycle_per_snapshot() {
        use std::sync::Arc;

        use tephra_cache::cycle::{CycleDriver, PhaseTimes};
        use tephra_engine::api::Time;

        use crate::offline::DEFAULT_QUEUE;
        use crate::workload::{GangMixed, gang_mixed::scheduler_conf, generate_state};

        let _serial = serial();
        let g = GangMixed {
            nodes: 8,
            pending: 8,
            seed: 1,
        };
        let mut state = generate_state(&g);
        let driver = CycleDriver::new(Arc::new(scheduler_conf()), DEFAULT_QUEUE);
        let registry = tephra_engine::plugins::builtin_registry();
        let mut profiler =
            PhaseProfiler::start(claim_profiler("driver test").unwrap(), 997).unwrap();
        for second in 0..2 {
            let mut observer = PhaseProfiled {
                observer: PhaseTimes::default(),
                profiler: Some(&mut profiler),
            };
            driver
                .run(
                    &mut state,
                    &registry,
                    Time(second),
                    "t".into(),
                    &mut observer,
                )
                .unwrap();
            assert_eq!(
                observer.observer.0.len(),
                6,
                "the inner observer is told too"
            );
        }
        let profile = profiler.finish();
        let order = [
            "snapshot", "open", "enqueue", "allocate", "backfill", "close",
        ];
        assert_eq!(profile.phase_names(), order);
        assert_eq!(profile.cycles.len(), 2);
        for cycle in &profile.cycles {
            let names: Vec<&str> = cycle.phases.iter().map(|t| t.phase.as_str()).collect();
            assert_eq!(names, order);
        }
    }

    #[test]
    fn each_phase_gets_the_samples_taken_while_it_ran_summed_over_cycles() {
        let _serial = serial();
        let mut p = PhaseProfiler::start(claim_profiler("phase test").unwrap(), 997).unwrap();
        for _ in 0..2 {
            p.begin_cycle();
            p.enter("snapshot");
            p.enter("allocate");
            busy_phase_work(Duration::from_millis(300));
            p.leave();
        }
        assert_eq!(p.cycles(), 2);
        let profile = p.finish();
        assert!(
            claim_profiler("after").is_ok(),
            "the claim outlived the profile"
        );
        assert_eq!(profile.problem, None);
        assert_eq!(profile.phase_names(), ["snapshot", "allocate"]);
        let names: Vec<Vec<&str>> = profile
            .cycles
            .iter()
            .map(|c| c.phases.iter().map(|t| t.phase.as_str()).collect())
            .collect();
        assert_eq!(names, [["snapshot", "allocate"], ["snapshot", "allocate"]]);
        assert!(profile.cycles[1].phases[1].ms >= 300.0);
        let rendered = profile.render();
        let allocate = &rendered[1];
        // The kernel's tick caps the rate (100 a CPU second on some kernels), and a loaded
        // machine gives the test thread part of a CPU.
        assert!(allocate.samples >= 5, "{} samples", allocate.samples);
        assert!(allocate.svg.contains("busy_phase_work"));
        assert!(allocate.svg.contains("2 cycles"));
        assert!(
            !rendered[0].svg.contains("busy_phase_work"),
            "snapshot got allocate's samples"
        );
    }
}
