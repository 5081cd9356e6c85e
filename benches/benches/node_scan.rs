//! "Where does this task go" for one task class over every node of a 50,000-node cluster:
//! the fit check and predicates on each node, then the node-order and batch scores of the
//! feasible ones, as allocate does for one task.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tephra_adapters::workload::GangMixed;
use tephra_benches::Fixture;
use tephra_engine::framework::Session;
use tephra_engine::model::{DimDefault, NodeId, TaskId};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The `large` cluster with one pending job (8 pods of 2 cpu / 8Gi, the most common class).
const CLUSTER: GangMixed = GangMixed {
    nodes: 50_000,
    pending: 1,
    seed: 1,
};

/// PrePredicate (per task), then the fit check and the predicates on every node.
fn feasible(ssn: &Session, t: TaskId) -> Vec<NodeId> {
    ssn.pre_predicate(t).expect("the task passes PrePredicate");
    let req = ssn.state.resreq(t);
    ssn.state
        .snap
        .nodes
        .ids()
        .filter(|&n| req.less_equal(&ssn.state.future_idle(n), DimDefault::Zero))
        .filter(|&n| ssn.predicate(t, n).is_ok())
        .collect()
}

fn scores(ssn: &Session, t: TaskId, nodes: &[NodeId]) -> Vec<f64> {
    let batch = ssn.batch_node_order(t, nodes);
    nodes
        .iter()
        .enumerate()
        .map(|(i, &n)| ssn.node_order(t, n) + batch.as_ref().map_or(0.0, |b| b[i]))
        .collect()
}

fn node_scan(c: &mut Criterion) {
    let mut f = Fixture::of(&CLUSTER);
    let ssn = f.open();
    let snap = ssn.state.snap.clone();
    let t = snap
        .task_id("default/job-000000-0")
        .expect("the pending pod");
    let nodes = feasible(&ssn, t);
    assert!(
        nodes.len() > CLUSTER.nodes as usize / 2,
        "most nodes fit the task, {} do",
        nodes.len()
    );
    let mut group = c.benchmark_group("node_scan");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("predicate/50000", |b| b.iter(|| feasible(&ssn, t)));
    group.bench_function("score/50000", |b| b.iter(|| scores(&ssn, t, &nodes)));
    group.bench_function("predicate+score/50000", |b| {
        b.iter(|| {
            let nodes = feasible(&ssn, t);
            scores(&ssn, t, &nodes)
        })
    });
    group.finish();
}

criterion_group!(benches, node_scan);
criterion_main!(benches);
