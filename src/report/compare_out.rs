//! What `fsmeta compare --out DIR` writes: `compare.csv` (per point and
//! metric: both means, the paired difference with its 95% CI, the ratio
//! with its CI) and `ratios.svg` / `ratios.png`, the ratios with CI bars,
//! one bar per point and metric; all or nothing, like a run's outputs.

use super::ReportError;
use super::compare::{Pair, paired_diff};
use super::plot::{self, Figure, PlotPoint, PlotSpec, Series};
use super::stats::mean_ci;
use super::write::Staging;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One row of `compare.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The point label (empty for a single point).
    pub point: String,
    /// The metric.
    pub metric: String,
    /// Its unit.
    pub unit: String,
    /// Replications paired (0 when the sides do not pair up).
    pub n: usize,
    /// Mean of the before side.
    pub before: f64,
    /// Mean of the after side.
    pub after: f64,
    /// Paired difference after - before: mean and 95% CI, when paired
    /// with at least two replications.
    pub diff: Option<(f64, f64, f64)>,
    /// after / before, when the before mean is not zero.
    pub ratio: Option<f64>,
    /// 95% CI of the ratio: the paired difference's CI over the before
    /// mean, `1 + [lo, hi] / before` (the before mean taken as exact).
    pub ratio_ci: Option<(f64, f64)>,
}

/// The rows of `pairs`.
pub fn rows(pairs: &[Pair]) -> Vec<Row> {
    pairs
        .iter()
        .map(|p| {
            let before = mean_ci(&p.before, 0.95).0;
            let after = mean_ci(&p.after, 0.95).0;
            let paired = p.before.len() == p.after.len() && p.before.len() > 1;
            let diff = paired_diff(p).filter(|_| paired);
            let ratio = (before != 0.0 && before.is_finite() && after.is_finite()).then(|| after / before);
            let ratio_ci = match (diff, ratio) {
                (Some((_, lo, hi)), Some(_)) => Some((1.0 + lo / before, 1.0 + hi / before)),
                _ => None,
            };
            Row {
                point: p.point.clone(),
                metric: p.metric.clone(),
                unit: p.unit.clone(),
                n: if paired || p.before.len() == p.after.len() {
                    p.before.len()
                } else {
                    0
                },
                before,
                after,
                diff,
                ratio,
                ratio_ci,
            }
        })
        .collect()
}

/// A CSV field: quoted when it holds a comma or a quote.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map_or(String::new(), |v| v.to_string())
}

/// `compare.csv`: one row per point and metric; the CI columns are empty
/// where the sides do not pair up or have one replication.
pub fn compare_csv(before: &str, after: &str, rows: &[Row]) -> String {
    let mut out = String::from(
        "point,metric,unit,before,after,n,before_mean,after_mean,diff,diff_ci95_lo,diff_ci95_hi,ratio,ratio_ci95_lo,ratio_ci95_hi\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(&r.point),
            field(&r.metric),
            field(&r.unit),
            field(before),
            field(after),
            r.n,
            num(Some(r.before)),
            num(Some(r.after)),
            num(r.diff.map(|d| d.0)),
            num(r.diff.map(|d| d.1)),
            num(r.diff.map(|d| d.2)),
            num(r.ratio),
            num(r.ratio_ci.map(|c| c.0)),
            num(r.ratio_ci.map(|c| c.1)),
        );
    }
    out
}

/// The ratios as grouped bars: one group per point, one bar per metric,
/// each with its CI (none where unpaired).
pub fn ratio_figure(title: &str, footer: &str, rows: &[Row]) -> Figure {
    let mut points: Vec<String> = Vec::new();
    let mut metrics: Vec<String> = Vec::new();
    for r in rows {
        if !points.contains(&r.point) {
            points.push(r.point.clone());
        }
        if !metrics.contains(&r.metric) {
            metrics.push(r.metric.clone());
        }
    }
    let series = metrics
        .iter()
        .map(|m| Series {
            name: m.clone(),
            points: rows
                .iter()
                .filter(|r| &r.metric == m)
                .filter_map(|r| {
                    let y = r.ratio?;
                    let (lo, hi) = r.ratio_ci.unwrap_or((y, y));
                    let x = points.iter().position(|p| *p == r.point)? as f64;
                    Some(PlotPoint { x, y, lo, hi })
                })
                .collect(),
        })
        .collect();
    let categories = points
        .iter()
        .map(|p| if p.is_empty() { "all".to_string() } else { p.clone() })
        .collect();
    Figure::Chart(PlotSpec {
        title: title.to_string(),
        x_label: "point".into(),
        y_label: "after / before (ratio of means, 95% CI)".into(),
        x_categories: Some(categories),
        series,
        bars: true,
        footer: footer.to_string(),
        ..PlotSpec::default()
    })
}

/// Writes `compare.csv`, `compare.txt` (what was printed) and the ratio
/// plot to `out/<name>/`, all or nothing; returns the folder.
pub fn write_compare(out: &Path, name: &str, before: &str, after: &str, text: &str, pairs: &[Pair]) -> Result<PathBuf, ReportError> {
    let rows = rows(pairs);
    let mut set = Staging::begin(out, name)?;
    set.write("compare.csv", compare_csv(before, after, &rows).as_bytes())?;
    set.write("compare.txt", crate::text::escape_controls(text).as_bytes())?;
    let fig = ratio_figure(
        &format!("{after} / {before}"),
        &format!("fsmeta {}", env!("CARGO_PKG_VERSION")),
        &rows,
    );
    let plot_err = |path: PathBuf| move |source| ReportError::Plot { path, source };
    let svg = plot::render_figure_svg(&fig).map_err(plot_err(set.path("ratios.svg")))?;
    set.write("ratios.svg", svg.as_bytes())?;
    let png = set.path("ratios.png");
    plot::render_figure_png(&fig, &png).map_err(plot_err(png.clone()))?;
    set.adopt("ratios.png")?;
    set.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(point: &str, before: &[f64], after: &[f64]) -> Pair {
        Pair {
            point: point.into(),
            metric: "ops_per_sec".into(),
            unit: "ops/s".into(),
            before: before.to_vec(),
            after: after.to_vec(),
        }
    }

    #[test]
    fn paired_rows_have_cis_and_single_runs_leave_them_empty() {
        let r = rows(&[
            pair("t=1", &[100.0, 110.0, 90.0], &[200.0, 230.0, 170.0]),
            pair("t=2", &[100.0], &[150.0]),
        ]);
        let (d, lo, hi) = r[0].diff.expect("paired");
        assert_eq!(d, 100.0);
        assert!(lo < d && d < hi);
        assert_eq!(r[0].ratio, Some(2.0));
        let (rlo, rhi) = r[0].ratio_ci.expect("ratio ci");
        assert!(rlo < 2.0 && 2.0 < rhi, "{rlo} {rhi}");
        assert_eq!((r[1].diff, r[1].ratio_ci, r[1].ratio), (None, None, Some(1.5)));
        let csv = compare_csv("a", "b", &r);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].starts_with("point,metric,unit,before,after,n,"));
        assert_eq!(lines[2], "t=2,ops_per_sec,ops/s,a,b,1,100,150,,,,1.5,,");
    }
}
