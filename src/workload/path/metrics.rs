//! The metrics a `path` run reports, declared once: the interpreter fills
//! them in this order and the schema (for `[[expect]]`, `[[plot]]` and
//! `fsmeta keys`) is built from the same lists.

use crate::workload::MetricSpec;

/// (name, unit, meaning) of one metric.
pub type Decl = (&'static str, &'static str, &'static str);

/// Whole-run metrics, in the order [`super::sim`] fills them.
pub const RUN: &[Decl] = &[
    ("ops", "count", "operations completed by all threads"),
    ("ops_per_sec", "ops/s", "operations per simulated second"),
    ("events", "count", "events the engine processed"),
    ("sim_time_ms", "ms", "simulated time at the stop"),
    ("latency_mean_ns", "ns", "mean time of one operation"),
    ("latency_p50_ns", "ns", "median operation time (histogram bucket)"),
    ("latency_p90_ns", "ns", "90th percentile operation time"),
    ("latency_p95_ns", "ns", "95th percentile operation time"),
    ("latency_p99_ns", "ns", "99th percentile operation time"),
    ("latency_max_ns", "ns", "longest operation"),
];

/// With a precision-targeted stop (`[stop]`), `stop.` + these, in fill
/// order (see [`super::precision`]).
pub const STOP: &[Decl] = &[
    (
        "ops_per_sec",
        "ops/s",
        "throughput after the warm-up cut (the estimate the interval is around)",
    ),
    (
        "half_width_pct",
        "%",
        "achieved 95 % half-width of the throughput, relative (-1: too few batches)",
    ),
    ("warmup_ops", "count", "operations cut as warm-up (MSER on the batch means)"),
    ("batches", "count", "batches after the warm-up cut"),
    ("batch_ops", "count", "operations per batch at the stop"),
];

/// The `stop.*` part of the schema.
pub fn stop_schema() -> Vec<MetricSpec> {
    STOP.iter()
        .map(|&(n, u, m)| MetricSpec {
            name: format!("stop.{n}"),
            unit: u,
            meaning: format!("precision stop: {m}"),
        })
        .collect()
}

/// Per shared line `NAME.` + these, in fill order.
pub const LINE: &[Decl] = &[
    ("utilisation", "fraction", "share of time the line was busy with transfers"),
    (
        "read_misses",
        "count",
        "reads that needed a transfer (the line was written by another CPU since)",
    ),
    ("wait_mean_ns", "ns", "mean wait for the line per miss"),
    ("transfers", "count", "cache-line transfers between CPUs"),
    ("transfers_smt", "count", "transfers between SMT siblings"),
    ("transfers_same_llc", "count", "transfers inside one LLC domain"),
    ("transfers_same_socket", "count", "transfers across LLC domains of one socket"),
    ("transfers_cross_socket", "count", "transfers between sockets"),
    (
        "writes",
        "count",
        "stores and atomic read-modify-writes of the line, hits or not (a count of what the path does)",
    ),
    (
        "cmpxchg_retries",
        "count",
        "cmpxchg steps retried: another CPU changed the value between the load and the cmpxchg",
    ),
];

/// Per lock `NAME.` + these, in fill order.
pub const LOCK: &[Decl] = &[
    ("utilisation", "fraction", "share of time the lock was held"),
    ("wait_mean_ns", "ns", "mean wait per acquisition"),
    ("acquisitions", "count", "times the lock was taken"),
    ("contended", "count", "acquisitions that had to wait"),
    ("handoff_mean_ns", "ns", "mean release-to-acquire hand-off when contended"),
];

/// Per reader-writer lock (`rwsem`, `qrwlock`, `seqlock`) `NAME.` + these,
/// in fill order.
pub const RWLOCK: &[Decl] = &[
    (
        "utilisation",
        "fraction",
        "share of time the lock was held by anyone (readers or a writer)",
    ),
    ("write_utilisation", "fraction", "share of time a writer held the lock"),
    ("wait_mean_ns", "ns", "mean wait per acquisition (seqlock: per read section begun)"),
    ("acquisitions", "count", "times the lock was taken, both sides"),
    (
        "read_acquisitions",
        "count",
        "read-side acquisitions (seqlock: read sections that did not retry)",
    ),
    ("write_acquisitions", "count", "write-side acquisitions"),
    ("contended", "count", "acquisitions that had to wait"),
    ("handoff_mean_ns", "ns", "mean release-to-acquire hand-off when contended"),
    ("spins", "count", "rwsem: write acquisitions by optimistic spinning on the owner"),
    ("retries", "count", "seqlock: read sections retried because a write overlapped"),
];

/// Per per-AG or per-directory lock (`per`) `NAME.` + these, after its
/// lock or rwlock metrics, which are its busiest instance's.
pub const ARRAY: &[Decl] = &[
    (
        "instances",
        "count",
        "instances of the per-AG or per-directory lock (its other metrics are those of the busiest instance)",
    ),
    (
        "busiest",
        "index",
        "the instance held longest (the lowest on a tie): an AG or directory number",
    ),
    (
        "utilisation_sum",
        "count",
        "instances held at once, on average: the held time of all instances over the run time (above 1 when several are held together; the busiest's share is NAME.utilisation)",
    ),
];

/// Per work queue `NAME.` + these, in fill order (see [`super::wq`]).
pub const QUEUE: &[Decl] = &[
    ("queued", "count", "items queued (`queue` steps run)"),
    ("items", "count", "items a worker completed"),
    ("wait_mean_ns", "ns", "mean time from queueing to a worker starting the item"),
    ("service_mean_ns", "ns", "mean time a worker spent on one item"),
    (
        "busy",
        "fraction",
        "share of the workers' time spent on items (workers: the unbound queue's, else one per thread)",
    ),
    ("queue_mean", "count", "time-averaged number of items waiting for a worker"),
    ("queue_max", "count", "largest number of items waiting for a worker"),
];

/// Per counter `NAME.` + these, in fill order.
pub const COUNTER: &[Decl] = &[
    ("folds", "count", "per-CPU deltas folded into the shared count"),
    (
        "inc_per_sec",
        "1/s",
        "increments per simulated second (m_active_trans: transaction handles per second)",
    ),
    (
        "incs_per_op",
        "count",
        "increments per completed operation (a count of what the path does: m_active_trans: handles per create)",
    ),
    ("read_error_max", "count", "largest error of a rough read (`percpu_counter_read`)"),
    (
        "slow_compares",
        "count",
        "compares (`__percpu_counter_compare`) too close to call from the rough count, so they summed every CPU's slot under the counter's lock",
    ),
    (
        "lock.utilisation",
        "fraction",
        "share of time the counter's spinlock (`fbc->lock`) was held, by folds and by sums of every CPU's slot (0 for an atomic)",
    ),
    ("lock.wait_mean_ns", "ns", "mean wait per acquisition of the counter's spinlock"),
];

/// The names a run reports metrics for, by kind of object.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Reported lines.
    pub lines: Vec<String>,
    /// Spinlocks and mutexes.
    pub locks: Vec<String>,
    /// Reader-writer locks.
    pub rwlocks: Vec<String>,
    /// Counters.
    pub counters: Vec<String>,
    /// Work queues.
    pub queues: Vec<String>,
    /// Per lock of `locks`: (first id, instances) (1 for a global lock).
    pub lock_arrays: Vec<(u32, u32)>,
    /// Per reader-writer lock of `rwlocks`: (first id, instances).
    pub rwlock_arrays: Vec<(u32, u32)>,
    /// The locks and reader-writer locks with `per` (they get [`ARRAY`]).
    pub arrays: Vec<String>,
}

/// The whole schema for the given names, sorted by name (the order of
/// `Metrics`).
pub fn schema(names: &Names) -> Vec<MetricSpec> {
    let mut out: Vec<MetricSpec> = RUN.iter().map(|&(n, u, m)| MetricSpec::new(n, u, m)).collect();
    let per = |names: &[String], decls: &[Decl], out: &mut Vec<MetricSpec>| {
        for name in names {
            for &(n, u, m) in decls {
                out.push(MetricSpec {
                    name: format!("{name}.{n}"),
                    unit: u,
                    meaning: format!("`{name}`: {m}"),
                });
            }
        }
    };
    per(&names.lines, LINE, &mut out);
    per(&names.locks, LOCK, &mut out);
    per(&names.rwlocks, RWLOCK, &mut out);
    per(&names.counters, COUNTER, &mut out);
    per(&names.queues, QUEUE, &mut out);
    per(&names.arrays, ARRAY, &mut out);
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}
