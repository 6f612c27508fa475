//! Simulated time: an integer count of picoseconds.

use std::fmt;

/// A point in simulated time, or a duration, in picoseconds.
///
/// Integer so that event order never depends on floating-point rounding.
/// `u64` picoseconds cover about 213 days of simulated time. The largest
/// value, [`SimTimePs::MAX`], is reserved to mean "out of range": the
/// saturating operations return it for a result that does not fit, and
/// the checked ones ([`SimTimePs::checked_add`],
/// [`SimTimePs::try_from_ns_f64`]) never return it, so a model or the
/// interpreter can turn it into an error instead of a time that silently
/// stopped moving.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTimePs(pub u64);

impl SimTimePs {
    /// Time zero, the start of every run.
    pub const ZERO: SimTimePs = SimTimePs(0);

    /// `u64::MAX` ps: "out of range", never a valid time (see the type).
    /// No `f64` rounds to it (the largest `f64` below 2^64 is 2^64 - 2048),
    /// so [`SimTimePs::from_ns_f64`] returns it only when it saturates.
    pub const MAX: SimTimePs = SimTimePs(u64::MAX);

    /// Converts a duration in nanoseconds to picoseconds.
    ///
    /// Rounding rule (the only `f64 -> time` conversion in the crate):
    /// round to the nearest picosecond, halves away from zero; negative
    /// and NaN inputs become zero; values of 2^64 ps or more (and +inf)
    /// saturate to [`SimTimePs::MAX`], the "out of range" value, which the
    /// interpreter refuses. Use [`SimTimePs::try_from_ns_f64`] to get an
    /// error instead.
    #[inline]
    pub fn from_ns_f64(ns: f64) -> SimTimePs {
        SimTimePs::from_ps_f64(ns * 1000.0)
    }

    /// Converts a duration in picoseconds to a time, rounded and saturated
    /// as [`SimTimePs::from_ns_f64`] says.
    #[inline]
    pub fn from_ps_f64(ps: f64) -> SimTimePs {
        const TWO_52: f64 = 4_503_599_627_370_496.0;
        // The usual case first, in two comparisons (false for NaN): the
        // same value `round_half_away` gives below 2^52.
        if (0.5..TWO_52).contains(&ps) {
            return SimTimePs((ps + 0.5) as i64 as u64);
        }
        if ps.is_nan() || ps < 0.5 {
            SimTimePs(0)
        } else if ps >= u64::MAX as f64 {
            SimTimePs(u64::MAX)
        } else {
            SimTimePs(round_half_away(ps))
        }
    }

    /// Converts a duration in nanoseconds to picoseconds, rounded as
    /// [`SimTimePs::from_ns_f64`] does, or fails when it is NaN or does not
    /// fit below [`SimTimePs::MAX`] (about 1.8e10 ms, 213 days). Negative
    /// values become zero, as there.
    pub fn try_from_ns_f64(ns: f64) -> Result<SimTimePs, TimeOverflow> {
        let t = SimTimePs::from_ns_f64(ns);
        if ns.is_nan() || t == SimTimePs::MAX {
            return Err(TimeOverflow { ns });
        }
        Ok(t)
    }

    /// True for [`SimTimePs::MAX`], the "out of range" value.
    #[inline]
    pub fn is_out_of_range(self) -> bool {
        self == SimTimePs::MAX
    }

    /// `self + d`, or `None` when the sum would reach [`SimTimePs::MAX`].
    #[inline]
    pub fn checked_add(self, d: SimTimePs) -> Option<SimTimePs> {
        match self.0.checked_add(d.0) {
            Some(t) if t != u64::MAX => Some(SimTimePs(t)),
            _ => None,
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

    /// Sum of two times, saturating at [`SimTimePs::MAX`] ("out of range";
    /// see [`SimTimePs::checked_add`] for the checked sum).
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

/// `x.round() as u64` for `0.5 <= x < 2^64`, without the libm call
/// `round` compiles to on baseline x86-64 (it sits on the hot path of every
/// sampled work step). Exact: below 2^52 the spacing of `f64` values is at
/// most 0.5, so `x + 0.5` is computed exactly unless it crosses a power of
/// two, where it rounds to that power (the right answer) and never past
/// it; truncation is then the floor. At 2^52 and above `x` is already an
/// integer.
#[inline]
fn round_half_away(x: f64) -> u64 {
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    if x >= TWO_52 {
        return x as u64; // already an integer
    }
    // Through i64: a signed conversion is one instruction on x86-64, an
    // unsigned one a dozen.
    (x + 0.5) as i64 as u64
}

/// A duration in ns that has no [`SimTimePs`] value: NaN, or at least
/// 2^64 ps (about 1.8e16 ns, 213 days of simulated time).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("{ns} ns is beyond the simulated clock's range (at most about 1.8e16 ns, 213 days)")]
pub struct TimeOverflow {
    /// The duration asked for, ns.
    pub ns: f64,
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

    #[test]
    fn the_inlined_rounding_matches_f64_round() {
        let edge = [
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            1e15 + 0.5,
            4503599627370495.5,
            4503599627370495.0,
            2_251_799_813_685_248.0 - 0.25, // 2^51 - 1/4, exact
            2251799813685247.5,
            2.4999999999999996,
            0.5000000000000001,
            4503599627370497.0,
            9007199254740993.0,
            9.2e18,
            9.3e18,
            1.8e19,
        ];
        for x in edge {
            assert_eq!(SimTimePs::from_ns_f64(x / 1000.0).0, (x / 1000.0 * 1000.0).round() as u64, "{x}");
        }
    }

    proptest::proptest! {
        #[test]
        fn from_ns_f64_rounds_like_f64_round(ns in 0.0f64..1e16, bits in proptest::num::u64::ANY) {
            for v in [ns, f64::from_bits(bits)] {
                let ps = v * 1000.0;
                let want = if ps.is_nan() || ps.round() <= 0.0 { 0 } else if ps.round() >= u64::MAX as f64 { u64::MAX } else { ps.round() as u64 };
                proptest::prop_assert_eq!(SimTimePs::from_ns_f64(v).0, want, "{}", v);
            }
        }
    }

    #[test]
    fn out_of_range_times_are_errors_not_saturated_values() {
        assert_eq!(SimTimePs::try_from_ns_f64(1.0), Ok(SimTimePs(1000)));
        assert_eq!(SimTimePs::try_from_ns_f64(-1.0), Ok(SimTimePs::ZERO));
        assert!(SimTimePs::try_from_ns_f64(1e300).is_err());
        assert!(SimTimePs::try_from_ns_f64(f64::INFINITY).is_err());
        assert!(SimTimePs::try_from_ns_f64(f64::NAN).is_err());
        // 1.85e10 ms, the fuzzer's stop time, saturates the lenient conversion.
        assert!(SimTimePs::from_ns_f64(1.85e16).is_out_of_range());
        assert!(SimTimePs::try_from_ns_f64(1.8e16).is_ok());
        assert_eq!(SimTimePs(5).checked_add(SimTimePs(7)), Some(SimTimePs(12)));
        assert_eq!(SimTimePs(u64::MAX - 1).checked_add(SimTimePs(1)), None);
        assert_eq!(SimTimePs(u64::MAX - 1).checked_add(SimTimePs(u64::MAX)), None);
        assert_eq!(SimTimePs(u64::MAX - 2).checked_add(SimTimePs(1)), Some(SimTimePs(u64::MAX - 1)));
    }
}
