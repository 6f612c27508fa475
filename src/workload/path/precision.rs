//! Precision-targeted stop: the run ends when the 95 % confidence interval
//! of its throughput is narrow enough, instead of after a fixed number of
//! operations.
//!
//! Method (batch means with a warm-up cut):
//! - completions are grouped into batches of `m` operations; a batch's
//!   value is its simulated duration divided by `m` (time per operation);
//!   `m` starts at [`BASE_BATCH_OPS`] and doubles (adjacent batches merged)
//!   whenever [`MAX_BATCHES`] batches exist, so batches grow with the run
//!   and their correlation falls;
//! - warm-up cut: MSER (White, 1997) on the batch series, the truncation
//!   `d` (at most half the batches) that minimises the squared standard
//!   error of the remaining batches, `sum (y_i - mean)^2 / (k - d)^2`; with
//!   base batches of 64 operations this is MSER-5 with a coarser unit;
//! - after each new batch (once [`MIN_KEPT`] batches survive the cut), the
//!   95 % Student-t half-width of the kept batches' mean, relative to the
//!   mean, is compared with the target; the run stops when it is below, or
//!   at `max_ops`.
//!
//! The throughput estimate is `1 / mean` (operations after the cut over
//! their time); its relative half-width is the mean's (first order). Every
//! decision depends only on the run's own completions, so the same seed
//! stops at the same operation for any `--jobs`.

use crate::engine::time::SimTimePs;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Operations in a batch before any doubling.
pub const BASE_BATCH_OPS: u64 = 128;
/// Batches kept before adjacent ones are merged (then half as many, twice
/// as long).
pub const MAX_BATCHES: usize = 128;
/// Fewest batches after the warm-up cut for a stop decision.
pub const MIN_KEPT: usize = 30;

/// The precision target of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// Relative 95 % half-width to reach, as a fraction (0.005 = 0.5 %).
    pub half_width: f64,
}

/// The estimate at some point of the run.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Estimate {
    /// Operations per second after the warm-up cut.
    pub ops_per_sec: f64,
    /// 95 % half-width relative to the estimate, as a fraction (infinite
    /// when there are too few batches).
    pub half_width: f64,
    /// Operations cut as warm-up.
    pub warmup_ops: u64,
    /// Batches after the cut.
    pub batches: u64,
    /// Operations per batch.
    pub batch_ops: u64,
}

/// Batch-means bookkeeping of one run.
#[derive(Debug, Clone)]
pub struct BatchMeans {
    target: Target,
    batch_ops: u64,
    in_batch: u64,
    batch_start: SimTimePs,
    /// Durations of the complete batches, ps.
    batches: Vec<u64>,
}

impl BatchMeans {
    /// Empty bookkeeping for `target`.
    pub fn new(target: Target) -> Self {
        BatchMeans {
            target,
            batch_ops: BASE_BATCH_OPS,
            in_batch: 0,
            batch_start: SimTimePs::ZERO,
            batches: Vec::with_capacity(MAX_BATCHES),
        }
    }

    /// Records one completion at `now`; true when the target is reached.
    pub fn record(&mut self, now: SimTimePs) -> bool {
        self.in_batch += 1;
        if self.in_batch < self.batch_ops {
            return false;
        }
        self.batches.push(now.0 - self.batch_start.0);
        self.batch_start = now;
        self.in_batch = 0;
        if self.batches.len() == MAX_BATCHES {
            self.batches = self.batches.chunks(2).map(|c| c.iter().sum()).collect();
            self.batch_ops *= 2;
        }
        self.estimate().half_width <= self.target.half_width
    }

    /// The estimate from the complete batches so far.
    pub fn estimate(&self) -> Estimate {
        let y: Vec<f64> = self.batches.iter().map(|&d| d as f64 / self.batch_ops as f64).collect();
        let d = mser_cut(&y);
        let kept = &y[d..];
        let k = kept.len();
        let mut e = Estimate {
            half_width: f64::INFINITY,
            warmup_ops: d as u64 * self.batch_ops,
            batches: k as u64,
            batch_ops: self.batch_ops,
            ops_per_sec: 0.0,
        };
        if k == 0 {
            return e;
        }
        let mean = kept.iter().sum::<f64>() / k as f64;
        if mean > 0.0 {
            e.ops_per_sec = 1e12 / mean;
        }
        if k < MIN_KEPT || mean <= 0.0 {
            return e;
        }
        let var = kept.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
        let t = StudentsT::new(0.0, 1.0, (k - 1) as f64).map_or(f64::INFINITY, |t| t.inverse_cdf(0.975));
        e.half_width = t * (var / k as f64).sqrt() / mean;
        e
    }
}

/// MSER truncation point of `y`: the `d` in `0..=len/2` minimising
/// `sum_{i>=d} (y_i - mean_d)^2 / (len - d)^2` (first minimum on ties).
pub fn mser_cut(y: &[f64]) -> usize {
    let n = y.len();
    if n < 2 {
        return 0;
    }
    // Suffix sums of y and y^2.
    let (mut s, mut s2) = (0.0, 0.0);
    let mut best = (f64::INFINITY, 0);
    let mut stats = vec![(0.0, 0.0); n + 1];
    for i in (0..n).rev() {
        s += y[i];
        s2 += y[i] * y[i];
        stats[i] = (s, s2);
    }
    for (d, &(s, s2)) in stats.iter().enumerate().take(n / 2 + 1) {
        let m = (n - d) as f64;
        let ss = (s2 - s * s / m).max(0.0);
        let score = ss / (m * m);
        if score < best.0 {
            best = (score, d);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mser_cuts_a_transient_and_keeps_a_flat_series() {
        let flat: Vec<f64> = (0..40).map(|i| 10.0 + f64::from(i % 2)).collect();
        assert_eq!(mser_cut(&flat), 0);
        let mut warm: Vec<f64> = vec![100.0, 60.0, 30.0];
        warm.extend(flat.iter());
        assert_eq!(mser_cut(&warm), 3);
    }

    #[test]
    fn batches_merge_at_the_cap_and_keep_the_total_time() {
        let mut b = BatchMeans::new(Target { half_width: -1.0 });
        for i in 1..=(BASE_BATCH_OPS * MAX_BATCHES as u64) {
            assert!(!b.record(SimTimePs(i * 1000)));
        }
        assert_eq!(b.batches.len(), MAX_BATCHES / 2);
        assert_eq!(b.batch_ops, 2 * BASE_BATCH_OPS);
        assert_eq!(b.batches.iter().sum::<u64>(), BASE_BATCH_OPS * MAX_BATCHES as u64 * 1000);
        // Constant spacing: every batch equal, zero width, 1e9 ops/s.
        let e = b.estimate();
        assert_eq!(e.half_width, 0.0);
        assert!((e.ops_per_sec - 1e9).abs() < 1e-3);
    }
}
