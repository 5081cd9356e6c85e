//! The checking mode (`CycleDriver::checking`) fails a cycle that decides otherwise than the
//! same cycle from scratch, and passes one that does not. The session from scratch assigns
//! job ids in another order, so a decision that hangs on ids fails it too.

use std::cmp;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tephra_adapters::offline::{DEFAULT_QUEUE, START_TIME};
use tephra_adapters::workload::{GangMixed, generate_state};
use tephra_cache::cycle::{CycleDriver, CycleError};
use tephra_engine::config::SchedulerConfig;
use tephra_engine::framework::{FitError, Plugin, PluginRegistry, SessionState, StatusCode};
use tephra_engine::model::{JobId, NodeId, TaskId};

/// Refuses every node in every session after its first: state hidden across sessions, which a
/// session from scratch does not have.
struct Forgetful {
    first: bool,
}

impl Plugin for Forgetful {
    fn name(&self) -> &str {
        "forgetful"
    }
    fn predicate(&self, _: &SessionState, _: TaskId, _: NodeId) -> Result<(), FitError> {
        if self.first {
            Ok(())
        } else {
            Err(FitError::new(
                StatusCode::Unschedulable,
                "not the first session",
            ))
        }
    }
}

/// Orders jobs by their ids: an order Volcano has no notion of, as it follows how the
/// snapshot happened to number the jobs.
struct ByJobId;

impl Plugin for ByJobId {
    fn name(&self) -> &str {
        "by-job-id"
    }
    fn job_order(&self, _: &SessionState, l: JobId, r: JobId) -> cmp::Ordering {
        l.cmp(&r)
    }
}

fn registry() -> PluginRegistry {
    let sessions = Arc::new(AtomicUsize::new(0));
    let mut registry = PluginRegistry::new();
    registry.register("forgetful", move |_| {
        let first = sessions.fetch_add(1, Ordering::SeqCst) == 0;
        Ok(Box::new(Forgetful { first }) as Box<dyn Plugin>)
    });
    registry
}

fn cycle(checking: bool) -> Result<usize, CycleError> {
    let conf =
        SchedulerConfig::parse("actions: allocate\ntiers:\n- plugins:\n  - name: forgetful\n")
            .expect("a valid configuration");
    let mut state = generate_state(&GangMixed {
        nodes: 20,
        pending: 20,
        seed: 1,
    });
    let driver = CycleDriver::new(Arc::new(conf), DEFAULT_QUEUE).checking(checking);
    let decisions = driver.run(&mut state, &registry(), START_TIME, "check".into(), &mut ())?;
    Ok(decisions.binds.len())
}

#[test]
fn a_cycle_that_a_session_from_scratch_contradicts_fails_in_checking_mode() {
    let binds = cycle(false).expect("without checking the cycle runs");
    assert!(binds > 0, "the first session places pods");
    match cycle(true) {
        Err(CycleError::CheckFailed(why)) => assert!(why.contains("binds"), "{why}"),
        other => panic!("expected a failed check, got {other:?}"),
    }
}

#[test]
fn a_cycle_that_carries_nothing_hidden_passes_checking_mode() {
    let conf = tephra_adapters::workload::gang_mixed::scheduler_conf();
    let mut state = generate_state(&GangMixed {
        nodes: 50,
        pending: 200,
        seed: 3,
    });
    let registry = tephra_engine::plugins::builtin_registry();
    let driver = CycleDriver::new(Arc::new(conf), DEFAULT_QUEUE).checking(true);
    driver.warm_up(&mut state, &registry).unwrap();
    for second in 0..3 {
        let now = tephra_engine::api::Time(START_TIME.0 + second);
        let decisions = driver
            .run(
                &mut state,
                &registry,
                now,
                format!("c{second}").into(),
                &mut (),
            )
            .expect("the carried values equal those computed from scratch");
        if second == 0 {
            assert!(!decisions.binds.is_empty());
        }
        state.complete_offline();
    }
}

#[test]
fn a_job_order_that_compares_job_ids_fails_in_checking_mode() {
    let conf = SchedulerConfig::parse(
        "actions: allocate\ntiers:\n- plugins:\n  - name: by-job-id\n  - name: predicates\n",
    )
    .expect("a valid configuration");
    let mut registry = tephra_engine::plugins::builtin_registry();
    registry.register("by-job-id", |_| Ok(Box::new(ByJobId) as Box<dyn Plugin>));
    let cluster = || {
        generate_state(&GangMixed {
            nodes: 20,
            pending: 400,
            seed: 2,
        })
    };
    let run = |checking: bool| {
        let driver = CycleDriver::new(Arc::new(conf.clone()), DEFAULT_QUEUE).checking(checking);
        driver.run(&mut cluster(), &registry, START_TIME, "ids".into(), &mut ())
    };
    let binds = run(false).expect("without checking the cycle runs").binds;
    assert!(binds.len() > 1, "jobs are placed in the order of their ids");
    assert!(binds.len() < 400, "the jobs compete for the nodes");
    match run(true) {
        Err(CycleError::CheckFailed(why)) => assert!(why.contains("binds"), "{why}"),
        other => panic!("expected a failed check, got {other:?}"),
    }
}
