//! A simulated thread of the path interpreter ([`super::sim`]): where it
//! is in its path, its random stream and SMT slowdown, and the work with
//! spread reads it may be in the middle of.

use super::sim::SimError;
use crate::engine::dist::Duration;
use crate::engine::time::SimTimePs;
use crate::kernel::sync::counter::MicroOp;
use crate::machine::coherence::LineId;
use rand_chacha::ChaCha8Rng;

/// One simulated thread: where it is in its path, with its own random
/// stream and SMT slowdown (so a step reads one record, not three vectors).
#[derive(Debug)]
pub(super) struct Proc {
    pub(super) next: usize,
    /// The work-queue item it is running (for an idle worker: its queue,
    /// with no start).
    pub(super) item: Option<Item>,
    /// Items of bound queues waiting for this CPU's kworker: (queue,
    /// queueing time).
    pub(super) bound: std::collections::VecDeque<(u32, SimTimePs)>,
    /// An unbound queue's worker (not a thread).
    pub(super) worker: bool,
    /// Operations this process has completed.
    pub(super) ops_done: u64,
    /// Reads spread over the work step in progress.
    pub(super) spread: Option<Spread>,
    pub(super) op_start: SimTimePs,
    /// The accesses of the counter operation in progress, made in order
    /// from `micro_at` (a `Vec` the counter model fills in place, not a
    /// queue: it is filled only once the previous one is used up).
    pub(super) micro: Vec<MicroOp>,
    pub(super) micro_at: usize,
    /// The random stream of its work durations.
    pub(super) rng: ChaCha8Rng,
    /// Work durations are multiplied by this / 1000 (SMT).
    pub(super) slowdown: u32,
    /// In a `cmpxchg` step: the line's value count when this process last
    /// loaded it (or saw it in a failed `cmpxchg`); `None` before the load.
    pub(super) cas_seen: Option<u64>,
}

impl Proc {
    pub(super) fn new(rng: ChaCha8Rng, slowdown: u32) -> Self {
        Proc {
            next: 0,
            item: None,
            bound: std::collections::VecDeque::new(),
            worker: false,
            ops_done: 0,
            spread: None,
            op_start: SimTimePs::ZERO,
            micro: Vec::new(),
            micro_at: 0,
            rng,
            slowdown,
            cas_seen: None,
        }
    }

    /// Makes this process an idle worker of queue `queue`, waiting at its
    /// sub-path's last step (`end_item`, its `EndItem`): woken, it takes
    /// the next item.
    pub(super) fn idle_worker(&mut self, queue: u32, end_item: usize) {
        self.worker = true;
        self.item = Some(Item { queue, start: None });
        self.next = end_item;
    }

    /// A spread read or a counter's access is still to be made.
    #[inline]
    pub(super) fn pending(&self) -> bool {
        self.spread.is_some() || self.micro_at < self.micro.len()
    }

    /// Draws the duration of work step `step` from `dur`, scaled by the
    /// SMT slowdown.
    #[inline(always)]
    pub(super) fn draw(&mut self, dur: &Duration, step: usize) -> Result<SimTimePs, SimError> {
        let d = dur.sample(&mut self.rng);
        self.scaled(d, step)
    }

    /// `d` scaled by the SMT slowdown, or an error when out of range.
    #[inline]
    pub(super) fn scaled(&self, d: SimTimePs, step: usize) -> Result<SimTimePs, SimError> {
        match self.slowdown {
            // A core of its own (no SMT sibling): the draw as is.
            1000 if !d.is_out_of_range() => Ok(d),
            slow => scale(d, slow).ok_or(SimError::DurationOutOfRange { step }),
        }
    }
}

/// The work-queue item a process runs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Item {
    /// The queue.
    pub(super) queue: u32,
    /// When the worker started it (`None`: an idle worker, no item).
    pub(super) start: Option<SimTimePs>,
}

/// A work step of `dur` ps with `n` reads of `line` at evenly spaced points:
/// read `k` (1-based) comes after `dur x (2k - 1) / 2n` of the work, so
/// the reads sit at the middles of `n` equal slices. Each read is its own
/// event: a miss is a transfer at the time of the read, serialised on the
/// line like any other, and it stalls the work that follows.
///
/// Why a read that hits is still an event (issue 13, "fewer events for the
/// same answer"): a hit changes no shared state, so the reads could be
/// skipped until a write invalidates the reader's copy (the read after it
/// misses) and the work's end scheduled at once. The times would be the
/// same, but the end event (and a first miss) would take its `seq` when the
/// work starts instead of at the read before it; events at exactly the
/// same picosecond scheduled in between would then run in another order.
/// With exponential work that happens about once per million skipped
/// works, so outputs would differ at full scale: not the same answer. On
/// case 1 it would save about 1.2 of 6.05 events per create (the per-CPU
/// variant's reads all hit; the atomic variant's mostly miss).
///
/// Issue 35 built the exact version (commit 0fd0f53, reverted by the next
/// one): a one-read work step whose process holds the line schedules only
/// its end; the read is confirmed when the one-event engine would have run
/// it (the first event with a larger `(time, seq)`), which gives the end
/// the sequence number it would have had; a write before that restores the
/// read's event at its own key. Outputs were byte-identical, but case 1
/// ran slower (1.9-2.3 s -> 2.2-2.8 s user per run point of 4M creates):
/// it saves one queue push per create in the per-CPU variant only, and
/// its hooks (a check per step and per write) cost more than that.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spread {
    pub(super) line: LineId,
    pub(super) n: u32,
    /// Reads made so far.
    pub(super) done: u32,
    pub(super) dur: u64,
    /// `before(done + 1)`: work done before the next read.
    pub(super) at: u64,
}

impl Spread {
    /// Work done before read `k` (1-based); `k = n + 1` gives `dur`.
    pub(super) fn before(&self, k: u32) -> u64 {
        if k > self.n {
            return self.dur;
        }
        // In u64 when the product fits (always, for works under about
        // 2^64 / (2n) ps), else in u128; the quotient is the same. A
        // power-of-two divisor (n = 1, 2, 4...) is a shift.
        let div = 2 * u64::from(self.n);
        match self.dur.checked_mul(u64::from(2 * k - 1)) {
            Some(num) if div.is_power_of_two() => num >> div.trailing_zeros(),
            Some(num) => num / div,
            None => (u128::from(self.dur) * u128::from(2 * k - 1) / u128::from(div)) as u64,
        }
    }
}

/// `d x slow / 1000` (the SMT slowdown), exact, or `None` when `d` is
/// out of range or the result does not fit below [`SimTimePs::MAX`].
pub(super) fn scale(d: SimTimePs, slow: u32) -> Option<SimTimePs> {
    let slow = u64::from(slow);
    // u64 when the product fits (the common case), else exact in u128.
    let scaled = match d.0.checked_mul(slow) {
        Some(x) => Some(x / 1000),
        None => u64::try_from(u128::from(d.0) * u128::from(slow) / 1000).ok(),
    };
    match scaled {
        Some(v) if !d.is_out_of_range() && v != u64::MAX => Some(SimTimePs(v)),
        _ => None,
    }
}
