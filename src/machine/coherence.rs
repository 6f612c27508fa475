//! Cache-line coherence for named shared lines (a MESI-like directory).
//!
//! Each line has an exclusive owner or a set of sharers. A read by a
//! non-holder costs a transfer from the nearest holder (or memory); a write
//! or atomic invalidates every other holder and takes ownership, costing a
//! transfer from the farthest holder (the writer waits for the last
//! invalidation acknowledgement). Transfers of one line are serialised FIFO:
//! a request that arrives while the line is in flight waits until it is
//! free. This serialisation is what caps a hot atomic.

use super::Pricing;
use crate::engine::time::SimTimePs;

/// Index of a line in a [`LineTable`].
pub type LineId = u32;

/// What a line access cost: when it started being served and when it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// When the line began serving this request (>= the request time).
    pub start: SimTimePs,
    /// When the requester has the line and may continue.
    pub done: SimTimePs,
}

/// Statistics of one line, for the bottleneck report.
#[derive(Debug, Clone, Default)]
pub struct LineStats {
    /// Total time the line spent in flight (transfers), in ps.
    pub busy_ps: u64,
    /// Requests that needed a transfer.
    pub misses: u64,
    /// Requests served from the requester's own cache.
    pub hits: u64,
    /// Reads that needed a transfer (a subset of `misses`).
    pub read_misses: u64,
    /// Total time requests waited for the line to be free, in ps.
    pub wait_ps: u64,
    /// Transfers by distance class (index = `Distance as usize`); index 0
    /// (same CPU) counts fetches from memory.
    pub transfers: [u64; 5],
    /// Compare-and-exchanges that failed because the value changed since
    /// the process loaded it (each one a retry of the loop).
    pub cas_retries: u64,
}

#[derive(Debug, Clone)]
struct LineState {
    owner: Option<u32>,
    /// Sharer bits of processes 0-63, in the line's own record (no
    /// pointer to follow on a read's hit test).
    sharers0: u64,
    /// Sharer bits of processes 64 and up, 64 a word (empty on machines
    /// of up to 64 processes).
    sharers_rest: Vec<u64>,
    free_at: SimTimePs,
    version: u64,
    stats: LineStats,
}

impl LineState {
    /// Word `i` of the sharer bits (processes `64 i` to `64 i + 63`).
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        match i {
            0 => self.sharers0,
            i => self.sharers_rest[i - 1],
        }
    }

    /// Marks process `p` a sharer.
    #[inline(always)]
    fn share(&mut self, p: u32) {
        let bit = 1u64 << (p % 64);
        match (p / 64) as usize {
            0 => self.sharers0 |= bit,
            i => self.sharers_rest[i - 1] |= bit,
        }
    }
}

/// All shared lines of one run.
#[derive(Debug, Clone)]
pub struct LineTable {
    lines: Vec<LineState>,
    names: Vec<String>,
}

impl LineTable {
    /// Lines with the given names, all uncached, for `procs` processes.
    pub fn new(names: Vec<String>, procs: usize) -> Self {
        let words = procs.div_ceil(64).max(1);
        let state = LineState {
            owner: None,
            sharers0: 0,
            sharers_rest: vec![0; words - 1],
            free_at: SimTimePs::ZERO,
            version: 0,
            stats: LineStats::default(),
        };
        LineTable {
            lines: vec![state; names.len()],
            names,
        }
    }

    /// The lines' names, in id order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Statistics of line `id`.
    pub fn stats(&self, id: LineId) -> &LineStats {
        &self.lines[id as usize].stats
    }

    #[inline]
    fn is_sharer(l: &LineState, p: u32) -> bool {
        l.word((p / 64) as usize) & (1 << (p % 64)) != 0
    }

    /// The sharers in ascending order (one step per set bit, not per bit).
    fn holders(l: &LineState) -> impl Iterator<Item = u32> + '_ {
        std::iter::once(&l.sharers0)
            .chain(&l.sharers_rest)
            .enumerate()
            .flat_map(|(w, &bits)| {
                let mut rest = bits;
                std::iter::from_fn(move || {
                    if rest == 0 {
                        return None;
                    }
                    let b = rest.trailing_zeros();
                    rest &= rest - 1;
                    Some(w as u32 * 64 + b)
                })
            })
    }

    /// Serialises `cost` on the line from `now`; records the wait.
    fn occupy_line(l: &mut LineState, now: SimTimePs, cost: u64) -> Access {
        let start = now.max(l.free_at);
        let done = start.saturating_add(SimTimePs(cost));
        l.stats.wait_ps += start.since(now).0;
        l.stats.busy_ps += cost;
        l.free_at = done;
        Access { start, done }
    }

    /// Back-to-back transfers worth `cost` ps in all occupy line `id` from
    /// `now` (spinning waiters re-reading a released lock word). Ownership
    /// is unchanged.
    pub fn occupy(&mut self, id: LineId, now: SimTimePs, cost: u64, class: usize) -> Access {
        let l = &mut self.lines[id as usize];
        l.stats.misses += 1;
        l.stats.transfers[class] += 1;
        Self::occupy_line(l, now, cost)
    }

    /// A write or atomic read-modify-write of line `id` by process `p`.
    /// The owner's own write (a hit) and a transfer from the owner are
    /// inline; a write to a line with sharers and no owner is not.
    #[inline(always)]
    pub fn write(&mut self, id: LineId, p: u32, now: SimTimePs, m: &Pricing) -> Access {
        Self::write_line(&mut self.lines[id as usize], p, now, m)
    }

    /// A queued lock's hand-off on its word, line `id`: the holder `p`
    /// writes it at `now` ([`LineTable::write`]: the release), then waiter
    /// `q` (not `p`) writes it once the releaser has written `q`'s queue
    /// node, one transfer from `p` later: the same two writes as two calls
    /// of [`LineTable::write`], with the line and the pair's price looked
    /// up once. Returns the two accesses.
    #[inline(always)]
    pub fn write_then_pass(&mut self, id: LineId, p: u32, q: u32, now: SimTimePs, m: &Pricing) -> (Access, Access) {
        debug_assert_ne!(p, q, "a hand-off to the releaser");
        let l = &mut self.lines[id as usize];
        let release = Self::write_line(l, p, now, m);
        // `p` owns the line now (every write takes it), so `q`'s write is
        // a transfer from `p`.
        let (xfer, class) = m.xfer_class(p, q);
        let at = release.done.saturating_add(SimTimePs(xfer));
        l.version += 1;
        l.owner = Some(q);
        l.stats.misses += 1;
        l.stats.transfers[class] += 1;
        (release, Self::occupy_line(l, at, xfer.max(m.hit_ps)))
    }

    /// [`LineTable::write`] on the line's state.
    #[inline(always)]
    fn write_line(l: &mut LineState, p: u32, now: SimTimePs, m: &Pricing) -> Access {
        l.version += 1;
        match l.owner {
            Some(o) if o == p => {
                l.stats.hits += 1;
                Access {
                    start: now,
                    done: now.saturating_add(SimTimePs(m.hit_ps)),
                }
            }
            Some(o) => {
                // One holder, the owner (a line with an owner has no sharers).
                debug_assert!(
                    l.sharers0 == 0 && l.sharers_rest.iter().all(|&w| w == 0),
                    "an owned line has sharers"
                );
                let (xfer, class) = m.xfer_class(o, p);
                l.owner = Some(p);
                l.stats.misses += 1;
                l.stats.transfers[class] += 1;
                Self::occupy_line(l, now, xfer.max(m.hit_ps))
            }
            None => Self::write_shared(l, p, now, m),
        }
    }

    /// A write by `p` to a line with no owner: invalidate every sharer
    /// and take ownership.
    #[inline(never)]
    fn write_shared(l: &mut LineState, p: u32, now: SimTimePs, m: &Pricing) -> Access {
        // No owner: the farthest sharer other than p decides the
        // invalidation latency.
        let (mut cost, mut class) = (0u64, None);
        match l.sharers_rest.is_empty() {
            // Up to 64 processes: the price groups ([`Pricing::farthest`]).
            true if m.grouped() => {
                if let Some((c, k)) = m.farthest(p, l.sharers0 & !(1u64 << (p % 64))) {
                    (cost, class) = (c, Some(k));
                }
            }
            _ => {
                let mut consider = |q: u32| {
                    let c = m.xfer(q, p);
                    if class.is_none() || c > cost {
                        cost = c;
                        class = Some(m.class(q, p));
                    }
                };
                Self::holders(l).filter(|&q| q != p).for_each(&mut consider);
            }
        }
        if class.is_none() && !Self::is_sharer(l, p) {
            cost = m.memory_ps;
            class = Some(0);
        }
        let cost = cost.max(m.hit_ps);
        l.sharers0 = 0;
        // Up to 64 processes: no further word, no call to memset.
        if !l.sharers_rest.is_empty() {
            l.sharers_rest.fill(0);
        }
        l.owner = Some(p);
        l.stats.misses += 1;
        l.stats.transfers[class.unwrap_or(0)] += 1;
        Self::occupy_line(l, now, cost)
    }

    /// How many writes line `id` has seen (its version), failed
    /// compare-and-exchanges included (they take the line exclusive too).
    pub fn version(&self, id: LineId) -> u64 {
        self.lines[id as usize].version
    }

    /// How many times line `id`'s value has changed: its writes less its
    /// failed compare-and-exchanges. A process that loaded the line when
    /// this was `seen` holds a stale value once it differs.
    pub fn changes(&self, id: LineId) -> u64 {
        let l = &self.lines[id as usize];
        l.version - l.stats.cas_retries
    }

    /// `cmpxchg` of line `id` by `p`, which loaded it when its
    /// [`Self::changes`] was `seen`: a locked RMW either way (the line
    /// comes exclusive to `p`); it succeeds, and changes the value, only if
    /// no other write changed it since. Returns the access and whether it
    /// succeeded.
    pub fn cas(&mut self, id: LineId, p: u32, seen: u64, now: SimTimePs, m: &Pricing) -> (Access, bool) {
        let ok = self.changes(id) == seen;
        let a = self.write(id, p, now, m);
        if !ok {
            self.lines[id as usize].stats.cas_retries += 1;
        }
        (a, ok)
    }

    /// `count` back-to-back reads of line `id` by process `p` at `now`
    /// (one load followed by `count - 1` more of the same line, with no
    /// time between them for another CPU to write). The first read misses
    /// unless `p` holds a valid copy (it is the owner, or a sharer that no
    /// write has invalidated since); the rest hit the copy just fetched.
    /// A miss is one transfer from the nearest holder (memory if none),
    /// serialised on the line at the time it happens. Reads spread over
    /// work are issued one at a time by the caller, so a miss is never
    /// charged later than the read that caused it.
    #[inline]
    pub fn read(&mut self, id: LineId, p: u32, count: u32, now: SimTimePs, m: &Pricing) -> Access {
        let l = &mut self.lines[id as usize];
        let holds = l.owner == Some(p) || (l.owner.is_none() && Self::is_sharer(l, p));
        if holds {
            l.stats.hits += u64::from(count);
            return Access {
                start: now,
                done: now.saturating_add(SimTimePs(m.hit_ps)),
            };
        }
        Self::read_miss(l, p, count, now, m)
    }

    /// A read by `p`, which holds no valid copy: one transfer from the
    /// nearest holder (memory if none); `p` and the old owner now share.
    fn read_miss(l: &mut LineState, p: u32, count: u32, now: SimTimePs, m: &Pricing) -> Access {
        let (cost, class) = match l.owner {
            Some(o) => (m.xfer(o, p), m.class(o, p)),
            None => match l.sharers_rest.is_empty() {
                // Up to 64 processes: the price groups ([`Pricing::nearest`]).
                true if m.grouped() => m.nearest(p, l.sharers0).unwrap_or((m.memory_ps, 0)),
                _ => Self::holders(l)
                    .map(|q| (m.xfer(q, p), m.class(q, p)))
                    .min()
                    .unwrap_or((m.memory_ps, 0)),
            },
        };
        if let Some(o) = l.owner.take() {
            l.share(o);
        }
        l.share(p);
        l.stats.misses += 1;
        l.stats.read_misses += 1;
        l.stats.hits += u64::from(count).saturating_sub(1);
        l.stats.transfers[class] += 1;
        Self::occupy_line(l, now, cost.max(m.hit_ps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pricing() -> Pricing {
        // two processes on different sockets: 100 ns apart; hit 1 ns.
        Pricing::from_matrix(2, vec![1_000, 100_000, 100_000, 1_000], vec![0, 4, 4, 0], 1_000, 80_000)
    }

    #[test]
    fn cmpxchg_fails_only_when_another_write_changed_the_value_since_the_load() {
        let m = pricing();
        let mut t = LineTable::new(vec!["head".into()], 2);
        let _ = t.write(0, 0, SimTimePs(0), &m);
        // Process 1 loads, process 0 adds, process 1's cmpxchg fails (a
        // locked RMW all the same: the line moves to process 1).
        let seen = t.changes(0);
        let _ = t.read(0, 1, 1, SimTimePs(100_000), &m);
        let _ = t.write(0, 0, SimTimePs(300_000), &m);
        let (_, ok) = t.cas(0, 1, seen, SimTimePs(500_000), &m);
        assert!(!ok);
        // Its retry, from the value the failed cmpxchg returned, succeeds;
        // then process 0's cmpxchg from a load before it fails.
        let seen = t.changes(0);
        let (_, ok) = t.cas(0, 1, seen, SimTimePs(700_000), &m);
        assert!(ok);
        let (_, ok) = t.cas(0, 0, seen, SimTimePs(900_000), &m);
        assert!(!ok);
        assert_eq!(t.stats(0).cas_retries, 2);
        assert_eq!(t.version(0), 5, "every write and cmpxchg takes the line");
        assert_eq!(t.changes(0), 3, "the first write, process 0's add, the good cmpxchg");
    }

    /// A queued lock's hand-off in one call is the two writes it stands
    /// for, from every state the line can be in (owned by the releaser,
    /// by another CPU, shared, uncached), on a machine with distinct
    /// prices per pair: the same accesses, statistics and versions.
    #[test]
    fn a_hand_off_is_the_releasers_write_then_the_waiters() {
        let n = 4;
        let x: Vec<u64> = (0..n * n)
            .map(|i| if i % (n + 1) == 0 { 0 } else { 20_000 + 7_000 * i as u64 })
            .collect();
        let class: Vec<u8> = (0..n * n).map(|i| (i % 5) as u8).collect();
        let m = Pricing::from_matrix(n, x, class, 1_000, 80_000);
        let states: [&[(bool, u32)]; 5] = [
            &[],
            &[(true, 0)],
            &[(true, 2)],
            &[(false, 1), (false, 3)],
            &[(false, 0), (false, 2)],
        ];
        for (k, setup) in states.iter().enumerate() {
            for (p, q) in [(0u32, 1u32), (0, 3), (2, 1), (3, 0)] {
                let mut a = LineTable::new(vec!["word".into()], n);
                let mut t = 0;
                for &(write, who) in setup.iter() {
                    t += 500_000;
                    let _ = if write {
                        a.write(0, who, SimTimePs(t), &m)
                    } else {
                        a.read(0, who, 1, SimTimePs(t), &m)
                    };
                }
                let mut b = a.clone();
                let now = SimTimePs(t + 10_000);
                let release = a.write(0, p, now, &m);
                let take = a.write(0, q, release.done.saturating_add(SimTimePs(m.xfer(p, q))), &m);
                let (r2, t2) = b.write_then_pass(0, p, q, now, &m);
                assert_eq!((release, take), (r2, t2), "state {k}, {p} -> {q}");
                assert_eq!(format!("{:?}", a.stats(0)), format!("{:?}", b.stats(0)), "state {k}, {p} -> {q}");
                assert_eq!(a.version(0), b.version(0));
                assert_eq!(
                    a.read(0, q, 1, take.done, &m),
                    b.read(0, q, 1, take.done, &m),
                    "q owns the line after"
                );
                assert!(take.done > release.done, "a transfer from p to q costs time");
            }
        }
    }

    /// Past 64 processes the sharer bits of processes 64 and up live in
    /// further words: reads there are remembered (a second read hits),
    /// the nearest sharer serves a read and the farthest decides a write.
    #[test]
    fn sharers_past_the_first_64_processes() {
        let n = 130;
        // Process q's line reaches p in 1000 (q + 1) ps: all distinct.
        let x: Vec<u64> = (0..n * n)
            .map(|i| if i / n == i % n { 0 } else { 1_000 * (i / n + 1) as u64 })
            .collect();
        let class: Vec<u8> = (0..n * n).map(|i| if i / n == i % n { 0 } else { 1 + (i / n % 4) as u8 }).collect();
        let m = Pricing::from_matrix(n, x, class, 500, 80_000);
        assert!(!m.grouped());
        let mut t = LineTable::new(vec!["x".into()], n);
        let mut now = SimTimePs(0);
        for p in [129, 70, 3] {
            now = t.read(0, p, 1, now, &m).done;
        }
        let hit = t.read(0, 70, 1, now, &m);
        assert_eq!(hit.done.since(now), SimTimePs(500), "process 70 holds a copy");
        now = hit.done;
        // Process 64 reads from the nearest sharer, 3 (4 ns).
        let a = t.read(0, 64, 1, now, &m);
        assert_eq!(a.done.since(now), SimTimePs(4_000));
        now = a.done;
        // Process 5 writes: the farthest sharer, 129, acknowledges last.
        let before = t.stats(0).transfers;
        let w = t.write(0, 5, now, &m);
        assert_eq!(w.done.since(now), SimTimePs(130_000));
        assert_eq!(t.stats(0).transfers[m.class(129, 5)], before[m.class(129, 5)] + 1);
        // Every copy is gone: 70 and 129 miss again, from the owner 5.
        let r = t.read(0, 129, 1, w.done, &m);
        assert_eq!(r.done.since(w.done), SimTimePs(6_000));
    }

    #[test]
    fn one_core_on_its_own_line_costs_hits_only() {
        let m = pricing();
        let mut t = LineTable::new(vec!["x".into()], 2);
        let first = t.write(0, 0, SimTimePs(0), &m);
        assert_eq!(first.done, SimTimePs(80_000), "first touch comes from memory");
        let mut now = first.done;
        for _ in 0..10 {
            let a = t.write(0, 0, now, &m);
            assert_eq!(a.done.since(now), SimTimePs(1_000));
            now = a.done;
        }
        assert_eq!(t.stats(0).hits, 10);
        assert_eq!(t.stats(0).transfers[4], 0);
    }

    #[test]
    fn alternating_writers_pay_one_transfer_each() {
        let m = pricing();
        let mut t = LineTable::new(vec!["x".into()], 2);
        let mut now = t.write(0, 0, SimTimePs(0), &m).done;
        for i in 0..10u32 {
            let a = t.write(0, (i + 1) % 2, now, &m);
            assert_eq!(a.done.since(now), SimTimePs(100_000));
            now = a.done;
        }
        assert_eq!(t.stats(0).transfers[4], 10);
    }

    #[test]
    fn concurrent_requests_serialise_fifo() {
        let m = pricing();
        let mut t = LineTable::new(vec!["x".into()], 2);
        t.write(0, 0, SimTimePs(0), &m);
        let a = t.write(0, 1, SimTimePs(80_000), &m);
        let b = t.write(0, 0, SimTimePs(80_000), &m);
        assert_eq!(a.done, SimTimePs(180_000));
        assert_eq!(b.start, SimTimePs(180_000));
        assert_eq!(b.done, SimTimePs(280_000));
        assert_eq!(t.stats(0).wait_ps, 100_000);
    }

    #[test]
    fn back_to_back_reads_miss_at_most_once() {
        let m = pricing();
        let mut t = LineTable::new(vec!["x".into()], 2);
        let mut now = t.read(0, 1, 40, SimTimePs(0), &m).done;
        assert_eq!(t.stats(0).misses, 1);
        assert_eq!(t.stats(0).hits, 39);
        for _ in 0..3 {
            now = t.write(0, 0, now, &m).done;
        }
        // Three foreign writes invalidated the copy once: one transfer
        // fetches the current line, and the other 39 reads hit it.
        let a = t.read(0, 1, 40, now, &m);
        assert_eq!(t.stats(0).read_misses, 2);
        assert_eq!(a.done.since(now), SimTimePs(100_000));
        // Holding a valid copy, a read hits.
        let b = t.read(0, 1, 1, a.done, &m);
        assert_eq!(b.done.since(a.done), SimTimePs(1_000));
        assert_eq!(t.stats(0).read_misses, 2);
    }
}
