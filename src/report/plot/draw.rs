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
use super::data::{Mark, Prepared};
use super::font::FAMILY;

/// Series colours (the widely used "tab10" palette), used in order.
const PALETTE: [RGBColor; 10] = [
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
const GRID: RGBColor = RGBColor(225, 225, 225);

/// Font sizes in plotters units (pixels x 1.24).
const TITLE_SIZE: f64 = 24.0;
const DESC_SIZE: f64 = 18.0;
const LABEL_SIZE: f64 = 15.0;

/// Legend text longer than this many characters is cut with an ellipsis.
const LEGEND_MAX_CHARS: usize = 40;

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
fn text(size: f64) -> TextStyle<'static> {
    TextStyle::from((FAMILY, size).into_font()).color(&BLACK)
}

/// Draws the whole plot onto `root`.
pub(crate) fn draw_plot<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, spec: &PlotSpec, prepared: &Prepared) -> Result<(), PlotError> {
    root.fill(&WHITE).map_err(draw_err)?;
    // `FontDesc::style` keeps the regular glyphs; `new` loads the bold face.
    let title = FontDesc::new(FAMILY.into(), TITLE_SIZE, FontStyle::Bold);
    let body = root.margin(8, 0, 0, 0).titled(&spec.title, title.color(&BLACK)).map_err(draw_err)?;
    let names = legend_names(spec);
    let legend_w = legend_width(root, &names)?;
    let (width, _) = body.dim_in_pixel();
    let (chart_part, legend_part) = body.split_horizontally(width.saturating_sub(legend_w));
    let chart = draw_axes(&chart_part, spec, prepared)?;
    let area = chart.plotting_area();
    for (i, marks) in prepared.marks.iter().enumerate() {
        draw_series(area, marks, i)?;
    }
    let top = area.get_pixel_range().1.start - body.get_base_pixel().1;
    draw_legend(&legend_part, &names, top)
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
    chart
        .configure_mesh()
        .x_desc(spec.x_label.as_str())
        .y_desc(spec.y_label.as_str())
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .label_style(text(LABEL_SIZE))
        .axis_desc_style(text(DESC_SIZE))
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(BLACK)
        .draw()
        .map_err(draw_err)?;
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

/// Draws one series: its line, then error bars, then markers on top.
fn draw_series<DB: DrawingBackend>(area: &PlotArea<DB>, marks: &[Mark], index: usize) -> Result<(), PlotError> {
    let color = PALETTE[index % PALETTE.len()];
    if marks.len() > 1 {
        let line: Vec<(f64, f64)> = marks.iter().map(|m| (m.x, m.y)).collect();
        area.draw(&PathElement::new(line, color.stroke_width(2))).map_err(draw_err)?;
    }
    for m in marks.iter().filter(|m| m.hi > m.lo) {
        draw_error_bar(area, m, color)?;
    }
    for m in marks {
        draw_marker(area, (m.x, m.y), index, color)?;
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
    let style = color.filled();
    let result = match shape % 4 {
        0 => area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), 4, style))),
        1 => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], style))),
        2 => area.draw(&(EmptyElement::at(at) + TriangleMarker::new((0, 0), 6, style))),
        _ => {
            let diamond = vec![(0, -6), (6, 0), (0, 6), (-6, 0)];
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

/// Draws the legend column: one row per series with a line sample, its
/// marker and its name, inside a light frame starting at pixel row `top`.
fn draw_legend<DB: DrawingBackend>(part: &DrawingArea<DB, Shift>, names: &[String], top: i32) -> Result<(), PlotError> {
    if names.is_empty() {
        return Ok(());
    }
    let (w, _) = part.dim_in_pixel();
    let row = 24;
    let bottom = top + 8 + row * names.len() as i32;
    let frame = Rectangle::new([(0, top), (w as i32 - 10, bottom)], GRID.stroke_width(1));
    part.draw(&frame).map_err(draw_err)?;
    let style = text(LABEL_SIZE).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, name) in names.iter().enumerate() {
        let y = top + 4 + row / 2 + row * i as i32;
        let color = PALETTE[i % PALETTE.len()];
        part.draw(&PathElement::new(vec![(8, y), (40, y)], color.stroke_width(2)))
            .map_err(draw_err)?;
        draw_marker(part, (24, y), i, color)?;
        part.draw(&Text::new(name.clone(), (50, y), style.clone())).map_err(draw_err)?;
    }
    Ok(())
}
