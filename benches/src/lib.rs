//! Shared fixtures of tephra's criterion benches: gang-mixed clusters generated once per bench
//! binary, and the one switch that adds the heavy sizes.
//!
//! `cargo bench -p tephra-benches` runs the `small` sizes; `TEPHRA_BENCH_LARGE=1` adds
//! `medium` and `large` (minutes of setup and tens of seconds per sample).

use std::sync::Arc;

use tephra_adapters::offline::{DEFAULT_QUEUE, START_TIME};
use tephra_adapters::workload::{Churn, DEFAULT_SEED, GangMixed, generate_state, named};
use tephra_cache::ClusterState;
use tephra_cache::cycle::CycleDriver;
use tephra_engine::config::SchedulerConfig;
use tephra_engine::framework::{Decisions, PluginRegistry, Session, SessionOptions};
use tephra_engine::snapshot::Snapshot;

/// The environment variable that turns on the heavy sizes.
pub const HEAVY_ENV: &str = "TEPHRA_BENCH_LARGE";

/// The named sizes to bench: `small`, plus `medium` and `large` when `HEAVY_ENV` is `1`.
pub fn sizes() -> Vec<&'static str> {
    let heavy = std::env::var(HEAVY_ENV).is_ok_and(|v| v == "1");
    let mut sizes = vec!["small"];
    if heavy {
        sizes.extend(["medium", "large"]);
    }
    sizes
}

/// A cluster with what a cycle needs besides it.
pub struct Fixture {
    pub state: ClusterState,
    pub conf: Arc<SchedulerConfig>,
    pub registry: PluginRegistry,
}

impl Fixture {
    /// The named size `name`, before its first cycle.
    pub fn named(name: &str) -> Fixture {
        let g = named(name, DEFAULT_SEED).expect("a named size");
        Fixture::of(&g)
    }

    /// The cluster of `g`, before its first cycle.
    pub fn of(g: &GangMixed) -> Fixture {
        Fixture {
            state: generate_state(g),
            conf: Arc::new(tephra_adapters::workload::gang_mixed::scheduler_conf()),
            registry: tephra_engine::plugins::builtin_registry(),
        }
    }

    /// The named size in steady state: after its first cycle and one churn step.
    pub fn steady(name: &str) -> Fixture {
        let g = named(name, DEFAULT_SEED).expect("a named size");
        let mut f = Fixture::of(&g);
        let d = f.cycle();
        f.state.assume(&d, START_TIME);
        f.state.complete_offline();
        Churn::new(g.seed, g.counts().pending_jobs).step(&mut f.state);
        f
    }

    /// The cycle's snapshot.
    pub fn snapshot(&mut self) -> Arc<Snapshot> {
        Arc::new(self.state.snapshot(DEFAULT_QUEUE))
    }

    /// A session opened on a fresh snapshot, for benches of one step of a session.
    pub fn open(&mut self) -> Session {
        let options = SessionOptions {
            now: START_TIME,
            uid: "tephra-bench".into(),
            ..Default::default()
        };
        Session::open(self.snapshot(), self.conf.clone(), &self.registry, options)
            .expect("the chart default configuration opens")
    }

    /// One whole cycle (snapshot, open, actions, close) with nothing carried from an earlier
    /// one; the state is left as it was.
    pub fn cycle(&mut self) -> Decisions {
        CycleDriver::new(self.conf.clone(), DEFAULT_QUEUE)
            .decide(
                &mut self.state,
                &self.registry,
                START_TIME,
                "tephra-bench".into(),
                &mut (),
            )
            .expect("the chart default configuration opens")
            .decisions
    }
}
