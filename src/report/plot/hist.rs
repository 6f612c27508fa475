//! Latency histograms on log2 buckets: one series of bars per variant,
//! side by side inside each bucket `[2^k, 2^(k+1))`, on an x axis that is
//! logarithmic base 2 (ticks at the bucket edges, labelled as bpftrace
//! labels them: `512`, `1K`, `2M`, with 1K = 1024). Reference marks
//! (published means and medians) are vertical lines at their value, in
//! their variant's colour with a white edge (so they show over bars of the
//! same colour), one dash pattern per label. The legend has its own column
//! on the right, so it never covers a bar.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::PlotError;
use super::axis::{Axis, linear_axis, log_axis, shorten};
use super::draw::{GRID, LABEL_SIZE, PALETTE, draw_err, draw_mesh, text, title_font, with_footer};

/// What to draw: counts (or shares) per log2 bucket for each series.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HistSpec {
    /// Title drawn above the plot.
    pub title: String,
    /// Horizontal axis label, with the unit of the bucketed quantity.
    pub x_label: String,
    /// Vertical axis label, e.g. `share of inserts (%)`.
    pub y_label: String,
    /// Unit of the bucketed quantity (`ns`), shown with mark values.
    pub unit: String,
    /// Logarithmic (base 10) y axis; empty buckets are then not drawn.
    pub y_log: bool,
    /// The series, drawn side by side in each bucket in this order.
    pub series: Vec<HistSeries>,
    /// Reference values drawn as vertical lines.
    pub marks: Vec<HistMark>,
    /// Small print at the bottom right: scenario, seed, fsmeta version.
    pub footer: String,
}

/// One variant's histogram.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HistSeries {
    /// Name shown in the legend.
    pub name: String,
    /// `buckets[k]`: the count (or share) in `[2^k, 2^(k+1))`.
    pub buckets: Vec<f64>,
}

/// A reference value on the bucketed axis, e.g. a published median.
#[derive(Debug, Clone, PartialEq)]
pub struct HistMark {
    /// Position in the bucketed quantity's unit (above 0).
    pub at: f64,
    /// The series it belongs to (its colour, and its name in the legend),
    /// if any.
    pub series: Option<usize>,
    /// What it is, e.g. `published median`: marks with the same label
    /// share a dash pattern (solid, dashed, dotted, in first-seen order).
    pub label: String,
}

/// Legend text longer than this is cut with an ellipsis.
const LEGEND_MAX_CHARS: usize = 44;

/// Most bucket-edge ticks labelled; beyond it every other edge is.
const MAX_TICKS: usize = 16;

/// The label of `2^k` as bpftrace prints bucket edges.
pub(crate) fn pow2_label(k: i64) -> String {
    if k < 0 {
        return format!("2^{k}");
    }
    let v: u128 = 1u128 << k.min(100);
    match k {
        k if k >= 40 => format!("{}T", v >> 40),
        k if k >= 30 => format!("{}G", v >> 30),
        k if k >= 20 => format!("{}M", v >> 20),
        k if k >= 10 => format!("{}K", v >> 10),
        _ => v.to_string(),
    }
}

/// The buckets shown: from the first to the last non-empty bucket of any
/// series, widened to hold every mark; `None` when there is nothing.
fn bucket_range(spec: &HistSpec) -> Option<(i64, i64)> {
    let mut range: Option<(i64, i64)> = None;
    let mut take = |k: i64| {
        range = Some(range.map_or((k, k), |(a, b)| (a.min(k), b.max(k))));
    };
    for s in &spec.series {
        for (k, &v) in s.buckets.iter().enumerate() {
            if v.is_finite() && v > 0.0 {
                take(k as i64);
            }
        }
    }
    for m in &spec.marks {
        if m.at.is_finite() && m.at > 0.0 {
            take(m.at.log2().floor().clamp(-60.0, 100.0) as i64);
        }
    }
    range
}

/// The x axis over buckets `lo..=hi`: log2 coordinates, a quarter bucket of
/// room each side, ticks at the bucket edges.
fn x_axis(lo: i64, hi: i64) -> Axis {
    let edges = (hi + 2 - lo) as usize;
    let every = if edges > MAX_TICKS { 2 } else { 1 };
    let ticks = (lo..=hi + 1)
        .filter(|k| ((k - lo) as usize).is_multiple_of(every))
        .map(|k| (k as f64, pow2_label(k)))
        .collect();
    Axis {
        lo: lo as f64 - 0.25,
        hi: (hi + 1) as f64 + 0.25,
        ticks,
    }
}

/// The y axis: linear from 0, or log10 over the positive values.
fn y_axis(spec: &HistSpec) -> Axis {
    let values: Vec<f64> = spec
        .series
        .iter()
        .flat_map(|s| s.buckets.iter().copied())
        .filter(|v| v.is_finite() && v.abs() < 1e300)
        .collect();
    if spec.y_log {
        let logs: Vec<f64> = values.iter().filter(|&&v| v > 0.0).map(|v| v.log10()).collect();
        log_axis(&logs)
    } else {
        let mut with_zero = values;
        with_zero.push(0.0);
        let mut a = linear_axis(&with_zero, true);
        a.lo = a.lo.max(0.0);
        a
    }
}

/// A mark's value as written (`775.674`, `241`), or shortened (`5.54M`)
/// from a million up.
fn mark_value(v: f64) -> String {
    if v.abs() < 1e6 {
        format!("{v}")
    } else {
        crate::report::text::human(v)
    }
}

/// Dash pattern `i` (per distinct mark label): solid, dashed, dotted.
fn dash(i: usize) -> (u32, u32) {
    [(0, 0), (10, 6), (3, 4)][i % 3]
}

/// What a legend row shows before its name.
enum Swatch {
    /// A bar of series `i`.
    Bar(usize),
    /// A mark line: colour, dash pattern.
    Line(RGBColor, (u32, u32)),
}

/// The colour of a mark (its series', else black).
fn mark_colour(m: &HistMark) -> RGBColor {
    m.series.map_or(RGBColor(0, 0, 0), |s| PALETTE[s % PALETTE.len()])
}

/// Draws a vertical or horizontal line from `a` to `b` in `style` with
/// dash pattern `d` (solid when `d.0 == 0`).
fn dashed_line<DB: DrawingBackend, CT>(
    area: &DrawingArea<DB, CT>,
    a: CT::From,
    b: CT::From,
    style: ShapeStyle,
    d: (u32, u32),
) -> Result<(), PlotError>
where
    CT: plotters::coord::CoordTranslate,
    CT::From: Clone,
{
    if d.0 == 0 {
        area.draw(&PathElement::new(vec![a, b], style)).map_err(draw_err)
    } else {
        area.draw(&plotters::element::DashedPathElement::new(vec![a, b], d.0, d.1, style))
            .map_err(draw_err)
    }
}

/// Draws the histogram onto `root`.
pub(crate) fn draw_hist<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, spec: &HistSpec) -> Result<(), PlotError> {
    root.fill(&WHITE).map_err(draw_err)?;
    let main = with_footer(root, &spec.footer)?;
    let body = main
        .margin(8, 0, 0, 0)
        .titled(&spec.title, title_font(&main, &spec.title))
        .map_err(draw_err)?;
    let mut labels: Vec<&str> = Vec::new();
    for m in &spec.marks {
        if !labels.contains(&m.label.as_str()) {
            labels.push(&m.label);
        }
    }
    let mark_dash = |m: &HistMark| dash(labels.iter().position(|l| *l == m.label).unwrap_or(0));
    let mut entries: Vec<(String, Swatch)> = spec
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (shorten(&s.name, LEGEND_MAX_CHARS), Swatch::Bar(i)))
        .collect();
    for m in &spec.marks {
        let of = m
            .series
            .and_then(|i| spec.series.get(i))
            .map_or(String::new(), |s| format!(", {}", s.name));
        let name = format!("{}{of}: {} {}", m.label, mark_value(m.at), spec.unit);
        entries.push((shorten(&name, LEGEND_MAX_CHARS), Swatch::Line(mark_colour(m), mark_dash(m))));
    }
    let legend_w = legend_width(root, &entries)?;
    let (width, _) = body.dim_in_pixel();
    let (chart_part, legend_part) = body.split_horizontally(width.saturating_sub(legend_w));
    let (lo, hi) = bucket_range(spec).unwrap_or((0, 1));
    let (xa, ya) = (x_axis(lo, hi), y_axis(spec));
    let y_area = ya
        .ticks
        .iter()
        .map(|t| chart_part.estimate_text_size(&t.1, &text(LABEL_SIZE)).map(|s| s.0))
        .try_fold(0, |w, s| s.map(|s| w.max(s)))
        .map_err(draw_err)?
        + 45;
    let mut chart = ChartBuilder::on(&chart_part)
        .margin_top(10)
        .margin_left(10)
        .margin_right(20)
        .margin_bottom(10)
        .x_label_area_size(60)
        .y_label_area_size(y_area)
        .build_cartesian_2d(xa.clone(), ya.clone())
        .map_err(draw_err)?;
    let fx = |v: &f64| xa.label_at(*v);
    let fy = |v: &f64| ya.label_at(*v);
    draw_mesh(&mut chart, (&spec.x_label, &spec.y_label), &fx, &fy, true)?;
    let area = chart.plotting_area();
    let n = spec.series.len().max(1) as f64;
    let width = 0.84 / n;
    for (i, s) in spec.series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        for (k, &v) in s.buckets.iter().enumerate() {
            let top = if spec.y_log {
                if v > 0.0 { v.log10() } else { continue }
            } else {
                v
            };
            if !top.is_finite() || top <= ya.lo || (k as i64) < lo || (k as i64) > hi {
                continue;
            }
            let left = k as f64 + 0.08 + i as f64 * width;
            let corners = [(left, ya.lo), (left + width, top.min(ya.hi))];
            area.draw(&Rectangle::new(corners, colour.filled())).map_err(draw_err)?;
            area.draw(&Rectangle::new(corners, BLACK.stroke_width(1))).map_err(draw_err)?;
        }
    }
    for m in &spec.marks {
        if !(m.at.is_finite() && m.at > 0.0) {
            continue;
        }
        let x = m.at.log2();
        let (a, b) = ((x, ya.lo), (x, ya.hi));
        area.draw(&PathElement::new(vec![a, b], WHITE.stroke_width(5))).map_err(draw_err)?;
        dashed_line(area, a, b, mark_colour(m).stroke_width(3), mark_dash(m))?;
    }
    let top = area.get_pixel_range().1.start - body.get_base_pixel().1;
    draw_legend(&legend_part, &entries, top)
}

/// Width of the legend column: the widest entry plus the swatch and
/// padding, or nothing when there are no entries.
fn legend_width<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, entries: &[(String, Swatch)]) -> Result<u32, PlotError> {
    let mut widest = 0;
    for (name, _) in entries {
        let (w, _) = root.estimate_text_size(name, &text(LABEL_SIZE)).map_err(draw_err)?;
        widest = widest.max(w);
    }
    Ok(if entries.is_empty() { 0 } else { widest + 70 })
}

/// The legend column: one row per entry inside a light frame from pixel
/// row `top`.
fn draw_legend<DB: DrawingBackend>(part: &DrawingArea<DB, Shift>, entries: &[(String, Swatch)], top: i32) -> Result<(), PlotError> {
    if entries.is_empty() {
        return Ok(());
    }
    let (w, _) = part.dim_in_pixel();
    let row = 24;
    let bottom = top + 8 + row * entries.len() as i32;
    part.draw(&Rectangle::new([(0, top), (w as i32 - 10, bottom)], GRID.stroke_width(1)))
        .map_err(draw_err)?;
    let style = text(LABEL_SIZE).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (name, swatch)) in entries.iter().enumerate() {
        let y = top + 4 + row / 2 + row * i as i32;
        match swatch {
            Swatch::Bar(s) => {
                let colour = PALETTE[s % PALETTE.len()];
                let r = [(12, y - 7), (36, y + 7)];
                part.draw(&Rectangle::new(r, colour.filled())).map_err(draw_err)?;
                part.draw(&Rectangle::new(r, BLACK.stroke_width(1))).map_err(draw_err)?;
            }
            Swatch::Line(colour, d) => dashed_line(part, (6, y), (42, y), colour.stroke_width(3), *d)?,
        }
        part.draw(&Text::new(name.clone(), (50, y), style.clone())).map_err(draw_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_edges_read_like_bpftrace() {
        assert_eq!(pow2_label(0), "1");
        assert_eq!(pow2_label(9), "512");
        assert_eq!(pow2_label(10), "1K");
        assert_eq!(pow2_label(22), "4M");
        assert_eq!(pow2_label(-1), "2^-1");
    }

    #[test]
    fn the_range_covers_data_and_marks() {
        let spec = HistSpec {
            series: vec![HistSeries {
                name: "a".into(),
                buckets: vec![0.0, 0.0, 0.0, 5.0, 1.0, 0.0],
            }],
            marks: vec![HistMark {
                at: 100.0,
                series: None,
                label: "m".into(),
            }],
            ..HistSpec::default()
        };
        // Data in buckets 3..=4, the mark at 100 in bucket 6.
        assert_eq!(bucket_range(&spec), Some((3, 6)));
        assert_eq!(bucket_range(&HistSpec::default()), None);
        let a = x_axis(3, 6);
        assert_eq!(a.ticks.first().map(|t| t.1.as_str()), Some("8"));
        assert_eq!(a.ticks.last().map(|t| t.1.as_str()), Some("128"));
        assert_eq!(x_axis(0, 30).ticks.len(), 16);
    }

    fn two_series() -> HistSpec {
        HistSpec {
            title: "insert latency".into(),
            x_label: "insert latency (ns) on log2 buckets".into(),
            y_label: "share of inserts (%)".into(),
            unit: "ns".into(),
            series: vec![
                HistSeries {
                    name: "rbtree".into(),
                    buckets: [vec![0.0; 9], vec![60.0, 40.0]].concat(),
                },
                HistSeries {
                    name: "xarray".into(),
                    buckets: [vec![0.0; 7], vec![70.0, 30.0]].concat(),
                },
            ],
            marks: vec![HistMark {
                at: 729.0,
                series: Some(0),
                label: "published median".into(),
            }],
            ..HistSpec::default()
        }
    }

    #[test]
    fn svg_has_series_marks_and_bucket_edges() {
        let svg = crate::report::plot::render_figure_svg(&crate::report::plot::Figure::Hist(two_series())).unwrap_or_default();
        for text in [
            "rbtree",
            "xarray",
            "published median, rbtree: 729 ns",
            "128",
            "2K",
            "share of inserts (%)",
        ] {
            assert!(svg.contains(text), "no {text} in the SVG");
        }
        // 2 series x 2 non-empty buckets, each a filled bar and its edge.
        assert!(svg.matches("<rect").count() >= 8);
    }

    #[test]
    fn marks_dash_by_label_not_by_series() {
        assert_eq!(dash(0), (0, 0));
        assert_ne!(dash(1), dash(0));
        assert_eq!(dash(3), dash(0));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
        #[test]
        fn never_panics_on_any_values(
            buckets in proptest::collection::vec(proptest::num::f64::ANY, 0..40),
            at in proptest::num::f64::ANY,
            y_log: bool,
        ) {
            let spec = HistSpec {
                y_log,
                series: vec![HistSeries { name: "s".into(), buckets }],
                marks: vec![HistMark { at, series: Some(3), label: "m".into() }],
                ..HistSpec::default()
            };
            let svg = crate::report::plot::render_figure_svg(&crate::report::plot::Figure::Hist(spec));
            proptest::prop_assert!(svg.is_ok());
        }
    }
}
