//! Simulated time: an integer count of picoseconds.

use std::fmt;

/// A point in simulated time, or a duration, in picoseconds.
///
/// Integer so that event order never depends on floating-point rounding.
/// `u64` picoseconds cover about 213 days of simulated time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTimePs(pub u64);

impl SimTimePs {
    /// Time zero, the start of every run.
    pub const ZERO: SimTimePs = SimTimePs(0);

    /// Converts a duration in nanoseconds to picoseconds.
    ///
    /// Rounding rule (the only `f64 -> time` conversion in the crate):
    /// round to the nearest picosecond, halves away from zero; negative,
    /// NaN and infinite inputs become zero, values beyond `u64::MAX` saturate.
    pub fn from_ns_f64(ns: f64) -> SimTimePs {
        let ps = (ns * 1000.0).round();
        if ps.is_nan() || ps <= 0.0 {
            SimTimePs(0)
        } else if ps >= u64::MAX as f64 {
            SimTimePs(u64::MAX)
        } else {
            SimTimePs(ps as u64)
        }
    }

    /// This time in nanoseconds, as `f64`, for reporting only.
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// This time in seconds, as `f64`, for reporting only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }

    /// Sum of two times, saturating at the largest representable time.
    #[inline]
    pub fn saturating_add(self, d: SimTimePs) -> SimTimePs {
        SimTimePs(self.0.saturating_add(d.0))
    }

    /// `self - earlier`, or zero if `earlier` is later.
    #[inline]
    pub fn since(self, earlier: SimTimePs) -> SimTimePs {
        SimTimePs(self.0.saturating_sub(earlier.0))
    }
}

impl fmt::Display for SimTimePs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ps", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns_conversion_rounds_to_nearest_ps() {
        assert_eq!(SimTimePs::from_ns_f64(1.0), SimTimePs(1000));
        assert_eq!(SimTimePs::from_ns_f64(0.0004), SimTimePs(0));
        assert_eq!(SimTimePs::from_ns_f64(0.0005), SimTimePs(1));
        assert_eq!(SimTimePs::from_ns_f64(-3.0), SimTimePs(0));
        assert_eq!(SimTimePs::from_ns_f64(f64::NAN), SimTimePs(0));
        assert_eq!(SimTimePs::from_ns_f64(f64::INFINITY), SimTimePs(u64::MAX));
    }
}
