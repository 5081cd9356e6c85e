//! What the scheduler does once its initial lists are in, before its first cycle (`vc-scheduler`
//! once its caches synced, after winning the lease when it elects a leader; `tephra bench`
//! unless `--cold`).
//!
//! The cache builds every node, job and task row (`ClusterState::warm_up`). Then one session is
//! opened and closed on its second snapshot, running no action; what it decides is dropped,
//! never assumed or written. Its reasons:
//! - A cycle builds its tables, node sums and decisions in memory the process has not touched
//!   yet, and the kernel zeroes each fresh page as it is first touched. The allocator keeps
//!   what the warm-up frees (`freed_memory`), so the first cycle reuses it, as every later
//!   cycle reuses the memory of the one before.
//! - The session leaves the kube view's per-node sums in the carryover, so the first cycle, like
//!   every later one, sums again only the nodes that changed since.
//!
//! The session gets its own timers, so no plugin's interval starts from it, and plugin hooks run
//! once more than Volcano would run them (open and close, no action). Decisions are the same
//! with or without it (`tests/tests/determinism.rs` compares cycles on a cold cache with cycles
//! after the warm-up).

use std::sync::Arc;

use tephra_cache::ClusterState;
use tephra_engine::config::{ConfigError, SchedulerConfig};
use tephra_engine::framework::{Carryover, PluginRegistry, Session, SessionOptions, Timers};

/// Warms `state` up and runs the session without actions, leaving what it carries over in
/// `carryover` (the scheduler loop's own). Fails only when the configuration cannot open a
/// session, which the first cycle would report too.
pub fn warm_up(
    state: &mut ClusterState,
    default_queue: &str,
    conf: &Arc<SchedulerConfig>,
    registry: &PluginRegistry,
    carryover: Arc<Carryover>,
) -> Result<(), ConfigError> {
    let options = SessionOptions {
        uid: "tephra-warm-up".into(),
        timers: Arc::new(Timers::default()),
        carryover,
        ..Default::default()
    };
    let mut opened = Ok(());
    state.warm_up(default_queue, |snap| {
        opened = Session::open(Arc::new(snap), conf.clone(), registry, options)
            .map(|session| drop(session.close()));
    });
    opened
}

#[cfg(test)]
mod tests {
    use tephra_engine::model::TaskStatus;
    use tephra_engine::plugins::builtin_registry;

    use super::*;
    use crate::offline::DEFAULT_QUEUE;
    use crate::workload::gang_mixed::scheduler_conf;
    use crate::workload::{GangMixed, generate_state};

    #[test]
    fn the_warm_up_session_decides_nothing_into_the_cache() {
        let g = GangMixed {
            nodes: 50,
            pending: 100,
            seed: 1,
        };
        let pending = |state: &mut ClusterState| {
            let snap = state.snapshot(DEFAULT_QUEUE);
            let tasks = &snap.tasks;
            (0..tasks.len())
                .filter(|&t| tasks.status[t] == TaskStatus::Pending && tasks.node[t].is_none())
                .count()
        };
        let mut state = generate_state(&g);
        let conf = Arc::new(scheduler_conf());
        warm_up(
            &mut state,
            DEFAULT_QUEUE,
            &conf,
            &builtin_registry(),
            Arc::default(),
        )
        .expect("the chart's configuration opens a session");
        assert_eq!(
            pending(&mut state),
            100,
            "every pending pod is still pending"
        );
    }
}
