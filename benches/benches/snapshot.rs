//! Snapshot refresh: building the cycle's tables from the cluster state after a churn step.

use criterion::{Criterion, criterion_group, criterion_main};
use tephra_benches::{Fixture, sizes};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn snapshot(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot");
    group.sample_size(10);
    for size in sizes() {
        let mut f = Fixture::steady(size);
        group.bench_function(format!("refresh/{size}"), |b| b.iter(|| f.snapshot()));
    }
    group.finish();
}

criterion_group!(benches, snapshot);
criterion_main!(benches);
