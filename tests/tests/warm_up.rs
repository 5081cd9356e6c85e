//! The warm-up session (`CycleDriver::warm_up`) runs no action: the cache holds no decision of
//! it afterwards.

use std::sync::Arc;

use tephra_adapters::offline::DEFAULT_QUEUE;
use tephra_adapters::workload::gang_mixed::scheduler_conf;
use tephra_adapters::workload::{GangMixed, generate_state};
use tephra_cache::ClusterState;
use tephra_cache::cycle::CycleDriver;
use tephra_engine::model::TaskStatus;
use tephra_engine::plugins::builtin_registry;

fn pending(state: &mut ClusterState) -> usize {
    let snap = state.snapshot(DEFAULT_QUEUE);
    let tasks = &snap.tasks;
    (0..tasks.len())
        .filter(|&t| tasks.status[t] == TaskStatus::Pending && tasks.node[t].is_none())
        .count()
}

#[test]
fn the_warm_up_session_decides_nothing_into_the_cache() {
    let g = GangMixed {
        nodes: 50,
        pending: 100,
        seed: 1,
    };
    let mut state = generate_state(&g);
    CycleDriver::new(Arc::new(scheduler_conf()), DEFAULT_QUEUE)
        .warm_up(&mut state, &builtin_registry())
        .expect("the chart's configuration opens a session");
    assert_eq!(
        pending(&mut state),
        100,
        "every pending pod is still pending"
    );
}
