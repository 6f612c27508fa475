//! The fs_mark run as a discrete-event simulation.
//!
//! Each thread loops over a small program per create. `Work` is the rest
//! of the create (CPU time, exponential, slowed by an SMT sibling);
//! `Counter` takes the next inode number from the shared counter (one
//! atomic on its line, coherence model); `Init` allocates the
//! `btrfs_inode` from the CPU's slab and writes its lines (`btrfs_alloc_inode`
//! and `inode_init_always`), through the cache model; then the insert,
//! timed from `Start` to `End` as the case's probe timed the function:
//!
//! - rb-tree (`inode_tree_add`): `spin_lock(inode_lock)`, the walk and
//!   `rb_link_node` + `rb_insert_color`, `spin_unlock`;
//! - xarray (`btrfs_add_inode_to_root`): `xa_reserve` (under `xa_lock`,
//!   may allocate, may fail with ENOMEM), `spin_lock(inode_lock)`,
//!   `xa_store` (under `xa_lock`), `spin_unlock`.
//!
//! Then, if the index holds more than `open_inodes`, the thread evicts the
//! oldest open inode (erase under the same locks, slab free).
//!
//! Locks and the counter are lines of the coherence model
//! ([`crate::machine::coherence`], [`crate::machine::lock`], queued
//! spinlocks as `qspinlock`); every index and inode line goes through the
//! set-associative hierarchy ([`crate::machine::cache`]) and costs what
//! serves it. Lock and counter steps run at their own event time; steps
//! inside a critical section run when the lock is taken.

use rand_chacha::ChaCha8Rng;

use super::index::{InodeIndex, Open, OpenQueue};
use super::params::{FsmarkParams, IndexKind};
use crate::engine::dist::{Duration, ExpDuration};
use crate::engine::histogram::LatencyHistogram;
use crate::engine::queue::EventQueue;
use crate::engine::time::SimTimePs;
use crate::kernel::index::rbtree::NodeId;
use crate::kernel::mm::slab::{SlabCache, SlabConfig};
use crate::kernel::mm::touch::{Access, Issue, LINE_BYTES, Touch, critical_path};
use crate::machine::Pricing;
use crate::machine::cache::MachineCaches;
use crate::machine::coherence::{LineId, LineTable};
use crate::machine::lock::{LockId, LockKind, LockTable};
use crate::workload::path::sim::SimError;

/// `BTRFS_FIRST_FREE_OBJECTID`: the first inode number of a subvolume.
pub const FIRST_INO: u64 = 256;
/// Address range of each CPU's `btrfs_inode` slab (64 GiB apart).
const SLAB_SPAN: u64 = 1 << 36;
const SLAB_BASE: u64 = 1 << 40;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Work,
    Counter,
    Init,
    Start,
    Lock(LockId),
    Unlock(LockId),
    RbInsert,
    XaReserve,
    /// `spin_lock(inode_lock)` after `xa_reserve`; a failed reserve skips
    /// to `End`.
    StoreLock(LockId),
    XaStore,
    End,
    EvictCheck,
    Erase,
    Free,
}

/// Whether a thread goes on to its next step or waits for an event.
enum Flow {
    Next,
    Wait,
}

const INODE_LOCK: LockId = 0;
const XA_LOCK: LockId = 1;

fn program(kind: IndexKind) -> Vec<Step> {
    use Step::*;
    match kind {
        IndexKind::Rbtree => vec![
            Work,
            Counter,
            Init,
            Start,
            Lock(INODE_LOCK),
            RbInsert,
            Unlock(INODE_LOCK),
            End,
            EvictCheck,
            Lock(INODE_LOCK),
            Erase,
            Unlock(INODE_LOCK),
            Free,
        ],
        IndexKind::Xarray => vec![
            Work,
            Counter,
            Init,
            Start,
            Lock(XA_LOCK),
            XaReserve,
            Unlock(XA_LOCK),
            StoreLock(INODE_LOCK),
            Lock(XA_LOCK),
            XaStore,
            Unlock(XA_LOCK),
            Unlock(INODE_LOCK),
            End,
            EvictCheck,
            Lock(INODE_LOCK),
            Lock(XA_LOCK),
            Erase,
            Unlock(XA_LOCK),
            Unlock(INODE_LOCK),
            Free,
        ],
    }
}

#[derive(Debug, Default)]
struct Thread {
    pc: usize,
    t: SimTimePs,
    start: SimTimePs,
    ino: u64,
    obj: u64,
    failed: bool,
    /// Lock-wait time of the insert in progress, ps.
    victim: Option<Open>,
    files_in_loop: u64,
    at_barrier: bool,
}

/// What the run measured.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Insert latency, ps.
    pub latency: LatencyHistogram,
    /// Smallest insert latency, ps.
    pub min_ps: u64,
    /// Sum of squared latencies, ns^2.
    pub sum_sq_ns: f64,
    /// Insert latency counts by floor(log2(ns)), index 0 also holding 0 ns.
    pub log2_ns: Vec<u64>,
    /// Per loop: (files created, elapsed ps).
    pub loops: Vec<(u64, u64)>,
    /// Simulated end time, ps.
    pub end_ps: u64,
    /// Sum of index levels walked by inserts.
    pub depth_sum: u64,
    /// Index line accesses by inserts, and how they were served.
    pub touches: u64,
    /// Of those, L1 misses.
    pub l1_misses: u64,
    /// Of those, served by DRAM.
    pub memory: u64,
    /// Of those, served by another core's modified copy.
    pub peer: u64,
    /// Inserts that failed with ENOMEM.
    pub failed: u64,
    /// inode_lock: acquisitions, wait ps, hold ps.
    pub inode_lock: (u64, u64, u64),
    /// Lock wait inside inserts (both locks), ps.
    pub insert_wait_ps: u64,
    /// Final index height and mean node depth.
    pub height: u32,
    /// Mean node depth of the final index (rb-tree), or its levels.
    pub mean_depth: f64,
    /// Open inodes at the end.
    pub open: u64,
}

/// The simulation state of one run.
pub struct Sim<'a> {
    p: &'a FsmarkParams,
    prog: Vec<Step>,
    end_pc: usize,
    pricing: &'a Pricing,
    slowdown: &'a [u32],
    caches: MachineCaches,
    lines: LineTable,
    locks: LockTable,
    counter: LineId,
    index: InodeIndex,
    slabs: Vec<SlabCache>,
    /// Open inodes, oldest first: the eviction queue, kept only when
    /// `open_inodes` bounds the index (without a bound nothing is ever
    /// evicted, and only their number is reported).
    open: OpenQueue,
    /// Inodes in the index.
    open_count: u64,
    next_ino: u64,
    queue: EventQueue,
    th: Vec<Thread>,
    touches: Vec<Touch>,
    work: Duration,
    rngs: Vec<ChaCha8Rng>,
    out: Outcome,
    at_barrier: usize,
    loop_start: SimTimePs,
    loop_failed: u64,
    lock_wait_start: Vec<SimTimePs>,
}

impl std::fmt::Debug for Sim<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim").field("threads", &self.th.len()).finish()
    }
}

impl<'a> Sim<'a> {
    /// A run of `p` on the machine's threads with one random stream each.
    pub fn new(p: &'a FsmarkParams, pricing: &'a Pricing, slowdown: &'a [u32], caches: MachineCaches, rngs: Vec<ChaCha8Rng>) -> Self {
        let n = rngs.len();
        let lines = LineTable::new(vec!["inode_lock".into(), "xa_lock".into(), "ino_counter".into()], n);
        let mut locks = LockTable::default();
        locks.add(LockKind::Queued, 0);
        locks.add(LockKind::Queued, 1);
        let slab = SlabConfig::new(p.inode_bytes).with_freeptr_outside(true);
        let slabs = (0..n as u64)
            .map(|i| SlabCache::new(slab, SLAB_BASE + i * SLAB_SPAN).expect("inode_bytes validated to fit a page"))
            .collect();
        let work = if p.create_work_ns > 0.0 {
            Duration::Exp(ExpDuration::from_mean_ns(p.create_work_ns).expect("create_work_ns validated finite"))
        } else {
            Duration::Fixed(SimTimePs::ZERO)
        };
        let prog = program(p.index);
        let end_pc = prog.iter().position(|s| *s == Step::End).expect("every program has End");
        Self {
            p,
            prog,
            end_pc,
            pricing,
            slowdown,
            caches,
            lines,
            locks,
            counter: 2,
            index: InodeIndex::new(p.index, p.rb_node_offset, p.key_offset, p.enomem_every),
            slabs,
            open: OpenQueue::new(p.index),
            open_count: 0,
            next_ino: FIRST_INO,
            queue: EventQueue::new(),
            th: (0..n).map(|_| Thread::default()).collect(),
            touches: Vec::with_capacity(256),
            work,
            rngs,
            out: Outcome {
                min_ps: u64::MAX,
                log2_ns: vec![0; 64],
                ..Outcome::default()
            },
            at_barrier: 0,
            loop_start: SimTimePs::ZERO,
            loop_failed: 0,
            lock_wait_start: vec![SimTimePs::ZERO; n],
        }
    }

    /// Opens `open_inodes` inodes before the run, untimed and without
    /// touching the caches (`prefill`).
    fn prefill(&mut self) {
        let n = self.th.len() as u64;
        // Room for every prefilled inode up front: the arena and the queue
        // fill without reallocating (a doubling copy would hold both).
        // The bound is held once the run starts: each thread's insert
        // comes before its eviction, so `threads` more at most (erased
        // nodes' slots are reused).
        let want = usize::try_from(self.p.open_inodes)
            .unwrap_or(usize::MAX)
            .saturating_add(self.th.len());
        self.index.reserve(want);
        self.open.reserve_exact(want);
        for k in 0..self.p.open_inodes {
            let slab = (k % n) as u32;
            let (ino, obj) = (self.next_ino, self.slabs[slab as usize].alloc());
            self.next_ino += 1;
            let node = match self.p.index {
                IndexKind::Rbtree => self.index.rb_append_unrecorded(ino, obj, &mut self.touches),
                IndexKind::Xarray => {
                    // Prefill allocations do not count against the ENOMEM plan's purpose,
                    // but they are node allocations like any other: a failed
                    // reserve leaves the inode out of the index, as before.
                    let _ = self.index.xa_append_unrecorded(ino, obj, &mut self.touches);
                    None
                }
            };
            self.touches.clear();
            let open = self.index.open_entry(ino, obj, node);
            self.push_open(open);
        }
    }

    /// Runs every loop to the end.
    pub fn run(mut self) -> Result<Outcome, SimError> {
        if self.p.prefill {
            self.prefill();
        }
        for i in 0..self.th.len() {
            self.queue.schedule_at(SimTimePs::ZERO, i as u32)?;
        }
        while let Some(ev) = self.queue.pop() {
            self.advance(ev.target as usize, ev.time)?;
        }
        if self.out.loops.len() < self.p.loops as usize {
            return Err(SimError::Deadlock(self.queue.now()));
        }
        let s = self.locks.stats(INODE_LOCK);
        self.out.inode_lock = (s.acquisitions, s.wait_ps, s.hold_ps);
        (self.out.height, self.out.mean_depth) = self.index.shape();
        self.out.open = self.open_count;
        self.out.failed = self.index.alloc_failures();
        if self.out.min_ps == u64::MAX {
            self.out.min_ps = 0;
        }
        Ok(self.out)
    }

    /// Prices the touches recorded so far for thread `i` along their
    /// critical path (overlapped accesses cost their slowest,
    /// [`critical_path`]); counts them as the insert's when `insert` is set
    /// (from the core's cache counters before and after). Returns ps.
    fn price(&mut self, i: usize, insert: bool) -> u64 {
        let core = self.caches.thread_core[i];
        let before = self.caches.hierarchy.counters(core);
        let caches = &mut self.caches;
        let ps = critical_path(&self.touches, |x| {
            let o = caches.hierarchy.access(core, x.line, x.access == Access::Write);
            caches.prices.of(core, o)
        });
        self.touches.clear();
        if insert {
            let after = self.caches.hierarchy.counters(core);
            let out = &mut self.out;
            out.touches += after.accesses - before.accesses;
            out.l1_misses += after.l1_misses - before.l1_misses;
            out.memory += after.llc_misses - before.llc_misses;
            out.peer += after.coherence_misses - before.coherence_misses;
        }
        ps
    }

    fn schedule(&mut self, i: usize) -> Result<(), SimError> {
        self.queue.schedule_at(self.th[i].t, i as u32)?;
        Ok(())
    }

    /// Runs thread `i` from its current step until it waits.
    fn advance(&mut self, i: usize, now: SimTimePs) -> Result<(), SimError> {
        self.th[i].t = self.th[i].t.max(now);
        loop {
            if self.th[i].pc == self.prog.len() {
                if self.finish_create(i)? {
                    return Ok(());
                }
                continue;
            }
            let step = self.prog[self.th[i].pc];
            let t = self.th[i].t;
            let sync = matches!(step, Step::Counter | Step::Lock(_) | Step::Unlock(_) | Step::StoreLock(_));
            if sync && t > now {
                return self.schedule(i);
            }
            self.th[i].pc += 1;
            if let Flow::Wait = self.run_step(i, step, t)? {
                return Ok(());
            }
        }
    }

    /// Runs `step` of thread `i` at time `t` (the thread's program
    /// counter already past it).
    fn run_step(&mut self, i: usize, step: Step, t: SimTimePs) -> Result<Flow, SimError> {
        match step {
            Step::Work => {
                let core = self.caches.thread_core[i];
                self.caches
                    .hierarchy
                    .stream_fresh(core, self.p.create_touch_bytes.div_ceil(LINE_BYTES));
                let d = self.work.sample(&mut self.rngs[i]).0;
                let d = d.saturating_mul(u64::from(self.slowdown[i])) / 1000;
                self.th[i].t = t.saturating_add(SimTimePs(d));
                self.schedule(i)?;
                return Ok(Flow::Wait);
            }
            Step::Counter => {
                self.th[i].t = self.lines.write(self.counter, i as u32, t, self.pricing).done;
                self.th[i].ino = self.next_ino;
                self.next_ino += 1;
            }
            Step::Init => self.init_inode(i),
            Step::Start => {
                self.th[i].start = t;
                self.th[i].failed = false;
            }
            Step::StoreLock(_) if self.th[i].failed => self.th[i].pc = self.end_pc,
            Step::Lock(id) | Step::StoreLock(id) => return Ok(self.lock(i, id, t)),
            Step::Unlock(id) => self.unlock(i, id, t)?,
            Step::RbInsert => {
                let (ino, obj) = (self.th[i].ino, self.th[i].obj);
                let (node, depth) = self.index.rb_insert(ino, obj, &mut self.touches);
                self.opened(i, t, depth, node);
            }
            Step::XaReserve => {
                let ino = self.th[i].ino;
                let r = self.index.xa_reserve(ino, &mut self.touches);
                let ps = self.price(i, true);
                self.th[i].t = t.saturating_add(SimTimePs(ps));
                self.th[i].failed = r.is_err();
            }
            Step::XaStore => {
                let (ino, obj) = (self.th[i].ino, self.th[i].obj);
                let levels = self.index.xa_store(ino, obj, &mut self.touches);
                self.opened(i, t, levels, None);
            }
            Step::End => self.end_insert(i),
            Step::EvictCheck => {
                let over = self.p.open_inodes > 0 && self.open_count > self.p.open_inodes;
                if over {
                    self.th[i].victim = self.open.pop_front(&self.index);
                    self.open_count -= 1;
                } else {
                    self.th[i].pc = self.prog.len();
                }
            }
            Step::Erase => {
                if let Some(v) = self.th[i].victim {
                    self.index.erase(&v, &mut self.touches);
                    let ps = self.price(i, false);
                    self.th[i].t = t.saturating_add(SimTimePs(ps));
                }
            }
            Step::Free => {
                if let Some(v) = self.th[i].victim.take() {
                    let slab = ((v.obj - SLAB_BASE) / SLAB_SPAN) as usize;
                    let _ = self.slabs[slab].free(v.obj);
                }
            }
        }
        Ok(Flow::Next)
    }

    /// `spin_lock` by thread `i` at `t`: takes lock `id` now or at the
    /// time its queue hands it over (lock waits inside the insert count
    /// as the insert's).
    fn lock(&mut self, i: usize, id: LockId, t: SimTimePs) -> Flow {
        let in_insert = self.th[i].pc <= self.end_pc;
        match self.locks.acquire(id, i as u32, t, &mut self.lines, self.pricing) {
            Some(got) => {
                if in_insert {
                    self.out.insert_wait_ps += got.since(t).0;
                }
                self.th[i].t = got;
                Flow::Next
            }
            None => {
                self.lock_wait_start[i] = t;
                Flow::Wait // the releaser schedules us
            }
        }
    }

    /// `spin_unlock` by thread `i` at `t`; schedules the waiter it hands
    /// the lock to, if any.
    fn unlock(&mut self, i: usize, id: LockId, t: SimTimePs) -> Result<(), SimError> {
        let r = self.locks.release(id, i as u32, t, &mut self.lines, self.pricing);
        self.th[i].t = r.done;
        if let Some((q, at)) = r.woken {
            let q = q as usize;
            if self.th[q].pc <= self.end_pc {
                self.out.insert_wait_ps += at.since(self.lock_wait_start[q]).0;
            }
            self.th[q].t = at;
            self.queue.schedule_at(at, q as u32)?;
        }
        Ok(())
    }

    /// Thread `i`'s inode is in the index at level `depth` (`node`: its
    /// rb-tree node): prices the insert's recorded touches from `t` and
    /// opens the inode.
    fn opened(&mut self, i: usize, t: SimTimePs, depth: u32, node: Option<NodeId>) {
        self.out.depth_sum += u64::from(depth);
        let ps = self.price(i, true);
        let th = &mut self.th[i];
        th.t = t.saturating_add(SimTimePs(ps));
        let open = self.index.open_entry(th.ino, th.obj, node);
        self.push_open(open);
    }

    /// An inode enters the index (and the eviction queue, if there is a
    /// bound to evict to).
    fn push_open(&mut self, open: Open) {
        self.open_count += 1;
        if self.p.open_inodes > 0 {
            self.open.push_back(open);
        }
    }

    /// `btrfs_alloc_inode` from this CPU's slab and the inode's
    /// initialisation: every line of the object written once.
    fn init_inode(&mut self, i: usize) {
        let obj = self.slabs[i].alloc();
        self.th[i].obj = obj;
        let first = obj / LINE_BYTES;
        let last = (obj + self.p.inode_bytes - 1) / LINE_BYTES;
        // Stores to addresses known up front: the core sends them (and
        // their ownership requests) out together.
        for line in first..=last {
            let issue = if line == first { Issue::AfterPrevious } else { Issue::WithPrevious };
            self.touches.push(Touch {
                line,
                access: Access::Write,
                issue,
            });
        }
        let ps = self.price(i, false);
        self.th[i].t = self.th[i].t.saturating_add(SimTimePs(ps));
    }

    fn end_insert(&mut self, i: usize) {
        let th = &mut self.th[i];
        let ps = th.t.since(th.start).0;
        self.out.latency.record(ps);
        self.out.min_ps = self.out.min_ps.min(ps);
        let ns = ps as f64 / 1000.0;
        self.out.sum_sq_ns += ns * ns;
        let whole = ps / 1000;
        let bucket = if whole == 0 { 0 } else { 63 - whole.leading_zeros() as usize };
        self.out.log2_ns[bucket] += 1;
        if th.failed {
            let (ino, obj) = (th.ino, th.obj);
            self.index.release(ino, &mut self.touches);
            self.touches.clear();
            let _ = self.slabs[i].free(obj);
            self.loop_failed += 1;
        }
    }

    /// A create is done; returns true if the thread now waits at the
    /// end-of-loop barrier (or is finished).
    fn finish_create(&mut self, i: usize) -> Result<bool, SimError> {
        self.th[i].pc = 0;
        self.th[i].files_in_loop += 1;
        if self.th[i].files_in_loop < self.p.files_per_thread {
            return Ok(false);
        }
        self.th[i].files_in_loop = 0;
        self.th[i].at_barrier = true;
        self.at_barrier += 1;
        if self.at_barrier < self.th.len() {
            return Ok(true);
        }
        let end = self.th.iter().map(|t| t.t).max().unwrap_or(SimTimePs::ZERO);
        let files = self.th.len() as u64 * self.p.files_per_thread - self.loop_failed;
        self.out.loops.push((files, end.since(self.loop_start).0));
        self.out.end_ps = end.0;
        self.loop_start = end;
        self.loop_failed = 0;
        self.at_barrier = 0;
        if self.out.loops.len() < self.p.loops as usize {
            for q in 0..self.th.len() {
                self.th[q].at_barrier = false;
                self.th[q].t = end;
                self.queue.schedule_at(end, q as u32)?;
            }
        }
        Ok(true)
    }
}
