//! Figures along a step axis a workload reports (see
//! [`crate::workload::StepAxis`]): a metric at each step of the axis as
//! lines or grouped bars (the phases of a script), and log2 histograms
//! (one series of bars per variant, share or count per bucket, published
//! values as vertical lines). The axis is found by name through the
//! prepared workload, never by workload kind.

use super::plot::{HistMark, HistSeries, HistSpec, PlotPoint, PlotSpec, Series};
use super::plots::{footer, ref_marks};
use super::stats::{Summary, find};
use crate::scenario::Scenario;
use crate::scenario::config::PlotConfig;
use crate::workload::{StepAxis, StepScale};

/// The step axis called `name` that the scenario's workload reports along.
pub fn axis(s: &Scenario, name: &str) -> Option<StepAxis> {
    let prepared = &s.points.first()?.configs.first()?.prepared;
    prepared.step_axes().into_iter().find(|a| a.name == name)
}

/// The points a plot selects with `at` (all when `at` is empty).
fn selected(s: &Scenario, p: &PlotConfig) -> Vec<usize> {
    (0..s.points.len())
        .filter(|&pt| {
            p.at.iter().all(|(k, v)| {
                s.sweep
                    .iter()
                    .position(|(q, _)| q == k)
                    .is_some_and(|i| &s.points[pt].values[i] == v)
            })
        })
        .collect()
}

/// The variants a plot shows, by index.
fn shown(s: &Scenario, p: &PlotConfig) -> Vec<usize> {
    (0..s.variants.len())
        .filter(|&v| p.variants.is_empty() || p.variants.contains(&s.variants[v].name))
        .collect()
}

/// The unit of value `y` of `a`, for a default axis label.
fn value_label(a: &StepAxis, y: &str) -> String {
    let unit = a.values.iter().find(|v| v.name == y).map_or("", |v| v.unit);
    with_unit(y, unit)
}

/// `name` in words with its unit: a trailing `_UNIT` moves into
/// parentheses (`delete_us` in us -> `delete (us)`), a unit the words
/// already say elsewhere is not repeated (`us per flush`), and counts and
/// unitless values stay bare.
pub fn with_unit(name: &str, unit: &str) -> String {
    if unit.is_empty() || unit == "count" {
        return name.replace('_', " ");
    }
    if let Some(stem) = name.strip_suffix(&format!("_{unit}")).filter(|s| !s.is_empty()) {
        return format!("{} ({unit})", stem.replace('_', " "));
    }
    let words = name.replace('_', " ");
    if words.split(' ').any(|w| w == unit) {
        words
    } else {
        format!("{words} ({unit})")
    }
}

/// A line plot or grouped bars of value `p.y` at each step of axis `a`,
/// one series per variant (and per selected point, when several are).
pub fn spec(s: &Scenario, p: &PlotConfig, a: &StepAxis, rows: &[Summary]) -> PlotSpec {
    let points = selected(s, p);
    let variants = shown(s, p);
    let mut series = Vec::new();
    for &pt in &points {
        for &v in &variants {
            let mut name = s.variants[v].name.clone();
            if points.len() > 1 {
                name = format!("{name} {}", super::compare::short_point(s, pt));
            }
            let pts = a
                .steps
                .iter()
                .enumerate()
                .filter_map(|(k, (key, _))| {
                    let r = find(rows, pt, v, &a.metric(key, &p.y))?;
                    Some(PlotPoint {
                        x: k as f64,
                        y: r.mean,
                        lo: r.ci95_lo,
                        hi: r.ci95_hi,
                    })
                })
                .collect();
            series.push(Series { name, points: pts });
        }
    }
    let refs = ref_marks(p, &series, |v| {
        let key = v.as_str()?;
        a.steps.iter().position(|(k, _)| k == key).map(|i| i as f64)
    });
    PlotSpec {
        title: p
            .title
            .clone()
            .unwrap_or_else(|| format!("{}: {} by {}", s.doc.scenario.name, p.y, a.name)),
        x_label: p.x_label.clone().unwrap_or_else(|| a.label.to_string()),
        y_label: p.y_label.clone().unwrap_or_else(|| value_label(a, &p.y)),
        x_log: false,
        y_log: p.y_log,
        x_categories: Some(a.steps.iter().map(|(_, l)| l.clone()).collect()),
        series,
        bars: p.kind == "bars",
        refs,
        footer: footer(s),
    }
}

/// A histogram of value `p.y` (default the axis's first value) over the
/// log2 buckets of `a`, at the first point `at` selects: the mean count
/// over replications per bucket, or with `share` each variant's share of
/// its total in percent.
pub fn histogram(s: &Scenario, p: &PlotConfig, a: &StepAxis, rows: &[Summary]) -> HistSpec {
    let point = selected(s, p).first().copied().unwrap_or(0);
    let value = if p.y.is_empty() {
        a.values.first().map_or(String::new(), |v| v.name.clone())
    } else {
        p.y.clone()
    };
    let variants = shown(s, p);
    let series: Vec<HistSeries> = variants
        .iter()
        .map(|&v| {
            let counts: Vec<f64> = a
                .steps
                .iter()
                .map(|(key, _)| find(rows, point, v, &a.metric(key, &value)).map_or(0.0, |r| r.mean))
                .collect();
            let total: f64 = counts.iter().filter(|c| c.is_finite()).sum();
            let buckets = if p.share && total > 0.0 {
                counts.iter().map(|c| c / total * 100.0).collect()
            } else {
                counts
            };
            HistSeries {
                name: s.variants[v].name.clone(),
                buckets,
            }
        })
        .collect();
    let marks = p
        .marks
        .iter()
        .map(|m| HistMark {
            at: m.value,
            series: m
                .variant
                .as_ref()
                .and_then(|name| variants.iter().position(|&v| s.variants[v].name == *name)),
            label: m.label.clone(),
        })
        .collect();
    let unit = match a.scale {
        StepScale::Log2 { unit } => unit,
        StepScale::Named => "",
    };
    let counted = value.replace('_', " ");
    let at = super::compare::short_point(s, point);
    HistSpec {
        title: p.title.clone().unwrap_or_else(|| {
            let base = format!("{}: distribution of {}", s.doc.scenario.name, a.label);
            if at.is_empty() { base } else { format!("{base} at {at}") }
        }),
        x_label: p
            .x_label
            .clone()
            .unwrap_or_else(|| format!("{} on log2 buckets (1K = 1024)", a.label)),
        y_label: p.y_label.clone().unwrap_or_else(|| {
            if p.share {
                format!("share of {counted} (%)")
            } else {
                format!("{counted} (count)")
            }
        }),
        unit: unit.to_string(),
        y_log: p.y_log,
        series,
        marks,
        footer: footer(s),
    }
}

#[cfg(test)]
mod tests {
    use super::with_unit;

    #[test]
    fn a_value_label_carries_its_unit() {
        assert_eq!(with_unit("delete_us", "us"), "delete (us)");
        assert_eq!(with_unit("batches_per_flush", "batches"), "batches per flush");
        assert_eq!(with_unit("us_per_flush", "us"), "us per flush");
        assert_eq!(with_unit("batches", "count"), "batches");
        assert_eq!(with_unit("x", ""), "x");
    }
}
