//! Measuring a line transfer leaves the caller free to run on every CPU
//! it could before: `fsmeta lab` measures it before its runs, and the
//! threads and processes it starts after inherit its CPU mask.

use fsmeta::calibrate::allowed_cpus;
use fsmeta::calibrate::transfer::{Protocol, ping_pong};

#[test]
fn a_ping_pong_leaves_the_callers_cpu_mask_as_it_was() {
    let before = allowed_cpus().expect("sched_getaffinity");
    let (a, b) = (before[0], *before.last().expect("a CPU"));
    // On a one-CPU host the pair is one CPU and the ping-pong may fail; the
    // mask must be the same either way.
    let samples = ping_pong(a, b, Protocol::Cas, 100, 2);
    let after = allowed_cpus().expect("sched_getaffinity");
    assert_eq!(after, before, "the caller's mask changed (samples {samples:?})");
    if before.len() > 1 {
        assert_eq!(samples.expect("two CPUs").len(), 2);
    }
}
