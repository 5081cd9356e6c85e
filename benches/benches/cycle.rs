//! A whole scheduling cycle (snapshot, open, actions, close), first and steady-state.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tephra_benches::{Fixture, sizes};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn cycle(c: &mut Criterion) {
    let mut group = c.benchmark_group("cycle");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for size in sizes() {
        let mut first = Fixture::named(size);
        group.bench_function(format!("first/{size}"), |b| b.iter(|| first.cycle()));
        drop(first);
        let mut steady = Fixture::steady(size);
        group.bench_function(format!("steady/{size}"), |b| b.iter(|| steady.cycle()));
    }
    group.finish();
}

criterion_group!(benches, cycle);
criterion_main!(benches);
