//! Builds [`PlotSpec`]s from `[[plot]]` blocks and the summary rows.

use super::csv::value_text;
use super::plot::{PlotPoint, PlotSpec, Series};
use super::stats::{Summary, find};
use crate::scenario::Scenario;
use crate::scenario::config::PlotConfig;

/// The file stem of a plot.
pub fn stem(p: &PlotConfig) -> String {
    p.name
        .clone()
        .unwrap_or_else(|| format!("{}-vs-{}", p.y, p.x))
        .replace(['/', '\\', ' '], "_")
}

fn index_of(s: &Scenario, param: &str) -> Option<usize> {
    s.sweep.iter().position(|(p, _)| p == param)
}

fn selected(s: &Scenario, p: &PlotConfig, point: usize) -> bool {
    p.at.iter()
        .all(|(k, v)| index_of(s, k).is_some_and(|i| &s.points[point].values[i] == v))
}

/// A default axis label with a unit, from a metric or parameter name.
pub fn label(name: &str) -> String {
    let unit = if name.ends_with("_per_sec") {
        " (per second)"
    } else if name.ends_with("_ns") {
        " (ns)"
    } else if name.ends_with("_us") {
        " (µs)"
    } else if name.ends_with("_ms") {
        " (ms)"
    } else if name.ends_with("utilisation") {
        " (fraction busy)"
    } else {
        ""
    };
    format!("{name}{unit}")
}

/// The plot's data: x from the swept parameter, one series per variant or
/// per value of the `series` parameter.
pub fn spec(s: &Scenario, p: &PlotConfig, rows: &[Summary]) -> PlotSpec {
    let xi = index_of(s, &p.x).unwrap_or(0);
    let numeric = s
        .sweep
        .get(xi)
        .is_some_and(|(_, vs)| vs.iter().all(|v| v.is_integer() || v.is_float()));
    let categories: Option<Vec<String>> = (!numeric).then(|| {
        s.sweep
            .get(xi)
            .map(|(_, vs)| vs.iter().map(value_text).collect())
            .unwrap_or_default()
    });
    let x_of = |point: usize| -> f64 {
        let v = &s.points[point].values[xi];
        match (v, &categories) {
            (toml::Value::Integer(i), _) => *i as f64,
            (toml::Value::Float(f), _) => *f,
            (_, Some(c)) => c.iter().position(|t| *t == value_text(v)).unwrap_or(0) as f64,
            _ => 0.0,
        }
    };
    let mut series: Vec<Series> = Vec::new();
    let variants: Vec<usize> = (0..s.variants.len())
        .filter(|&v| p.variants.is_empty() || p.variants.contains(&s.variants[v].name))
        .collect();
    for point in (0..s.points.len()).filter(|&pt| selected(s, p, pt)) {
        for &v in &variants {
            let Some(r) = find(rows, point, v, &p.y) else { continue };
            let name = if p.series == "variant" {
                s.variants[v].name.clone()
            } else {
                let si = index_of(s, &p.series).unwrap_or(0);
                let tag = format!(
                    "{}={}",
                    p.series.rsplit('.').next().unwrap_or(&p.series),
                    value_text(&s.points[point].values[si])
                );
                if variants.len() > 1 {
                    format!("{} {tag}", s.variants[v].name)
                } else {
                    tag
                }
            };
            let pt = PlotPoint {
                x: x_of(point),
                y: r.mean,
                lo: r.ci95_lo,
                hi: r.ci95_hi,
            };
            match series.iter_mut().find(|se| se.name == name) {
                Some(se) => se.points.push(pt),
                None => series.push(Series { name, points: vec![pt] }),
            }
        }
    }
    for se in &mut series {
        se.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    PlotSpec {
        title: p
            .title
            .clone()
            .unwrap_or_else(|| format!("{}: {} vs {}", s.doc.scenario.name, p.y, p.x)),
        x_label: p.x_label.clone().unwrap_or_else(|| label(&p.x)),
        y_label: p.y_label.clone().unwrap_or_else(|| label(&p.y)),
        x_log: p.x_log,
        y_log: p.y_log,
        x_categories: categories,
        series,
    }
}
