//! The validation table: one row per published figure of the case
//! scenarios, with the simulated value and its 95% CI, whether a knob was
//! fitted on the figure or it is predicted, and the verdict. `fsmeta
//! validate` prints it and writes `docs/validation.md`.
//!
//! A row is an `[[expect]]` that states a published figure: one with a
//! `target`, a `ratio`, or an explicit `role`. Plain `within` bounds on a
//! single metric (sanity checks such as "records walked is positive") are
//! not published figures and get no row.

use super::compare::samples;
use super::expect::{Check, check_one, selected_points, variant_index};
use super::stats::{mean_ci, summarise};
use super::text::human;
use crate::runner::RunResult;
use crate::scenario::Scenario;
use crate::scenario::config::ExpectConfig;
use std::fmt::Write;

/// The case scenarios `fsmeta validate` runs when given no files: case
/// number and path from the project root (a missing file is skipped and
/// listed as not present).
pub const CASES: &[(u32, &str)] = &[
    (1, "scenarios/xfs-active-trans.toml"),
    (2, "scenarios/btrfs-inode-index.toml"),
    (3, "scenarios/btrfs-dir-index-batch.toml"),
    (4, "scenarios/xfs-alloc-cutoff.toml"),
];

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Case number (0 when the file is not in [`CASES`]).
    pub case: u32,
    /// Scenario name.
    pub scenario: String,
    /// The figure: metric and variant(s).
    pub figure: String,
    /// The point, short (`profile=host-a mean_ns=64800.0`).
    pub at: String,
    /// The published figure (`246k`, or `[1.4, 1.7]` for a range).
    pub published: String,
    /// The simulated mean and its 95% CI.
    pub simulated: String,
    /// `fitted` or `predicted`.
    pub role: String,
    /// `pass`, `known gap` or `FAIL`.
    pub verdict: String,
}

/// Whether an expectation states a published figure (see the module doc).
pub fn is_published(e: &ExpectConfig) -> bool {
    e.target.is_some() || e.ratio.is_some() || e.role.is_some()
}

/// The rows of one case scenario after its runs.
pub fn rows(case: u32, s: &Scenario, results: &[RunResult]) -> Vec<Row> {
    let summary = summarise(s, results);
    let mut out = Vec::new();
    for e in s.doc.expect.iter().filter(|e| is_published(e)) {
        let checks = check_one(s, e, &summary);
        let points = selected_points(s, e);
        let mut ci = points.iter().flat_map(|&p| simulated_ci(s, e, results, p));
        for c in &checks {
            let (m, lo, hi) = ci.next().unwrap_or((c.actual, c.actual, c.actual));
            out.push(Row {
                case,
                scenario: s.doc.scenario.name.clone(),
                figure: c.what.clone(),
                at: super::compare::short_point(s, c.point),
                published: published(e, c),
                simulated: if hi > lo {
                    format!("{} [{}, {}]", exact(m), exact(lo), exact(hi))
                } else {
                    exact(m)
                },
                role: e.role.clone().unwrap_or_else(|| "predicted".into()),
                verdict: match c.verdict() {
                    "gap" => "known gap".into(),
                    v => v.into(),
                },
            });
        }
    }
    out
}

/// Mean and 95% CI of what an expectation measures at `point`, one per
/// check in [`check_one`]'s order: a plain metric per variant, or the
/// per-replication ratio (paired: same random numbers) for a ratio.
fn simulated_ci(s: &Scenario, e: &ExpectConfig, results: &[RunResult], point: usize) -> Vec<(f64, f64, f64)> {
    let ci = |xs: &[f64]| {
        let (m, _, half) = mean_ci(xs, 0.95);
        (m, m - half, m + half)
    };
    if let Some(r) = &e.ratio {
        let (Some(a), Some(b)) = (variant_index(s, &r.of), variant_index(s, &r.over)) else {
            return Vec::new();
        };
        let (xa, xb) = (samples(results, point, a, &e.metric), samples(results, point, b, &e.metric));
        let ratios: Vec<f64> = xa.iter().zip(&xb).map(|(x, y)| x / y).collect();
        return vec![ci(&ratios)];
    }
    s.variants
        .iter()
        .enumerate()
        .filter(|(_, v)| e.variant.as_ref().is_none_or(|n| *n == v.name))
        .map(|(vi, _)| ci(&samples(results, point, vi, &e.metric)))
        .collect()
}

fn published(e: &ExpectConfig, c: &Check) -> String {
    match (e.target, e.tolerance_pct) {
        (Some(t), Some(pct)) => format!("{} ±{pct}%", exact(t)),
        (Some(t), None) => exact(t),
        _ => format!("[{}, {}]", exact(c.lo), exact(c.hi)),
    }
}

/// A figure for the table: 4 significant digits, k/M suffixes from 10^4.
pub fn exact(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x.abs() >= 1e4 {
        return human(x);
    }
    let digits = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else if x.abs() >= 1.0 {
        2
    } else {
        3
    };
    format!("{x:.digits$}")
}

/// The table as Markdown, with a heading saying how it was made.
pub fn markdown(rows: &[Row], quick: bool, missing: &[String]) -> String {
    let mut out = String::from("# Validation\n\n");
    out.push_str(
        "Generated by `fsmeta validate` (do not edit by hand): every published figure of the\n\
         reference cases (docs/reference/cases.md) next to what fsmeta simulates. *fitted*:\n\
         the scenario's one fitted knob was set on this figure, so agreement is by\n\
         construction; *predicted*: nothing was tuned on it. *known gap*: the model does\n\
         not reach the figure and the scenario says why (see its `known_gap`).\n\
         Simulated values are means over replications with the 95% CI (Student's t) when\n\
         there is more than one replication; ratios are per-replication ratios\n\
         (same random numbers on both sides).\n",
    );
    if quick {
        out.push_str("\n**Quick scale (`--quick`)**: the figures below are not the full-scale ones.\n");
    }
    out.push_str("\n| case | scenario | figure | at | published | simulated [95% CI] | role | verdict |\n");
    out.push_str("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for r in rows {
        let case = if r.case == 0 { "-".to_string() } else { r.case.to_string() };
        let _ = writeln!(
            out,
            "| {case} | {} | {} | {} | {} | {} | {} | {} |",
            r.scenario,
            r.figure.replace('|', "/"),
            if r.at.is_empty() { "-" } else { &r.at },
            r.published,
            r.simulated,
            r.role,
            r.verdict
        );
    }
    let count = |v: &str| rows.iter().filter(|r| r.verdict == v).count();
    let _ = writeln!(
        out,
        "\n{} figures: {} pass, {} known gap(s), {} FAIL ({} fitted, {} predicted).",
        rows.len(),
        count("pass"),
        count("known gap"),
        count("FAIL"),
        rows.iter().filter(|r| r.role == "fitted").count(),
        rows.iter().filter(|r| r.role != "fitted").count()
    );
    for m in missing {
        let _ = writeln!(out, "\nNot present: {m}.");
    }
    out
}
