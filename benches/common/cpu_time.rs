//! Thread CPU time for the benchmarks: on a shared machine it measures the
//! benchmark's own work, where wall time would include other processes.

use std::time::{Duration, Instant};

/// CPU time of this thread, ns (Linux `/proc/thread-self/schedstat`), else `None`.
pub fn thread_cpu_ns() -> Option<u64> {
    let t = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    t.split_whitespace().next()?.parse().ok()
}

/// Runs `f` `iters` times; its thread CPU time (or wall time where there is none).
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
