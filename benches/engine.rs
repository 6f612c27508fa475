//! Criterion benchmark of the engine: events per second on the fixed path
//! of `fsmeta bench` (16 threads, ideal machine, exp work, a queued lock).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn engine(c: &mut Criterion) {
    let ops = 200_000;
    let events = fsmeta::bench::engine_bench(ops).events;
    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.bench_function("fixed_path_200k_ops", |b| b.iter(|| fsmeta::bench::engine_bench(ops)));
    g.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
