//! Simulated cache accesses per second of the hierarchy (issue 12, "Speed").
//!
//! The access pattern of [`fsmeta::measure::cache_pattern`] (shaped like
//! case 2, on the cache geometry of `scenarios/machines/spr-12vcpu.toml`).
//!
//! `FSMETA_CACHE_CREATES` overrides the creates per iteration (default
//! 20,000, about 2.2M accesses); throughput is in accesses (criterion's
//! elements/s). Time is the thread's CPU time where Linux reports it
//! (`clock_gettime`, [`fsmeta::measure::timed`]), wall time elsewhere: the machine the
//! figures come from is shared.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fsmeta::measure::cache_pattern;
use fsmeta::measure::timed;

/// Runs `creates` creates on fresh caches: the accesses and L1 misses.
fn run(creates: u64) -> (u64, u64) {
    match cache_pattern::spr() {
        Ok(mut h) => cache_pattern::run(&mut h, creates),
        Err(e) => panic!("bench geometry: {e}"),
    }
}

fn cache(c: &mut Criterion) {
    let creates: u64 = std::env::var("FSMETA_CACHE_CREATES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let (accesses, _) = run(creates);
    let mut g = c.benchmark_group("cache");
    g.throughput(Throughput::Elements(accesses));
    g.sample_size(10);
    g.bench_function("case2_pattern", |b| b.iter_custom(|iters| timed(iters, || run(creates))));
    g.finish();
}

criterion_group!(benches, cache);
criterion_main!(benches);
