//! The engine against a bare loop on one model (issue 13): M/M/1//N with
//! N = 16 sources, think Exp(10 us), service Exp(1 us), one FIFO server.
//!
//! * `bare_heap`: a hand-written loop, `BinaryHeap<Reverse<(time, seq,
//!   source, kind)>>`, a `VecDeque` FIFO, ChaCha8, exponential draws by
//!   statrs' ziggurat (the sampler fsmeta uses), integer picoseconds.
//! * `fsmeta`: the same model as a scenario (`benches/mm1n.toml`), run
//!   through `Study::run` on one thread, as `fsmeta run --jobs 1` does.
//!
//! Both are reported in completions per second (criterion's elements/s);
//! the ratio fsmeta / bare_heap is the figure issue 13 asks for (target
//! at least 0.8). `FSMETA_MM1N_COMPLETIONS` overrides the completions per
//! iteration (default 1,000,000).
//!
//! Time is the benchmark thread's CPU time where Linux reports it
//! (`/proc/thread-self/schedstat`, ns), wall time elsewhere: on a shared
//! machine wall time mostly measures the other processes, and both loops
//! run on the calling thread (fsmeta with `--jobs 1` runs its one run on a
//! one-thread pool, whose time this does not see; so fsmeta is measured
//! through `runner::run_one` on this thread).

#[path = "common/cpu_time.rs"]
mod cpu_time;
use cpu_time::timed;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fsmeta::{LoadOptions, Study};
use rand::SeedableRng;
use rand::distr::Distribution;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::Exp;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::path::Path;

const SOURCES: u32 = 16;
const ARRIVE: u8 = 0;
const DEPART: u8 = 1;

/// Nanoseconds to integer picoseconds (truncating, as a bare loop would).
#[inline]
fn ps(ns: f64) -> u64 {
    (ns * 1000.0) as u64
}

/// The bare loop: simulates until `completions` services have ended;
/// returns the end time in ps (so the work cannot be optimised away).
fn bare_heap(completions: u64, seed: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (Ok(think), Ok(service)) = (Exp::new(1.0 / 10_000.0), Exp::new(1.0 / 1000.0)) else {
        panic!("bad rates");
    };
    let mut heap: BinaryHeap<Reverse<(u64, u64, u32, u8)>> = BinaryHeap::with_capacity(SOURCES as usize + 1);
    let mut fifo: VecDeque<u32> = VecDeque::with_capacity(SOURCES as usize);
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<_>, t: u64, who: u32, kind: u8| {
        heap.push(Reverse((t, seq, who, kind)));
        seq += 1;
    };
    for who in 0..SOURCES {
        let t = ps(think.sample(&mut rng));
        push(&mut heap, t, who, ARRIVE);
    }
    let mut busy = false;
    let mut done = 0u64;
    while let Some(Reverse((now, _, who, kind))) = heap.pop() {
        if kind == ARRIVE {
            if busy {
                fifo.push_back(who);
            } else {
                busy = true;
                let t = now + ps(service.sample(&mut rng));
                push(&mut heap, t, who, DEPART);
            }
            continue;
        }
        done += 1;
        if done == completions {
            return now;
        }
        let t = now + ps(think.sample(&mut rng));
        push(&mut heap, t, who, ARRIVE);
        match fifo.pop_front() {
            Some(next) => {
                let t = now + ps(service.sample(&mut rng));
                push(&mut heap, t, next, DEPART);
            }
            None => busy = false,
        }
    }
    0
}

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
    g.bench_function("fsmeta", |b| b.iter_custom(|iters| timed(iters, || fsmeta_ops(&s))));
    g.finish();
}

criterion_group!(benches, mm1n);
criterion_main!(benches);
