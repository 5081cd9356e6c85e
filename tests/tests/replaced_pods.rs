//! Assuming a cycle's binds replaces each bound pod with a new version; the old one is freed
//! then, not held until the next snapshot by the task table the cache keeps for it.

use std::sync::{Arc, Weak};

use tephra_adapters::offline::{DEFAULT_QUEUE, START_TIME};
use tephra_adapters::workload::gang_mixed::scheduler_conf;
use tephra_adapters::workload::{GangMixed, generate_state};
use tephra_cache::cycle::{CycleDriver, PhaseTimes};
use tephra_engine::api::Pod;
use tephra_engine::plugins::builtin_registry;

#[test]
fn a_bound_pods_old_version_is_freed_when_the_binds_are_assumed() {
    let g = GangMixed {
        nodes: 50,
        pending: 200,
        seed: 1,
    };
    let mut state = generate_state(&g);
    let driver = CycleDriver::new(Arc::new(scheduler_conf()), DEFAULT_QUEUE);
    let registry = builtin_registry();
    driver
        .warm_up(&mut state, &registry)
        .expect("the chart's configuration opens a session");
    let cycle = driver
        .decide(
            &mut state,
            &registry,
            START_TIME,
            "cycle-1".into(),
            &mut PhaseTimes::default(),
        )
        .expect("the cycle runs");
    let tasks = &cycle.snapshot.tasks;
    let bound: Vec<Weak<Pod>> = (cycle.decisions.replaced_tasks.iter())
        .map(|t| Arc::downgrade(&tasks.pod[t.idx()]))
        .collect();
    assert!(bound.len() >= 100, "the cycle binds most pending pods");
    assert_eq!(bound.len(), cycle.decisions.binds.len());
    cycle.assume(&mut state, START_TIME);
    let held = bound.iter().filter(|p| p.upgrade().is_some()).count();
    assert_eq!(
        held, 0,
        "old versions of bound pods still held after assume"
    );
}
