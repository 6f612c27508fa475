//! Median and spread of repeated measurements.

/// The median of repeated samples and their spread (10th to 90th
/// percentile, nearest rank), in the samples' unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Median (for an even count, the mean of the two middle samples).
    pub median: f64,
    /// 10th percentile, nearest rank.
    pub p10: f64,
    /// 90th percentile, nearest rank.
    pub p90: f64,
    /// Number of samples.
    pub n: usize,
}

impl Spread {
    /// Summarises `samples` (NaNs are dropped); `None` when none is left.
    pub fn of(samples: &[f64]) -> Option<Spread> {
        let mut s: Vec<f64> = samples.iter().copied().filter(|x| !x.is_nan()).collect();
        if s.is_empty() {
            return None;
        }
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = crate::report::stats::median_sorted(&s);
        let rank = |p: f64| crate::report::stats::nearest_rank(&s, p);
        Some(Spread {
            median,
            p10: rank(0.1),
            p90: rank(0.9),
            n,
        })
    }

    /// `median (p10-p90 a-b, n samples)` with `digits` decimals.
    pub fn show(&self, digits: usize) -> String {
        format!(
            "{:.d$} (p10-p90 {:.d$}-{:.d$}, {} samples)",
            self.median,
            self.p10,
            self.p90,
            self.n,
            d = digits
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Spread;

    #[test]
    fn median_and_nearest_rank_percentiles() {
        let xs: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        let s = Spread::of(&xs).unwrap();
        assert_eq!((s.median, s.p10, s.p90, s.n), (5.5, 1.0, 9.0, 10));
        let s = Spread::of(&[3.0, f64::NAN, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.p10, s.p90, s.n), (2.0, 1.0, 3.0, 3));
        assert!(Spread::of(&[f64::NAN]).is_none());
    }
}
