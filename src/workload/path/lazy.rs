//! Lazy spread reads: the bookkeeping that lets the path interpreter
//! ([`super::sim`]) skip the event of a read that cannot miss, with exactly
//! the one-event-per-read engine's outcome.
//!
//! A work step with one read of a line spread over it (`count = 1`) makes
//! the read halfway through the work: one event for the read at `t_r`, one
//! for the end of the work at `t_e`. When the process already holds a
//! valid copy of the line as the work starts, the read is a hit unless
//! another CPU writes the line before the read's event is processed; a hit
//! changes no shared state. So the interpreter schedules the end at once
//! (`t_e = t_r + hit + the rest of the work`) and keeps the read here as
//! *pending*, with the key `(t_r, seq)` its event would have had. Then:
//!
//! - **Confirm**: when the first event with a larger key starts (the
//!   moment the one-event engine would have processed the read), the read
//!   is made (a hit) and counted as an event, and the end event is given
//!   the sequence number it would have got then (`late`). It stays queued
//!   under the number taken at the start of the work; when it comes out of
//!   the queue with another event at the same time whose number is below
//!   `late` (scheduled before the read), it goes back behind it under
//!   `late`: it runs after every event at its time scheduled before the
//!   read and before every one scheduled after it, as in the one-event
//!   engine.
//! - **Cancel**: a write of the line (by anyone) before that moment
//!   invalidates the copy ([`crate::machine::coherence::LineTable::set_lazy`]):
//!   the end event goes back to being the read's event, at `(t_r, seq)`,
//!   with the spread read restored, exactly as the one-event engine had it.
//!
//! Whether a read is taken lazily never changes the outcome, only the work
//! done; a per-line score stops trying on lines whose lazy reads are
//! mostly cancelled (case 1's atomic variant writes its line from every
//! CPU), with one try in nine to notice a change.

use crate::engine::time::SimTimePs;
use crate::machine::coherence::LineId;

/// A read kept off the event queue.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    pub(super) line: LineId,
    /// When the read's event would run.
    pub(super) t_r: SimTimePs,
    /// The sequence number its event would have had (the end event's,
    /// until a confirmation re-keys it).
    pub(super) seq: u64,
    /// When the work ends if the read hits.
    pub(super) t_e: SimTimePs,
    /// The work's duration and the part of it before the read, in ps (to
    /// restore the spread read on a cancellation).
    pub(super) dur: u64,
    pub(super) at: u64,
}

impl Pending {
    /// The read's event key, `(time, seq)` as one integer.
    pub(super) fn key(&self) -> u128 {
        key(self.t_r, self.seq)
    }
}

/// `(time, seq)` as one integer (the event queue's order).
#[inline(always)]
pub(super) fn key(t: SimTimePs, seq: u64) -> u128 {
    (u128::from(t.0) << 64) | u128::from(seq)
}

/// No pending read: larger than every key.
pub(super) const NONE: u128 = u128::MAX;

/// Lazy reads of one run.
#[derive(Debug)]
pub(super) struct Lazies {
    /// Lazy reads are allowed (at most 64 processes, one bit each).
    pub(super) enabled: bool,
    /// Per process: its pending (or cancelled, see `restore`) read.
    by_proc: Vec<Option<Pending>>,
    /// The pending reads' keys and processes, largest key first (the
    /// next one due is the last).
    order: Vec<(u128, u32)>,
    /// Smallest key of the pending reads ([`NONE`] when none).
    pub(super) next: u128,
    /// Processes whose read was cancelled: when their event (the read's)
    /// is processed, the spread read is restored first.
    pub(super) restore: u64,
    /// A read the current step proposes: registered or confirmed once the
    /// queue has taken or scheduled its end event.
    pub(super) candidate: Option<Pending>,
    /// Per process: the sequence number its end event would have had, set
    /// when its read is confirmed while that event is queued (0: none).
    pub(super) late: Vec<u64>,
    /// Per line: not negative while lazy reads of it mostly hit.
    score: Vec<i32>,
}

impl Lazies {
    /// Bookkeeping for `procs` processes and `lines` lines.
    pub(super) fn new(procs: usize, lines: usize) -> Self {
        Lazies {
            enabled: procs <= 64,
            by_proc: vec![None; procs],
            order: Vec::with_capacity(procs),
            next: NONE,
            restore: 0,
            candidate: None,
            late: vec![0; procs],
            score: vec![0; lines],
        }
    }

    /// Whether to try a lazy read of `line` now (the score, see the module
    /// documentation); a refusal counts towards the next try.
    #[inline]
    pub(super) fn try_line(&mut self, line: LineId) -> bool {
        let s = &mut self.score[line as usize];
        if *s >= 0 {
            return true;
        }
        *s += 1;
        false
    }

    /// `p`'s read was kept off the queue.
    pub(super) fn add(&mut self, p: u32, r: Pending) {
        debug_assert!(self.by_proc[p as usize].is_none());
        self.by_proc[p as usize] = Some(r);
        let k = r.key();
        let at = self.order.partition_point(|&(x, _)| x > k);
        self.order.insert(at, (k, p));
        self.set_next();
    }

    fn set_next(&mut self) {
        self.next = self.order.last().map_or(NONE, |&(k, _)| k);
    }

    /// A read confirmed as it was proposed (its end event was taken at once).
    pub(super) fn hit_now(&mut self, r: &Pending) {
        let s = &mut self.score[r.line as usize];
        *s = (*s + 1).min(16);
    }

    /// The next pending read if its key is below `k` (the order its event
    /// would have run in), removed.
    #[inline]
    pub(super) fn pop_due(&mut self, k: u128) -> Option<(u32, Pending)> {
        let &(key, p) = self.order.last()?;
        if key >= k {
            return None;
        }
        self.order.pop();
        self.set_next();
        let r = self.by_proc[p as usize].take()?;
        let s = &mut self.score[r.line as usize];
        *s = (*s + 1).min(16);
        Some((p, r))
    }

    /// The reads of the processes in `mask` were cancelled by a write:
    /// they are restored when their event runs. Returns them.
    pub(super) fn cancel(&mut self, mask: u64, out: &mut Vec<(u32, Pending)>) {
        out.clear();
        let mut bits = mask;
        while bits != 0 {
            let p = bits.trailing_zeros();
            bits &= bits - 1;
            if let Some(r) = self.by_proc[p as usize] {
                out.push((p, r));
                self.score[r.line as usize] -= 8;
            }
        }
        self.restore |= mask;
        self.order.retain(|&(_, p)| mask & (1 << p) == 0);
        self.set_next();
    }

    /// The cancelled read of `p`, whose event is about to run: removed.
    pub(super) fn take_restored(&mut self, p: u32) -> Option<Pending> {
        if self.restore & (1 << p) == 0 {
            return None;
        }
        self.restore &= !(1 << p);
        self.by_proc[p as usize].take()
    }
}
