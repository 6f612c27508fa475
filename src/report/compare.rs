//! Before / after comparisons ready to paste into a patch description:
//! per metric, the two means, the change in words, the 95% CI of the
//! paired difference (common random numbers: replication r of both sides
//! ran with the same random streams) and Welch's t-test p-value.

use super::expect::point_values;
use super::speedup;
use super::stats::{mean_ci, welch_samples};
use super::text::{human, unit_of};
use crate::runner::RunResult;
use crate::scenario::Scenario;
use std::fmt::Write;

/// One metric at one point: the replications of both sides, in
/// replication order (so that `after[r] - before[r]` is a paired
/// difference).
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The point, as short `param=value` pairs (empty for a single point).
    pub point: String,
    /// The metric.
    pub metric: String,
    /// Its unit (decides "faster" or "slower").
    pub unit: String,
    /// The before side's values.
    pub before: Vec<f64>,
    /// The after side's values.
    pub after: Vec<f64>,
}

/// The paired difference `after - before`: its mean and 95% CI, or `None`
/// when the sides do not pair up (different lengths or fewer than 1).
pub fn paired_diff(p: &Pair) -> Option<(f64, f64, f64)> {
    if p.before.len() != p.after.len() || p.before.is_empty() {
        return None;
    }
    let d: Vec<f64> = p.after.iter().zip(&p.before).map(|(a, b)| a - b).collect();
    let (m, _, half) = mean_ci(&d, 0.95);
    Some((m, m - half, m + half))
}

/// The values of `metric` at `point` for `variant`, in replication order.
pub fn samples(results: &[RunResult], point: usize, variant: usize, metric: &str) -> Vec<f64> {
    let mut rs: Vec<(u32, f64)> = results
        .iter()
        .filter(|r| r.plan.point == point && r.plan.variant == variant)
        .filter_map(|r| r.metrics.get(metric).map(|&v| (r.plan.replication, v)))
        .collect();
    rs.sort_by_key(|r| r.0);
    rs.into_iter().map(|r| r.1).collect()
}

/// A point's label with short values (`profile=host-a count=1`), an
/// axis's label in place of its value where it has one.
pub fn short_point(s: &Scenario, point: usize) -> String {
    s.point_names(point, true).join(" ")
}

/// Every key metric at every point: variant `a` (before) against `b`
/// (after) of one scenario.
pub fn variant_pairs(s: &Scenario, results: &[RunResult], a: usize, b: usize) -> Vec<Pair> {
    let metrics = s.first().map_or(&[][..], |p| p.key_metrics());
    let mut out = Vec::new();
    for point in 0..s.points.len() {
        for m in metrics {
            out.push(Pair {
                point: short_point(s, point),
                metric: (*m).to_string(),
                unit: unit_of(s, m),
                before: samples(results, point, a, m),
                after: samples(results, point, b, m),
            });
        }
    }
    out
}

/// Every key metric at every point and variant of two scenarios with the
/// same sweep grid: `sa` (before) against `sb` (after), variant by
/// variant name. Fails, saying why, when the grids or variants differ.
pub fn file_pairs(sa: &Scenario, ra: &[RunResult], sb: &Scenario, rb: &[RunResult]) -> Result<Vec<Pair>, String> {
    // Points pair by their values; labels are only names.
    let of_b: std::collections::BTreeMap<String, usize> = (0..sb.points.len()).map(|p| (point_values(sb, p), p)).collect();
    let labels_a: Vec<String> = (0..sa.points.len()).map(|p| point_values(sa, p)).collect();
    let only_a: Vec<&str> = labels_a.iter().filter(|l| !of_b.contains_key(*l)).map(String::as_str).collect();
    let only_b: Vec<&str> = of_b.keys().filter(|l| !labels_a.contains(l)).map(String::as_str).collect();
    if !only_a.is_empty() || !only_b.is_empty() {
        return Err(grid_mismatch(sa, sb, &only_a, &only_b));
    }
    let mut out = Vec::new();
    let metrics = sa.first().map_or(&[][..], |p| p.key_metrics());
    for (va, v) in sa.variants.iter().enumerate() {
        let Some(vb) = sb.variants.iter().position(|w| w.name == v.name) else {
            continue;
        };
        for (point, l) in labels_a.iter().enumerate() {
            let point_b = of_b[l];
            for m in metrics {
                let mut label = short_point(sa, point);
                if sa.variants.len() > 1 {
                    label = format!("{} {label}", v.name).trim().to_string();
                }
                out.push(Pair {
                    point: label,
                    metric: (*m).to_string(),
                    unit: unit_of(sa, m),
                    before: samples(ra, point, va, m),
                    after: samples(rb, point_b, vb, m),
                });
            }
        }
    }
    if out.is_empty() {
        return Err(format!("the two scenarios share no variant name ({} vs {})", names(sa), names(sb)));
    }
    Ok(out)
}

/// Why two scenarios' points do not pair up: the points each has that
/// the other lacks (by swept values, so a grid in another order pairs).
fn grid_mismatch(sa: &Scenario, sb: &Scenario, only_a: &[&str], only_b: &[&str]) -> String {
    let list = |ls: &[&str]| -> String {
        let shown: Vec<String> = ls
            .iter()
            .take(3)
            .map(|l| if l.is_empty() { "(no sweep)".to_string() } else { format!("`{l}`") })
            .collect();
        let more = if ls.len() > 3 {
            format!(" and {} more", ls.len() - 3)
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(", "))
    };
    let side = |s: &Scenario, other: &Scenario, only: &[&str]| -> Option<String> {
        (!only.is_empty()).then(|| {
            format!(
                "{} has {} point(s) {} lacks: {}",
                s.file.display(),
                only.len(),
                other.file.display(),
                list(only)
            )
        })
    };
    let parts: Vec<String> = [side(sa, sb, only_a), side(sb, sa, only_b)].into_iter().flatten().collect();
    format!(
        "the two scenarios sweep different points: {}; compare pairs points by their swept values and needs the same ones",
        parts.join("; ")
    )
}

fn names(s: &Scenario) -> String {
    s.variants.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// A p-value for people: `<0.001`, `0.031`, `0.54`; `-` when undefined.
pub fn p_text(p: Option<f64>) -> String {
    match p {
        None => "-".into(),
        Some(p) if p < 0.001 => "<0.001".into(),
        Some(p) if p < 0.1 => format!("{p:.3}"),
        Some(p) => format!("{p:.2}"),
    }
}

/// A signed human number (`+1.2k`, `-3.40`).
fn signed(x: f64) -> String {
    if x >= 0.0 { format!("+{}", human(x)) } else { human(x) }
}

/// Widest point label kept on the row itself; longer labels get a line
/// of their own.
const POINT_COLS: usize = 22;

/// The before / after tables, one per metric, plain text under 72 columns
/// (a long point label takes its own line). `heading` opens the text;
/// `before` and `after` name the two sides.
pub fn patch_text(heading: &str, before: &str, after: &str, pairs: &[Pair]) -> String {
    let mut out = format!("{heading}\n");
    let mut metrics: Vec<&str> = Vec::new();
    for p in pairs {
        if !metrics.contains(&p.metric.as_str()) {
            metrics.push(&p.metric);
        }
    }
    for m in metrics {
        let rows: Vec<&Pair> = pairs.iter().filter(|p| p.metric == m).collect();
        let unit = rows.first().map_or("", |p| p.unit.as_str());
        let unit = if unit.is_empty() { String::new() } else { format!(" ({unit})") };
        let _ = writeln!(out, "\n{m}{unit}");
        let _ = writeln!(out, "{:<w$} {:>10} {:>10}", "", "Before", "After", w = POINT_COLS);
        let _ = writeln!(
            out,
            "{:<w$} {:>10} {:>10}  {:<13} {:>7}",
            "",
            cut(before, 10),
            cut(after, 10),
            "change",
            "p",
            w = POINT_COLS
        );
        for p in rows {
            row(&mut out, p);
        }
    }
    out.push_str(
        "\nchange: after vs before; p: Welch's t-test, two-sided (- when a\nside has one run or neither has spread); diff: paired by\nreplication (same random numbers), 95% CI (Student's t).\n",
    );
    out
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let c: String = s.chars().take(n - 1).collect();
        format!("{c}~")
    }
}

fn row(out: &mut String, p: &Pair) {
    let (mb, _, hb) = mean_ci(&p.before, 0.95);
    let (ma, _, ha) = mean_ci(&p.after, 0.95);
    let ci = paired_diff(p).filter(|_| p.before.len() > 1).map(|(_, lo, hi)| (lo, hi));
    let change = speedup::words_ci(mb, ma, &p.unit, ci);
    let pv = p_text(welch_samples(&p.before, &p.after).map(|w| w.2));
    let label = if p.point.chars().count() <= POINT_COLS {
        p.point.clone()
    } else {
        let _ = writeln!(out, "{}", p.point);
        String::new()
    };
    let _ = writeln!(
        out,
        "{label:<w$} {:>10} {:>10}  {change:<13} {pv:>7}",
        human(mb),
        human(ma),
        w = POINT_COLS
    );
    let n = p.before.len().min(p.after.len());
    if n > 1 {
        let spread = format!("±{} / ±{}", human(hb), human(ha));
        match paired_diff(p) {
            Some((d, lo, hi)) => {
                let _ = writeln!(
                    out,
                    "{:<w$} diff {} [{}, {}], n={n}, {spread}",
                    "",
                    signed(d),
                    signed(lo),
                    signed(hi),
                    w = 2
                );
            }
            None => {
                let _ = writeln!(out, "  {spread}");
            }
        }
    }
}
