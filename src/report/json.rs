//! `summary.json`: the summary rows as [`model::SummaryJson`], written
//! through `serde_json` (pretty-printed; keys in declaration order, the
//! point's parameters in path order).

use super::model::{self, SummaryJson, SummaryJsonRow};
use super::stats::Summary;
use crate::scenario::Scenario;

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The summary as the typed document.
pub fn summary_doc(s: &Scenario, rows: &[Summary]) -> SummaryJson {
    SummaryJson {
        format: model::SUMMARY_JSON_FORMAT.into(),
        version: model::SUMMARY_JSON_VERSION,
        scenario: s.doc.scenario.name.clone(),
        seed: s.doc.scenario.seed,
        rows: rows
            .iter()
            .map(|r| SummaryJsonRow {
                variant: s.variants[r.variant].name.clone(),
                point: s.point_columns().into_iter().zip(s.point_cells(r.point)).collect(),
                metric: r.metric.clone(),
                mean: finite(r.mean),
                stddev: finite(r.stddev),
                // One replication has no confidence interval: null, not
                // zero-width (as summary.csv leaves the cells empty).
                ci95_lo: finite(r.ci95_lo).filter(|_| r.n > 1),
                ci95_hi: finite(r.ci95_hi).filter(|_| r.n > 1),
                n: r.n,
            })
            .collect(),
    }
}

/// The whole summary as one JSON document.
pub fn summary_json(s: &Scenario, rows: &[Summary]) -> Result<String, model::ModelError> {
    summary_doc(s, rows).to_json()
}
