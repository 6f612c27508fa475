//! Criterion benchmark of the engine: events per second on the fixed path
//! of `fsmeta bench` (`benches/engine.toml`).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fsmeta::{LoadOptions, Study};
use std::path::Path;

fn study(ops: u64) -> Study {
    let text = include_str!("engine.toml").replace("ops = 1000", &format!("ops = {ops}"));
    match Study::from_text(Path::new("benches/engine.toml"), &text, &LoadOptions::default()) {
        Ok(s) => s,
        Err(e) => panic!("the bench scenario is invalid: {e}"),
    }
}

fn events(s: &Study) -> u64 {
    match s.run(1, &|| {}) {
        Ok(r) => r.runs[0].metrics["events"] as u64,
        Err(e) => panic!("the bench run failed: {e}"),
    }
}

fn engine(c: &mut Criterion) {
    let s = study(200_000);
    let n = events(&s);
    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    g.bench_function("fixed_path_200k_ops", |b| b.iter(|| events(&s)));
    g.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
