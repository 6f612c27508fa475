//! Warnings for degenerate runs: results that are numbers but would
//! mislead a reader unless they are told (failed allocations averaged in,
//! quantised percentiles, a sweep that changed nothing).

use super::stats::Summary;
use crate::scenario::Scenario;
use std::collections::BTreeMap;

/// Relative width of a latency-histogram bucket (log-linear, 128
/// sub-buckets per power of two): a percentile is exact to within this.
pub const HISTOGRAM_RELATIVE_WIDTH: f64 = 1.0 / 128.0;

/// Every warning for these results, one line each.
pub fn warnings(s: &Scenario, rows: &[Summary]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(r) = rows.iter().find(|r| r.metric == "failed_calls" && r.mean > 0.0) {
        out.push(format!(
            "allocation calls found no free extent (the AG ran out of space: {:.0} calls per run at point {}, variant {}, and maybe elsewhere); their time and a length of 0 are averaged into alloc_us and alloc_len",
            r.mean, r.point, s.variants[r.variant].name
        ));
    }
    if rows.iter().any(|r| r.metric.starts_with("latency_p")) {
        out.push(format!(
            "latency percentiles are histogram bucket bounds: each is exact to within {:.2}% of its value",
            HISTOGRAM_RELATIVE_WIDTH * 100.0
        ));
    }
    let replicated = rows.iter().filter(|r| r.n > 1).collect::<Vec<_>>();
    if !replicated.is_empty() && replicated.iter().all(|r| r.stddev == 0.0) {
        out.push(format!(
            "all {} replications gave identical results: the workload draws no random numbers at these settings, so more replications (or another seed) add nothing",
            s.doc.scenario.replications
        ));
    }
    out.extend(unchanged_sweeps(s, rows));
    out.extend(identical_models(s));
    out
}

/// Points of one variant that build the same model (the workload's
/// [`crate::workload::Prepared::model_key`]): their differences are only
/// random numbers, whatever their labels say.
fn identical_models(s: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    for (vi, v) in s.variants.iter().enumerate() {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (pi, p) in s.points.iter().enumerate() {
            let Some(key) = p.configs.get(vi).and_then(|c| c.prepared.model_key()) else {
                continue;
            };
            match seen.get(&key) {
                Some(&first) => out.push(format!(
                    "points {} and {} of variant {} build the same model (the swept values round to one): their results differ only by random numbers",
                    crate::report::expect::point_label(s, first),
                    crate::report::expect::point_label(s, pi),
                    v.name
                )),
                None => {
                    seen.insert(key, pi);
                }
            }
        }
    }
    out
}

/// Swept parameters along which no metric changed at all.
fn unchanged_sweeps(s: &Scenario, rows: &[Summary]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, (path, values)) in s.sweep.iter().enumerate() {
        if values.len() < 2 {
            continue;
        }
        // Group points by the values of the other swept parameters, leaving
        // out those of this one's axis (a `[[sweep.zip]]` group advances
        // together).
        let axis = s.axis_of(k).map(|a| a.0);
        let zipped: Vec<bool> = (0..s.sweep.len()).map(|j| s.axis_of(j).map(|a| a.0) == axis).collect();
        let mut groups: BTreeMap<(String, usize, &str), Vec<u64>> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.metric != "events" && !r.metric.ends_with("_ms")) {
            let others: Vec<String> = s.points[r.point]
                .values
                .iter()
                .enumerate()
                .filter(|(i, _)| !zipped[*i])
                .map(|(_, v)| v.to_string())
                .collect();
            groups
                .entry((others.join(","), r.variant, r.metric.as_str()))
                .or_default()
                .push(r.mean.to_bits());
        }
        let changed = groups.values().any(|means| means.windows(2).any(|w| w[0] != w[1]));
        if !changed {
            out.push(format!(
                "sweeping `{path}` changed no metric: the workload may not depend on it at these values"
            ));
        }
    }
    out
}
