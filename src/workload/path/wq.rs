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

use crate::engine::time::SimTimePs;
use crate::machine::coherence::LineId;
use std::collections::VecDeque;

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
    /// Arrivals at its `every_total` step ([`super::sim::Step::QueueTotal`]),
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
