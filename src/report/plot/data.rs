//! Turning a [`PlotSpec`] into drawable marks in plot coordinates.
//!
//! This is where bad values are dealt with, so the drawing code never sees
//! them: points with a non-finite or undrawable x or y are skipped (on a log
//! axis that includes `y <= 0`), non-finite CI ends fall back to `y`, a CI
//! end `<= 0` on a log y axis is clamped to the bottom of the axis, and the
//! interval is widened to contain `y` when the caller's `lo`/`hi` do not.

use super::axis::{self, Axis, to_coord};
use super::{PlotPoint, PlotSpec};

/// One point ready to draw, all in plot coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mark {
    /// Horizontal coordinate.
    pub x: f64,
    /// Vertical coordinate of the mean.
    pub y: f64,
    /// Lower end of the error bar (`-inf` until clamped to the axis).
    pub lo: f64,
    /// Upper end of the error bar.
    pub hi: f64,
}

/// Everything the drawing code needs: both axes and each series' marks,
/// sorted by x so that lines join points left to right.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// The horizontal axis.
    pub x_axis: Axis,
    /// The vertical axis.
    pub y_axis: Axis,
    /// Marks of each series, in the spec's series order (for bars, x is
    /// already shifted to the bar's centre).
    pub marks: Vec<Vec<Mark>>,
    /// Width of one bar in x coordinates (0 for a line plot).
    pub bar_width: f64,
    /// Reference marks as `(x, y, label index)` in plot coordinates; the
    /// label index points into [`ref_labels`].
    pub refs: Vec<(f64, f64, usize)>,
}

/// The distinct labels of the reference marks, in first-seen order.
pub(crate) fn ref_labels(spec: &PlotSpec) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &spec.refs {
        if !out.contains(&r.label) {
            out.push(r.label.clone());
        }
    }
    out
}

/// Horizontal offset of series `i` of `n` in a group of bars `width` wide.
fn bar_offset(i: usize, n: usize, width: f64) -> f64 {
    (i as f64 - (n as f64 - 1.0) / 2.0) * width
}

/// Builds axes and marks from `spec`; never fails and never panics.
pub(crate) fn prepare(spec: &PlotSpec) -> Prepared {
    let x_log = spec.x_log && spec.x_categories.is_none();
    let mut marks: Vec<Vec<Mark>> = spec.series.iter().map(|s| series_marks(&s.points, x_log, spec.y_log)).collect();
    let xs: Vec<f64> = marks.iter().flatten().map(|m| m.x).collect();
    let n = spec.series.len().max(1);
    let bar_width = if spec.bars { 0.8 / n as f64 } else { 0.0 };
    let labels = ref_labels(spec);
    let mut refs: Vec<(f64, f64, usize)> = spec
        .refs
        .iter()
        .filter_map(|r| {
            let x = to_coord(r.x, x_log)? + r.series.map_or(0.0, |i| bar_offset(i, n, bar_width));
            let y = to_coord(r.y, spec.y_log)?;
            Some((x, y, labels.iter().position(|l| *l == r.label).unwrap_or(0)))
        })
        .collect();
    let mut ys: Vec<f64> = marks
        .iter()
        .flatten()
        .flat_map(|m| [m.y, m.lo, m.hi])
        .chain(refs.iter().map(|r| r.1))
        .filter(|v| v.is_finite())
        .collect();
    if spec.bars && !spec.y_log {
        ys.push(0.0);
    }
    let x_axis = match (&spec.x_categories, x_log) {
        (Some(names), _) => axis::category_axis(names),
        (None, true) => axis::log_axis(&xs),
        (None, false) => axis::linear_axis(&xs, false),
    };
    let y_axis = if spec.y_log {
        axis::log_axis(&ys)
    } else {
        axis::linear_axis(&ys, true)
    };
    for (i, series) in marks.iter_mut().enumerate() {
        series.retain(|m| m.x >= x_axis.lo && m.x <= x_axis.hi);
        for m in series.iter_mut() {
            m.lo = m.lo.max(y_axis.lo);
            m.hi = m.hi.min(y_axis.hi);
            m.x += bar_offset(i, n, bar_width);
        }
    }
    refs.retain(|r| r.0 >= x_axis.lo && r.0 <= x_axis.hi);
    Prepared {
        x_axis,
        y_axis,
        marks,
        bar_width,
        refs,
    }
}

/// The drawable marks of one series, sorted by x (stable for equal x).
fn series_marks(points: &[PlotPoint], x_log: bool, y_log: bool) -> Vec<Mark> {
    let mut marks: Vec<Mark> = points.iter().filter_map(|p| point_mark(p, x_log, y_log)).collect();
    marks.sort_by(|a, b| a.x.total_cmp(&b.x));
    marks
}

/// One point's mark, or `None` when its x or y cannot be drawn.
fn point_mark(p: &PlotPoint, x_log: bool, y_log: bool) -> Option<Mark> {
    let x = to_coord(p.x, x_log)?;
    let y = to_coord(p.y, y_log)?;
    let lo = ci_end(p.lo, y, y_log, f64::NEG_INFINITY).min(y);
    let hi = ci_end(p.hi, y, y_log, y).max(y);
    Some(Mark { x, y, lo, hi })
}

/// Coordinate of one CI end: `y` when the end is not finite, `clamped`
/// when it is `<= 0` on a log axis.
fn ci_end(v: f64, y: f64, log: bool, clamped: f64) -> f64 {
    if !v.is_finite() {
        return y;
    }
    if log && v <= 0.0 {
        return clamped;
    }
    to_coord(v, log).unwrap_or(y)
}

#[cfg(test)]
mod tests {
    use super::super::Series;
    use super::*;

    fn spec(points: Vec<PlotPoint>, y_log: bool) -> PlotSpec {
        PlotSpec {
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            x_log: false,
            y_log,
            x_categories: None,
            series: vec![Series { name: "s".into(), points }],
            ..Default::default()
        }
    }

    fn pt(x: f64, y: f64, lo: f64, hi: f64) -> PlotPoint {
        PlotPoint { x, y, lo, hi }
    }

    #[test]
    fn bad_points_are_skipped_and_sorted() {
        let p = prepare(&spec(
            vec![
                pt(3.0, 1.0, 0.5, 1.5),
                pt(f64::NAN, 1.0, 1.0, 1.0),
                pt(1.0, f64::INFINITY, 1.0, 1.0),
                pt(2.0, 2.0, f64::NAN, 3.0),
            ],
            false,
        ));
        let xs: Vec<f64> = p.marks[0].iter().map(|m| m.x).collect();
        assert_eq!(xs, [2.0, 3.0]);
        assert_eq!(p.marks[0][0].lo, 2.0);
    }

    #[test]
    fn log_axis_skips_non_positive_y_and_clamps_ci() {
        let p = prepare(&spec(vec![pt(1.0, 0.0, 0.0, 0.0), pt(2.0, 10.0, -5.0, 100.0)], true));
        assert_eq!(p.marks[0].len(), 1);
        let m = p.marks[0][0];
        assert_eq!((m.y, m.hi), (1.0, 2.0));
        assert_eq!(m.lo, p.y_axis.lo);
    }
}
