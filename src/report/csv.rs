//! `runs.csv` and `summary.csv`: the typed rows of [`super::model`] built
//! from a study's results and written through the `csv` crate, in a fixed
//! column order (see [`model::RunRow`] and [`model::SummaryRow`]).

use super::model::{self, Num, PairedCells, RunRow, RunsTable, SummaryRow, SummaryTable};
use super::stats::Summary;
use crate::runner::RunResult;
use crate::scenario::Scenario;

pub use crate::scenario::sweep::value_text;

/// The point columns: swept paths and label columns
/// ([`Scenario::point_columns`]).
fn params(s: &Scenario) -> Vec<String> {
    s.point_columns()
}

fn point(s: &Scenario, point: usize) -> Vec<String> {
    s.point_cells(point)
}

/// The rows of `runs.csv`: one per run, in plan order, with every
/// metric any run has (names sorted).
pub fn runs_table(s: &Scenario, results: &[RunResult]) -> RunsTable {
    let mut metrics: Vec<String> = results.iter().flat_map(|r| r.metrics.keys().cloned()).collect();
    metrics.sort_unstable();
    metrics.dedup();
    let rows = results
        .iter()
        .map(|r| RunRow {
            scenario: s.doc.scenario.name.clone(),
            variant: s.variants[r.plan.variant].name.clone(),
            point: point(s, r.plan.point),
            replication: r.plan.replication,
            seed: r.plan.key.run_seed(),
            metrics: metrics.iter().map(|n| r.metrics.get(n).map(|&v| Num(v))).collect(),
        })
        .collect();
    RunsTable {
        params: params(s),
        metrics,
        rows,
    }
}

/// The rows of `summary.csv`: one per (point, variant, metric).
pub fn summary_table(s: &Scenario, rows: &[Summary]) -> SummaryTable {
    let rows = rows
        .iter()
        .map(|r| SummaryRow {
            scenario: s.doc.scenario.name.clone(),
            variant: s.variants[r.variant].name.clone(),
            point: point(s, r.point),
            metric: r.metric.clone(),
            mean: Num(r.mean),
            stddev: Num(r.stddev),
            // One replication has no confidence interval: empty, not
            // zero-width.
            ci95_lo: (r.n > 1).then_some(Num(r.ci95_lo)),
            ci95_hi: (r.n > 1).then_some(Num(r.ci95_hi)),
            n: r.n,
            paired: PairedCells {
                diff: r.paired.map(|p| Num(p.diff_mean)),
                diff_lo: r.paired.filter(|_| r.n > 1).map(|p| Num(p.diff_lo)),
                diff_hi: r.paired.filter(|_| r.n > 1).map(|p| Num(p.diff_hi)),
                ratio: r.paired.and_then(|p| p.ratio).map(Num),
            },
        })
        .collect();
    SummaryTable { params: params(s), rows }
}

/// `runs.csv` as text: scenario, variant, swept parameters, replication,
/// seed, then every metric.
pub fn runs_csv(s: &Scenario, results: &[RunResult]) -> Result<String, model::ModelError> {
    runs_table(s, results).to_csv()
}

/// `summary.csv` as text: long format, one row per (point, variant,
/// metric).
pub fn summary_csv(s: &Scenario, rows: &[Summary]) -> Result<String, model::ModelError> {
    summary_table(s, rows).to_csv()
}
