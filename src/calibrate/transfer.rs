//! One cache line between two pinned CPUs: ping-pong (the one-way transfer
//! time) and both CPUs hammering it with atomics (the contended cost).
//!
//! Method (as docs/reference/machines.md describes the published figures:
//! two pinned threads, half the round trip): the line holds a counter. In
//! the load/store ping-pong the initiator stores an odd value and spins on
//! loads until the responder has stored the next even one; the responder
//! spins on loads for the odd value and stores the even one. In the CAS
//! ping-pong each side spins on `compare_exchange(expected, expected + 1)`
//! until it succeeds. Each sample times `round_trips` round trips on the
//! initiator with [`Instant`] and reports `elapsed / (2 x round_trips)`: the
//! one-way time. No `pause` in the spin loops (it would add its own
//! latency). A sample during which the other thread was descheduled is an
//! outlier; the median ignores it.

use super::CalibrateError;
use super::pin::pin_to;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// One cache line of its own: 128-byte aligned so that the adjacent-line
/// prefetcher's pair holds nothing else either.
#[repr(align(128))]
#[derive(Debug, Default)]
struct Line(AtomicU64);

/// Which protocol a ping-pong uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Plain loads and stores (release/acquire).
    LoadStore,
    /// `lock cmpxchg` on both sides.
    Cas,
}

/// A spinning rendezvous of two threads, which also tells each whether the
/// other pinned itself.
#[derive(Debug, Default)]
struct Rendezvous {
    arrived: Line,
    failed: AtomicBool,
}

impl Rendezvous {
    /// Waits for the other thread's `round`-th arrival (rounds from 1);
    /// false if either side failed to pin.
    fn meet(&self, round: u64, ok: bool) -> bool {
        if !ok {
            self.failed.store(true, Ordering::SeqCst);
        }
        self.arrived.0.fetch_add(1, Ordering::SeqCst);
        while self.arrived.0.load(Ordering::SeqCst) < 2 * round {}
        !self.failed.load(Ordering::SeqCst)
    }
}

/// Runs `initiator` on CPU `a` and `responder` on CPU `b`, both pinned and
/// started together; returns the initiator's samples.
///
/// Both run on threads of their own: the caller's CPU mask is left as it
/// was. (Until session 50 the initiator was the calling thread, so `fsmeta
/// lab`, which measures the transfer before its runs, confined itself to
/// CPU 0, and every thread and process it started after inherited that
/// mask: the 2-thread rates of `xfs-create-scaling` ran on one CPU.)
fn on_pair<I, R>(a: u32, b: u32, initiator: I, responder: R) -> Result<Vec<f64>, CalibrateError>
where
    I: FnOnce(&Rendezvous) -> Vec<f64> + Send,
    R: FnOnce(&Rendezvous) + Send,
{
    let meet = Rendezvous::default();
    let panicked = |cpu: u32| CalibrateError::Affinity {
        cpu: Some(cpu),
        detail: "the measuring thread panicked".to_string(),
    };
    std::thread::scope(|s| {
        let resp = s.spawn(|| {
            let pinned = pin_to(b);
            if meet.meet(1, pinned.is_ok()) {
                responder(&meet);
            }
            pinned
        });
        let init = s.spawn(|| {
            let pinned = pin_to(a);
            let out = if meet.meet(1, pinned.is_ok()) {
                initiator(&meet)
            } else {
                Vec::new()
            };
            pinned.map(|()| out)
        });
        let out = init.join().map_err(|_| panicked(a))?;
        let resp = resp.join().map_err(|_| panicked(b))?;
        let out = out?;
        resp?;
        Ok(out)
    })
}

/// One-way transfer time in ns between CPUs `a` and `b`: one sample per
/// `samples`, each the mean over `round_trips` round trips.
pub fn ping_pong(a: u32, b: u32, protocol: Protocol, round_trips: u64, samples: usize) -> Result<Vec<f64>, CalibrateError> {
    let line = Line::default();
    let total = round_trips * samples as u64;
    let initiator = |_: &Rendezvous| {
        let mut out = Vec::with_capacity(samples);
        let mut v = 0u64;
        for _ in 0..samples {
            let t0 = Instant::now();
            for _ in 0..round_trips {
                match protocol {
                    Protocol::LoadStore => {
                        line.0.store(v + 1, Ordering::Release);
                        while line.0.load(Ordering::Acquire) != v + 2 {}
                    }
                    Protocol::Cas => while line.0.compare_exchange(v, v + 1, Ordering::AcqRel, Ordering::Relaxed).is_err() {},
                }
                v += 2;
            }
            out.push(t0.elapsed().as_nanos() as f64 / (2 * round_trips) as f64);
        }
        out
    };
    let responder = |_: &Rendezvous| {
        for k in 0..total {
            let odd = 2 * k + 1;
            match protocol {
                Protocol::LoadStore => {
                    while line.0.load(Ordering::Acquire) != odd {}
                    line.0.store(odd + 1, Ordering::Release);
                }
                Protocol::Cas => while line.0.compare_exchange(odd, odd + 1, Ordering::AcqRel, Ordering::Relaxed).is_err() {},
            }
        }
    };
    on_pair(a, b, initiator, responder)
}

/// One sample of [`contended_add`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contended {
    /// ns per `fetch_add` on the initiator.
    pub ns: f64,
    /// Fraction of the initiator's operations that found the other CPU's
    /// operations in between (the value moved by more than its own add).
    pub handoffs: f64,
}

/// Both CPUs do `ops` `fetch_add`s each on one line, started together;
/// one sample per `samples`, timed on the initiator. On a shared host the
/// other CPU may be descheduled for a whole sample, which then measures
/// the uncontended cost: [`Contended::handoffs`] tells them apart.
pub fn contended_add(a: u32, b: u32, ops: u64, samples: usize) -> Result<Vec<Contended>, CalibrateError> {
    let line = Line::default();
    let hammer = |meet: &Rendezvous, round: u64| {
        meet.meet(round, true);
        let mut last = line.0.load(Ordering::SeqCst);
        let mut handoffs = 0u64;
        let t0 = Instant::now();
        for _ in 0..ops {
            let r = line.0.fetch_add(1, Ordering::SeqCst);
            handoffs += u64::from(r != last);
            last = r + 1;
        }
        Contended {
            ns: t0.elapsed().as_nanos() as f64 / ops as f64,
            handoffs: handoffs as f64 / ops as f64,
        }
    };
    let mut out = Vec::with_capacity(samples);
    let initiator = |meet: &Rendezvous| {
        for s in 0..samples as u64 {
            out.push(hammer(meet, s + 2));
        }
        Vec::new()
    };
    let responder = |meet: &Rendezvous| {
        for s in 0..samples as u64 {
            hammer(meet, s + 2);
        }
    };
    on_pair(a, b, initiator, responder)?;
    Ok(out)
}
