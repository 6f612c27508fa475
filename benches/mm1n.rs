//! The engine against a bare loop on one model (issue 13): M/M/1//N with
//! N = 16 sources, think Exp(10 us), service Exp(1 us), one FIFO server.
//!
//! * `bare_heap`: a hand-written loop ([`fsmeta::measure::mm1n`]),
//!   `BinaryHeap<Reverse<(time, seq, source, kind)>>`, a `VecDeque` FIFO,
//!   ChaCha8, exponential draws by statrs' `Exp`, integer picoseconds.
//! * `bare_heap_engine_sampler`: the same loop drawing with fsmeta's own
//!   exponential sampler, so the engine's event handling can be compared
//!   without the sampler's share.
//! * `fsmeta`: the same model as a scenario (`benches/mm1n.toml`), run
//!   through `Study::run` on one thread, as `fsmeta run --jobs 1` does.
//!
//! All three are reported in completions per second (criterion's elements/s);
//! the ratio fsmeta / bare_heap is the figure issue 13 asks for (target
//! at least 0.8). `FSMETA_MM1N_COMPLETIONS` overrides the completions per
//! iteration (default 1,000,000).
//!
//! Time is the benchmark thread's CPU time where Linux reports it
//! (`clock_gettime`, [`fsmeta::measure::timed`]), wall time elsewhere: on a shared
//! machine wall time mostly measures the other processes, and both loops
//! run on the calling thread (fsmeta with `--jobs 1` runs its one run on a
//! one-thread pool, whose time this does not see; so fsmeta is measured
//! through `runner::run_one` on this thread).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fsmeta::measure::mm1n::{bare_heap, bare_heap_engine_sampler};
use fsmeta::measure::timed;
use fsmeta::{LoadOptions, Study};
use std::path::Path;

fn study(ops: u64) -> Study {
    let text = include_str!("mm1n.toml").replace("ops = 1000", &format!("ops = {ops}"));
    match Study::from_text(Path::new("benches/mm1n.toml"), &text, &LoadOptions::default()) {
        Ok(s) => s,
        Err(e) => panic!("the bench scenario is invalid: {e}"),
    }
}

fn fsmeta_ops(s: &Study) -> f64 {
    let plan = s.plan();
    match fsmeta::runner::run_one(&s.scenario, &plan[0]) {
        Ok(m) => m["ops"],
        Err(e) => panic!("the bench run failed: {e}"),
    }
}

fn mm1n(c: &mut Criterion) {
    let n: u64 = std::env::var("FSMETA_MM1N_COMPLETIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let s = study(n);
    let mut g = c.benchmark_group("mm1n");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    g.bench_function("bare_heap", |b| b.iter_custom(|iters| timed(iters, || bare_heap(n, 1))));
    g.bench_function("bare_heap_engine_sampler", |b| {
        b.iter_custom(|iters| timed(iters, || bare_heap_engine_sampler(n, 1)))
    });
    g.bench_function("fsmeta", |b| b.iter_custom(|iters| timed(iters, || fsmeta_ops(&s))));
    g.finish();
}

criterion_group!(benches, mm1n);
criterion_main!(benches);
