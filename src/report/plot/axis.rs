//! Axis ranges, tick positions and tick labels.
//!
//! Plots are drawn on plain linear `f64` coordinates. A logarithmic axis is
//! drawn in `log10` space: data values are mapped with [`to_coord`] and the
//! ticks carry labels of the original values. Every tick is computed here
//! (not by plotters) so that positions and labels are exact and deterministic.

/// Largest magnitude plotted on a linear axis; larger values are skipped so
/// that range arithmetic never overflows.
const LINEAR_MAX: f64 = 1e300;

/// Largest `|log10(v)|` plotted on a log axis.
const LOG_EXP_MAX: f64 = 300.0;

/// Fraction of the data span added on each side of a non-degenerate range.
const PAD_FRACTION: f64 = 0.04;

/// Number of tick intervals a linear axis aims for.
const TARGET_TICKS: f64 = 8.0;

/// One axis as drawn: the coordinate range and the labelled ticks inside it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    /// Lower end of the axis in plot coordinates.
    pub lo: f64,
    /// Upper end of the axis in plot coordinates.
    pub hi: f64,
    /// Ticks as `(coordinate, label)`, ascending.
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// The label of the tick nearest to coordinate `c` (plotters asks for
    /// labels by coordinate; it only ever asks for our own tick positions).
    pub(crate) fn label_at(&self, c: f64) -> String {
        self.ticks
            .iter()
            .min_by(|a, b| (a.0 - c).abs().total_cmp(&(b.0 - c).abs()))
            .map(|t| t.1.clone())
            .unwrap_or_default()
    }

    /// The tick coordinates alone.
    pub(crate) fn tick_coords(&self) -> Vec<f64> {
        self.ticks.iter().map(|t| t.0).collect()
    }
}

impl plotters::coord::ranged1d::Ranged for Axis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    /// Linear map of coordinate `value` onto the pixel interval `limit`,
    /// rounded to the nearest pixel (saturating; NaN maps to `limit.0`).
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        let frac = if span > 0.0 { (value - self.lo) / span } else { 0.0 };
        let px = f64::from(limit.0) + frac * f64::from(limit.1 - limit.0);
        if px.is_nan() { limit.0 } else { px.round() as i32 }
    }

    /// Our ticks, whatever plotters asks for: no light grid lines.
    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.tick_coords()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Maps a data value to its plot coordinate: `log10(v)` on a log axis,
/// `v` itself otherwise. Returns `None` for values that cannot be drawn:
/// non-finite values, `v <= 0` on a log axis, and magnitudes beyond the
/// plotted limits (|v| > 1e300, or |log10 v| > 300).
pub(crate) fn to_coord(v: f64, log: bool) -> Option<f64> {
    if !v.is_finite() {
        return None;
    }
    if log {
        if v <= 0.0 {
            return None;
        }
        let l = v.log10();
        (l.abs() <= LOG_EXP_MAX).then_some(l)
    } else {
        (v.abs() <= LINEAR_MAX).then_some(v)
    }
}

/// A linear axis covering `coords` (already finite), padded by 4% on each
/// side, or by 10% of the value (at least 1) when all values are equal.
/// With `from_zero`, a range of non-negative values whose minimum is below
/// 30% of the maximum (or whose padding would cross zero) starts at exactly
/// 0, as throughput plots should.
pub(crate) fn linear_axis(coords: &[f64], from_zero: bool) -> Axis {
    let (min, max) = min_max(coords).unwrap_or((0.0, 1.0));
    let (mut lo, mut hi) = pad_range(min, max);
    if from_zero && min >= 0.0 && (min <= 0.3 * max || lo < 0.0) {
        lo = 0.0;
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let ticks = linear_ticks(lo, hi, tick_step(hi - lo));
    Axis { lo, hi, ticks }
}

/// A logarithmic axis covering `coords` (already `log10` of the data):
/// padded by 4% of the decade span (a factor of 2 each side when all values
/// are equal); ticks at powers of ten, with 2x and 5x ticks added when fewer
/// than four decades are visible, and every k-th decade when too many are.
pub(crate) fn log_axis(coords: &[f64]) -> Axis {
    let (min, max) = min_max(coords).unwrap_or((0.0, 1.0));
    let (lo, hi) = if max - min < 1e-9 {
        (min - std::f64::consts::LOG10_2, max + std::f64::consts::LOG10_2)
    } else {
        let pad = (max - min) * PAD_FRACTION;
        (min - pad, max + pad)
    };
    let first = lo.ceil() as i32;
    let last = hi.floor() as i32;
    let decades = (last - first + 1).max(0);
    let mut ticks = Vec::new();
    if decades < 4 {
        for d in (first - 1)..=last {
            for m in [1.0, 2.0, 5.0] {
                push_log_tick(&mut ticks, m, d, lo, hi);
            }
        }
    } else {
        let every = decades.div_euclid(10) + 1;
        for d in first..=last {
            if (d - first) % every == 0 {
                push_log_tick(&mut ticks, 1.0, d, lo, hi);
            }
        }
    }
    Axis { lo, hi, ticks }
}

/// Category names longer than this many characters are cut with an
/// ellipsis so that the plot keeps its room.
const CATEGORY_MAX_CHARS: usize = 32;

/// A categorical axis: category `i` sits at coordinate `i`, the range is
/// `-0.5 .. n - 0.5`, and each tick is labelled with the category name (cut
/// to 32 characters).
pub(crate) fn category_axis(names: &[String]) -> Axis {
    let n = names.len().max(1) as f64;
    let ticks = names
        .iter()
        .enumerate()
        .map(|(i, name)| (i as f64, shorten(name, CATEGORY_MAX_CHARS)))
        .collect();
    Axis {
        lo: -0.5,
        hi: n - 0.5,
        ticks,
    }
}

/// `text` cut to at most `max` characters, the last one an ellipsis.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// Adds the tick `m * 10^d` if its coordinate lies inside `lo..=hi`.
fn push_log_tick(ticks: &mut Vec<(f64, String)>, m: f64, d: i32, lo: f64, hi: f64) {
    // `format!` + parse gives the f64 nearest to the decimal value, without
    // the rounding noise of `powi`.
    let Ok(value) = format!("{m}e{d}").parse::<f64>() else {
        return;
    };
    let c = value.log10();
    if c >= lo && c <= hi {
        ticks.push((c, format_tick(value, value / 10.0)));
    }
}

/// Smallest and largest of `values`, or `None` when empty.
fn min_max(values: &[f64]) -> Option<(f64, f64)> {
    let min = values.iter().copied().reduce(f64::min)?;
    let max = values.iter().copied().reduce(f64::max)?;
    Some((min, max))
}

/// Pads `min..max` so that no marker sits on the frame; a degenerate range
/// (all values equal to within 1e-9 relative) is widened by 10% of the
/// value, at least 1.
fn pad_range(min: f64, max: f64) -> (f64, f64) {
    let span = max - min;
    if span <= max.abs().max(min.abs()) * 1e-9 {
        let pad = (min.abs() * 0.1).max(1.0);
        return (min - pad, max + pad);
    }
    (min - span * PAD_FRACTION, max + span * PAD_FRACTION)
}

/// The fewest tick intervals a linear axis shows: rounding the step up to
/// a nice number can leave only three ticks (e.g. 1.05k, 1.1k, 1.15k with
/// data from 1.01k), too few to read values near the ends.
const MIN_TICKS: f64 = 5.0;

/// A nice tick step for a linear axis spanning `span`: [`nice_step`] of
/// span / 8, halved down the 1-2-5 ladder while it gives fewer than
/// [`MIN_TICKS`] intervals.
fn tick_step(span: f64) -> f64 {
    let mut step = nice_step(span / TARGET_TICKS);
    for _ in 0..4 {
        if span / step >= MIN_TICKS || !span.is_finite() {
            break;
        }
        let mantissa = step / 10f64.powf(step.log10().floor());
        step *= if mantissa > 3.0 { 0.4 } else { 0.5 };
    }
    step
}

/// The "nice" step (1, 2 or 5 times a power of ten) nearest above `raw`.
pub(crate) fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let exp = raw.log10().floor();
    let base = 10f64.powf(exp);
    let frac = raw / base;
    let m = if frac <= 1.0 {
        1.0
    } else if frac <= 2.0 {
        2.0
    } else if frac <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * base
}

/// Multiples of `step` inside `lo..=hi`, each labelled with [`format_tick`].
fn linear_ticks(lo: f64, hi: f64, step: f64) -> Vec<(f64, String)> {
    let first = (lo / step).ceil();
    let last = (hi / step).floor();
    if !(first.is_finite() && last.is_finite()) || last < first || last - first > 100.0 {
        return vec![(lo, format_tick(lo, hi - lo)), (hi, format_tick(hi, hi - lo))];
    }
    let count = (last - first) as u32;
    (0..=count)
        .map(|i| {
            let v = (first + f64::from(i)) * step;
            (v, format_tick(v, step))
        })
        .collect()
}

/// Formats a tick value for a human: SI suffixes for big numbers (`350k`,
/// `1.2M`, `3G`), as many decimals as the tick `step` needs and no trailing
/// zeros, `0` for values that are zero up to rounding, and scientific
/// notation only beyond 1e18 or below 1e-12 where no suffix helps.
pub(crate) fn format_tick(v: f64, step: f64) -> String {
    let step = if step.is_finite() && step > 0.0 { step } else { v.abs().max(1.0) };
    if v.abs() < step * 1e-6 {
        return "0".to_string();
    }
    let a = v.abs();
    if !(1e-12..1e18).contains(&a) {
        return trim_exp(&format!("{v:.2e}"));
    }
    let (div, suffix) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(d, _)| a >= *d)
        .unwrap_or((1.0, ""));
    let scaled_step = step / div;
    let decimals = if scaled_step >= 1.0 {
        0
    } else {
        ((-scaled_step.log10()) - 1e-9).ceil().clamp(0.0, 12.0) as usize
    };
    let text = format!("{:.*}", decimals, v / div);
    format!("{}{suffix}", trim_zeros(&text))
}

/// Drops trailing zeros (and a bare trailing point) after a decimal point.
fn trim_zeros(text: &str) -> String {
    if !text.contains('.') {
        return text.to_string();
    }
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Trims the mantissa of `1.20e21`-style text to `1.2e21`.
fn trim_exp(text: &str) -> String {
    match text.split_once('e') {
        Some((mantissa, exp)) => format!("{}e{exp}", trim_zeros(mantissa)),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_use_si_suffixes_without_noise() {
        assert_eq!(format_tick(1_200_000.0, 200_000.0), "1.2M");
        assert_eq!(format_tick(350_000.0, 50_000.0), "350k");
        assert_eq!(format_tick(0.30000000000000004, 0.1), "0.3");
        assert_eq!(format_tick(1e-17, 0.1), "0");
        assert_eq!(format_tick(-2500.0, 500.0), "-2.5k");
        assert_eq!(format_tick(42.0, 2.0), "42");
        assert_eq!(format_tick(1000.0, 100.0), "1k");
        assert_eq!(format_tick(1.2e21, 1e20), "1.2e21");
    }

    #[test]
    fn nice_steps_are_one_two_five() {
        assert_eq!(nice_step(0.13), 0.2);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(70.0), 100.0);
        assert_eq!(nice_step(f64::NAN), 1.0);
    }

    #[test]
    fn linear_axis_starts_at_zero_for_throughput() {
        let axis = linear_axis(&[100_000.0, 1_200_000.0], true);
        assert_eq!(axis.lo, 0.0);
        assert!(axis.hi >= 1_200_000.0);
        let labels: Vec<&str> = axis.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels[..3], ["0", "200k", "400k"]);
        assert!(labels.contains(&"1.2M"));
    }

    #[test]
    fn equal_values_get_a_padded_range() {
        let axis = linear_axis(&[5.0, 5.0], false);
        assert_eq!((axis.lo, axis.hi), (4.0, 6.0));
        assert!(!axis.ticks.is_empty());
        let empty = linear_axis(&[], true);
        assert!(empty.hi > empty.lo);
    }

    #[test]
    fn log_axis_labels_decades() {
        let axis = log_axis(&[0.0, 6.0]);
        let labels: Vec<&str> = axis.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "10", "100", "1k", "10k", "100k", "1M"]);
        let narrow = log_axis(&[2.0_f64.log10(), 60.0_f64.log10()]);
        let labels: Vec<&str> = narrow.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["2", "5", "10", "20", "50"]);
    }

    #[test]
    fn narrow_linear_ranges_get_at_least_five_ticks() {
        // Data from 1010 to 1165 (a padded span of about 167): span / 8
        // rounds up to a step of 50 (3 ticks); halving down gives 20.
        let axis = linear_axis(&[1010.0, 1165.0], true);
        assert!(axis.ticks.len() >= 5, "{:?}", axis.ticks);
        assert!(axis.ticks[0].0 <= 1020.0);
    }

    #[test]
    fn long_category_names_are_cut() {
        let axis = category_axis(&["a".repeat(40), "b".into()]);
        assert_eq!(axis.ticks[0].1, format!("{}…", "a".repeat(31)));
        assert_eq!(axis.ticks[1], (1.0, "b".to_string()));
        assert_eq!((axis.lo, axis.hi), (-0.5, 1.5));
    }

    #[test]
    fn coordinates_reject_undrawable_values() {
        assert_eq!(to_coord(f64::NAN, false), None);
        assert_eq!(to_coord(0.0, true), None);
        assert_eq!(to_coord(-3.0, true), None);
        assert_eq!(to_coord(100.0, true), Some(2.0));
        assert_eq!(to_coord(1e301, false), None);
    }
}
