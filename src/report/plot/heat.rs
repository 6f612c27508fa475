//! Heat maps: a metric over two swept parameters, one panel per variant
//! (or one panel of the ratio of two variants). Each cell is coloured on
//! a shared scale (viridis-like, dark = low) and carries its value as
//! text, so the map reads without a colour bar and in black and white.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::PlotError;
use super::axis::{Axis, category_axis};
use super::draw::{DESC_SIZE, LABEL_SIZE, draw_err, draw_mesh, text, title_font, with_footer};

/// What to draw: panels of cells over the same two categorical axes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeatSpec {
    /// Title drawn above the panels.
    pub title: String,
    /// Horizontal axis label (the first swept parameter).
    pub x_label: String,
    /// Vertical axis label (the second swept parameter).
    pub y_label: String,
    /// Names of the x categories, left to right.
    pub x_ticks: Vec<String>,
    /// Names of the y categories, bottom to top.
    pub y_ticks: Vec<String>,
    /// What the colour and the numbers are, with the unit.
    pub value_label: String,
    /// The panels, left to right.
    pub panels: Vec<HeatPanel>,
    /// Small print at the bottom right: scenario, seed, fsmeta version.
    pub footer: String,
}

/// One map: a name and `values[y][x]` (NaN for a missing cell).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeatPanel {
    /// Caption above the panel (a variant, or `a / b`).
    pub name: String,
    /// The cell values, row `y` (bottom first), column `x`.
    pub values: Vec<Vec<f64>>,
}

/// Stops of the colour scale, low to high (after matplotlib's viridis).
const STOPS: [(f64, f64, f64); 5] = [
    (68.0, 1.0, 84.0),
    (59.0, 82.0, 139.0),
    (33.0, 145.0, 140.0),
    (94.0, 201.0, 98.0),
    (253.0, 231.0, 37.0),
];

/// The colour at `t` in `0..=1` (clamped; NaN gives light grey).
fn colour(t: f64) -> RGBColor {
    if !t.is_finite() {
        return RGBColor(235, 235, 235);
    }
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |x: f64, y: f64| (x + (y - x) * f).round().clamp(0.0, 255.0) as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Maps a value to `0..=1` on the shared scale: logarithmic when every
/// value is positive and they span more than 100x, linear otherwise.
struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Scale {
    fn of(panels: &[HeatPanel]) -> Scale {
        let vals: Vec<f64> = panels
            .iter()
            .flat_map(|p| p.values.iter().flatten())
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let log = lo > 0.0 && hi / lo > 100.0;
        if log {
            Scale {
                lo: lo.log10(),
                hi: hi.log10(),
                log,
            }
        } else {
            Scale { lo, hi, log }
        }
    }

    fn t(&self, v: f64) -> f64 {
        let v = if self.log { if v > 0.0 { v.log10() } else { f64::NAN } } else { v };
        if self.hi > self.lo {
            (v - self.lo) / (self.hi - self.lo)
        } else {
            0.5
        }
    }
}

/// Draws the heat map panels onto `root`.
pub(crate) fn draw_heat<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, spec: &HeatSpec) -> Result<(), PlotError> {
    root.fill(&WHITE).map_err(draw_err)?;
    let main = with_footer(root, &spec.footer)?;
    let body = main
        .margin(8, 0, 0, 0)
        .titled(&spec.title, title_font(&main, &spec.title))
        .map_err(draw_err)?;
    let (w, _) = body.dim_in_pixel();
    let (caption, panels_area) = body.split_vertically(26);
    let scale = Scale::of(&spec.panels);
    let note = format!(
        "cell colour and number: {}{} (dark = low, yellow = high)",
        spec.value_label,
        if scale.log { ", log colour scale" } else { "" }
    );
    let style = text(LABEL_SIZE).pos(Pos::new(HPos::Center, VPos::Center));
    caption.draw(&Text::new(note, (w as i32 / 2, 10), style)).map_err(draw_err)?;
    let n = spec.panels.len().max(1);
    let parts = panels_area.split_evenly((1, n));
    let (xa, ya) = (category_axis(&spec.x_ticks), category_axis(&spec.y_ticks));
    for (panel, part) in spec.panels.iter().zip(&parts) {
        draw_panel(part, spec, panel, &scale, (&xa, &ya))?;
    }
    Ok(())
}

/// One panel: captioned axes and the cells with their values.
fn draw_panel<DB: DrawingBackend>(
    part: &DrawingArea<DB, Shift>,
    spec: &HeatSpec,
    panel: &HeatPanel,
    scale: &Scale,
    (xa, ya): (&Axis, &Axis),
) -> Result<(), PlotError> {
    let y_area = spec.y_ticks.iter().map(|t| t.chars().count()).max().unwrap_or(1) as u32 * 9 + 45;
    let mut chart = ChartBuilder::on(part)
        .caption(&panel.name, text(DESC_SIZE))
        .margin(10)
        .x_label_area_size(55)
        .y_label_area_size(y_area)
        .build_cartesian_2d(xa.clone(), ya.clone())
        .map_err(draw_err)?;
    let fx = |v: &f64| xa.label_at(*v);
    let fy = |v: &f64| ya.label_at(*v);
    draw_mesh(&mut chart, (&spec.x_label, &spec.y_label), &fx, &fy, false)?;
    let area = chart.plotting_area();
    for (yi, row) in panel.values.iter().enumerate() {
        for (xi, &v) in row.iter().enumerate() {
            let (x, y) = (xi as f64, yi as f64);
            let t = scale.t(v);
            let cell = Rectangle::new([(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)], colour(t).filled());
            area.draw(&cell).map_err(draw_err)?;
            let label = if v.is_finite() { crate::report::text::human(v) } else { "-".into() };
            let ink = if t.is_finite() && t > 0.6 { BLACK } else { WHITE };
            let style = text(LABEL_SIZE).color(&ink).pos(Pos::new(HPos::Center, VPos::Center));
            area.draw(&Text::new(label, (x, y), style)).map_err(draw_err)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_scale_ends_and_nan() {
        assert_eq!(colour(0.0), RGBColor(68, 1, 84));
        assert_eq!(colour(1.0), RGBColor(253, 231, 37));
        assert_eq!(colour(f64::NAN), RGBColor(235, 235, 235));
    }

    #[test]
    fn wide_positive_ranges_use_a_log_scale() {
        let p = |v: Vec<f64>| HeatPanel {
            name: String::new(),
            values: vec![v],
        };
        assert!(Scale::of(&[p(vec![1.0, 1000.0])]).log);
        assert!(!Scale::of(&[p(vec![0.0, 1000.0])]).log);
        let s = Scale::of(&[p(vec![2.0, 4.0])]);
        assert_eq!(s.t(3.0), 0.5);
    }
}
