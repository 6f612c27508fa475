//! `[[expect]]` checks: a metric, or the ratio of a metric between two
//! variants, must lie within bounds at every selected point.

use super::csv::value_text;
use super::stats::{Summary, find};
use crate::scenario::Scenario;
use crate::scenario::config::ExpectConfig;

/// The outcome of one check at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// What was checked, in words.
    pub what: String,
    /// The point, as `param=value` pairs (labels where the axis has
    /// them, see [`point_label`]).
    pub at: String,
    /// The point, by index into [`Scenario::points`].
    pub point: usize,
    /// The measured value (mean over replications, or ratio of means).
    pub actual: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Whether it held (always false for a known gap).
    pub pass: bool,
    /// Why the model is known not to reach the figure, if the expectation
    /// says so: reported as a gap, not a pass, and not a failure.
    pub known_gap: Option<String>,
    /// Why the figure does not apply to this run, when it does not: it
    /// was measured on another host than the one the run is priced for
    /// (`measured_on`). Neither a pass nor a failure.
    pub not_applicable: Option<String>,
}

impl Check {
    /// Whether this check fails the run: it missed, is not a known gap
    /// and applies to the run.
    pub fn fails(&self) -> bool {
        !self.pass && self.known_gap.is_none() && self.not_applicable.is_none()
    }

    /// `pass`, `FAIL`, `gap` (a known gap, whatever the value) or `n/a`
    /// (a figure of another host).
    pub fn verdict(&self) -> &'static str {
        match (&self.not_applicable, &self.known_gap, self.pass) {
            (Some(_), _, _) => "n/a",
            (None, Some(_), _) => "gap",
            (None, None, true) => "pass",
            (None, None, false) => "FAIL",
        }
    }
}

/// Why expectation `e` does not apply to a run of `s`: it names the
/// profile its figure was measured on, and the run is priced on another
/// (after `--set`). Profiles are the same when they name one built-in
/// profile or, relative to the scenario's folder, one file.
pub fn not_applicable(s: &Scenario, e: &ExpectConfig) -> Option<String> {
    let on = e.measured_on.as_deref()?;
    let run = s.doc.machine.profile.as_str();
    let dir = &s.dir;
    let same = |a: &str, b: &str| {
        a == b || {
            let (pa, pb) = (dir.join(a), dir.join(b));
            matches!((pa.canonicalize(), pb.canonicalize()), (Ok(x), Ok(y)) if x == y)
        }
    };
    (!same(on, run)).then(|| format!("measured on the host of `{on}`; this run is priced on `{run}`"))
}

/// Bounds of an expectation.
pub fn bounds(e: &ExpectConfig) -> (f64, f64) {
    match (e.within.as_deref(), e.target, e.tolerance_pct) {
        (Some(&[lo, hi]), _, _) => (lo, hi),
        (None, Some(t), Some(pct)) => {
            let d = (t * pct / 100.0).abs();
            (t - d, t + d)
        }
        _ => (f64::NEG_INFINITY, f64::INFINITY),
    }
}

fn selected(s: &Scenario, e: &ExpectConfig, point: usize) -> bool {
    e.at.iter().all(|(k, v)| {
        s.sweep
            .iter()
            .position(|(p, _)| p == k)
            .is_some_and(|i| &s.points[point].values[i] == v)
    })
}

/// The point as people read it: `a=1 b=x`, with an axis's label in
/// place of its value where it has one (see [`Scenario::point_names`]).
pub fn point_label(s: &Scenario, point: usize) -> String {
    s.point_names(point, false).join(" ")
}

/// The point's swept values as `a=1 b=x`, whatever the labels: what the
/// point is (how `compare` pairs the points of two scenarios).
pub fn point_values(s: &Scenario, point: usize) -> String {
    s.sweep
        .iter()
        .zip(&s.points[point].values)
        .map(|((p, _), v)| format!("{p}={}", value_text(v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The index of the variant called `name`, if any.
pub fn variant_index(s: &Scenario, name: &str) -> Option<usize> {
    s.variants.iter().position(|v| v.name == name)
}

/// Evaluates every expectation of the scenario.
pub fn check_all(s: &Scenario, rows: &[Summary]) -> Vec<Check> {
    s.doc.expect.iter().flat_map(|e| check_one(s, e, rows)).collect()
}

/// The points an expectation selects, by index.
pub fn selected_points(s: &Scenario, e: &ExpectConfig) -> Vec<usize> {
    (0..s.points.len()).filter(|&p| selected(s, e, p)).collect()
}

/// Evaluates one expectation: one check per selected point (and, for a
/// plain metric without `variant`, per variant).
pub fn check_one(s: &Scenario, e: &ExpectConfig, rows: &[Summary]) -> Vec<Check> {
    let mut out = Vec::new();
    let (lo, hi) = bounds(e);
    let not_applicable = not_applicable(s, e);
    for point in selected_points(s, e) {
        let mean = |v: usize| find(rows, point, v, &e.metric).map_or(f64::NAN, |r| r.mean);
        let mut push = |what: String, actual: f64| {
            let pass = e.known_gap.is_none() && not_applicable.is_none() && actual.is_finite() && actual >= lo && actual <= hi;
            out.push(Check {
                what,
                at: point_label(s, point),
                point,
                actual,
                lo,
                hi,
                pass,
                known_gap: e.known_gap.clone(),
                not_applicable: not_applicable.clone(),
            });
        };
        if let Some(r) = &e.ratio {
            let (Some(a), Some(b)) = (variant_index(s, &r.of), variant_index(s, &r.over)) else {
                continue;
            };
            push(format!("{} {}/{}", e.metric, r.of, r.over), mean(a) / mean(b));
        } else {
            for (vi, v) in s.variants.iter().enumerate() {
                if e.variant.as_ref().is_none_or(|n| *n == v.name) {
                    push(format!("{} [{}]", e.metric, v.name), mean(vi));
                }
            }
        }
    }
    out
}
