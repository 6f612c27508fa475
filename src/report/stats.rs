//! Summary statistics across replications: mean, sample standard
//! deviation and a 95 % confidence interval from Student's t (statrs).

use crate::runner::RunResult;
use crate::scenario::Scenario;
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::BTreeMap;

/// Mean, spread and 95 % CI of one metric at one point for one variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Point index.
    pub point: usize,
    /// Variant index.
    pub variant: usize,
    /// Metric name.
    pub metric: String,
    /// Sample mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 when n = 1.
    pub stddev: f64,
    /// Lower end of the 95 % CI of the mean.
    pub ci95_lo: f64,
    /// Upper end of the 95 % CI of the mean.
    pub ci95_hi: f64,
    /// Number of replications.
    pub n: usize,
    /// This variant against the first one at the same point, paired by
    /// replication (common random numbers); `None` for the first variant.
    pub paired: Option<Paired>,
}

/// A variant's difference from the first variant, replication by
/// replication: `d_r = x_r - first_r`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// Mean of the paired differences.
    pub diff_mean: f64,
    /// Lower end of the 95 % CI of the mean difference (Student's t, n-1 df).
    pub diff_lo: f64,
    /// Upper end of that CI.
    pub diff_hi: f64,
    /// Ratio of the means, this variant over the first; `None` where it is
    /// not a finite number (the first variant's mean is 0, as for a
    /// `failed_calls` that never fails), so no NaN or inf reaches a table.
    pub ratio: Option<f64>,
}

/// The paired comparison of `xs` against `first` (same length, same
/// replications), or `None` when the lengths differ.
pub fn paired(xs: &[f64], first: &[f64]) -> Option<Paired> {
    if xs.len() != first.len() || xs.is_empty() {
        return None;
    }
    let d: Vec<f64> = xs.iter().zip(first).map(|(a, b)| a - b).collect();
    let (diff_mean, _, half) = mean_ci(&d, 0.95);
    let (m, m0) = (mean_ci(xs, 0.95).0, mean_ci(first, 0.95).0);
    Some(Paired {
        diff_mean,
        diff_lo: diff_mean - half,
        diff_hi: diff_mean + half,
        ratio: Some(m / m0).filter(|r| r.is_finite()),
    })
}

/// Two-sided Student's t quantile for a `level` CI with `n` samples.
pub fn t_quantile(level: f64, n: usize) -> f64 {
    if n < 2 {
        return 0.0;
    }
    StudentsT::new(0.0, 1.0, (n - 1) as f64).map_or(f64::NAN, |t| t.inverse_cdf(0.5 + level / 2.0))
}

/// Welch's unequal-variance t-test of two independent samples given by
/// their means, sample standard deviations and sizes: returns `(t, df,
/// p)` with the two-sided p-value, or `None` when a side has fewer than 2
/// samples or both have no spread (the test is undefined).
pub fn welch(m1: f64, s1: f64, n1: usize, m2: f64, s2: f64, n2: usize) -> Option<(f64, f64, f64)> {
    if n1 < 2 || n2 < 2 {
        return None;
    }
    let (v1, v2) = (s1 * s1 / n1 as f64, s2 * s2 / n2 as f64);
    let se2 = v1 + v2;
    if !(se2.is_finite() && se2 > 0.0) {
        return None;
    }
    let t = (m2 - m1) / se2.sqrt();
    let df = se2 * se2 / (v1 * v1 / (n1 - 1) as f64 + v2 * v2 / (n2 - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = 2.0 * (1.0 - dist.cdf(t.abs()));
    Some((t, df, p.clamp(0.0, 1.0)))
}

/// Welch's test on two samples (see [`welch`]).
pub fn welch_samples(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    let (m1, s1, _) = mean_ci(a, 0.95);
    let (m2, s2, _) = mean_ci(b, 0.95);
    welch(m1, s1, a.len(), m2, s2, b.len())
}

/// The median of `sorted` (ascending): the middle value, or the mean of
/// the middle two for an even count; NaN for none.
pub fn median_sorted(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// [`median_sorted`] of `xs` in any order.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    median_sorted(&v)
}

/// The `p` quantile (0 < p <= 1) of `sorted` (ascending), nearest rank:
/// the value at rank ceil(p n), at least the first; NaN for none.
pub fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    sorted[((p * n as f64).ceil() as usize).clamp(1, n) - 1]
}

/// Mean, sample standard deviation and the half-width of the `level`
/// confidence interval (Student's t) of `xs`.
pub fn mean_ci(xs: &[f64], level: f64) -> (f64, f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, 0.0, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    (mean, sd, t_quantile(level, n) * sd / (n as f64).sqrt())
}

/// Summaries for every (point, variant, metric), in point, variant, metric
/// name order.
pub fn summarise(s: &Scenario, results: &[RunResult]) -> Vec<Summary> {
    let mut groups: BTreeMap<(usize, usize, &str), Vec<f64>> = BTreeMap::new();
    for r in results {
        for (m, &v) in &r.metrics {
            groups.entry((r.plan.point, r.plan.variant, m.as_str())).or_default().push(v);
        }
    }
    let _ = s;
    groups
        .iter()
        .map(|(&(point, variant, metric), xs)| {
            let (mean, stddev, half) = mean_ci(xs, 0.95);
            let first = groups.get(&(point, 0, metric));
            Summary {
                point,
                variant,
                metric: metric.to_string(),
                mean,
                stddev,
                ci95_lo: mean - half,
                ci95_hi: mean + half,
                n: xs.len(),
                paired: if variant == 0 { None } else { first.and_then(|f| paired(xs, f)) },
            }
        })
        .collect()
}

/// The summary of `metric` at `point` for `variant`, if any.
pub fn find<'a>(rows: &'a [Summary], point: usize, variant: usize, metric: &str) -> Option<&'a Summary> {
    rows.iter().find(|r| r.point == point && r.variant == variant && r.metric == metric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_or_the_mean_of_the_middle_two() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
        assert_eq!(median_sorted(&[1.0, 5.0]), 3.0);
    }

    #[test]
    fn t_quantile_matches_tables() {
        // Student's t, 97.5 % quantile: 4 df -> 2.776, 9 df -> 2.262.
        assert!((t_quantile(0.95, 5) - 2.776).abs() < 1e-3);
        assert!((t_quantile(0.95, 10) - 2.262).abs() < 1e-3);
    }

    #[test]
    fn paired_ci_of_known_samples() {
        // Differences 1, 2, 3: mean 2, sd 1, half-width t(2 df) / sqrt(3) = 4.303 / 1.732.
        let p = paired(&[11.0, 22.0, 33.0], &[10.0, 20.0, 30.0]).expect("same length");
        assert_eq!(p.diff_mean, 2.0);
        assert!((p.diff_hi - p.diff_lo - 2.0 * 4.303 / 3f64.sqrt()).abs() < 1e-3);
        assert!(p.ratio.is_some_and(|r| (r - 1.1).abs() < 1e-12));
        assert!(paired(&[1.0], &[1.0, 2.0]).is_none());
    }

    #[test]
    fn ratio_against_a_zero_mean_is_empty_issue33() {
        // 0/0 and 3/0 left no number to print; they used to be NaN and inf.
        for xs in [[0.0, 0.0], [3.0, 3.0]] {
            let p = paired(&xs, &[0.0, 0.0]).expect("same length");
            assert_eq!(p.ratio, None);
            assert_eq!(p.diff_mean, xs[0]);
        }
    }

    #[test]
    fn mean_ci_of_known_sample() {
        let (m, sd, half) = mean_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95);
        assert_eq!(m, 3.0);
        assert!((sd - 2.5f64.sqrt()).abs() < 1e-12);
        assert!((half - 2.776 * sd / 5f64.sqrt()).abs() < 1e-3);
    }
}
