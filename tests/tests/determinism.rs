//! Decisions do not depend on the thread count (1 to 16), nor on the engine's class caches, nor
//! on the warm-up (the cache's rows and one session without actions): the plain path (caches
//! off) on a cold start is the reference the fast path after the warm-up must equal. Three
//! cycles each, so the churn path and steady-state cycles are compared too, the later ones with
//! classes carried over from the cycle before (twice in a row). The fast runs are in checking
//! mode, so each of their cycles is also compared with the same cycle run from scratch.

use tephra_adapters::bench::{BenchOptions, run_bench};
use tephra_adapters::workload::gang_mixed::scheduler_conf;
use tephra_adapters::workload::{GangMixed, Workload};
use tephra_engine::plugins::builtin_registry;

/// The `small` named size.
const SMALL: GangMixed = GangMixed {
    nodes: 1_000,
    pending: 1_000,
    seed: 1,
};

/// `medium-contended` scaled down: twenty pending pods per node ask about 20% more CPU than
/// is free, so gang failures, fairness and "cannot place" paths dominate.
const CONTENDED: GangMixed = GangMixed {
    nodes: 100,
    pending: 2_000,
    seed: 1,
};

fn decisions(
    g: &GangMixed,
    threads: usize,
    disable_class_caches: bool,
    cold: bool,
    checking: bool,
) -> String {
    let options = BenchOptions {
        threads,
        cycles: 3,
        record_decisions: true,
        disable_class_caches,
        cold,
        checking,
        flamegraph: None,
        node_sampling: None,
    };
    let run = run_bench(
        Workload::generated("test", g),
        scheduler_conf(),
        &builtin_registry(),
        &options,
    )
    .expect("the workload runs");
    run.decisions.expect("decisions are recorded")
}

fn assert_same_decisions(g: &GangMixed) -> String {
    let reference = decisions(g, 1, true, true, false);
    // Sixteen threads, the device machine's cores, oversubscribe a small machine: the pool's
    // tasks then interleave in yet other orders.
    for (threads, plain) in [(1, false), (4, false), (8, false), (16, false)] {
        let other = decisions(g, threads, plain, false, true);
        let first_difference = reference.lines().zip(other.lines()).find(|(a, b)| a != b);
        assert!(
            reference == other,
            "{threads} threads, class caches {}: first difference {first_difference:?}",
            if plain { "off" } else { "on" }
        );
    }
    reference
}

#[test]
fn small_decides_the_same_at_any_thread_count_without_class_caches_and_cold() {
    let log = assert_same_decisions(&SMALL);
    let binds = log.lines().filter(|l| l.starts_with("bind ")).count();
    assert!(binds > 900, "small places nearly everything: {binds} binds");
}

#[test]
fn contended_decides_the_same_at_any_thread_count_without_class_caches_and_cold() {
    let log = assert_same_decisions(&CONTENDED);
    assert!(
        log.lines().any(|l| l.starts_with("condition ")),
        "some pods cannot be placed"
    );
}
