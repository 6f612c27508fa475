//! The bare-heap reference loop for M/M/1//N (issue 13): N = 16 sources,
//! think Exp(10 us), service Exp(1 us), one FIFO server; the model of
//! `benches/mm1n.toml`, written as a hand-written loop would be:
//! `BinaryHeap<Reverse<(time, seq, source, kind)>>`, a `VecDeque` FIFO,
//! ChaCha8, exponential draws by statrs' `Exp` (what a hand-written loop
//! would call), integer picoseconds. Nothing of fsmeta's engine is used.
//!
//! [`bare_heap_engine_sampler`] is the same loop drawing with the engine's
//! own exponential sampler ([`StdExp`] times the mean), so that a
//! comparison can separate the engine's event handling from its sampler.
//! Both run one loop, `simulate`, given the two draws.

use crate::engine::exp::StdExp;
use rand::SeedableRng;
use rand::distr::Distribution;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::Exp;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Sources (closed population).
pub const SOURCES: u32 = 16;
/// Mean think time, ns.
pub const THINK_NS: f64 = 10_000.0;
/// Mean service time, ns.
pub const SERVICE_NS: f64 = 1000.0;

const ARRIVE: u8 = 0;
const DEPART: u8 = 1;

/// Nanoseconds to integer picoseconds (truncating, as a bare loop would).
#[inline]
fn ps(ns: f64) -> u64 {
    (ns * 1000.0) as u64
}

/// Simulates until `completions` services have ended, with statrs' `Exp`
/// draws; returns the end time in ps (so the work cannot be optimised
/// away), 0 if `completions` is 0.
pub fn bare_heap(completions: u64, seed: u64) -> u64 {
    let (Ok(think), Ok(service)) = (Exp::new(1.0 / THINK_NS), Exp::new(1.0 / SERVICE_NS)) else {
        return 0; // unreachable: both rates are positive constants
    };
    simulate(completions, seed, |rng| think.sample(rng), |rng| service.sample(rng))
}

/// [`bare_heap`] drawing with the engine's exponential sampler
/// ([`StdExp`] times the mean), as fsmeta draws work durations.
pub fn bare_heap_engine_sampler(completions: u64, seed: u64) -> u64 {
    let exp = StdExp::new();
    simulate(
        completions,
        seed,
        |rng| exp.sample(rng) * THINK_NS,
        |rng| exp.sample(rng) * SERVICE_NS,
    )
}

/// The loop; `think` and `service` each draw one duration in ns.
fn simulate(completions: u64, seed: u64, think: impl Fn(&mut ChaCha8Rng) -> f64, service: impl Fn(&mut ChaCha8Rng) -> f64) -> u64 {
    if completions == 0 {
        return 0;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut heap: BinaryHeap<Reverse<(u64, u64, u32, u8)>> = BinaryHeap::with_capacity(SOURCES as usize + 1);
    let mut fifo: VecDeque<u32> = VecDeque::with_capacity(SOURCES as usize);
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<_>, t: u64, who: u32, kind: u8| {
        heap.push(Reverse((t, seq, who, kind)));
        seq += 1;
    };
    for who in 0..SOURCES {
        let t = ps(think(&mut rng));
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
                let t = now + ps(service(&mut rng));
                push(&mut heap, t, who, DEPART);
            }
            continue;
        }
        done += 1;
        if done >= completions {
            return now;
        }
        let t = now + ps(think(&mut rng));
        push(&mut heap, t, who, ARRIVE);
        match fifo.pop_front() {
            Some(next) => {
                let t = now + ps(service(&mut rng));
                push(&mut heap, t, next, DEPART);
            }
            None => busy = false,
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loop is the M/M/1//N of its constants: by the machine-repairman
    /// formulas (Kleinrock, Queueing Systems I, section 3.10) the server's
    /// throughput is (1 - p0) / S with p0 = 1 / sum_k N!/(N-k)! (S/Z)^k,
    /// so 100,000 completions end near 100,000 / throughput.
    #[test]
    fn throughput_matches_the_machine_repairman_formula() {
        let r = SERVICE_NS / THINK_NS;
        let n = SOURCES as i32;
        let (mut term, mut sum) = (1.0, 1.0);
        for k in 1..=n {
            term *= f64::from(n - k + 1) * r;
            sum += term;
        }
        let per_ns = (1.0 - 1.0 / sum) / SERVICE_NS;
        let completions = 100_000;
        for run in [bare_heap, bare_heap_engine_sampler] {
            let end_ns = run(completions, 7) as f64 / 1000.0;
            let got = completions as f64 / end_ns;
            assert!((got / per_ns - 1.0).abs() < 0.02, "throughput {got} per ns, formula {per_ns}");
        }
    }
}
