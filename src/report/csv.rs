//! `runs.csv` and `summary.csv`: plain CSV with a fixed column order and
//! Rust's shortest round-trip float formatting (deterministic).

use super::stats::Summary;
use crate::runner::RunResult;
use crate::scenario::Scenario;
use std::fmt::Write;

/// Quotes a CSV field when it needs it.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub use crate::scenario::sweep::value_text;

/// A float as CSV text (`NaN` for not-a-number).
pub fn num(x: f64) -> String {
    if x.is_nan() { "NaN".into() } else { format!("{x}") }
}

fn params(s: &Scenario, point: usize) -> String {
    s.points[point]
        .values
        .iter()
        .map(|v| format!(",{}", field(&value_text(v))))
        .collect()
}

fn header_params(s: &Scenario) -> String {
    s.sweep.iter().map(|(p, _)| format!(",{}", field(p))).collect()
}

/// One row per run: scenario, variant, swept parameters, replication,
/// seed, then every metric (union of names, sorted).
pub fn runs_csv(s: &Scenario, results: &[RunResult]) -> String {
    let mut names: Vec<&str> = results.iter().flat_map(|r| r.metrics.keys().map(String::as_str)).collect();
    names.sort_unstable();
    names.dedup();
    let mut out = format!("scenario,variant{},replication,seed", header_params(s));
    for n in &names {
        let _ = write!(out, ",{}", field(n));
    }
    out.push('\n');
    for r in results {
        let p = &r.plan;
        let _ = write!(
            out,
            "{},{}{},{},{}",
            field(&s.doc.scenario.name),
            field(&s.variants[p.variant].name),
            params(s, p.point),
            p.replication,
            p.key.run_seed()
        );
        for n in &names {
            let _ = write!(out, ",{}", r.metrics.get(*n).map_or(String::new(), |&v| num(v)));
        }
        out.push('\n');
    }
    out
}

/// Long format: one row per (point, variant, metric).
pub fn summary_csv(s: &Scenario, rows: &[Summary]) -> String {
    let mut out = format!(
        "scenario,variant{},metric,mean,stddev,ci95_lo,ci95_hi,n,diff_vs_first,diff_ci95_lo,diff_ci95_hi,ratio_vs_first\n",
        header_params(s)
    );
    for r in rows {
        // One replication has no confidence interval: empty, not zero-width.
        let ci = |x: f64| if r.n > 1 { num(x) } else { String::new() };
        let paired = r.paired.map_or(",,,".to_string(), |p| {
            format!("{},{},{},{}", num(p.diff_mean), ci(p.diff_lo), ci(p.diff_hi), num(p.ratio))
        });
        let _ = writeln!(
            out,
            "{},{}{},{},{},{},{},{},{},{paired}",
            field(&s.doc.scenario.name),
            field(&s.variants[r.variant].name),
            params(s, r.point),
            field(&r.metric),
            num(r.mean),
            num(r.stddev),
            ci(r.ci95_lo),
            ci(r.ci95_hi),
            r.n
        );
    }
    out
}
