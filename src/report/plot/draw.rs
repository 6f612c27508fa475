//! Drawing prepared marks onto any plotters backend (SVG or bitmap).
//!
//! Layout, top to bottom: the title, then the plot with its axes on the left
//! and the legend in its own column on the right, so the legend never hides
//! data. Each series has a colour from a fixed ten-colour palette and a
//! marker shape (circle, square, triangle, diamond) so lines stay apart when
//! printed in black and white.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontStyle, FontTransform, RGBColor, TextStyle};

use super::PlotError;
use super::PlotSpec;
use super::axis::{Axis, shorten};
use super::data::{Mark, Prepared, ref_labels};
use super::font::FAMILY;

/// Series colours (the widely used "tab10" palette), used in order.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Colour of the grid lines at the ticks.
pub(crate) const GRID: RGBColor = RGBColor(225, 225, 225);

/// Font sizes in plotters units (pixels x 1.24).
const TITLE_SIZE: f64 = 24.0;
pub(crate) const DESC_SIZE: f64 = 18.0;
pub(crate) const LABEL_SIZE: f64 = 15.0;

/// Legend text longer than this many characters is cut with an ellipsis.
const LEGEND_MAX_CHARS: usize = 40;

/// Size of the values written above bars.
const VALUE_SIZE: f64 = 13.0;

/// Size of the small print (scenario, seed, version).
const FOOTER_SIZE: f64 = 12.0;

/// Height of the strip at the bottom that holds the small print.
pub(crate) const FOOTER_PX: u32 = 18;

/// Colour of the small print.
const FOOTER_GREY: RGBColor = RGBColor(110, 110, 110);

/// Half-width of error bar caps, in pixels.
const CAP_PX: i32 = 4;

/// Plotting area with our coordinate types: linear f64 on both axes with
/// explicitly chosen ticks.
type PlotArea<DB> = DrawingArea<DB, Cartesian2d<Axis, Axis>>;

/// The chart built on the left part of the plot.
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Axis, Axis>>;

/// Converts any plotters drawing error into a [`PlotError::Draw`].
pub(crate) fn draw_err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// A text style in the plot font.
pub(crate) fn text(size: f64) -> TextStyle<'static> {
    TextStyle::from((FAMILY, size).into_font()).color(&BLACK)
}

/// What a legend row shows before its name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Swatch {
    /// Series `i` as a line with its marker.
    Line(usize),
    /// Series `i` as a filled bar.
    Bar(usize),
    /// A reference mark.
    Ref,
}

/// Splits off the small-print strip at the bottom of `root`, writes
/// `footer` into it (right-aligned, grey) and returns the rest.
pub(crate) fn with_footer<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, footer: &str) -> Result<DrawingArea<DB, Shift>, PlotError> {
    let (w, h) = root.dim_in_pixel();
    let (main, foot) = root.split_vertically(h.saturating_sub(FOOTER_PX));
    if !footer.is_empty() {
        let style = text(FOOTER_SIZE).color(&FOOTER_GREY).pos(Pos::new(HPos::Right, VPos::Center));
        foot.draw(&Text::new(footer.to_string(), (w as i32 - 10, FOOTER_PX as i32 / 2), style))
            .map_err(draw_err)?;
    }
    Ok(main)
}

/// The bold title style, shrunk (down to 60%) until `title` fits in
/// `area` with a margin, so a long title is never cut at the edges.
pub(crate) fn title_font<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, title: &str) -> TextStyle<'static> {
    let width = f64::from(area.dim_in_pixel().0) - 20.0;
    let mut size = TITLE_SIZE;
    // `FontDesc::style` keeps the regular glyphs; `new` loads the bold face.
    let font = |size: f64| FontDesc::new(FAMILY.into(), size, FontStyle::Bold).color(&BLACK);
    while size > TITLE_SIZE * 0.6 {
        match area.estimate_text_size(title, &font(size)) {
            Ok((w, _)) if f64::from(w) > width => size -= 1.0,
            _ => break,
        }
    }
    font(size)
}

/// Draws the whole plot onto `root`.
pub(crate) fn draw_plot<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, spec: &PlotSpec, prepared: &Prepared) -> Result<(), PlotError> {
    root.fill(&WHITE).map_err(draw_err)?;
    let main = with_footer(root, &spec.footer)?;
    let body = main
        .margin(8, 0, 0, 0)
        .titled(&spec.title, title_font(&main, &spec.title))
        .map_err(draw_err)?;
    let mut entries: Vec<(String, Swatch)> = legend_names(spec)
        .into_iter()
        .enumerate()
        .map(|(i, n)| (n, if spec.bars { Swatch::Bar(i) } else { Swatch::Line(i) }))
        .collect();
    entries.extend(ref_labels(spec).into_iter().map(|l| (shorten(&l, LEGEND_MAX_CHARS), Swatch::Ref)));
    let names: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
    let legend_w = legend_width(root, &names)?;
    let (width, _) = body.dim_in_pixel();
    let (chart_part, legend_part) = body.split_horizontally(width.saturating_sub(legend_w));
    let chart = draw_axes(&chart_part, spec, prepared)?;
    let area = chart.plotting_area();
    for (i, marks) in prepared.marks.iter().enumerate() {
        if prepared.bar_width > 0.0 {
            draw_bars(area, marks, i, prepared.bar_width, bar_base(&prepared.y_axis, spec.y_log))?;
        } else {
            let span = prepared.y_axis.hi - prepared.y_axis.lo;
            draw_series(area, marks, i, under(&prepared.marks, i, span))?;
        }
    }
    if prepared.bar_width > 0.0 {
        draw_bar_values(area, prepared, spec.y_log)?;
    }
    for &(x, y, _) in &prepared.refs {
        draw_ref(area, (x, y), prepared.bar_width)?;
    }
    let top = area.get_pixel_range().1.start - body.get_base_pixel().1;
    draw_legend(&legend_part, &entries, top)
}

/// Where bars rise from: 0 when the linear axis shows it (an error bar
/// may take the axis below 0), else the bottom of the axis.
fn bar_base(y: &super::axis::Axis, y_log: bool) -> f64 {
    if !y_log && y.lo < 0.0 && y.hi > 0.0 { 0.0 } else { y.lo }
}

/// One series as bars `width` wide rising from `base`, each with its CI
/// as a black error bar.
fn draw_bars<DB: DrawingBackend>(area: &PlotArea<DB>, marks: &[Mark], index: usize, width: f64, base: f64) -> Result<(), PlotError> {
    let color = PALETTE[index % PALETTE.len()];
    for m in marks {
        let (l, r) = (m.x - width * 0.45, m.x + width * 0.45);
        area.draw(&Rectangle::new([(l, base), (r, m.y)], color.filled()))
            .map_err(draw_err)?;
        area.draw(&Rectangle::new([(l, base), (r, m.y)], BLACK.stroke_width(1)))
            .map_err(draw_err)?;
        if m.hi > m.lo {
            draw_error_bar(area, m, BLACK)?;
        }
    }
    Ok(())
}

/// Writes each bar's value above it (above its error bar, and above a
/// reference diamond on it), in small print, when every label fits within
/// its bar's width; otherwise none, so a plot never shows some values and
/// not others.
fn draw_bar_values<DB: DrawingBackend>(area: &PlotArea<DB>, prepared: &Prepared, y_log: bool) -> Result<(), PlotError> {
    let (marks, width) = (&prepared.marks, prepared.bar_width);
    let style = text(VALUE_SIZE).pos(Pos::new(HPos::Center, VPos::Bottom));
    let value = |m: &Mark| bar_value(if y_log { 10f64.powf(m.y) } else { m.y });
    let bar_px = {
        let (a, b) = (area.map_coordinate(&(0.0, 0.0)), area.map_coordinate(&(width * 0.9, 0.0)));
        (b.0 - a.0).unsigned_abs()
    };
    for m in marks.iter().flatten() {
        let (w, _) = area.estimate_text_size(&value(m), &style).map_err(draw_err)?;
        if w > bar_px {
            return Ok(());
        }
    }
    for m in marks.iter().flatten() {
        let bar_top = m.y.max(m.hi);
        let near = (prepared.y_axis.hi - prepared.y_axis.lo) * 0.04;
        let diamond = prepared
            .refs
            .iter()
            .filter(|r| (r.0 - m.x).abs() < width * 0.25 && r.1 >= bar_top - near && r.1 <= bar_top + near)
            .map(|r| r.1)
            .reduce(f64::max);
        let (top, lift) = match diamond {
            Some(y) => (bar_top.max(y), -11),
            None => (bar_top, -4),
        };
        let label = EmptyElement::at((m.x, top)) + Text::new(value(m), (0, lift), style.clone());
        area.draw(&label).map_err(draw_err)?;
    }
    Ok(())
}

/// A bar's value with three significant digits (`0.0452`, `7.82`,
/// `96.8`), whole below 10,000 (`1001`), SI-shortened above (`15.6k`).
pub(crate) fn bar_value(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { format!("{v}") };
    }
    if v.abs() >= 1e4 {
        return crate::report::text::human(v);
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A reference mark: a hollow black diamond (over a bar, also a black
/// line across the bar at the value).
fn draw_ref<DB: DrawingBackend>(area: &PlotArea<DB>, at: (f64, f64), bar_width: f64) -> Result<(), PlotError> {
    if bar_width > 0.0 {
        let line = vec![(at.0 - bar_width * 0.5, at.1), (at.0 + bar_width * 0.5, at.1)];
        area.draw(&PathElement::new(line, BLACK.stroke_width(2))).map_err(draw_err)?;
    }
    draw_ref_marker(area, at)
}

/// The reference marker itself: a white-filled diamond with a black edge.
fn draw_ref_marker<DB, CT>(area: &DrawingArea<DB, CT>, at: CT::From) -> Result<(), PlotError>
where
    DB: DrawingBackend,
    CT: plotters::coord::CoordTranslate,
    CT::From: Clone,
{
    let diamond = vec![(0, -8), (8, 0), (0, 8), (-8, 0)];
    area.draw(&(EmptyElement::at(at.clone()) + Polygon::new(diamond.clone(), WHITE.filled())))
        .map_err(draw_err)?;
    let mut edge = diamond;
    edge.push((0, -8));
    area.draw(&(EmptyElement::at(at) + PathElement::new(edge, BLACK.stroke_width(2))))
        .map_err(draw_err)
}

/// Draws the axes, their descriptions and tick labels the same way in every
/// plot kind: labels from `fx` / `fy`, a light grid on the major ticks when
/// `grid` is set (heat maps draw cells instead).
pub(crate) fn draw_mesh<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    (x_desc, y_desc): (&str, &str),
    fx: &dyn Fn(&f64) -> String,
    fy: &dyn Fn(&f64) -> String,
    grid: bool,
) -> Result<(), PlotError> {
    let mut mesh = chart.configure_mesh();
    if grid {
        mesh.bold_line_style(GRID).light_line_style(TRANSPARENT);
    } else {
        mesh.disable_mesh();
    }
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(fx)
        .y_label_formatter(fy)
        .label_style(text(LABEL_SIZE))
        .axis_desc_style(text(DESC_SIZE))
        .axis_style(BLACK)
        .draw()
        .map_err(draw_err)
}

/// Builds the chart, draws the mesh, tick labels and axis descriptions,
/// and returns the chart for drawing data in its coordinates. When the x
/// tick labels are too wide for the space between ticks they are drawn
/// vertically (reading upwards, ending at the axis) instead.
fn draw_axes<'a, DB: DrawingBackend>(
    part: &'a DrawingArea<DB, Shift>,
    spec: &PlotSpec,
    prepared: &Prepared,
) -> Result<Chart<'a, DB>, PlotError> {
    let (xa, ya) = (&prepared.x_axis, &prepared.y_axis);
    let y_area = label_width(part, ya)? + 45;
    let plot_w = part.dim_in_pixel().0.saturating_sub(y_area + 30);
    let x_label_w = label_width(part, xa)?;
    let vertical = x_label_w + 12 > min_tick_gap_px(xa, plot_w);
    let x_area = if vertical { x_label_w + 55 } else { 60 };
    let mut chart = ChartBuilder::on(part)
        .margin_top(10)
        .margin_left(10)
        .margin_right(20)
        .margin_bottom(10)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(xa.clone(), ya.clone())
        .map_err(draw_err)?;
    let fx = |v: &f64| {
        if vertical { String::new() } else { xa.label_at(*v) }
    };
    let fy = |v: &f64| ya.label_at(*v);
    draw_mesh(&mut chart, (&spec.x_label, &spec.y_label), &fx, &fy, true)?;
    if vertical {
        draw_vertical_x_labels(part, &chart, xa)?;
    }
    Ok(chart)
}

/// Smallest horizontal distance in pixels between two adjacent ticks of
/// `axis` on a plot `plot_w` pixels wide (`plot_w` for fewer than 2 ticks).
fn min_tick_gap_px(axis: &Axis, plot_w: u32) -> u32 {
    let span = axis.hi - axis.lo;
    axis.ticks
        .windows(2)
        .map(|w| ((w[1].0 - w[0].0) / span * f64::from(plot_w)).abs())
        .filter(|g| g.is_finite())
        .fold(f64::from(plot_w), f64::min) as u32
}

/// Draws the x tick labels rotated to read upwards, each ending just below
/// the axis under its tick.
fn draw_vertical_x_labels<DB: DrawingBackend>(part: &DrawingArea<DB, Shift>, chart: &Chart<'_, DB>, axis: &Axis) -> Result<(), PlotError> {
    let (bx, by) = part.get_base_pixel();
    let style = text(LABEL_SIZE)
        .transform(FontTransform::Rotate270)
        .pos(Pos::new(HPos::Right, VPos::Center));
    for (c, label) in &axis.ticks {
        let (px, py) = chart.backend_coord(&(*c, chart.y_range().start));
        let at = (px - bx, py - by + 10);
        part.draw(&Text::new(label.clone(), at, style.clone())).map_err(draw_err)?;
    }
    Ok(())
}

/// Width in pixels of the widest tick label of `axis`.
fn label_width<DB: DrawingBackend>(part: &DrawingArea<DB, Shift>, axis: &Axis) -> Result<u32, PlotError> {
    let style = text(LABEL_SIZE);
    let mut widest = 0;
    for (_, label) in &axis.ticks {
        let (w, _) = part.estimate_text_size(label, &style).map_err(draw_err)?;
        widest = widest.max(w);
    }
    Ok(widest)
}

/// Extra pixels of line width and marker size for series `index`: 3
/// when a later series, drawn over it, passes through one of its points
/// (within 0.5% of the y axis), so the hidden series still shows as a
/// coloured edge around the later one; 0 otherwise.
fn under(marks: &[Vec<Mark>], index: usize, y_span: f64) -> i32 {
    let near = |a: &Mark, b: &Mark| a.x == b.x && (a.y - b.y).abs() <= y_span * 0.005;
    let hidden = marks[index].iter().any(|a| marks[index + 1..].iter().flatten().any(|b| near(a, b)));
    if hidden { 3 } else { 0 }
}

/// Draws one series, `extra` pixels wider (see [`under`]): its line, then
/// error bars, then markers on top.
fn draw_series<DB: DrawingBackend>(area: &PlotArea<DB>, marks: &[Mark], index: usize, extra: i32) -> Result<(), PlotError> {
    let color = PALETTE[index % PALETTE.len()];
    if marks.len() > 1 {
        let line: Vec<(f64, f64)> = marks.iter().map(|m| (m.x, m.y)).collect();
        area.draw(&PathElement::new(line, color.stroke_width(2 + extra as u32)))
            .map_err(draw_err)?;
    }
    for m in marks.iter().filter(|m| m.hi > m.lo) {
        draw_error_bar(area, m, color)?;
    }
    for m in marks {
        draw_marker_sized(area, (m.x, m.y), index, color, extra)?;
    }
    Ok(())
}

/// A vertical error bar from `m.lo` to `m.hi` with short caps.
fn draw_error_bar<DB: DrawingBackend>(area: &PlotArea<DB>, m: &Mark, color: RGBColor) -> Result<(), PlotError> {
    let style = color.stroke_width(1);
    area.draw(&PathElement::new(vec![(m.x, m.lo), (m.x, m.hi)], style))
        .map_err(draw_err)?;
    for end in [m.lo, m.hi] {
        let cap = EmptyElement::at((m.x, end)) + PathElement::new(vec![(-CAP_PX, 0), (CAP_PX, 0)], style);
        area.draw(&cap).map_err(draw_err)?;
    }
    Ok(())
}

/// Draws marker shape number `shape` (mod 4) filled with `color` at `at`,
/// in whatever coordinates `area` uses.
fn draw_marker<DB, CT>(area: &DrawingArea<DB, CT>, at: CT::From, shape: usize, color: RGBColor) -> Result<(), PlotError>
where
    DB: DrawingBackend,
    CT: plotters::coord::CoordTranslate,
{
    draw_marker_sized(area, at, shape, color, 0)
}

/// [`draw_marker`], `extra` pixels larger.
fn draw_marker_sized<DB, CT>(area: &DrawingArea<DB, CT>, at: CT::From, shape: usize, color: RGBColor, extra: i32) -> Result<(), PlotError>
where
    DB: DrawingBackend,
    CT: plotters::coord::CoordTranslate,
{
    let style = color.filled();
    let (r, t) = (4 + extra, 6 + extra);
    let result = match shape % 4 {
        0 => area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), r as u32, style))),
        1 => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-r, -r), (r, r)], style))),
        2 => area.draw(&(EmptyElement::at(at) + TriangleMarker::new((0, 0), t as u32, style))),
        _ => {
            let diamond = vec![(0, -t), (t, 0), (0, t), (-t, 0)];
            area.draw(&(EmptyElement::at(at) + Polygon::new(diamond, style)))
        }
    };
    result.map_err(draw_err)
}

/// Legend entries, cut to [`LEGEND_MAX_CHARS`] characters.
fn legend_names(spec: &PlotSpec) -> Vec<String> {
    spec.series.iter().map(|s| shorten(&s.name, LEGEND_MAX_CHARS)).collect()
}

/// Width of the legend column: the widest name plus the line sample and
/// padding, or nothing when there are no series.
fn legend_width<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, names: &[String]) -> Result<u32, PlotError> {
    if names.is_empty() {
        return Ok(0);
    }
    let style = text(LABEL_SIZE);
    let mut widest = 0;
    for name in names {
        let (w, _) = root.estimate_text_size(name, &style).map_err(draw_err)?;
        widest = widest.max(w);
    }
    Ok(widest + 70)
}

/// Draws the legend column: one row per entry with its swatch and its
/// name, inside a light frame starting at pixel row `top`.
fn draw_legend<DB: DrawingBackend>(part: &DrawingArea<DB, Shift>, entries: &[(String, Swatch)], top: i32) -> Result<(), PlotError> {
    if entries.is_empty() {
        return Ok(());
    }
    let (w, _) = part.dim_in_pixel();
    let row = 24;
    let bottom = top + 8 + row * entries.len() as i32;
    let frame = Rectangle::new([(0, top), (w as i32 - 10, bottom)], GRID.stroke_width(1));
    part.draw(&frame).map_err(draw_err)?;
    let style = text(LABEL_SIZE).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (name, swatch)) in entries.iter().enumerate() {
        let y = top + 4 + row / 2 + row * i as i32;
        match *swatch {
            Swatch::Line(s) => {
                let color = PALETTE[s % PALETTE.len()];
                part.draw(&PathElement::new(vec![(8, y), (40, y)], color.stroke_width(2)))
                    .map_err(draw_err)?;
                draw_marker(part, (24, y), s, color)?;
            }
            Swatch::Bar(s) => {
                let color = PALETTE[s % PALETTE.len()];
                part.draw(&Rectangle::new([(12, y - 7), (36, y + 7)], color.filled()))
                    .map_err(draw_err)?;
                part.draw(&Rectangle::new([(12, y - 7), (36, y + 7)], BLACK.stroke_width(1)))
                    .map_err(draw_err)?;
            }
            Swatch::Ref => draw_ref_marker(part, (24, y))?,
        }
        part.draw(&Text::new(name.clone(), (50, y), style.clone())).map_err(draw_err)?;
    }
    Ok(())
}
