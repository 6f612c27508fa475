//! The path interpreter: one process per simulated thread, each running
//! its path (a list of steps) once per operation, in simulated time.
//!
//! A step that takes time schedules one event; steps that cost nothing run
//! inline, so a typical operation costs a handful of events. An event that
//! the queue would pop next anyway (a hit a few ns ahead, with every other
//! thread further out) is taken at once, without a trip through the queue;
//! it is still counted in `events` and runs in the same order. Line and lock
//! accesses are priced through [`Pricing`]; counter operations run the
//! counter model, which emits the accesses it makes.
//!
//! Tried in issue 35 (session 48) and not kept: folding pure work (a work
//! step with no reads) into the event before it, so a process schedules
//! one event for a run of such steps, and a waiter handed a lock schedules
//! the end of its critical section's work at once. Every output of the
//! shipped scenarios at `--quick` stayed byte-identical but `events`
//! (M/M/1//N 2.96 -> 2.00 events per completion, case 1 -4%), yet the
//! instructions rose (cachegrind: M/M/1//N at 1M completions 866M -> 880M,
//! a case 1 run of 1.39M events 546M -> 564M): the events saved were
//! mostly taken at once already (see above) or were lane pushes, cheaper
//! than the check the fold adds after every step.
//!
//! Tried in issue 35 (session 54) and not kept: locks run ahead. On a free
//! machine a FIFO lock whose critical sections are only work is a single
//! server, so a process asking for it can take it, run its section and
//! release it at once (Lindley's recursion: the grant is the later of the
//! request and the previous release), wake up once at its release, and
//! the grants be booked on the lock in FIFO order once the clock reaches
//! them. Every metric but `events` stayed equal to the event-by-event
//! run (a tandem of a queued lock and a mutex, ops and time stops), and
//! M/M/1//N went from 2.96 to 2.00 events per completion, but no faster
//! (`fsmeta bench`, three alternating pairs: ratio 0.772 / 0.912 / 0.904
//! against 0.948 / 0.842 / 0.942): each waiter's release became a heap
//! entry, where today the one holder's section end is mostly taken at
//! once and hand-offs go through the lane, so the heap work per
//! completion rose (two pushes and two pops against one of each). A hand
//! written Lindley loop is 2.1x the bare heap loop because it drops the
//! departure events; the interpreter's cost per completion is spread over
//! the step dispatch, the sampler, the lock word's coherence bookkeeping
//! and the latency histogram (perf: no symbol over 15%).

use super::metrics;
use super::precision::{BatchMeans, Target};
use super::proc::{Item, Proc, Spread};
use super::wq::{QueueSpec, Wq};
use crate::engine::Metrics;
use crate::engine::dist::{Duration, ExpDuration};
use crate::engine::histogram::LatencyHistogram;
use crate::engine::queue::{EventQueue, SchedulingError};
use crate::engine::time::SimTimePs;
use crate::kernel::sync::counter::{Counter, CounterOp, MicroOp};
use crate::machine::Pricing;
use crate::machine::coherence::{LineId, LineTable};
use crate::machine::lock::{LockId, LockTable};
use crate::machine::rwlock::{RwId, RwTable};
use rand_chacha::ChaCha8Rng;

mod report;

/// One step of a path.
#[derive(Debug, Clone)]
pub enum Step {
    /// CPU work; optionally `count` reads of a line spread over it.
    Work {
        /// Duration of the work (scaled by the CPU's SMT slowdown).
        dur: Duration,
        /// Reads of a read-mostly line made during the work.
        reads: Option<(LineId, u32)>,
    },
    /// `count` reads of a line.
    Read {
        /// The line.
        line: LineId,
        /// How many reads the step stands for.
        count: u32,
    },
    /// A store or atomic RMW of a line.
    Write(LineId),
    /// A `cmpxchg` loop on a line: load it, `window` ps of computing the
    /// new value, `cmpxchg`; again from the computing (with the value the
    /// failed `cmpxchg` returned) while another CPU changed the line in
    /// between.
    Cas {
        /// The line.
        line: LineId,
        /// Time between the load (or a failed `cmpxchg`) and the next
        /// `cmpxchg`, in ps.
        window: u64,
    },
    /// Acquire a lock.
    Lock(LockId),
    /// Release a lock.
    Unlock(LockId),
    /// An operation on a counter model.
    Counter {
        /// Index into [`SimSpec::counters`].
        id: u32,
        /// The operation.
        op: CounterOp,
        /// What an `add` adds, or the value a `compare` compares against
        /// (0 for the other operations).
        amount: i64,
    },
    /// Take a reader-writer lock (rwsem, qrwlock) or a seqlock's write side.
    RwLock {
        /// The lock.
        id: RwId,
        /// The write side (else the read side).
        write: bool,
    },
    /// Release a reader-writer lock (either side) or a seqlock's write side.
    RwUnlock(RwId),
    /// `read_seqbegin` on a seqlock.
    SeqBegin(RwId),
    /// `read_seqretry`: back to step `begin` (its `SeqBegin`) if a write
    /// overlapped the read section.
    SeqRetry {
        /// The seqlock.
        id: RwId,
        /// Index of the read section's `SeqBegin` step in its path.
        begin: usize,
    },
    /// Queue one item on work queue `q` (`queue_work`) every `every`-th
    /// time any thread reaches this step (1: every time; the count is the
    /// queue's, over all threads: `every_total`).
    Queue {
        /// The work queue.
        q: u32,
        /// Queue on the `every`-th, `2 x every`-th, ... arrival.
        every: u32,
    },
    /// A worker takes the item it is about to run from its pool (the first
    /// step of every work queue's sub-path, added by the interpreter).
    Dequeue(u32),
    /// The end of an item of work queue `id` (the last step of its
    /// sub-path, added by the interpreter): the worker takes the next item
    /// or goes back to its own path (a thread) or to sleep (a worker).
    EndItem(u32),
    /// A step on one instance of a per-AG or per-directory object (a lock
    /// with `per`): `steps[i]` on instance `i`, run with the instance of
    /// the process's AG (`key` [`KEY_AG`]) or directory ([`KEY_DIR`]),
    /// from [`SimSpec::instances`].
    Keyed {
        /// [`KEY_AG`] or [`KEY_DIR`].
        key: usize,
        /// The step on each instance.
        steps: Box<[Step]>,
    },
}

/// [`Step::Keyed`]: the instance of the process's allocation group.
pub const KEY_AG: usize = 0;
/// [`Step::Keyed`]: the instance of the process's directory.
pub const KEY_DIR: usize = 1;

/// When a run stops.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stop {
    /// Stop when this many operations have completed (all processes).
    pub ops: Option<u64>,
    /// Stop at this simulated time.
    pub time: Option<SimTimePs>,
    /// Stop when the throughput's confidence interval is this narrow
    /// ([`precision`](super::precision)); `ops` is then the cap.
    pub precision: Option<Target>,
}

/// Everything one run of the interpreter needs.
#[derive(Debug)]
pub struct SimSpec {
    /// Prices line transfers between processes.
    pub pricing: Pricing,
    /// Per process: work durations are multiplied by this / 1000 (SMT).
    pub slowdown_permille: Vec<u32>,
    /// Per process: its random stream for work durations.
    pub rngs: Vec<ChaCha8Rng>,
    /// The path every process runs once per operation.
    pub path: Vec<Step>,
    /// Per step of `path`: it runs only on every `every[i]`-th operation of
    /// a process (empty: every step on every operation).
    pub every: Vec<u32>,
    /// Per thread: when it starts its first operation (empty, or short:
    /// the rest at 0; [`super::start`]).
    pub starts: Vec<SimTimePs>,
    /// Processes that are threads (the first `threads`; the rest, up to
    /// `rngs.len()`, are unbound work-queue workers).
    pub threads: usize,
    /// Shared lines (names; metrics are reported for the first `reported_lines`).
    pub lines: LineTable,
    /// Number of lines (from id 0) that get metrics of their own.
    pub reported_lines: usize,
    /// Locks and their names.
    pub locks: LockTable,
    /// Names of the locks, by id.
    pub lock_names: Vec<String>,
    /// Counter models and their names.
    pub counters: Vec<(String, Counter)>,
    /// Reader-writer locks (rwsem, qrwlock, seqlock).
    pub rwlocks: RwTable,
    /// Names of the reader-writer locks, by id.
    pub rwlock_names: Vec<String>,
    /// Work queues, each with the steps its worker runs per item.
    pub queues: Vec<(QueueSpec, Vec<Step>)>,
    /// Per process: the instance of its AG and of its directory
    /// ([`KEY_AG`], [`KEY_DIR`]) its [`Step::Keyed`] steps take (empty: no
    /// keyed step; a worker of an unbound queue runs none).
    pub instances: Vec<[u32; 2]>,
    /// Per-instance locks reported as one array: (first id, instances)
    /// of the spinlocks and mutexes, by name order of `lock_names`.
    pub lock_arrays: Vec<(u32, u32)>,
    /// The same for the reader-writer locks, by `rwlock_names`.
    pub rwlock_arrays: Vec<(u32, u32)>,
    /// The names of the per-AG and per-directory objects (reported as
    /// their busiest instance, with [`metrics::ARRAY`]).
    pub arrays: Vec<String>,
    /// Stop condition.
    pub stop: Stop,
}

/// Errors of the interpreter: internal inconsistencies, and simulated
/// time that would leave the clock's range (never a silent saturation).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// An event was scheduled in the past.
    #[error(transparent)]
    Scheduling(#[from] SchedulingError),
    /// Neither an operation count nor a time limit was given.
    #[error("the run has no stop condition (set run.ops or run.time_ms)")]
    NoStop,
    /// Every process is blocked and no event is pending.
    #[error("deadlock: every process waits on a lock at {0}")]
    Deadlock(SimTimePs),
    /// The stop time is beyond the clock's range (it saturated to
    /// [`SimTimePs::MAX`] when converted from ms).
    #[error("the stop time is beyond the simulated clock's range (at most about 1.8e10 ms, 213 days)")]
    StopTimeOutOfRange,
    /// A `work` step drew (or was fixed at) a duration beyond the clock's
    /// range, or one that overflows once scaled by the SMT slowdown.
    #[error("path[{step}]: a work duration is beyond the simulated clock's range (at most about 1.8e16 ns, 213 days)")]
    DurationOutOfRange {
        /// Index of the step in the path.
        step: usize,
    },
    /// A step would end past the end of the clock's range.
    #[error(
        "simulated time overflows the clock's range (about 213 days) after {0}: lower scenario.ops or the path's work, or stop at scenario.time_ms"
    )]
    TimeOverflow(SimTimePs),
    /// A run stopped only by time made [`NO_PROGRESS_OPS`] operations
    /// without the clock moving: every step of the path costs nothing, so
    /// the stop time would never be reached.
    #[error(
        "no progress: {ops} operations completed at {at} without the clock moving; the path costs no time, so time_ms is never reached"
    )]
    NoProgress {
        /// The time the clock is stuck at.
        at: SimTimePs,
        /// Operations completed at that time.
        ops: u64,
    },
}

/// Operations that may complete at one simulated time, in a run with no
/// operation limit, before the run is declared stuck
/// ([`SimError::NoProgress`]). Ten million: far more than the threads of
/// any machine completing zero-length operations at one instant.
pub const NO_PROGRESS_OPS: u64 = 10_000_000;

/// A step of the path as the interpreter holds it.
#[derive(Debug)]
struct Op {
    step: Step,
    /// Runs on every `every`-th operation of a process (1: every one).
    every: u32,
    /// For a work step of exponential duration with no reads, the
    /// distribution: the commonest step, taken on one branch instead of
    /// the jumps through tables of `match step` and `match dur` (an
    /// indirect jump whose target changes from step to step is often
    /// mispredicted).
    exp: Option<ExpDuration>,
    /// For a lock (true) or unlock (false) step, the lock, for the same
    /// reason.
    lock: Option<(bool, LockId)>,
}

impl Op {
    fn new(step: Step, every: u32) -> Self {
        let exp = match &step {
            Step::Work {
                dur: Duration::Exp(e),
                reads: None,
            } => Some(*e),
            _ => None,
        };
        let lock = match step {
            Step::Lock(l) => Some((true, l)),
            Step::Unlock(l) => Some((false, l)),
            _ => None,
        };
        Op { step, every, exp, lock }
    }
}

/// Outcome of executing one step.
enum Next {
    At(SimTimePs),
    Blocked,
}

/// Everything a step may touch besides its own process's record: the
/// machine's lines and locks, the counters, the queue and the run's
/// tallies. Kept apart from the processes so that a process's record is
/// looked up once per event, not once per step.
struct World {
    pricing: Pricing,
    lines: LineTable,
    locks: LockTable,
    rw: RwTable,
    /// Waiters a reader-writer release handed the lock to.
    woken: Vec<(u32, SimTimePs)>,
    counters: Vec<Counter>,
    queues: Vec<Wq>,
    /// Length of the threads' own path (the work queues' sub-paths follow).
    main_len: usize,
    /// Per step of the threads' own path: where an operation that skips it
    /// goes on ([`skips`]).
    skips: Vec<usize>,
    /// Items of unbound queues with no worker, waiting for a thread.
    shared_pending: usize,
    /// Items waiting for a thread to end an operation: bound items of
    /// every thread and `shared_pending`.
    thread_items: usize,
    queue: EventQueue,
    latency: LatencyHistogram,
    ops: u64,
    events: u64,
    /// Per counter: increments made (`inc` operations).
    counter_incs: Vec<u64>,
    /// Latest time an operation completed at, and `ops` then.
    progress: (SimTimePs, u64),
    /// Batch means of a precision-targeted stop.
    precision: Option<BatchMeans>,
    /// Per process: its AG's and directory's instances ([`Step::Keyed`]).
    instances: Vec<[u32; 2]>,
}

/// Runs the interpreter to its stop condition and returns its metrics.
pub fn run(spec: SimSpec) -> Result<Metrics, SimError> {
    run_with(spec, true)
}

/// [`run`]; `fast = false` runs every path through the general loop
/// (tests compare the two).
fn run_with(spec: SimSpec, fast: bool) -> Result<Metrics, SimError> {
    if spec.stop.ops.is_none() && spec.stop.time.is_none() {
        return Err(SimError::NoStop);
    }
    if spec.stop.time.is_some_and(SimTimePs::is_out_of_range) {
        return Err(SimError::StopTimeOutOfRange);
    }
    let (names, counters): (Vec<String>, Vec<Counter>) = spec.counters.into_iter().unzip();
    let mut every = spec.every;
    let main_len = spec.path.len();
    every.resize(main_len, 1);
    let mut path: Vec<Op> = spec.path.into_iter().zip(every).map(|(s, e)| Op::new(s, e)).collect();
    // Threads end an operation at `main_len` (a step never run): the work
    // queues' sub-paths follow it, each ending in its own `EndItem`, so
    // the threads' loop checks the end of an operation as it always did.
    path.push(Op::new(Step::EndItem(u32::MAX), 1));
    let skips = skips(&path[..main_len]);
    let mut queues = Vec::with_capacity(spec.queues.len());
    for (q, (qs, steps)) in spec.queues.into_iter().enumerate() {
        let start = path.len();
        path.push(Op::new(Step::Dequeue(q as u32), 1));
        for step in steps {
            path.push(Op::new(relocated(step, start + 1), 1));
        }
        path.push(Op::new(Step::EndItem(q as u32), 1));
        queues.push(Wq::new(qs, (start, path.len() - 1)));
    }
    let mut procs: Vec<Proc> = spec
        .rngs
        .into_iter()
        .zip(spec.slowdown_permille)
        .map(|(r, s)| Proc::new(r, s))
        .collect();
    for (q, wq) in queues.iter().enumerate() {
        for &worker in &wq.spec.workers {
            // Idle at its EndItem: woken, it takes the next item.
            procs[worker as usize].idle_worker(q as u32, wq.seg.1);
        }
    }
    let mut w = World {
        counter_incs: vec![0; counters.len()],
        pricing: spec.pricing,
        lines: spec.lines,
        locks: spec.locks,
        rw: spec.rwlocks,
        woken: Vec::new(),
        queues,
        main_len,
        skips,
        shared_pending: 0,
        thread_items: 0,
        counters,
        queue: EventQueue::new(),
        latency: LatencyHistogram::new(),
        ops: 0,
        events: 0,
        progress: (SimTimePs::ZERO, 0),
        precision: spec.stop.precision.map(BatchMeans::new),
        instances: spec.instances,
    };
    for (p, proc) in procs.iter_mut().enumerate().take(spec.threads) {
        let at = spec.starts.get(p).copied().unwrap_or(SimTimePs::ZERO);
        if at.is_out_of_range() {
            return Err(SimError::TimeOverflow(at));
        }
        proc.op_start = at;
        w.queue.schedule_at(at, p as u32)?;
    }
    let end = if fast && is_lean(&path) {
        w.main_loop::<true>(&mut procs, &path, spec.stop)?
    } else {
        w.main_loop::<false>(&mut procs, &path, spec.stop)?
    };
    let names = metrics::Names {
        locks: spec.lock_names,
        rwlocks: spec.rwlock_names,
        counters: names,
        lock_arrays: spec.lock_arrays,
        rwlock_arrays: spec.rwlock_arrays,
        arrays: spec.arrays,
        ..Default::default()
    };
    Ok(w.metrics(end, spec.reported_lines, &names, spec.threads))
}

/// A work queue's step moved to the combined path at `offset`: a
/// seqlock retry's own index (also inside a keyed step) follows it.
fn relocated(step: Step, offset: usize) -> Step {
    match step {
        Step::SeqRetry { id, begin } => Step::SeqRetry { id, begin: begin + offset },
        Step::Keyed { key, steps } => Step::Keyed {
            key,
            steps: steps.into_vec().into_iter().map(|s| relocated(s, offset)).collect(),
        },
        other => other,
    }
}

/// Per step of the threads' own path: where an operation that does not run
/// it goes on, past the run of consecutive steps with the same `every`
/// (none of them runs either: the operation number they test cannot change
/// inside the path), so case 1's 14 steps of the chunk roll, every 64th
/// create, cost one test on the other 63 instead of 14. Kept apart from
/// [`Op`], whose size the hot loop feels.
fn skips(path: &[Op]) -> Vec<usize> {
    let mut skips = vec![path.len(); path.len()];
    for i in (0..path.len().saturating_sub(1)).rev() {
        skips[i] = if path[i + 1].every == path[i].every { skips[i + 1] } else { i + 1 };
    }
    skips
}

/// A lean path (no spread reads, no counter) never has an access pending:
/// its loop is compiled without that check and with the rare steps out of
/// line, so the common ones keep their registers.
fn is_lean(path: &[Op]) -> bool {
    path.iter()
        .all(|op| !matches!(op.step, Step::Counter { .. } | Step::Work { reads: Some(_), .. }))
}

impl World {
    /// The event loop. `LEAN`: the path has no spread reads and no
    /// counter, so no process ever has an access pending (see `run`).
    fn main_loop<const LEAN: bool>(&mut self, procs: &mut [Proc], path: &[Op], stop: Stop) -> Result<SimTimePs, SimError> {
        let limit_ops = stop.ops.unwrap_or(u64::MAX);
        // Checked in `run`: a stop time is below `SimTimePs::MAX`, and so is
        // every event time (`advance` refuses the rest), so `>` is reached.
        let limit_time = stop.time.unwrap_or(SimTimePs::MAX);
        while let Some(ev) = self.queue.pop() {
            self.events += 1;
            if ev.time.is_out_of_range() {
                return Err(SimError::TimeOverflow(self.progress.0));
            }
            if ev.time > limit_time {
                return Ok(limit_time);
            }
            let proc = &mut procs[ev.target as usize];
            if let Some(end) = self.advance::<LEAN>(proc, path, ev.target, ev.time, (limit_ops, limit_time))? {
                return Ok(end);
            }
        }
        Err(SimError::Deadlock(self.queue.now()))
    }

    /// Runs process `p` (`proc`) from `now` until it waits; the end time
    /// when the run is over. When the event `p` would schedule is the next
    /// one the queue would pop anyway ([`EventQueue::take_or_schedule`]),
    /// `p` goes on at once: the same events in the same order, counted the
    /// same, with no trip through the queue (a hit, a short transfer).
    #[inline]
    fn advance<const LEAN: bool>(
        &mut self,
        proc: &mut Proc,
        path: &[Op],
        p: u32,
        mut now: SimTimePs,
        (limit, limit_time): (u64, SimTimePs),
    ) -> Result<Option<SimTimePs>, SimError> {
        let main_len = self.main_len;
        loop {
            let next = if !LEAN && proc.pending() {
                self.pending(proc, p, now)?
            } else {
                if proc.next == main_len && self.end_op(proc, now, limit)? {
                    return Ok(Some(now));
                }
                let i = proc.next;
                proc.next += 1;
                let op = &path[i];
                if op.every > 1 && !runs_on(proc.ops_done + 1, op.every) {
                    proc.next = self.skips[i];
                    continue;
                }
                if let Some(e) = &op.exp {
                    let d = e.sample(&mut proc.rng);
                    let d = proc.scaled(d, i)?;
                    Next::At(now.checked_add(d).ok_or(SimError::TimeOverflow(now))?)
                } else if let Some((acquire, l)) = op.lock {
                    if acquire { self.lock(p, l, now) } else { self.unlock(p, l, now) }
                } else {
                    if LEAN {
                        self.exec_outlined(proc, p, i, &op.step, now)?
                    } else {
                        self.exec(proc, p, i, &op.step, now)?
                    }
                }
            };
            let t = match next {
                Next::At(t) if t == now => continue,
                Next::At(t) => t,
                Next::Blocked => return Ok(None),
            };
            if t.is_out_of_range() {
                return Err(SimError::TimeOverflow(now));
            }
            if self.queue.take_or_schedule(t, p, t <= limit_time)? {
                self.events += 1;
                now = t;
                continue;
            }
            return Ok(None);
        }
    }

    /// Process `p`'s next spread read or counter access, at `now`.
    #[inline]
    fn pending(&mut self, proc: &mut Proc, p: u32, now: SimTimePs) -> Result<Next, SimError> {
        if let Some(sp) = proc.spread {
            return Ok(Next::At(self.spread_read(proc, p, sp, now)?));
        }
        let m = proc.micro[proc.micro_at];
        proc.micro_at += 1;
        Ok(self.exec_micro(p, m, now))
    }

    /// `proc` completed an operation at `now`: records it; true when the
    /// run is over, else the process starts its next operation.
    #[inline(always)]
    fn end_op(&mut self, proc: &mut Proc, now: SimTimePs, limit: u64) -> Result<bool, SimError> {
        self.latency.record(now.since(proc.op_start).0);
        self.ops += 1;
        if self.ops >= limit || self.precision.as_mut().is_some_and(|b| b.record(now)) {
            return Ok(true);
        }
        self.check_progress(now, limit)?;
        proc.next = 0;
        proc.ops_done += 1;
        proc.op_start = now;
        if self.thread_items > 0 {
            self.start_thread_item(proc, now);
        }
        Ok(false)
    }

    /// The next read of the spread-read work in progress, at `now`: one
    /// read of the line (a transfer if another CPU wrote it since this
    /// process last held it), then the slice of work up to the next read
    /// or the end of the work. Returns when the process continues.
    fn spread_read(&mut self, proc: &mut Proc, p: u32, mut sp: Spread, now: SimTimePs) -> Result<SimTimePs, SimError> {
        let a = self.lines.read(sp.line, p, 1, now, &self.pricing);
        sp.done += 1;
        let next = sp.before(sp.done + 1);
        let slice = next - sp.at;
        sp.at = next;
        proc.spread = (sp.done < sp.n).then_some(sp);
        a.done.checked_add(SimTimePs(slice)).ok_or(SimError::TimeOverflow(now))
    }

    /// With no operation limit, fails once [`NO_PROGRESS_OPS`] operations
    /// have completed without the clock moving (the stop time would never
    /// come). One comparison per operation.
    #[inline]
    fn check_progress(&mut self, now: SimTimePs, limit: u64) -> Result<(), SimError> {
        if now > self.progress.0 {
            self.progress = (now, self.ops);
        } else if limit == u64::MAX && self.ops - self.progress.1 >= NO_PROGRESS_OPS {
            return Err(SimError::NoProgress {
                at: now,
                ops: self.ops - self.progress.1,
            });
        }
        Ok(())
    }

    /// [`World::exec`] out of line: in a lean loop the other steps are
    /// rare (fixed work, a read or a write).
    #[inline(never)]
    fn exec_outlined(&mut self, proc: &mut Proc, p: u32, i: usize, step: &Step, now: SimTimePs) -> Result<Next, SimError> {
        self.exec(proc, p, i, step, now)
    }

    #[inline(always)]
    fn exec(&mut self, proc: &mut Proc, p: u32, i: usize, step: &Step, now: SimTimePs) -> Result<Next, SimError> {
        Ok(match *step {
            Step::Work { ref dur, reads } => {
                let d = proc.draw(dur, i)?;
                match reads {
                    Some((line, n)) => {
                        let mut sp = Spread {
                            line,
                            n,
                            done: 0,
                            dur: d.0,
                            at: 0,
                        };
                        sp.at = sp.before(1);
                        proc.spread = Some(sp);
                        Next::At(now.checked_add(SimTimePs(sp.at)).ok_or(SimError::TimeOverflow(now))?)
                    }
                    None => Next::At(now.checked_add(d).ok_or(SimError::TimeOverflow(now))?),
                }
            }
            Step::Read { line, count } => Next::At(self.lines.read(line, p, count, now, &self.pricing).done),
            Step::Write(line) => self.exec_micro(p, MicroOp::Write(line), now),
            Step::Cas { line, window } => {
                // The step runs again (proc.next back to it) until its
                // cmpxchg succeeds: first the load, then each cmpxchg.
                let (done, again) = match proc.cas_seen.take() {
                    None => (self.lines.read(line, p, 1, now, &self.pricing).done, true),
                    Some(seen) => {
                        let (a, ok) = self.lines.cas(line, p, seen, now, &self.pricing);
                        (a.done, !ok)
                    }
                };
                if !again {
                    return Ok(Next::At(done));
                }
                proc.cas_seen = Some(self.lines.changes(line));
                proc.next = i;
                Next::At(done.checked_add(SimTimePs(window)).ok_or(SimError::TimeOverflow(now))?)
            }
            Step::Lock(l) => self.lock(p, l, now),
            Step::Unlock(l) => self.unlock(p, l, now),
            Step::Counter { id, op, amount } => {
                if matches!(op, CounterOp::Inc | CounterOp::Get) {
                    self.counter_incs[id as usize] += 1;
                }
                // Steps run only once the previous accesses are made.
                debug_assert_eq!(proc.micro_at, proc.micro.len());
                proc.micro.clear();
                proc.micro_at = 0;
                self.counters[id as usize].apply(p, op, amount, &mut proc.micro);
                Next::At(now)
            }
            Step::RwLock { id, write } => match self.rw.acquire(id, p, write, now, &mut self.lines, &self.pricing) {
                Some(t) => Next::At(t),
                None => Next::Blocked,
            },
            Step::RwUnlock(id) => {
                let mut woken = std::mem::take(&mut self.woken);
                let done = self.rw.release(id, p, now, &mut self.lines, &self.pricing, &mut woken);
                for &(q, t) in &woken {
                    // A hand-off is never earlier than now; scheduling cannot fail.
                    let _ = self.queue.schedule_at(t.max(now), q);
                }
                woken.clear();
                self.woken = woken;
                Next::At(done)
            }
            Step::SeqBegin(id) => match self.rw.read_begin(id, p, now, &mut self.lines, &self.pricing) {
                Some(t) => Next::At(t),
                None => Next::Blocked,
            },
            Step::SeqRetry { id, begin } => {
                let (t, retry) = self.rw.read_retry(id, p, now, &mut self.lines, &self.pricing);
                if retry {
                    proc.next = begin;
                }
                Next::At(t)
            }
            Step::Queue { q, every } => {
                let wq = &mut self.queues[q as usize];
                wq.arrivals += 1;
                if every == 1 || runs_on(wq.arrivals, every) {
                    Next::At(self.enqueue(proc, p, q, now))
                } else {
                    Next::At(now)
                }
            }
            Step::EndItem(_) => match self.end_item(proc, p, now) {
                true => Next::At(now),
                false => Next::Blocked,
            },
            Step::Keyed { key, ref steps } => {
                let k = self.instances[p as usize][key] as usize;
                return self.exec_outlined(proc, p, i, &steps[k], now);
            }
            Step::Dequeue(q) => {
                let wq = &self.queues[q as usize];
                let line = if wq.spec.bound {
                    wq.spec.pool_lines[p as usize]
                } else {
                    wq.spec.pool_lines[0]
                };
                Next::At(self.lines.write(line, p, now, &self.pricing).done)
            }
        })
    }

    /// Thread or worker `p` queues an item on queue `q` at `now`: it writes
    /// the pool's line; a bound item waits for `p`'s next scheduling point,
    /// an unbound one wakes an idle worker. Returns when `p` continues.
    fn enqueue(&mut self, proc: &mut Proc, p: u32, q: u32, now: SimTimePs) -> SimTimePs {
        let wq = &mut self.queues[q as usize];
        let line = if wq.spec.bound {
            wq.spec.pool_lines[p as usize]
        } else {
            wq.spec.pool_lines[0]
        };
        let done = self.lines.write(line, p, now, &self.pricing).done;
        wq.enqueued(done);
        if wq.spec.bound {
            proc.bound.push_back((q, done));
            self.thread_items += 1;
        } else {
            wq.pool.push_back(done);
            if wq.spec.workers.is_empty() {
                self.shared_pending += 1;
                self.thread_items += 1;
            } else if let Some(worker) = wq.take_idle() {
                let at = done.saturating_add(SimTimePs(self.pricing.wakeup_ps));
                // Never earlier than now; scheduling cannot fail.
                let _ = self.queue.schedule_at(at, worker);
            }
        }
        done
    }

    /// Thread `proc`, at the end of an operation (or of an item), runs the
    /// next item waiting for it: its own CPU's bound items first, then
    /// items of unbound queues that have no worker.
    #[cold]
    #[inline(never)]
    fn start_thread_item(&mut self, proc: &mut Proc, now: SimTimePs) {
        let (q, enq) = match proc.bound.pop_front() {
            Some(x) => x,
            None => {
                let Some(q) = self.queues.iter().position(|w| w.spec.workers.is_empty() && !w.pool.is_empty()) else {
                    return;
                };
                self.shared_pending -= 1;
                let enq = self.queues[q].pool.pop_front().unwrap_or(now);
                (q as u32, enq)
            }
        };
        self.thread_items -= 1;
        self.begin_item(proc, q, enq, now);
    }

    fn begin_item(&mut self, proc: &mut Proc, q: u32, enq: SimTimePs, now: SimTimePs) {
        let wq = &mut self.queues[q as usize];
        wq.started(enq, now);
        proc.item = Some(Item {
            queue: q,
            start: Some(now),
        });
        proc.next = wq.seg.0;
    }

    /// `proc` finished the item it ran (or, for a worker woken from idle,
    /// none), at its sub-path's `EndItem`: records it and takes the next.
    /// False when `proc` is a worker with nothing left to do (it is idle,
    /// at its `EndItem` again, until an item wakes it).
    #[cold]
    #[inline(never)]
    fn end_item(&mut self, proc: &mut Proc, p: u32, now: SimTimePs) -> bool {
        let Some(item) = proc.item.take() else { return true };
        let wq = &mut self.queues[item.queue as usize];
        if let Some(start) = item.start {
            wq.done += 1;
            wq.busy_ps += now.since(start).0;
        }
        if proc.worker {
            if let Some(enq) = wq.pool.pop_front() {
                self.begin_item(proc, item.queue, enq, now);
                return true;
            }
            wq.make_idle(p);
            proc.item = Some(Item {
                queue: item.queue,
                start: None,
            });
            proc.next = wq.seg.1;
            return false;
        }
        proc.next = 0;
        if self.thread_items > 0 {
            self.start_thread_item(proc, now);
        }
        true
    }

    #[inline]
    fn exec_micro(&mut self, p: u32, m: MicroOp, now: SimTimePs) -> Next {
        match m {
            MicroOp::Write(line) => Next::At(self.lines.write(line, p, now, &self.pricing).done),
            MicroOp::Read(line) => Next::At(self.lines.read(line, p, 1, now, &self.pricing).done),
            MicroOp::Lock(l) => self.lock(p, l, now),
            MicroOp::Unlock(l) => self.unlock(p, l, now),
        }
    }

    /// `p` asks for lock `l` at `now`.
    #[inline]
    fn lock(&mut self, p: u32, l: LockId, now: SimTimePs) -> Next {
        match self.locks.acquire(l, p, now, &mut self.lines, &self.pricing) {
            Some(t) => Next::At(t),
            None => Next::Blocked,
        }
    }

    /// `p` releases lock `l` at `now`, waking the next waiter if any.
    #[inline(always)]
    fn unlock(&mut self, p: u32, l: LockId, now: SimTimePs) -> Next {
        let r = self.locks.release(l, p, now, &mut self.lines, &self.pricing);
        if let Some((q, t)) = r.woken {
            // A hand-off is never earlier than now; scheduling cannot fail.
            let _ = self.queue.schedule_at(t.max(now), q);
        }
        Next::At(r.done)
    }
}

/// True when operation number `op` (from 1) runs a step of `every`: a
/// mask for a power of two (`every = 64` in case 1), else a division.
#[inline]
fn runs_on(op: u64, every: u32) -> bool {
    let every = u64::from(every);
    if every.is_power_of_two() {
        op & (every - 1) == 0
    } else {
        op.is_multiple_of(every)
    }
}

#[cfg(test)]
mod tests;
