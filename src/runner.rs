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
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
///
/// Runs start longest first ([`longest_first`]) and each worker takes the
/// next one when it is free, so a scenario whose runs differ in length
/// does not end on one long run with the other workers idle (the order in
/// which the scheduler would have given it out). Results are returned in
/// plan order whatever the order they were computed in. On a failure no
/// run starts after it, and the failure of the earliest run in plan order
/// among those computed is returned.
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
    let compute = |p: &RunPlan| -> Result<Metrics, RunError> {
        let Some(c) = cache else { return run_one(s, p) };
        let key = c.key(&fingerprints[p.point][p.variant], p.key);
        if let Some(m) = c.get(&key) {
            c.hit();
            return Ok(m);
        }
        let m = run_one(s, p)?;
        c.put(&key, &m);
        c.miss();
        Ok(m)
    };
    let order = longest_first(s, plan);
    let slots: Vec<OnceLock<Result<Metrics, RunError>>> = plan.iter().map(|_| OnceLock::new()).collect();
    let (next, failed) = (AtomicUsize::new(0), AtomicBool::new(false));
    pool.broadcast(|_| {
        while !failed.load(Ordering::Relaxed) {
            let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            let result = compute(&plan[i]);
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
            } else {
                done();
            }
            let _ = slots[i].set(result);
        }
    });
    // A slot left empty was not started because a run failed, and that
    // run's slot holds its failure: the first failure in plan order is
    // returned, else every slot holds its metrics.
    let mut results = Vec::with_capacity(plan.len());
    let mut failure = None;
    for (p, slot) in plan.iter().zip(slots) {
        match slot.into_inner() {
            Some(Ok(metrics)) => results.push(RunResult { plan: *p, metrics }),
            Some(Err(e)) => {
                failure.get_or_insert(e);
            }
            None => {}
        }
    }
    match failure {
        Some(e) => Err(e),
        None => {
            debug_assert_eq!(results.len(), plan.len(), "a run was skipped without a failure");
            Ok(results)
        }
    }
}

/// Plan indices in the order runs start: by [`Prepared::work_estimate`]
/// of their configuration, largest first; equal estimates keep plan order
/// (a workload without an estimate runs in plan order).
///
/// [`Prepared::work_estimate`]: crate::workload::Prepared::work_estimate
pub fn longest_first(s: &Scenario, plan: &[RunPlan]) -> Vec<usize> {
    let work = |p: &RunPlan| s.points[p.point].configs[p.variant].prepared.work_estimate();
    let mut order: Vec<usize> = (0..plan.len()).collect();
    order.sort_by(|&a, &b| work(&plan[b]).total_cmp(&work(&plan[a])));
    order
}
