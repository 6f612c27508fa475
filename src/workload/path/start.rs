//! `[start] threads`: when each thread starts its first operation.
//!
//! A thread whose operations all take fixed times keeps its phase (where
//! in its operation it is at a given time) for the whole run: two threads
//! started together run in lockstep, each of their shared accesses finding
//! the other's write just made, and every line they share moves at each of
//! its accesses. Real threads are never in phase: a barrier's wake-ups
//! come microseconds apart, and every operation's time varies a little, so
//! their phases are spread. With random durations (an `exp` work step) the
//! phases spread by themselves and the start is soon forgotten; with fixed
//! ones the start decides. Issue 30 (session 60): on the lab's XFS create
//! twin, two threads started together moved `lab_task`'s line 4.5 times
//! per create; started 5 or 13 us apart (a create is about 13 us), once,
//! with rates within 0.7% of each other from either offset.

use super::config::{StartRule, StartSection};
use super::sim::Step;
use crate::engine::time::SimTimePs;

/// The rule a path's threads start by: `[start] threads` when written,
/// else [`StartRule::Staggered`] when every work step of the threads' path
/// has a fixed duration and [`StartRule::Together`] otherwise.
pub fn rule(section: Option<&StartSection>, path: &[Step]) -> StartRule {
    match section.and_then(|s| s.threads) {
        Some(r) => r,
        None if all_fixed(path) => StartRule::Staggered,
        None => StartRule::Together,
    }
}

/// True when every work step of `path` draws a fixed duration (a path
/// without work steps counts as fixed: nothing in it varies either).
fn all_fixed(path: &[Step]) -> bool {
    path.iter().all(|s| match s {
        Step::Work { dur, .. } => dur.is_fixed(),
        Step::Keyed { steps, .. } => all_fixed(steps),
        _ => true,
    })
}

/// The mean work of one operation of `path` in ps: each work step's mean
/// duration, a step run every `every[i]`-th operation counting 1/every
/// (the accesses' costs are not counted: they follow from the run).
pub fn mean_work_ps(path: &[Step], every: &[u32]) -> f64 {
    path.iter()
        .enumerate()
        .map(|(i, s)| {
            let e = f64::from(every.get(i).copied().unwrap_or(1).max(1));
            work_ns(s) * 1000.0 / e
        })
        .sum()
}

/// A step's mean work in ns (a keyed step's first instance: its instances
/// are the same work on different objects).
fn work_ns(s: &Step) -> f64 {
    match s {
        Step::Work { dur, .. } => dur.mean_ns(),
        Step::Keyed { steps, .. } => steps.first().map_or(0.0, work_ns),
        _ => 0.0,
    }
}

/// When each of `threads` threads starts: all at 0 ([`StartRule::Together`]),
/// or thread `t` at `t / threads` of the mean work of an operation
/// ([`StartRule::Staggered`], rounded down to the ps).
pub fn offsets(rule: StartRule, threads: usize, mean_work_ps: f64) -> Vec<SimTimePs> {
    (0..threads)
        .map(|t| match rule {
            StartRule::Together => SimTimePs::ZERO,
            StartRule::Staggered => SimTimePs((mean_work_ps * t as f64 / threads as f64) as u64),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::dist::{Duration, ExpDuration};

    fn work(d: Duration) -> Step {
        Step::Work { dur: d, reads: None }
    }

    #[test]
    fn fixed_work_staggers_and_random_work_starts_together_unless_written() {
        let fixed = vec![work(Duration::Fixed(SimTimePs(1000))), Step::Lock(0), Step::Unlock(0)];
        let random = vec![work(Duration::Exp(ExpDuration::from_mean_ns(1.0).unwrap())), Step::Lock(0)];
        assert_eq!(rule(None, &fixed), StartRule::Staggered);
        assert_eq!(rule(None, &random), StartRule::Together);
        let written = StartSection {
            threads: Some(StartRule::Together),
        };
        assert_eq!(rule(Some(&written), &fixed), StartRule::Together);
        let empty = StartSection { threads: None };
        assert_eq!(rule(Some(&empty), &random), StartRule::Together);
    }

    #[test]
    fn staggered_threads_spread_over_one_operations_work() {
        let path = vec![
            work(Duration::Fixed(SimTimePs(8_000))),
            Step::Lock(0),
            work(Duration::Fixed(SimTimePs(64_000))),
        ];
        // The second work runs every 64th operation: 8 + 1 ns a operation.
        let mean = mean_work_ps(&path, &[1, 1, 64]);
        assert_eq!(mean, 9_000.0);
        let at: Vec<u64> = offsets(StartRule::Staggered, 3, mean).iter().map(|t| t.0).collect();
        assert_eq!(at, vec![0, 3_000, 6_000]);
        assert!(offsets(StartRule::Together, 3, mean).iter().all(|t| *t == SimTimePs::ZERO));
    }
}
