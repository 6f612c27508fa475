//! How the benchmarks measure: the calling thread's CPU time, the
//! bare-heap reference loop ([`mm1n`]) the engine is compared with in the
//! same process (`cargo bench --bench mm1n`, `fsmeta bench`), and case 2's
//! access pattern for the cache model alone ([`cache_pattern`]).
//!
//! CPU time rather than wall time: on a shared machine wall time mostly
//! measures the other processes. Only the calling thread is seen, so what
//! is timed must run on it (a run through `runner::run_one`, not a pool).

pub mod cache_pattern;
pub mod mm1n;

use std::time::{Duration, Instant};

/// CPU time of the calling thread in ns (POSIX `clock_gettime` with
/// `CLOCK_THREAD_CPUTIME_ID`, exact to the ns; Linux's
/// `/proc/thread-self/schedstat` moves only at scheduler ticks), or `None`
/// where there is none.
#[cfg(unix)]
pub fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec that outlives the call,
    // which writes only it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    let (secs, ns) = (u64::try_from(ts.tv_sec).ok()?, u64::try_from(ts.tv_nsec).ok()?);
    (rc == 0).then(|| secs * 1_000_000_000 + ns)
}

/// CPU time of the calling thread: none on this platform.
#[cfg(not(unix))]
pub fn thread_cpu_ns() -> Option<u64> {
    None
}

/// Runs `f` `iters` times and returns the calling thread's CPU time for
/// them (wall time where there is no CPU time).
pub fn timed<T>(iters: u64, mut f: impl FnMut() -> T) -> Duration {
    let (cpu, wall) = (thread_cpu_ns(), Instant::now());
    for _ in 0..iters {
        std::hint::black_box(f());
    }
    match (cpu, thread_cpu_ns()) {
        (Some(a), Some(b)) => Duration::from_nanos(b.saturating_sub(a)),
        _ => wall.elapsed(),
    }
}

/// The median of `xs` (the mean of the middle two for an even count; 0
/// for none).
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() { 0.0 } else { crate::report::stats::median(xs) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn timed_counts_the_work_of_this_thread() {
        // A million hash steps take well over a microsecond of CPU time
        // (a coarse clock, ticking every few ms, reads zero here).
        let n = std::hint::black_box(1_000_000u64);
        let d = timed(1, || {
            (0..n).fold(1u64, |h, x| std::hint::black_box(h.wrapping_mul(31).wrapping_add(x)))
        });
        assert!(d > Duration::from_micros(1), "{d:?}");
    }
}
