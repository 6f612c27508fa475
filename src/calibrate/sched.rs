//! What waking a thread that sleeps on another, idle CPU costs: the
//! waits of a btrfs unmount's teardown (`close_ctree`, fs/btrfs/
//! disk-io.c) are of this shape, and the lab's `rm -fr` phase ends in
//! them ([`crate::kernel::btrfs::unmount`] counts them).
//!
//! Two measurements, with the calling thread on CPU `a` and the woken
//! one on CPU `b`, both pinned. The samples follow one another as the
//! unmount's waits do: before each the caller runs on for [`GAP`] (a
//! busy wait) while the other thread is asleep and its CPU idle, as the
//! lab's trace of an unmount shows them (session 67: the next
//! workqueue's rescuer woken about 16 us after the last one exited):
//! - a **wake round trip** ([`SchedCost::wake`]): the caller wakes the
//!   sleeper (`unpark`, a futex wake) and sleeps until the sleeper wakes
//!   it back: the shape of `kthread_park`, `synchronize_rcu_expedited`'s
//!   wait for its kthread and `flush_work` on an idle work item;
//! - a **thread stop** ([`SchedCost::thread_stop`]): the caller wakes a
//!   sleeping thread that then returns and exits, and joins it (the
//!   thread's exit wakes the joiner): the shape of `kthread_stop`, which
//!   wakes the kthread and sleeps until its exit completes
//!   (kernel/kthread.c).
//!
//! User-space threads exit through the same `do_exit` as kthreads, with
//! more to release (the robust futex list, the child-tid futex wake); a
//! sample is the wall time of the caller's side, in us.

use super::CalibrateError;
use super::pin::pin_to;
use super::stats::Spread;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How long the caller runs on before each sample, the other thread
/// asleep and its CPU idle.
pub const GAP: Duration = Duration::from_micros(20);

/// Runs on the calling CPU for [`GAP`].
fn busy_gap() {
    let t0 = Instant::now();
    while t0.elapsed() < GAP {
        std::hint::spin_loop();
    }
}

/// The two prices, us.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchedCost {
    /// The calling CPU.
    pub a: u32,
    /// The woken thread's CPU.
    pub b: u32,
    /// Wake round trips, us.
    pub wake: Spread,
    /// Thread stops, us.
    pub thread_stop: Spread,
}

/// Measures both prices, `n` samples each, on CPUs `a` (the caller) and
/// `b` (the woken thread). Runs on the calling thread, which it pins to
/// `a`.
pub fn measure(a: u32, b: u32, n: usize) -> Result<SchedCost, CalibrateError> {
    pin_to(a)?;
    let spread = |v: Vec<f64>, what: &str| Spread::of(&v).ok_or_else(|| CalibrateError::Unsupported(format!("{what}: no sample")));
    Ok(SchedCost {
        a,
        b,
        wake: spread(wake_round_trips(b, n)?, "wake round trip")?,
        thread_stop: spread(thread_stops(b, n)?, "thread stop")?,
    })
}

/// `n` wake round trips with a partner thread on CPU `b`, us each.
fn wake_round_trips(b: u32, n: usize) -> Result<Vec<f64>, CalibrateError> {
    let caller = thread::current();
    let turn = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let partner = {
        let (turn, stop) = (Arc::clone(&turn), Arc::clone(&stop));
        thread::spawn(move || -> Result<(), CalibrateError> {
            pin_to(b)?;
            loop {
                // Woken by the caller with `turn` set: wake it back.
                while !turn.swap(false, Ordering::AcqRel) {
                    if stop.load(Ordering::Acquire) {
                        return Ok(());
                    }
                    thread::park();
                }
                if stop.load(Ordering::Acquire) {
                    return Ok(());
                }
                caller.unpark();
            }
        })
    };
    let mut samples = Vec::with_capacity(n);
    // One round trip first, unrecorded: the partner pinned and asleep.
    for i in 0..=n {
        busy_gap();
        let t0 = Instant::now();
        turn.store(true, Ordering::Release);
        partner.thread().unpark();
        // The turn was taken when `turn` is false again; a token left by
        // the last turn's unpark only adds a check.
        while turn.load(Ordering::Acquire) {
            thread::park();
        }
        if i > 0 {
            samples.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    stop.store(true, Ordering::Release);
    partner.thread().unpark();
    let joined = partner
        .join()
        .map_err(|_| CalibrateError::Unsupported("the wake partner thread panicked".into()))?;
    joined?;
    Ok(samples)
}

/// `n` thread stops on CPU `b`, us each.
fn thread_stops(b: u32, n: usize) -> Result<Vec<f64>, CalibrateError> {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let go = Arc::new(AtomicBool::new(false));
        let asleep = Arc::new(AtomicBool::new(false));
        let t = {
            let (go, asleep) = (Arc::clone(&go), Arc::clone(&asleep));
            thread::spawn(move || -> Result<(), CalibrateError> {
                pin_to(b)?;
                asleep.store(true, Ordering::Release);
                while !go.load(Ordering::Acquire) {
                    thread::park();
                }
                Ok(())
            })
        };
        while !asleep.load(Ordering::Acquire) && !t.is_finished() {
            std::hint::spin_loop();
        }
        busy_gap();
        let t0 = Instant::now();
        go.store(true, Ordering::Release);
        t.thread().unpark();
        let joined = t
            .join()
            .map_err(|_| CalibrateError::Unsupported("a stopped thread panicked".into()))?;
        let us = t0.elapsed().as_secs_f64() * 1e6;
        joined?;
        samples.push(us);
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sample_is_a_positive_finite_time_and_a_stop_waits_for_the_exit() {
        let cpus = crate::calibrate::allowed_cpus().unwrap();
        // One allowed CPU: both threads on it (the measurement still runs).
        let (a, b) = (cpus[0], *cpus.get(1).unwrap_or(&cpus[0]));
        let c = measure(a, b, 5).unwrap();
        for s in [c.wake, c.thread_stop] {
            assert_eq!(s.n, 5);
            assert!(s.p10.is_finite() && s.p10 > 0.0 && s.p90 < 1e6, "{s:?}");
        }
    }
}
