//! Work queues of the path interpreter: a `queue` step defers an item
//! (`queue_work`, kernel/workqueue.c) that a worker runs later as a
//! sub-path of steps, so the worker's lines and locks contend with the
//! threads'.
//!
//! - A **bound** (per-CPU) queue's item runs on the CPU that queued it, in
//!   that CPU's kworker. The kworker takes the CPU from the CPU's thread
//!   at the thread's next scheduling point, which the model places at the
//!   end of the thread's current operation (a thread is not preempted in
//!   the middle of an operation, so it holds no lock when the worker
//!   runs); the worker empties its list (`worker_thread` runs until the
//!   pool's worklist is empty) and the thread's next operation starts
//!   after it (the worker's time counts in that operation's latency).
//! - An **unbound** queue (`WQ_UNBOUND`) has one worker on each idle CPU
//!   of the machine (CPUs no thread runs on, shared out between unbound
//!   queues in declaration order), at most `max_active`. An item goes to
//!   the lowest-numbered idle worker, which runs after the scheduler's
//!   wake-up latency; with every worker busy it waits FIFO. With no idle
//!   CPU at all, the item waits for the first thread to reach the end of
//!   an operation, which runs it as a bound worker would.
//!
//! Queueing writes the pool's line (`pool->lock` and its worklist: one
//! line per CPU for a bound queue, one shared line, `NAME.pool`, for an
//! unbound one); a worker writes it again when it takes the item. One
//! pool stands for the kernel's per-node (per-pod) unbound pools.

use super::config::{StepConfig, WorkqueueConfig, WorkqueueKind};
use crate::engine::time::SimTimePs;
use crate::machine::coherence::LineId;
use crate::param::ParamError;
use std::collections::VecDeque;

/// `WQ_DFL_ACTIVE` (include/linux/workqueue.h): the default `max_active`.
pub const WQ_DFL_ACTIVE: u32 = 256;

/// A work queue's own keys (`[workqueues.NAME]` at `field`): a sub-path,
/// and `max_active` only when unbound.
pub(super) fn check_config(q: &WorkqueueConfig, field: &str) -> Result<(), ParamError> {
    if q.path.is_empty() {
        return Err(ParamError::new(
            format!("{field}.path"),
            "a work queue needs at least one [[workqueues.NAME.path]] step: what its worker runs per item",
        ));
    }
    match q.max_active {
        Some(_) if q.kind == WorkqueueKind::Bound => {
            return Err(ParamError::new(
                format!("{field}.max_active"),
                "only an `unbound` work queue reads max_active (a bound item runs on its own CPU)",
            ));
        }
        Some(0) => return Err(ParamError::new(format!("{field}.max_active"), "expected max_active >= 1")),
        _ => {}
    }
    for (i, s) in q.path.iter().enumerate() {
        let (key, set) = if s.queue.is_some() {
            ("queue", true)
        } else if s.every_total.is_some() {
            ("every_total", true)
        } else {
            ("every", s.every.is_some())
        };
        if set {
            return Err(ParamError::new(
                format!("{field}.path[{i}].{key}"),
                format!("a work queue's step does not read `{key}` (a worker runs every step of each item and queues nothing); remove it"),
            ));
        }
    }
    Ok(())
}

/// A queue's arrivals at an `every_total` step are counted once, by the
/// queue ([`Wq::arrivals`]): a queue with such a step in the threads'
/// `path` is queued by that step alone.
pub(super) fn check_every_total(path: &[StepConfig]) -> Result<(), ParamError> {
    for (i, s) in path.iter().enumerate() {
        let (Some(name), Some(_)) = (s.queue.as_deref(), s.every_total) else {
            continue;
        };
        let other = path
            .iter()
            .enumerate()
            .find(|&(j, o)| j != i && o.queue.as_deref() == Some(name))
            .map(|(j, _)| j);
        if let Some(j) = other {
            return Err(ParamError::new(
                format!("path[{i}].every_total"),
                format!(
                    "work queue `{name}` counts the arrivals at its every_total step over all threads, so no other step may queue on it (path[{j}] does): give that step its own queue"
                ),
            ));
        }
    }
    Ok(())
}

/// A work queue as the interpreter needs it.
#[derive(Debug, Clone)]
pub struct QueueSpec {
    /// Its name (metrics are `NAME.items`, ...).
    pub name: String,
    /// Per-CPU (bound) or unbound.
    pub bound: bool,
    /// Unbound: the processes that are its workers (on idle CPUs).
    pub workers: Vec<u32>,
    /// Pool lines: one per thread (bound) or one (unbound).
    pub pool_lines: Vec<LineId>,
}

/// A work queue's state and statistics during a run.
#[derive(Debug, Clone)]
pub(super) struct Wq {
    pub(super) spec: QueueSpec,
    /// Index of its sub-path's first step (`Dequeue`) and last (`EndItem`)
    /// in the combined path.
    pub(super) seg: (usize, usize),
    /// Unbound: items waiting for a worker (their queueing times).
    pub(super) pool: VecDeque<SimTimePs>,
    /// Unbound: idle workers, lowest process number taken first.
    pub(super) idle: Vec<u32>,
    pub(super) queued: u64,
    /// Arrivals at its queue steps ([`super::sim::Step::Queue`]),
    /// over all threads.
    pub(super) arrivals: u64,
    pub(super) done: u64,
    pub(super) started: u64,
    pub(super) wait_ps: u64,
    pub(super) busy_ps: u64,
    waiting: u64,
    max_waiting: u64,
    /// Time integral of `waiting`, in item x ps, up to `since`.
    area: u128,
    since: SimTimePs,
}

impl Wq {
    pub(super) fn new(spec: QueueSpec, seg: (usize, usize)) -> Self {
        let mut idle = spec.workers.clone();
        idle.sort_unstable_by(|a, b| b.cmp(a));
        Wq {
            spec,
            seg,
            pool: VecDeque::new(),
            idle,
            queued: 0,
            arrivals: 0,
            done: 0,
            started: 0,
            wait_ps: 0,
            busy_ps: 0,
            waiting: 0,
            max_waiting: 0,
            area: 0,
            since: SimTimePs::ZERO,
        }
    }

    fn advance_area(&mut self, now: SimTimePs) {
        if now > self.since {
            self.area += u128::from(self.waiting) * u128::from(now.since(self.since).0);
            self.since = now;
        }
    }

    /// An item was queued at `now`.
    pub(super) fn enqueued(&mut self, now: SimTimePs) {
        self.advance_area(now);
        self.queued += 1;
        self.waiting += 1;
        self.max_waiting = self.max_waiting.max(self.waiting);
    }

    /// An item queued at `enq` starts at `now`.
    pub(super) fn started(&mut self, enq: SimTimePs, now: SimTimePs) {
        self.advance_area(now);
        self.waiting = self.waiting.saturating_sub(1);
        self.started += 1;
        self.wait_ps += now.since(enq).0;
    }

    /// The lowest-numbered idle worker, now busy.
    pub(super) fn take_idle(&mut self) -> Option<u32> {
        self.idle.pop()
    }

    /// Worker `w` has nothing to do.
    pub(super) fn make_idle(&mut self, w: u32) {
        let at = self.idle.partition_point(|&x| x > w);
        self.idle.insert(at, w);
    }

    /// The metric values, in [`super::metrics::QUEUE`] order, for a run
    /// that ended at `end` with `threads` threads.
    pub(super) fn values(&mut self, end: SimTimePs, threads: usize) -> [f64; 7] {
        self.advance_area(end);
        let elapsed = end.0.max(1) as f64;
        let workers = if self.spec.bound || self.spec.workers.is_empty() {
            threads
        } else {
            self.spec.workers.len()
        };
        [
            self.queued as f64,
            self.done as f64,
            self.wait_ps as f64 / self.started.max(1) as f64 / 1000.0,
            self.busy_ps as f64 / self.done.max(1) as f64 / 1000.0,
            (self.busy_ps as f64 / elapsed / workers.max(1) as f64).clamp(0.0, 1.0),
            self.area as f64 / elapsed,
            self.max_waiting as f64,
        ]
    }
}
