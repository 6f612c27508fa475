//! Line plots of a metric against a swept parameter, as SVG and PNG.
//!
//! The report stage builds one [`PlotSpec`] per `[[plot]]` block of a
//! scenario: one [`Series`] per variant, one [`PlotPoint`] per sweep point
//! holding the mean of the metric over replications and its 95% confidence
//! interval. [`render_svg`] and [`render_png`] draw it with plotters: a
//! coloured line with a distinct marker shape per series (readable in black
//! and white too), vertical CI error bars, a legend to the right of the plot,
//! axis labels, a title, SI tick labels (`350k`, `1.2M`), optional log axes
//! and optional categorical x.
//!
//! Text uses DejaVu Sans from the `dejavu` crate, so no system font is
//! needed. Output is deterministic: the same spec gives byte-identical SVG.
//! Nothing a caller passes can make these functions panic: non-finite values
//! are skipped, `y <= 0` on a log axis is skipped (CI ends are clamped),
//! degenerate ranges are padded and an empty spec draws empty axes.

mod axis;
mod data;
mod draw;
mod font;
mod heat;
mod hist;

pub use heat::{HeatPanel, HeatSpec};
pub use hist::{HistMark, HistSeries, HistSpec};

use std::path::{Path, PathBuf};

/// Width of every rendered plot, in pixels.
pub const WIDTH_PX: u32 = 1000;

/// Height of every rendered plot, in pixels.
pub const HEIGHT_PX: u32 = 650;

/// What to draw: a titled, labelled line plot (or grouped bar chart) of
/// one or more series.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlotSpec {
    /// Title drawn above the plot.
    pub title: String,
    /// Horizontal axis label, with its unit, e.g. `cores per socket`.
    pub x_label: String,
    /// Vertical axis label, with its unit, e.g. `creates/s`.
    pub y_label: String,
    /// Logarithmic (base 10) x axis; ignored when `x_categories` is set.
    pub x_log: bool,
    /// Logarithmic (base 10) y axis; points with `y <= 0` are then skipped.
    pub y_log: bool,
    /// Categorical x axis: when `Some`, point `x` values are indices
    /// `0..n-1` into this list and the ticks show these names.
    pub x_categories: Option<Vec<String>>,
    /// The series, drawn and listed in the legend in this order.
    pub series: Vec<Series>,
    /// Draw grouped bars (one bar per series at each x, which should be
    /// categorical) instead of lines.
    pub bars: bool,
    /// Reference marks (published figures), drawn as hollow black
    /// diamonds and listed in the legend by label.
    pub refs: Vec<RefMark>,
    /// Small print at the bottom right: scenario, seed, fsmeta version.
    pub footer: String,
}

/// A reference value drawn beside the simulated ones, e.g. a published
/// figure.
#[derive(Debug, Clone, PartialEq)]
pub struct RefMark {
    /// Horizontal value (an index into `x_categories` when those are set).
    pub x: f64,
    /// The value.
    pub y: f64,
    /// The series it belongs to (for bars: drawn on that series' bar).
    pub series: Option<usize>,
    /// Legend text (marks with the same label share one legend entry).
    pub label: String,
}

/// Any figure a `[[plot]]` block can ask for.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// Lines or grouped bars.
    Chart(PlotSpec),
    /// One heat map per panel.
    Heat(HeatSpec),
    /// A histogram on log2 buckets.
    Hist(HistSpec),
}

/// Draws a figure that is not a [`Figure::Chart`] onto `root`.
fn draw_other<DB: plotters::prelude::DrawingBackend>(
    root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    fig: &Figure,
) -> Result<(), PlotError> {
    match fig {
        Figure::Chart(spec) => draw::draw_plot(root, spec, &data::prepare(spec)),
        Figure::Heat(spec) => heat::draw_heat(root, spec),
        Figure::Hist(spec) => hist::draw_hist(root, spec),
    }
}

/// Renders any figure as SVG text (see [`render_svg`]).
pub fn render_figure_svg(fig: &Figure) -> Result<String, PlotError> {
    match fig {
        Figure::Chart(spec) => render_svg(spec),
        other => {
            use plotters::prelude::{IntoDrawingArea, SVGBackend};
            ensure_font()?;
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
                draw_other(&root, other)?;
                root.present().map_err(draw::draw_err)?;
            }
            Ok(text)
        }
    }
}

/// Renders any figure as a PNG at `path` (see [`render_png`]).
pub fn render_figure_png(fig: &Figure, path: &Path) -> Result<(), PlotError> {
    match fig {
        Figure::Chart(spec) => render_png(spec, path),
        other => {
            use plotters::prelude::{BitMapBackend, IntoDrawingArea};
            let is_png = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png"));
            if !is_png {
                return Err(PlotError::NotPng { path: path.to_path_buf() });
            }
            ensure_font()?;
            let tmp = path.with_extension("tmp.png");
            {
                let root = BitMapBackend::new(&tmp, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
                draw_other(&root, other)?;
                root.present().map_err(draw::draw_err)?;
            }
            std::fs::rename(&tmp, path).map_err(|source| PlotError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    }
}

/// One line of the plot, e.g. one variant of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Name shown in the legend (legend text is cut at 40 characters).
    pub name: String,
    /// The points; drawn joined in ascending x order.
    pub points: Vec<PlotPoint>,
}

/// One point: the mean `y` at `x` and its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotPoint {
    /// Horizontal value (an index into `x_categories` when those are set).
    pub x: f64,
    /// Mean of the metric over replications.
    pub y: f64,
    /// Lower end of the 95% CI of `y`; equal to `y` when n = 1.
    pub lo: f64,
    /// Upper end of the 95% CI of `y`; equal to `y` when n = 1.
    pub hi: f64,
}

/// Why a plot could not be rendered. None of these is caused by the values
/// in a spec; they come from the font, the output path or the file system.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// The embedded DejaVu Sans font could not be registered with plotters.
    #[error("the embedded DejaVu Sans font could not be registered")]
    Font,
    /// [`render_png`] was given a path that does not end in `.png`.
    #[error("{}: a PNG plot path must end in .png", path.display())]
    NotPng {
        /// The path that was given.
        path: PathBuf,
    },
    /// The plotters backend failed while drawing or encoding.
    #[error("drawing the plot failed: {0}")]
    Draw(String),
    /// The finished PNG could not be moved to its final name.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The final path of the PNG.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Renders `spec` as an SVG document of [`WIDTH_PX`] x [`HEIGHT_PX`] and
/// returns its text. The same spec always yields the same bytes.
pub fn render_svg(spec: &PlotSpec) -> Result<String, PlotError> {
    use plotters::prelude::{IntoDrawingArea, SVGBackend};
    ensure_font()?;
    let prepared = data::prepare(spec);
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        draw::draw_plot(&root, spec, &prepared)?;
        root.present().map_err(draw::draw_err)?;
    }
    Ok(text)
}

/// Renders `spec` as a PNG of [`WIDTH_PX`] x [`HEIGHT_PX`] at `path`, which
/// must end in `.png`. The image is written to `<stem>.tmp.png` beside it
/// and renamed, so an interrupted run never leaves a half-written plot.
pub fn render_png(spec: &PlotSpec, path: &Path) -> Result<(), PlotError> {
    use plotters::prelude::{BitMapBackend, IntoDrawingArea};
    let is_png = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if !is_png {
        return Err(PlotError::NotPng { path: path.to_path_buf() });
    }
    ensure_font()?;
    let prepared = data::prepare(spec);
    let tmp = path.with_extension("tmp.png");
    {
        let root = BitMapBackend::new(&tmp, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        draw::draw_plot(&root, spec, &prepared)?;
        root.present().map_err(draw::draw_err)?;
    }
    std::fs::rename(&tmp, path).map_err(|source| PlotError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Registers the plot font once per process, or reports that it failed.
fn ensure_font() -> Result<(), PlotError> {
    if font::ensure_registered() { Ok(()) } else { Err(PlotError::Font) }
}

#[cfg(test)]
mod tests;
