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
    factor_words(up, dir)
}

/// Like [`words`], knowing the 95% CI `[lo, hi]` of the paired difference
/// `after - before` (`None` when there is none, e.g. one replication): a
/// change under 0.5% is "same" only when that CI includes zero (or the
/// means are equal); otherwise it is said as a percentage, `0.2% slower`.
pub fn words_ci(before: f64, after: f64, unit: &str, ci: Option<(f64, f64)>) -> String {
    let plain = words(before, after, unit);
    if plain != "same" || after == before || ci.is_some_and(|(lo, hi)| lo <= 0.0 && 0.0 <= hi) {
        return plain;
    }
    let up = after / before;
    let word = match direction(unit) {
        Direction::Amount if up > 1.0 => "more",
        Direction::Amount => "fewer",
        Direction::Rate if up > 1.0 => "faster",
        Direction::Time if up < 1.0 => "faster",
        _ => "slower",
    };
    let pct = ((up - 1.0) * 100.0).abs();
    let text = if pct >= 0.095 { format!("{pct:.1}%") } else { format!("{pct:.2}%") };
    format!("{text} {word}")
}

/// A ratio `up` = after / before in words, in the metric's direction.
fn factor_words(up: f64, dir: Direction) -> String {
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
    fn a_small_change_is_same_only_when_its_ci_includes_zero() {
        assert_eq!(words_ci(100.0, 100.2, "ops/s", Some((-0.1, 0.5))), "same");
        assert_eq!(words_ci(100.0, 100.2, "ops/s", Some((0.1, 0.3))), "0.2% faster");
        // The per-CPU case: -454 [-458, -450] ops/s on about 1.1M.
        assert_eq!(words_ci(1_100_000.0, 1_099_546.0, "ops/s", Some((-458.0, -450.0))), "0.04% slower");
        assert_eq!(words_ci(100.0, 100.3, "ns", Some((0.2, 0.4))), "0.3% slower");
        assert_eq!(words_ci(100.0, 99.7, "ns", None), "0.3% faster");
        assert_eq!(words_ci(100.0, 100.1, "count", Some((0.05, 0.15))), "0.1% more");
        assert_eq!(words_ci(100.0, 100.0, "count", None), "same");
        assert_eq!(words_ci(100.0, 150.0, "ops/s", Some((40.0, 60.0))), "1.50x faster");
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
