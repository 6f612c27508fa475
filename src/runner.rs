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
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};

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
/// does not end on one long run with the other workers idle; a run whose
/// estimated memory would take the runs in flight over the scenario's
/// budget ([`Scenario::memory_budget`], `--max-memory`) waits for one to
/// end, and a shorter one that fits starts first. Results are returned in
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
    let memory: Vec<u64> = plan
        .iter()
        .map(|p| s.points[p.point].configs[p.variant].prepared.memory_bytes())
        .collect();
    let queue = Queue::new(longest_first(s, plan), memory, s.memory_budget);
    let slots: Vec<OnceLock<Result<Metrics, RunError>>> = plan.iter().map(|_| OnceLock::new()).collect();
    pool.broadcast(|_| {
        while let Some(i) = queue.take() {
            let result = compute(&plan[i]);
            let ok = result.is_ok();
            let _ = slots[i].set(result);
            give_back_freed_memory();
            queue.finish(i, ok);
            if ok {
                done();
            }
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

/// Returns the memory a finished run freed to the system. glibc keeps
/// freed blocks in the freeing thread's arena (a large block too, once
/// one that size was freed: its threshold for mapping blocks of their
/// own rises), so without this each worker holds the peak of the largest
/// run it has made and the process the sum of those peaks
/// (`index-scaling.toml`: 0.94 to 1.04 GB against 0.47 GB for its largest
/// run alone).
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas under their locks
    // and has no precondition on the caller.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The runs not yet started, longest first, and the memory the runs in
/// flight are estimated to need ([`Prepared::memory_bytes`]), shared by
/// the workers.
///
/// [`Prepared::memory_bytes`]: crate::workload::Prepared::memory_bytes
struct Queue {
    state: Mutex<QueueState>,
    /// Signalled when a run ends (memory given back, or a failure).
    ended: Condvar,
    /// Per plan index: the run's estimated peak memory, bytes.
    memory: Vec<u64>,
    /// The most memory the runs in flight may be estimated to need
    /// together, bytes (`--max-memory`).
    budget: u64,
}

struct QueueState {
    /// Plan indices not started, in the order they should start.
    pending: Vec<usize>,
    /// Estimated memory of the runs in flight, bytes.
    in_flight: u64,
    /// Runs in flight.
    running: usize,
    /// A run failed: no run starts after it.
    failed: bool,
}

impl Queue {
    fn new(order: Vec<usize>, memory: Vec<u64>, budget: u64) -> Self {
        let state = QueueState {
            pending: order,
            in_flight: 0,
            running: 0,
            failed: false,
        };
        Queue {
            state: Mutex::new(state),
            ended: Condvar::new(),
            memory,
            budget,
        }
    }

    /// The next run to start: the first pending one whose estimate fits
    /// in the budget beside the runs in flight (any one when none is in
    /// flight: a point whose single run exceeds the budget was refused
    /// when the scenario was loaded); waits while none fits. `None` when
    /// every run has started or one failed.
    fn take(&self) -> Option<usize> {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if st.failed || st.pending.is_empty() {
                return None;
            }
            let room = self.budget.saturating_sub(st.in_flight);
            let fits = st.pending.iter().position(|&i| st.running == 0 || self.memory[i] <= room);
            if let Some(k) = fits {
                let i = st.pending.remove(k);
                st.in_flight += self.memory[i];
                st.running += 1;
                return Some(i);
            }
            st = self.ended.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Run `i` ended (`ok`: without a failure); its memory is free again.
    fn finish(&self, i: usize, ok: bool) {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.in_flight -= self.memory[i];
        st.running -= 1;
        st.failed |= !ok;
        drop(st);
        self.ended.notify_all();
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
