//! The event queue: a binary heap ordered by `(time, seq)`, with a FIFO
//! lane for events scheduled at the current time.
//!
//! `seq` is a global counter taken when an event is scheduled, so events at
//! the same time run in the order they were scheduled (FIFO for equal
//! times), whatever the heap's internal layout.
//!
//! The lane: an event scheduled *at* the current time (a lock hand-off on a
//! machine where it is free, a process that yields) skips the heap. Every
//! lane event has `time == now` and a larger `seq` than any heap event of
//! time `now` (those were scheduled before the clock reached `now`), so
//! popping the heap while its top is at `now` and the lane otherwise gives
//! exactly the `(time, seq)` order of a single heap.

use super::fifo::Fifo;
use super::time::SimTimePs;
use std::cmp::Ordering;

/// One scheduled event: at `time`, wake process `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// When the event fires.
    pub time: SimTimePs,
    /// Scheduling order, unique and increasing.
    pub seq: u64,
    /// The process (simulated CPU) to wake.
    pub target: u32,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Error returned when an event is scheduled before the current time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("event scheduled at {at} but the clock is already at {now}")]
pub struct SchedulingError {
    /// The requested time.
    pub at: SimTimePs,
    /// The clock when it was requested.
    pub now: SimTimePs,
}

/// A priority queue of events ordered by `(time, seq)`.
///
/// Scheduling *at* the current time is allowed (the event runs after every
/// event already queued for that time); scheduling before it is an error.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: MinHeap,
    /// Events at `now`, in `seq` order (see the module documentation).
    lane: Fifo<Event>,
    next_seq: u64,
    now: SimTimePs,
}

impl EventQueue {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// The time of the last event popped.
    pub fn now(&self) -> SimTimePs {
        self.now
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.lane.len()
    }

    /// True when no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.lane.is_empty()
    }

    /// Schedules `target` to wake at `time`; returns the event's sequence number.
    #[inline]
    pub fn schedule_at(&mut self, time: SimTimePs, target: u32) -> Result<u64, SchedulingError> {
        let ev = self.new_event(time, target)?;
        if time == self.now {
            self.lane.push_back(ev);
        } else {
            self.heap.push(ev);
        }
        Ok(ev.seq)
    }

    /// The event waking `target` at `time`, with the next sequence number
    /// (used up); an error if `time` is before now.
    #[inline(always)]
    fn new_event(&mut self, time: SimTimePs, target: u32) -> Result<Event, SchedulingError> {
        if time < self.now {
            return Err(SchedulingError { at: time, now: self.now });
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        Ok(Event { time, seq, target })
    }

    /// Takes an event at `time` without queueing it, when it would be the
    /// next one popped: nothing is in the lane and every queued event is
    /// later than `time`. Then the clock moves to `time`, a sequence number
    /// is used up as [`EventQueue::schedule_at`] would, and it returns true:
    /// the caller runs the event at once, in the same order a schedule and
    /// a pop would have given it. Otherwise nothing changes and it returns
    /// false (the caller schedules the event).
    #[inline]
    pub fn take_if_next(&mut self, time: SimTimePs) -> bool {
        if time < self.now || !self.lane.is_empty() || self.heap.min_time().is_some_and(|m| m <= time) {
            return false;
        }
        self.next_seq += 1;
        self.now = time;
        true
    }

    /// [`EventQueue::take_if_next`] then, when it declines,
    /// [`EventQueue::schedule_at`], in one call: returns true when the
    /// event at `time` was taken (the caller runs it now), false when it
    /// was scheduled. `take = false` always schedules (an event past the
    /// stop time must go through the queue, where the run ends). The same
    /// sequence number is used up either way, so the order is exactly
    /// that of the two calls.
    #[inline(always)]
    pub fn take_or_schedule(&mut self, time: SimTimePs, target: u32, take: bool) -> Result<bool, SchedulingError> {
        let ev = self.new_event(time, target)?;
        if time == self.now {
            self.lane.push_back(ev);
            return Ok(false);
        }
        if take && self.lane.is_empty() && self.heap.min_time().is_none_or(|m| m > time) {
            self.now = time;
            return Ok(true);
        }
        self.heap.push(ev);
        Ok(false)
    }

    /// Removes and returns the earliest event, advancing the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        if !self.lane.is_empty() && self.heap.peek_time().is_none_or(|t| t > self.now) {
            return self.lane.pop_front();
        }
        let ev = self.heap.pop()?;
        debug_assert!(ev.time >= self.now, "time went backwards");
        debug_assert!(self.lane.is_empty() || ev.time == self.now, "the lane holds only events at now");
        self.now = ev.time;
        Some(ev)
    }
}

/// The `(time, seq)` order as one integer, so a comparison is one
/// branch-free 128-bit compare instead of two branches.
#[inline(always)]
fn key(e: &Event) -> u128 {
    (u128::from(e.time.0) << 64) | u128::from(e.seq)
}

/// A binary min-heap of events by [`key`], kept in a `Vec` and sifted with
/// a hole (one move per level instead of a swap), the smaller child picked
/// without a branch. `std`'s `BinaryHeap` is a max-heap over `Ord`, which
/// for `Event` costs two data-dependent branches per comparison; on the
/// engine's small heaps those mispredictions were a third of the run.
///
/// A pop leaves the popped event's slot at the root as a hole
/// (`hole = true`) instead of refilling it at once: the engine's usual next
/// call is a push (the process it just woke schedules itself again), and a
/// push into a root hole is one sift from the root instead of a refill from
/// the last element plus a sift-up of the new one.
///
/// Tried in issue 35 and not kept: a winner tree with one slot per process
/// (each process has at most one event in the path interpreter), the
/// running process's rival key cached for its burst, branch-free replays.
/// It popped in the same order, and case 1 ran no faster (1.7-2.5 s
/// against 1.8-2.1 s user per run point of 4M creates, under load).
///
/// Tried in issue 35 (session 60) and not kept: a 4-ary heap (the smallest
/// of up to four children picked without a branch, the refill a sift
/// down from the root). It popped in the same order (the proptest below),
/// and M/M/1//N ran at 7.9M completions/s against 9.4M (`fsmeta bench
/// --completions 2000000 --repeat 7`, two alternating pairs): on these
/// small heaps the extra compares per level cost more than the levels
/// saved, and the refill lost the hole's sink-then-rise.
///
/// Tried in issue 35 (session 70) and not kept: each queued event packed
/// in one `u128` (`time << 64 | seq << 24 | target`: 16 bytes a heap
/// entry instead of 24, the key read rather than built). It popped in
/// the same order, and M/M/1//N ran slower: `fsmeta bench --repeat 9
/// --completions 400000`, three alternating pairs, ratio 0.828 / 0.836 /
/// 0.832 against 0.906 / 0.914 / 0.913 (events/s 25.5M-26.9M against
/// 26.2M-28.7M), and no faster without its two checks (the target's
/// range, the sequence's renumbering).
#[derive(Debug, Default)]
struct MinHeap {
    v: Vec<Event>,
    /// `v[0]` is a hole (an event already popped).
    hole: bool,
}

impl MinHeap {
    #[inline]
    fn len(&self) -> usize {
        self.v.len() - usize::from(self.hole)
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn peek_time(&mut self) -> Option<SimTimePs> {
        self.fill_hole();
        self.v.first().map(|e| e.time)
    }

    /// The earliest time in the heap, without filling a root hole: then it
    /// is the earlier of the root's two children.
    #[inline]
    fn min_time(&self) -> Option<SimTimePs> {
        if !self.hole {
            return self.v.first().map(|e| e.time);
        }
        match (self.v.get(1), self.v.get(2)) {
            (Some(a), Some(b)) => Some(a.time.min(b.time)),
            (Some(a), None) => Some(a.time),
            _ => None,
        }
    }

    #[inline]
    fn push(&mut self, ev: Event) {
        if self.hole {
            self.hole = false;
            self.sift_down(ev);
            return;
        }
        let k = key(&ev);
        let mut pos = self.v.len();
        self.v.push(ev);
        let v = &mut self.v[..];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if key(&v[parent]) <= k {
                break;
            }
            v[pos] = v[parent];
            pos = parent;
        }
        v[pos] = ev;
    }

    /// Refills a root hole with the last element. The test is inline (most
    /// calls find no hole); the refill is not.
    #[inline(always)]
    fn fill_hole(&mut self) {
        if self.hole {
            self.refill();
        }
    }

    #[inline(never)]
    fn refill(&mut self) {
        self.hole = false;
        let Some(last) = self.v.pop() else { return };
        if !self.v.is_empty() {
            self.sift_from_root(last);
        }
    }

    /// Places `x` in the root slot (whose event is gone): the hole sinks to
    /// a leaf along the smaller children (no comparison with `x` on the way
    /// down, so the loop's only branch is its bound), then `x` rises from
    /// there, usually by a level or none.
    #[inline]
    fn sift_from_root(&mut self, x: Event) {
        let v = &mut self.v[..];
        let n = v.len();
        let mut pos = 0;
        let mut child = 1;
        while child + 1 < n {
            child += usize::from(key(&v[child + 1]) < key(&v[child]));
            v[pos] = v[child];
            pos = child;
            child = 2 * pos + 1;
        }
        if child + 1 == n {
            v[pos] = v[child];
            pos = child;
        }
        let k = key(&x);
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if key(&v[parent]) <= k {
                break;
            }
            v[pos] = v[parent];
            pos = parent;
        }
        v[pos] = x;
    }

    /// Places `x` in the root slot (whose event is gone), moving smaller
    /// children up until `x` is no larger than both: a new event that is
    /// soon (a cache hit, a short transfer) stays at or near the root.
    #[inline]
    fn sift_down(&mut self, x: Event) {
        let v = &mut self.v[..];
        let n = v.len();
        let k = key(&x);
        let mut pos = 0;
        let mut child = 1;
        while child < n {
            if child + 1 < n {
                child += usize::from(key(&v[child + 1]) < key(&v[child]));
            }
            if k <= key(&v[child]) {
                break;
            }
            v[pos] = v[child];
            pos = child;
            child = 2 * pos + 1;
        }
        v[pos] = x;
    }

    /// Removes the minimum, leaving its slot as the root hole.
    #[inline]
    fn pop(&mut self) -> Option<Event> {
        self.fill_hole();
        let top = *self.v.first()?;
        self.hole = true;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn equal_times_pop_in_schedule_order() {
        let mut q = EventQueue::new();
        for t in [5u32, 1, 2, 3] {
            q.schedule_at(SimTimePs(7), t).unwrap();
        }
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.target).collect();
        assert_eq!(order, vec![5, 1, 2, 3]);
    }

    #[test]
    fn scheduling_in_the_past_is_an_error() {
        let mut q = EventQueue::new();
        q.schedule_at(SimTimePs(10), 0).unwrap();
        q.pop();
        let err = q.schedule_at(SimTimePs(9), 0).unwrap_err();
        assert_eq!(err.now, SimTimePs(10));
        assert!(q.schedule_at(SimTimePs(10), 0).is_ok());
    }

    proptest! {
        /// Shadow model: a BTreeMap keyed by (time, seq) pops in the same
        /// order. Half the delays are zero, so the lane is exercised.
        #[test]
        fn matches_btreemap_shadow(ops in proptest::collection::vec((0u64..50, 0u32..8, any::<bool>()), 1..400)) {
            let mut q = EventQueue::new();
            let mut shadow: BTreeMap<(u64, u64), u32> = BTreeMap::new();
            for (dt, target, pop) in ops {
                // An event that would be popped next may be taken directly.
                let t = SimTimePs(q.now().0 + dt.saturating_sub(25));
                let next = shadow.first_key_value().is_none_or(|(&(st, _), _)| st > t.0);
                if target == 7 {
                    prop_assert_eq!(q.take_if_next(t), next);
                    if next {
                        shadow.insert((t.0, u64::MAX), target);
                        prop_assert_eq!(shadow.pop_first().map(|(k, _)| k.0), Some(t.0));
                        prop_assert_eq!(q.now(), t);
                    }
                    prop_assert_eq!(q.len(), shadow.len());
                    continue;
                }
                if target == 6 {
                    // Taken when allowed (`pop` stands for the stop-time
                    // check), later than now and before every pending event.
                    let seq = q.next_seq;
                    let taken = pop && t > q.now() && next;
                    prop_assert_eq!(q.take_or_schedule(t, target, pop), Ok(taken));
                    if taken {
                        prop_assert_eq!(q.now(), t);
                    } else {
                        shadow.insert((t.0, seq), target);
                    }
                    prop_assert_eq!(q.len(), shadow.len());
                    continue;
                }
                if pop {
                    let got = q.pop();
                    let want = shadow.pop_first();
                    prop_assert_eq!(got.map(|e| ((e.time.0, e.seq), e.target)), want);
                } else {
                    let seq = q.schedule_at(t, target).unwrap();
                    shadow.insert((t.0, seq), target);
                }
                prop_assert_eq!(q.len(), shadow.len());
            }
        }
    }
}
