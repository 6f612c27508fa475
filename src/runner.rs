//! Runs the planned runs in parallel (rayon) and returns their metrics in
//! plan order, so outputs are identical for any number of jobs.

use crate::engine::Metrics;
use crate::plan::RunPlan;
use crate::scenario::Scenario;
use crate::workload::RunFailure;
use rayon::prelude::*;

/// The metrics of one run.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Which run.
    pub plan: RunPlan,
    /// Its metrics by name.
    pub metrics: Metrics,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// A run failed; the message says which and how to reproduce it.
    #[error(
        "run (point {point}, variant {variant}, replication {replication}) failed: {failure}; note: rerun with --seed {seed} to reproduce"
    )]
    Failed {
        /// Point index.
        point: usize,
        /// Variant name.
        variant: String,
        /// Replication.
        replication: u32,
        /// The scenario seed.
        seed: u64,
        /// The error (in the message, not chained, so it prints once).
        failure: RunFailure,
    },
    /// The thread pool could not be created.
    #[error("cannot start {0} worker threads")]
    Pool(usize),
}

/// Runs one planned run.
pub fn run_one(s: &Scenario, p: &RunPlan) -> Result<Metrics, RunError> {
    let config = &s.points[p.point].configs[p.variant];
    config.prepared.run(p.key).map_err(|failure| RunError::Failed {
        point: p.point,
        variant: s.variants[p.variant].name.clone(),
        replication: p.replication,
        seed: config.doc.scenario.seed,
        failure,
    })
}

/// Runs every planned run on `jobs` threads; `done` is called after each.
pub fn run_all(s: &Scenario, plan: &[RunPlan], jobs: usize, done: &(dyn Fn() + Sync)) -> Result<Vec<RunResult>, RunError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|_| RunError::Pool(jobs))?;
    pool.install(|| {
        plan.par_iter()
            .map(|p| {
                let metrics = run_one(s, p)?;
                done();
                Ok(RunResult { plan: *p, metrics })
            })
            .collect()
    })
}
