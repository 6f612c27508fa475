//! Speed-ups in words: "813x faster", "1.05x slower", from the ratio of
//! two means and the direction the metric's unit implies.

/// Which way a metric improves, decided from its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// A rate (`ops/s`, `1/s`): higher is faster.
    Rate,
    /// A time (`ns`, `us`, `ms`, `s`): lower is faster.
    Time,
    /// Anything else (a count, bytes, a fraction): "more" or "fewer".
    Amount,
}

/// The direction of a metric with unit `unit` (as in
/// [`crate::workload::MetricSpec::unit`]).
pub fn direction(unit: &str) -> Direction {
    let u = unit.trim();
    if u.ends_with("/s") || u.ends_with("per second") {
        Direction::Rate
    } else if matches!(u, "ns" | "us" | "µs" | "ms" | "s" | "ps") {
        Direction::Time
    } else {
        Direction::Amount
    }
}

/// A ratio as text: two decimals below 10, one below 100, none above
/// (`1.02x`, `12.3x`, `813x`).
pub fn times(r: f64) -> String {
    if r >= 99.95 {
        format!("{r:.0}x")
    } else if r >= 9.995 {
        format!("{r:.1}x")
    } else {
        format!("{r:.2}x")
    }
}

/// `after` against `before` in words: `813x faster`, `1.05x slower`,
/// `2.00x fewer`, `same`, or `-` when the ratio is undefined (a zero,
/// negative or non-finite mean).
pub fn words(before: f64, after: f64, unit: &str) -> String {
    if !(before.is_finite() && after.is_finite()) || before <= 0.0 || after < 0.0 {
        return "-".into();
    }
    let dir = direction(unit);
    if after == 0.0 {
        return match dir {
            Direction::Amount => "none".into(),
            _ => "-".into(),
        };
    }
    let up = after / before;
    if (up - 1.0).abs() < 0.005 {
        return "same".into();
    }
    // `better` is the factor in the metric's good direction.
    let (factor, good, bad) = match dir {
        Direction::Rate => (up, "faster", "slower"),
        Direction::Time => (1.0 / up, "faster", "slower"),
        Direction::Amount => (up, "more", "fewer"),
    };
    if factor >= 1.0 {
        format!("{} {good}", times(factor))
    } else {
        format!("{} {bad}", times(1.0 / factor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_times_read_the_right_way() {
        assert_eq!(words(100.0, 150.0, "ops/s"), "1.50x faster");
        assert_eq!(words(150.0, 100.0, "ops/s"), "1.50x slower");
        assert_eq!(words(15_597.94, 19.176, "us"), "813x faster");
        assert_eq!(words(19.176, 15_597.94, "us"), "813x slower");
        assert_eq!(words(1001.0, 509.0, "count"), "1.97x fewer");
        assert_eq!(words(10.0, 123.0, "count"), "12.3x more");
        assert_eq!(words(100.0, 100.2, "ops/s"), "same");
        assert_eq!(words(0.0, 1.0, "ns"), "-");
        assert_eq!(words(f64::NAN, 1.0, "ns"), "-");
    }

    #[test]
    fn units_decide_direction() {
        assert_eq!(direction("ops/s"), Direction::Rate);
        assert_eq!(direction("1/s"), Direction::Rate);
        assert_eq!(direction("ns"), Direction::Time);
        assert_eq!(direction("us"), Direction::Time);
        assert_eq!(direction("count"), Direction::Amount);
        assert_eq!(direction("fraction"), Direction::Amount);
    }
}
