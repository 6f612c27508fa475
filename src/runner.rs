//! Runs the planned runs in parallel (rayon) and returns their metrics in
//! plan order, so outputs are identical for any number of jobs; optionally
//! through a result cache ([`cache`]). [`shard`] is the file a slice of a
//! plan is written to and merged from.

pub mod cache;
pub mod shard;
pub mod store;

use crate::engine::Metrics;
use crate::plan::RunPlan;
use crate::scenario::Scenario;
use crate::workload::RunFailure;
use cache::{CacheError, RunCache};
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
        "{}run (point {point}, variant {variant}, replication {replication}) failed: {failure}; note: rerun with --seed {seed} to reproduce",
        at.as_ref().map(|l| format!("{l}: ")).unwrap_or_default()
    )]
    Failed {
        /// Where in the scenario file the failing key is, when the
        /// failure names one ([`RunFailure::key`]).
        at: Option<crate::scenario::error::Location>,
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
    /// The result cache could not be written.
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// Runs one planned run.
pub fn run_one(s: &Scenario, p: &RunPlan) -> Result<Metrics, RunError> {
    let config = &s.points[p.point].configs[p.variant];
    config.prepared.run(p.key).map_err(|failure| RunError::Failed {
        at: failure.key().and_then(|k| s.locate(&k)),
        point: p.point,
        variant: s.variants[p.variant].name.clone(),
        replication: p.replication,
        seed: config.doc.scenario.seed,
        failure,
    })
}

/// Runs every planned run on `jobs` threads; `done` is called after each.
pub fn run_all(s: &Scenario, plan: &[RunPlan], jobs: usize, done: &(dyn Fn() + Sync)) -> Result<Vec<RunResult>, RunError> {
    run_all_cached(s, plan, jobs, done, None)
}

/// [`run_all`], reading each run from `cache` when it holds it and storing
/// each run it computes there.
pub fn run_all_cached(
    s: &Scenario,
    plan: &[RunPlan],
    jobs: usize,
    done: &(dyn Fn() + Sync),
    cache: Option<&RunCache>,
) -> Result<Vec<RunResult>, RunError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|_| RunError::Pool(jobs))?;
    let fingerprints: Vec<Vec<String>> = match cache {
        Some(_) => s
            .points
            .iter()
            .map(|p| p.configs.iter().map(RunCache::config_fingerprint).collect())
            .collect(),
        None => Vec::new(),
    };
    pool.install(|| {
        plan.par_iter()
            .map(|p| {
                let metrics = match cache {
                    Some(c) => {
                        let key = c.key(&fingerprints[p.point][p.variant], p.key);
                        match c.get(&key) {
                            Some(m) => {
                                c.hit();
                                m
                            }
                            None => {
                                let m = run_one(s, p)?;
                                c.put(&key, &m);
                                c.miss();
                                m
                            }
                        }
                    }
                    None => run_one(s, p)?,
                };
                done();
                Ok(RunResult { plan: *p, metrics })
            })
            .collect()
    })
}
