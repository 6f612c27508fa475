//! Reader-writer locks built on one cache line: the sleeping reader-writer
//! semaphore (`rwsem`, kernel/locking/rwsem.c), the queued read-write
//! spinlock (`qrwlock`, kernel/locking/qrwlock.c) and the sequence lock
//! (`seqlock_t`, include/linux/seqlock.h).
//!
//! Each lock's whole state (the rwsem's `count` and `owner`, the qrwlock's
//! `cnts` and `wait_lock`, the seqlock's `seqcount` and `lock`) lives on one
//! line, so every lock and unlock is an atomic or a store on that line,
//! priced by the coherence model: readers that share a lock still move
//! its line between their CPUs.
//!
//! What the rwsem model does, from rwsem.c (v5.3 and later, so both the
//! 5.7 of case 1 and the 6.x of the lab):
//! - `down_read` is one atomic add on the line (`rwsem_read_trylock`). It
//!   succeeds unless a writer holds the lock or waiters are queued
//!   (`RWSEM_READ_FAILED_MASK` includes `RWSEM_FLAG_WAITERS`); otherwise
//!   the reader queues and sleeps (`rwsem_down_read_slowpath`).
//! - `down_write` is one cmpxchg of the line from 0 (`rwsem_write_trylock`):
//!   it succeeds only with no reader, no writer and no waiter.
//! - Optimistic spinning (`rwsem_optimistic_spin`, on with `spin = true`,
//!   as `CONFIG_RWSEM_SPIN_ON_OWNER`): a writer that finds the lock held by
//!   a running writer spins on the owner field instead of sleeping, and
//!   takes the lock when the owner releases it (one transfer, no wake-up),
//!   ahead of the sleeping waiters. Spinning stops when readers get the
//!   lock (a reader owner cannot be seen running) or when a handoff is
//!   pending; the spinner then sleeps at the tail of the queue. Simulated
//!   owners always run, so `owner_on_cpu` always holds.
//! - Handoff: once the first sleeping waiter has waited
//!   `RWSEM_WAIT_TIMEOUT` (`DIV_ROUND_UP(HZ, 250)` jiffies: 4 ms for HZ
//!   250 or 1000), spinners may no longer take the lock
//!   (`RWSEM_FLAG_HANDOFF`): it goes to the first waiter.
//! - Waiters queue FIFO and sleep; a release that leaves the lock free
//!   wakes them (`rwsem_wake` -> `rwsem_mark_wake`). A writer at the head is
//!   woken alone; a reader at the head wakes every reader in the queue, up
//!   to `MAX_READERS_WAKEUP` (256), wherever they are in the queue (the
//!   phase-fair wake-up of v5.3 on; before it, only the readers at the
//!   front of the queue), with one atomic add of all their counts by the
//!   waker. A woken task runs after one transfer and the scheduler's
//!   wake-up latency (`wakeup_ns`), as the mutex model's waiters do.
//! - A writer waits for all readers to leave: a release by a reader wakes
//!   the queue only when it was the last one.
//!
//! Not modelled: the window in which a woken writer can lose the lock to a
//! writer arriving on the fast path (the woken waiter gets it, as if
//! handed off), reader optimistic lock stealing, and spinning on a
//! reader-owned lock (removed in v5.18). The wake-ups of one batch are
//! issued at the same time, not one after another.

use super::Pricing;
use super::coherence::{LineId, LineTable};
use crate::engine::time::SimTimePs;
use std::collections::VecDeque;

/// Index of a lock in a [`RwTable`].
pub type RwId = u32;

/// `RWSEM_WAIT_TIMEOUT`: `DIV_ROUND_UP(HZ, 250)` jiffies, 4 ms for HZ =
/// 250 or 1000 (kernel/locking/rwsem.c), in ps.
pub const RWSEM_WAIT_TIMEOUT_PS: u64 = 4_000_000_000;

/// `MAX_READERS_WAKEUP` (kernel/locking/rwsem.c): readers one wake-up grants.
pub const MAX_READERS_WAKEUP: usize = 256;

/// The kind of reader-writer lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwKind {
    /// `struct rw_semaphore` (sleeping; see the module documentation).
    Rwsem {
        /// Writers spin on a running writer owner (`CONFIG_RWSEM_SPIN_ON_OWNER`).
        spin: bool,
    },
    /// `struct qrwlock`: readers add to `cnts`; a writer that cannot take
    /// the lock at once queues on the internal `wait_lock` (a fair queued
    /// spinlock), sets `_QW_WAITING` and spins until the readers drain
    /// (`queued_write_lock_slowpath`); a reader that finds a writer queues
    /// on `wait_lock` too (`queued_read_lock_slowpath`), so the queue is
    /// FIFO and queued readers pass `wait_lock` on one after another.
    Qrwlock,
    /// `seqlock_t`: writers take the spinlock and bump the sequence
    /// (`write_seqlock`); readers take nothing: `read_seqbegin` reads the
    /// sequence (spinning while it is odd), `read_seqretry` reads it again
    /// and the reader retries its section if it changed.
    Seqlock,
}

/// Statistics of one reader-writer lock.
#[derive(Debug, Clone, Default)]
pub struct RwStats {
    /// Read-side acquisitions (for a seqlock: read sections that did not retry).
    pub read_acquisitions: u64,
    /// Write-side acquisitions.
    pub write_acquisitions: u64,
    /// Acquisitions that had to wait (queue, spin or sleep).
    pub contended: u64,
    /// Total time from request to acquisition, in ps.
    pub wait_ps: u64,
    /// Time the lock was held by anyone (readers or a writer), in ps.
    pub hold_ps: u64,
    /// Time the lock was held by a writer, in ps.
    pub write_hold_ps: u64,
    /// Total release-to-acquire time of contended acquisitions, in ps.
    pub handoff_ps: u64,
    /// Write acquisitions made by optimistic spinning (rwsem).
    pub spins: u64,
    /// Read sections that had to be retried (seqlock).
    pub retries: u64,
}

#[derive(Debug, Clone, Copy)]
struct Waiter {
    p: u32,
    write: bool,
    asked: SimTimePs,
}

#[derive(Debug, Clone)]
struct RwState {
    kind: RwKind,
    line: LineId,
    readers: u32,
    writer: Option<u32>,
    held_since: SimTimePs,
    write_since: SimTimePs,
    /// Sleeping (rwsem) or queued (qrwlock, seqlock writers) waiters, FIFO.
    waiters: VecDeque<Waiter>,
    /// rwsem: writers spinning on the owner; seqlock: readers spinning
    /// on an odd sequence.
    spinners: VecDeque<Waiter>,
    /// seqlock: the sequence count (odd while a writer holds the lock).
    seq: u64,
    /// seqlock: the sequence each process's read section began at.
    seen: Vec<u64>,
    stats: RwStats,
}

/// All reader-writer locks of one run.
#[derive(Debug, Clone, Default)]
pub struct RwTable {
    locks: Vec<RwState>,
}

impl RwTable {
    /// Adds a lock of `kind` whose state lives on `line`.
    pub fn add(&mut self, kind: RwKind, line: LineId) -> RwId {
        self.locks.push(RwState {
            kind,
            line,
            readers: 0,
            writer: None,
            held_since: SimTimePs::ZERO,
            write_since: SimTimePs::ZERO,
            waiters: VecDeque::new(),
            spinners: VecDeque::new(),
            seq: 0,
            seen: Vec::new(),
            stats: RwStats::default(),
        });
        (self.locks.len() - 1) as RwId
    }

    /// Moves lock `id`'s word to `line` (a lock added before its line
    /// existed: the per-instance locks of a `path` workload, whose lines
    /// follow the reported ones).
    pub fn set_line(&mut self, id: RwId, line: LineId) {
        self.locks[id as usize].line = line;
    }

    /// Number of locks.
    pub fn len(&self) -> usize {
        self.locks.len()
    }

    /// True when the table has no lock.
    pub fn is_empty(&self) -> bool {
        self.locks.is_empty()
    }

    /// Statistics of lock `id`.
    pub fn stats(&self, id: RwId) -> &RwStats {
        &self.locks[id as usize].stats
    }

    /// Counts the holds still open at `end` (the end of the run) up to
    /// `end`, so that a lock readers keep overlapping, never free until
    /// the run stops, reports its hold time; later releases count from
    /// `end`.
    pub fn close_holds(&mut self, end: SimTimePs) {
        for l in &mut self.locks {
            if l.readers == 0 && l.writer.is_none() {
                continue;
            }
            l.stats.hold_ps += end.since(l.held_since).0;
            l.held_since = l.held_since.max(end);
            if l.writer.is_some() {
                l.stats.write_hold_ps += end.since(l.write_since).0;
                l.write_since = l.write_since.max(end);
            }
        }
    }

    /// The kind of lock `id`.
    pub fn kind(&self, id: RwId) -> RwKind {
        self.locks[id as usize].kind
    }

    /// Process `p` asks for lock `id` at `now`, for writing (`write`) or
    /// reading (rwsem, qrwlock; a seqlock's readers use
    /// [`RwTable::read_begin`]). Returns when it holds the lock, or `None`
    /// if it waits (it is then handed the lock by a later release).
    pub fn acquire(&mut self, id: RwId, p: u32, write: bool, now: SimTimePs, lines: &mut LineTable, m: &Pricing) -> Option<SimTimePs> {
        let l = &mut self.locks[id as usize];
        let free = l.writer.is_none() && l.waiters.is_empty();
        let (can, spin) = match l.kind {
            RwKind::Rwsem { spin } => (free && (!write || l.readers == 0), spin && write && l.writer.is_some()),
            RwKind::Qrwlock => (free && (!write || l.readers == 0), false),
            RwKind::Seqlock => (free, false),
        };
        // The fast-path atomic (add, cmpxchg or the spinlock's) is made
        // whether it succeeds or not.
        let a = lines.write(l.line, p, now, m);
        if can {
            if l.kind == RwKind::Seqlock {
                // write_seqlock: spin_lock, then the sequence becomes odd.
                l.seq += 1;
            }
            l.grant(p, write, now, a.done);
            return Some(a.done);
        }
        let w = Waiter { p, write, asked: now };
        let handoff = l.waiters.front().is_some_and(|f| now.since(f.asked).0 >= RWSEM_WAIT_TIMEOUT_PS);
        if spin && !handoff {
            l.spinners.push_back(w);
        } else {
            l.waiters.push_back(w);
        }
        None
    }

    /// Process `p` releases lock `id` (its read or write hold) at `now`.
    /// The waiters it hands the lock to, and when each runs, are appended
    /// to `woken`; returns when `p` continues.
    pub fn release(
        &mut self,
        id: RwId,
        p: u32,
        now: SimTimePs,
        lines: &mut LineTable,
        m: &Pricing,
        woken: &mut Vec<(u32, SimTimePs)>,
    ) -> SimTimePs {
        let l = &mut self.locks[id as usize];
        let mut done = lines.write(l.line, p, now, m).done;
        if l.writer == Some(p) {
            if l.kind == RwKind::Seqlock {
                // write_sequnlock: the sequence becomes even, then spin_unlock
                // (a second store to the same line, a hit).
                l.seq += 1;
                done = lines.write(l.line, p, done, m).done;
            }
            l.writer = None;
            l.stats.write_hold_ps += done.since(l.write_since).0;
        } else {
            debug_assert!(l.readers > 0, "a release by a process that holds nothing");
            l.readers = l.readers.saturating_sub(1);
        }
        if l.readers > 0 {
            // A writer waits for all readers to leave.
            return done;
        }
        l.stats.hold_ps += done.since(l.held_since).0;
        match l.kind {
            RwKind::Rwsem { .. } => l.wake_rwsem(p, done, lines, m, woken),
            RwKind::Qrwlock => l.wake_qrwlock(p, done, lines, m, woken),
            RwKind::Seqlock => l.wake_seqlock(p, done, lines, m, woken),
        }
        done
    }

    /// `read_seqbegin` by `p` on seqlock `id` at `now`: one read of the
    /// line; `None` while a writer holds it (the reader spins until the
    /// sequence is even, and is woken by the writer's release).
    pub fn read_begin(&mut self, id: RwId, p: u32, now: SimTimePs, lines: &mut LineTable, m: &Pricing) -> Option<SimTimePs> {
        let l = &mut self.locks[id as usize];
        if l.writer.is_some() {
            l.spinners.push_back(Waiter {
                p,
                write: false,
                asked: now,
            });
            return None;
        }
        let a = lines.read(l.line, p, 1, now, m);
        l.set_seen(p);
        Some(a.done)
    }

    /// `read_seqretry` by `p` on seqlock `id` at `now`: one read of the
    /// line. Returns when `p` continues and whether a write overlapped its
    /// read section (the sequence moved since `read_seqbegin`), in which
    /// case the section is retried.
    pub fn read_retry(&mut self, id: RwId, p: u32, now: SimTimePs, lines: &mut LineTable, m: &Pricing) -> (SimTimePs, bool) {
        let l = &mut self.locks[id as usize];
        let a = lines.read(l.line, p, 1, now, m);
        let retry = l.seen.get(p as usize).copied() != Some(l.seq);
        if retry {
            l.stats.retries += 1;
        } else {
            l.stats.read_acquisitions += 1;
        }
        (a.done, retry)
    }
}

impl RwState {
    fn set_seen(&mut self, p: u32) {
        let i = p as usize;
        if self.seen.len() <= i {
            self.seen.resize(i + 1, u64::MAX);
        }
        self.seen[i] = self.seq;
    }

    /// `p` holds the lock from `got` (asked at `asked`).
    fn grant(&mut self, p: u32, write: bool, asked: SimTimePs, got: SimTimePs) {
        if self.readers == 0 && self.writer.is_none() {
            self.held_since = got;
        }
        if write {
            self.writer = Some(p);
            self.write_since = got;
            self.stats.write_acquisitions += 1;
        } else {
            self.readers += 1;
            self.stats.read_acquisitions += 1;
        }
        self.stats.wait_ps += got.since(asked).0;
    }

    /// A waiter that waited: granted at `got` by a release done at `done`.
    fn grant_waiter(&mut self, w: Waiter, done: SimTimePs, got: SimTimePs, woken: &mut Vec<(u32, SimTimePs)>) {
        self.grant(w.p, w.write, w.asked, got);
        self.stats.contended += 1;
        self.stats.handoff_ps += got.since(done).0;
        woken.push((w.p, got));
    }

    /// `rwsem_wake` after the lock became free at `done` (released by `p`).
    fn wake_rwsem(&mut self, p: u32, done: SimTimePs, lines: &mut LineTable, m: &Pricing, woken: &mut Vec<(u32, SimTimePs)>) {
        let handoff = self.waiters.front().is_some_and(|f| done.since(f.asked).0 >= RWSEM_WAIT_TIMEOUT_PS);
        if !handoff && let Some(s) = self.spinners.pop_front() {
            // The spinner sees the owner change (one transfer) and takes
            // the lock with its cmpxchg (rwsem_try_write_lock_unqueued).
            let at = done.saturating_add(SimTimePs(m.xfer(p, s.p)));
            let got = lines.write(self.line, s.p, at, m).done;
            self.grant_waiter(s, done, got, woken);
            self.stats.spins += 1;
            return;
        }
        // With a handoff pending the spinners stop and sleep.
        self.waiters.extend(self.spinners.drain(..));
        let Some(&head) = self.waiters.front() else { return };
        if head.write {
            self.waiters.pop_front();
            let at = done.saturating_add(SimTimePs(m.xfer(p, head.p) + m.wakeup_ps));
            let got = lines.write(self.line, head.p, at, m).done;
            self.grant_waiter(head, done, got, woken);
            return;
        }
        // rwsem_mark_wake: one atomic add grants every queued reader (up
        // to MAX_READERS_WAKEUP), then each is woken.
        let added = lines.write(self.line, p, done, m).done;
        let mut n = 0;
        let mut rest = VecDeque::with_capacity(self.waiters.len());
        for w in std::mem::take(&mut self.waiters) {
            if w.write || n == MAX_READERS_WAKEUP {
                rest.push_back(w);
                continue;
            }
            n += 1;
            let got = added.saturating_add(SimTimePs(m.xfer(p, w.p) + m.wakeup_ps));
            self.grant_waiter(w, done, got, woken);
        }
        self.waiters = rest;
    }

    /// The qrwlock's queue after a release at `done` by `p`: queued readers
    /// at the head take the lock one after another (each passes
    /// `wait_lock` on to the next), until a writer is at the head; the
    /// writer takes the lock once no reader is left.
    fn wake_qrwlock(&mut self, p: u32, done: SimTimePs, lines: &mut LineTable, m: &Pricing, woken: &mut Vec<(u32, SimTimePs)>) {
        let (mut from, mut t) = (p, done);
        while let Some(&h) = self.waiters.front() {
            if self.writer.is_some() || (h.write && self.readers > 0) {
                break;
            }
            self.waiters.pop_front();
            // The head spins on the lock word: it sees the change (one
            // transfer), then its atomic (a reader's unlock of wait_lock,
            // a writer's cmpxchg to _QW_LOCKED).
            let at = t.saturating_add(SimTimePs(m.xfer(from, h.p)));
            let got = lines.write(self.line, h.p, at, m).done;
            self.grant_waiter(h, done, got, woken);
            (from, t) = (h.p, got);
        }
    }

    /// A seqlock writer released at `done`: the next queued writer takes
    /// the spinlock (queued hand-off, one transfer; the sequence is odd
    /// again at once, so spinning readers keep spinning); with no writer
    /// queued, the spinning readers read the even sequence and begin.
    fn wake_seqlock(&mut self, p: u32, done: SimTimePs, lines: &mut LineTable, m: &Pricing, woken: &mut Vec<(u32, SimTimePs)>) {
        if let Some(w) = self.waiters.pop_front() {
            let at = done.saturating_add(SimTimePs(m.xfer(p, w.p)));
            let got = lines.write(self.line, w.p, at, m).done;
            self.seq += 1;
            self.grant_waiter(w, done, got, woken);
            return;
        }
        while let Some(r) = self.spinners.pop_front() {
            let at = done.saturating_add(SimTimePs(m.xfer(p, r.p)));
            let got = lines.read(self.line, r.p, 1, at, m).done;
            self.set_seen(r.p);
            self.stats.wait_ps += got.since(r.asked).0;
            woken.push((r.p, got));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(n: usize, kind: RwKind) -> (RwTable, LineTable, Pricing, RwId) {
        let mut t = RwTable::default();
        let id = t.add(kind, 0);
        (t, LineTable::new(vec!["l".into()], n), Pricing::ideal(n), id)
    }

    const RWSEM: RwKind = RwKind::Rwsem { spin: true };

    #[test]
    fn rwsem_readers_share_and_never_wait() {
        let (mut t, mut lines, m, id) = setup(8, RWSEM);
        let mut woken = Vec::new();
        for round in 0..10u64 {
            let now = SimTimePs(round * 1000);
            for p in 0..8 {
                assert_eq!(t.acquire(id, p, false, now, &mut lines, &m), Some(now), "reader {p} waits");
            }
            for p in 0..8 {
                t.release(id, p, now, &mut lines, &m, &mut woken);
            }
        }
        assert!(woken.is_empty());
        let s = t.stats(id);
        assert_eq!((s.read_acquisitions, s.contended, s.wait_ps), (80, 0, 0));
    }

    #[test]
    fn a_hold_still_open_at_the_end_counts_up_to_the_end() {
        // Two readers overlap without the lock ever being free: 0 .. 100
        // and 50 .. (still held at the end, 200). Before `close_holds`
        // the hold time read 0.
        let (mut t, mut lines, m, id) = setup(2, RWSEM);
        let mut woken = Vec::new();
        assert!(t.acquire(id, 0, false, SimTimePs(0), &mut lines, &m).is_some());
        assert!(t.acquire(id, 1, false, SimTimePs(50), &mut lines, &m).is_some());
        t.release(id, 0, SimTimePs(100), &mut lines, &m, &mut woken);
        assert_eq!(t.stats(id).hold_ps, 0, "one reader still holds it");
        t.close_holds(SimTimePs(200));
        assert_eq!(t.stats(id).hold_ps, 200);
        // A release after the close counts from the close only.
        let done = t.release(id, 1, SimTimePs(300), &mut lines, &m, &mut woken);
        assert_eq!(t.stats(id).hold_ps, 200 + done.since(SimTimePs(200)).0);
        // A free lock gains nothing.
        t.close_holds(SimTimePs(1000));
        assert_eq!(t.stats(id).hold_ps, 200 + done.since(SimTimePs(200)).0);
    }

    #[test]
    fn rwsem_writer_waits_for_every_reader() {
        let (mut t, mut lines, m, id) = setup(4, RWSEM);
        let mut woken = Vec::new();
        for p in 0..3 {
            assert!(t.acquire(id, p, false, SimTimePs(0), &mut lines, &m).is_some());
        }
        assert_eq!(t.acquire(id, 3, true, SimTimePs(10), &mut lines, &m), None, "the writer waits");
        // A reader arriving behind a queued writer queues too.
        t.release(id, 0, SimTimePs(20), &mut lines, &m, &mut woken);
        t.release(id, 1, SimTimePs(30), &mut lines, &m, &mut woken);
        assert!(woken.is_empty(), "two readers still hold it");
        t.release(id, 2, SimTimePs(40), &mut lines, &m, &mut woken);
        assert_eq!(woken, vec![(3, SimTimePs(40))], "the last reader out hands it to the writer");
        assert_eq!(t.stats(id).wait_ps, 30);
    }

    #[test]
    fn rwsem_wakes_writers_fifo_and_all_queued_readers_at_once() {
        // Spinning off: every waiter sleeps, in arrival order.
        let (mut t, mut lines, mut m, id) = setup(6, RwKind::Rwsem { spin: false });
        m.wakeup_ps = 5;
        let mut woken = Vec::new();
        assert!(t.acquire(id, 0, true, SimTimePs(0), &mut lines, &m).is_some());
        // Queue: W1 R2 W3 R4 R5.
        for (p, w) in [(1, true), (2, false), (3, true), (4, false), (5, false)] {
            assert_eq!(t.acquire(id, p, w, SimTimePs(u64::from(p)), &mut lines, &m), None);
        }
        t.release(id, 0, SimTimePs(100), &mut lines, &m, &mut woken);
        assert_eq!(woken, vec![(1, SimTimePs(105))], "the writer at the head alone");
        woken.clear();
        t.release(id, 1, SimTimePs(200), &mut lines, &m, &mut woken);
        let ps: Vec<u32> = woken.iter().map(|w| w.0).collect();
        assert_eq!(ps, vec![2, 4, 5], "every queued reader, past the queued writer (phase-fair)");
        assert!(woken.iter().all(|w| w.1 == SimTimePs(205)), "each pays a wake-up: {woken:?}");
        woken.clear();
        for p in [2, 4] {
            t.release(id, p, SimTimePs(300), &mut lines, &m, &mut woken);
        }
        assert!(woken.is_empty());
        t.release(id, 5, SimTimePs(300), &mut lines, &m, &mut woken);
        assert_eq!(woken, vec![(3, SimTimePs(305))]);
    }

    #[test]
    fn rwsem_spinning_writer_takes_the_lock_before_sleepers_until_handoff() {
        let (mut t, mut lines, mut m, id) = setup(3, RWSEM);
        m.wakeup_ps = 1_000;
        let mut woken = Vec::new();
        assert!(t.acquire(id, 0, true, SimTimePs(0), &mut lines, &m).is_some());
        // A reader sleeps; then a writer spins on the running owner.
        assert_eq!(t.acquire(id, 1, false, SimTimePs(10), &mut lines, &m), None);
        assert_eq!(t.acquire(id, 2, true, SimTimePs(20), &mut lines, &m), None);
        t.release(id, 0, SimTimePs(100), &mut lines, &m, &mut woken);
        assert_eq!(woken, vec![(2, SimTimePs(100))], "the spinner, with no wake-up");
        assert_eq!(t.stats(id).spins, 1);
        woken.clear();
        // Spin again while the reader has waited past RWSEM_WAIT_TIMEOUT:
        // the handoff gives the lock to the sleeping reader.
        let late = SimTimePs(10 + RWSEM_WAIT_TIMEOUT_PS);
        assert_eq!(t.acquire(id, 0, true, late, &mut lines, &m), None);
        t.release(id, 2, late, &mut lines, &m, &mut woken);
        assert_eq!(woken, vec![(1, SimTimePs(late.0 + 1_000))]);
        woken.clear();
        t.release(id, 1, SimTimePs(late.0 + 2_000), &mut lines, &m, &mut woken);
        assert_eq!(woken, vec![(0, SimTimePs(late.0 + 3_000))], "the old spinner sleeps now");
    }

    #[test]
    fn qrwlock_writer_waits_for_readers_and_the_queue_is_fifo() {
        let (mut t, mut lines, m, id) = setup(5, RwKind::Qrwlock);
        let mut woken = Vec::new();
        assert!(t.acquire(id, 0, false, SimTimePs(0), &mut lines, &m).is_some());
        assert_eq!(t.acquire(id, 1, true, SimTimePs(1), &mut lines, &m), None);
        // Readers behind a waiting writer queue (fair), unlike a rwsem's
        // phase-fair wake-up they stay behind it.
        assert_eq!(t.acquire(id, 2, false, SimTimePs(2), &mut lines, &m), None);
        assert_eq!(t.acquire(id, 3, false, SimTimePs(3), &mut lines, &m), None);
        t.release(id, 0, SimTimePs(10), &mut lines, &m, &mut woken);
        assert_eq!(woken, vec![(1, SimTimePs(10))]);
        woken.clear();
        t.release(id, 1, SimTimePs(20), &mut lines, &m, &mut woken);
        assert_eq!(woken, vec![(2, SimTimePs(20)), (3, SimTimePs(20))]);
        assert_eq!(t.stats(id).contended, 3);
    }

    #[test]
    fn seqlock_reader_retries_once_for_one_overlapping_write() {
        let (mut t, mut lines, m, id) = setup(2, RwKind::Seqlock);
        let mut woken = Vec::new();
        // Reader 0 begins at 0; writer 1 writes from 10 to 20; the reader
        // checks at 30 (overlap: retry), begins again at 40, checks at 50.
        assert!(t.read_begin(id, 0, SimTimePs(0), &mut lines, &m).is_some());
        assert!(t.acquire(id, 1, true, SimTimePs(10), &mut lines, &m).is_some());
        t.release(id, 1, SimTimePs(20), &mut lines, &m, &mut woken);
        assert!(t.read_retry(id, 0, SimTimePs(30), &mut lines, &m).1, "the write overlapped");
        assert!(t.read_begin(id, 0, SimTimePs(40), &mut lines, &m).is_some());
        assert!(!t.read_retry(id, 0, SimTimePs(50), &mut lines, &m).1);
        // A reader that begins while the writer holds the lock spins until
        // the release, then reads without a retry.
        assert!(t.acquire(id, 1, true, SimTimePs(60), &mut lines, &m).is_some());
        assert_eq!(t.read_begin(id, 0, SimTimePs(70), &mut lines, &m), None);
        t.release(id, 1, SimTimePs(80), &mut lines, &m, &mut woken);
        assert_eq!(woken, vec![(0, SimTimePs(80))]);
        assert!(!t.read_retry(id, 0, SimTimePs(90), &mut lines, &m).1);
        let s = t.stats(id);
        assert_eq!((s.retries, s.read_acquisitions, s.write_acquisitions), (1, 2, 2));
    }
}
