//! Locks built on cache lines: ticket spinlock, queued (MCS-style)
//! spinlock and sleeping mutex, each with FIFO waiters.
//!
//! Hand-off costs follow Boyd-Wickizer et al., "Non-scalable locks are
//! dangerous" (2012): releasing a ticket lock makes every spinning waiter
//! re-read the lock line, and those transfers are served one at a time, so
//! the next ticket holder gets the line after about half of them; a queued
//! lock hands off with one transfer to the next waiter's own node; a mutex
//! adds a scheduler wake-up.

use super::Pricing;
use super::coherence::{LineId, LineTable};
use crate::engine::fifo::Fifo;
use crate::engine::time::SimTimePs;

/// Index of a lock in a [`LockTable`].
pub type LockId = u32;

/// The kind of lock, as in the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockKind {
    /// Ticket spinlock (`arch_spinlock_t` before qspinlock): waiters spin
    /// on the shared lock word.
    Ticket,
    /// Queued spinlock (`qspinlock`, MCS-style): waiters spin on their own
    /// node; hand-off is one transfer.
    Queued,
    /// Sleeping mutex: waiters sleep and are woken on release.
    Mutex,
}

/// Hold and wait statistics of one lock.
#[derive(Debug, Clone, Default)]
pub struct LockStats {
    /// Number of acquisitions.
    pub acquisitions: u64,
    /// Acquisitions that had to wait.
    pub contended: u64,
    /// Total time from request to acquisition, in ps.
    pub wait_ps: u64,
    /// Total time held, in ps.
    pub hold_ps: u64,
    /// Total hand-off time (release to next holder running), in ps.
    pub handoff_ps: u64,
}

#[derive(Debug, Clone)]
struct LockState {
    kind: LockKind,
    line: LineId,
    holder: Option<u32>,
    since: SimTimePs,
    waiters: Fifo<(u32, SimTimePs)>,
    stats: LockStats,
}

/// All locks of one run.
#[derive(Debug, Clone, Default)]
pub struct LockTable {
    locks: Vec<LockState>,
}

/// Result of a release: when the releaser continues and, if a waiter was
/// handed the lock, which one and when it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// When the releasing process continues.
    pub done: SimTimePs,
    /// The waiter that now holds the lock and when it resumes.
    pub woken: Option<(u32, SimTimePs)>,
}

impl LockTable {
    /// Adds a lock of `kind` whose lock word lives on `line`.
    pub fn add(&mut self, kind: LockKind, line: LineId) -> LockId {
        self.locks.push(LockState {
            kind,
            line,
            holder: None,
            since: SimTimePs::ZERO,
            waiters: Fifo::new(),
            stats: LockStats::default(),
        });
        (self.locks.len() - 1) as LockId
    }

    /// Moves lock `id`'s word to `line` (a lock added before its line
    /// existed: the per-instance locks of a `path` workload, whose lines
    /// follow the reported ones).
    pub fn set_line(&mut self, id: LockId, line: LineId) {
        self.locks[id as usize].line = line;
    }

    /// Statistics of lock `id`.
    pub fn stats(&self, id: LockId) -> &LockStats {
        &self.locks[id as usize].stats
    }

    /// The line holding lock `id`'s lock word.
    pub fn line(&self, id: LockId) -> LineId {
        self.locks[id as usize].line
    }

    /// Process `p` asks for lock `id` at `now`. Returns when it holds the
    /// lock, or `None` if it must wait (it is queued FIFO).
    #[inline(always)]
    pub fn acquire(&mut self, id: LockId, p: u32, now: SimTimePs, lines: &mut LineTable, m: &Pricing) -> Option<SimTimePs> {
        let l = &mut self.locks[id as usize];
        if l.holder.is_some() {
            l.waiters.push_back((p, now));
            return None;
        }
        let got = lines.write(l.line, p, now, m).done;
        l.holder = Some(p);
        l.since = got;
        l.stats.acquisitions += 1;
        l.stats.wait_ps += got.since(now).0;
        Some(got)
    }

    /// Process `p` releases lock `id` at `now`, handing it to the first
    /// waiter if there is one.
    #[inline]
    pub fn release(&mut self, id: LockId, p: u32, now: SimTimePs, lines: &mut LineTable, m: &Pricing) -> Release {
        let l = &mut self.locks[id as usize];
        debug_assert_eq!(l.holder, Some(p), "unlock by a non-holder");
        let Some((q, asked)) = l.waiters.pop_front() else {
            let done = lines.write(l.line, p, now, m).done;
            l.stats.hold_ps += done.since(l.since).0;
            l.holder = None;
            return Release { done, woken: None };
        };
        // The releaser's write of the lock word comes first in each kind.
        let (done, got) = match l.kind {
            // The releaser writes the next waiter's queue node (one
            // transfer); the waiter then takes the lock word.
            LockKind::Queued => {
                let (release, take) = lines.write_then_pass(l.line, p, q, now, m);
                (release.done, take.done)
            }
            LockKind::Mutex => {
                let done = lines.write(l.line, p, now, m).done;
                let at = done.saturating_add(SimTimePs(m.xfer(p, q) + m.wakeup_ps));
                (done, lines.write(l.line, q, at, m).done)
            }
            LockKind::Ticket => {
                let done = lines.write(l.line, p, now, m).done;
                // Every spinner (q and those behind it) re-reads the line;
                // the reads are served one at a time and q's comes, on
                // average, halfway through them.
                let spinners = 1 + l.waiters.len() as u64;
                let per = m.xfer(p, q);
                let position = spinners.div_ceil(2);
                lines.occupy(l.line, done, per * spinners, m.class(p, q));
                (done, done.saturating_add(SimTimePs(per * position)))
            }
        };
        l.stats.hold_ps += done.since(l.since).0;
        l.holder = Some(q);
        l.since = got;
        l.stats.acquisitions += 1;
        l.stats.contended += 1;
        l.stats.wait_ps += got.since(asked).0;
        l.stats.handoff_ps += got.since(done).0;
        Release {
            done,
            woken: Some((q, got)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(n: usize, xfer: u64) -> Pricing {
        let mut x = vec![xfer; n * n];
        for i in 0..n {
            x[i * n + i] = 0;
        }
        Pricing::from_matrix(n, x, vec![3; n * n], 0, 0)
    }

    /// Hand-off time for one release with `waiters` queued behind the holder.
    fn handoff(kind: LockKind, waiters: u32) -> u64 {
        let n = waiters as usize + 1;
        let m = machine(n, 50_000);
        let mut lines = LineTable::new(vec!["l".into()], n);
        let mut t = LockTable::default();
        let id = t.add(kind, 0);
        let now = t.acquire(id, 0, SimTimePs(0), &mut lines, &m).unwrap();
        for q in 1..n as u32 {
            assert!(t.acquire(id, q, now, &mut lines, &m).is_none());
        }
        let r = t.release(id, 0, SimTimePs(1_000_000), &mut lines, &m);
        let (q, at) = r.woken.unwrap();
        assert_eq!(q, 1, "FIFO hand-off");
        at.since(r.done).0
    }

    #[test]
    fn ticket_handoff_grows_with_waiters_queued_does_not() {
        let t: Vec<u64> = [1, 4, 16].iter().map(|&w| handoff(LockKind::Ticket, w)).collect();
        let q: Vec<u64> = [1, 4, 16].iter().map(|&w| handoff(LockKind::Queued, w)).collect();
        assert!(t[0] < t[1] && t[1] < t[2], "ticket: {t:?}");
        assert_eq!(q[0], q[1]);
        assert_eq!(q[1], q[2]);
    }
}
