//! Snapshot refresh: building the cycle's tables from the cluster state after a churn step; and
//! the work the cache does per pod as it arrives (`prepare_pod`), which the refresh then skips.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use tephra_benches::{Fixture, sizes};
use tephra_engine::api::Pod;
use tephra_engine::arrival::prepare_pod;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn snapshot(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot");
    group.sample_size(10);
    for size in sizes() {
        let mut f = Fixture::steady(size);
        group.bench_function(format!("refresh/{size}"), |b| b.iter(|| f.snapshot()));
        // Fresh copies: a clone starts with an empty memo, as a newly arrived pod does.
        let pods: Vec<Pod> = f.state.pods().cloned().collect();
        group.bench_function(format!("prepare_every_pod/{size}"), |b| {
            b.iter_batched(
                || pods.clone(),
                |fresh| fresh.iter().for_each(prepare_pod),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, snapshot);
criterion_main!(benches);
