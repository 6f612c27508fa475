//! A slow, obvious reference of the hierarchy's policy, and a proptest
//! that the fast model ([`Hierarchy`]) gives exactly its answers.
//!
//! The reference keeps each set as a vector of line addresses, most recent
//! first, applies fresh streams eagerly line by line, and keeps coherence
//! state in a `BTreeMap`: nothing lazy, packed or cached, so it is easy to
//! check against the policy in the module documentation.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

/// Placeholder of a fresh streamed line: matches no real line.
const FRESH: u64 = u64::MAX;

#[derive(Clone, Debug)]
struct RefLevel {
    sets: Vec<Vec<u64>>,
    ways: usize,
    next_stream_set: usize,
}

impl RefLevel {
    fn new(cfg: LevelConfig) -> Self {
        let sets = (cfg.size_bytes / (64 * u64::from(cfg.ways))) as usize;
        Self {
            sets: vec![Vec::new(); sets],
            ways: cfg.ways as usize,
            next_stream_set: 0,
        }
    }

    fn set(&mut self, line: u64) -> &mut Vec<u64> {
        let n = self.sets.len() as u64;
        &mut self.sets[(line % n) as usize]
    }

    fn contains(&self, line: u64) -> bool {
        self.sets[(line % self.sets.len() as u64) as usize].contains(&line)
    }

    fn push_front(&mut self, line: u64) {
        let ways = self.ways;
        let set = self.set(line);
        set.insert(0, line);
        set.truncate(ways);
    }

    /// Hit: move to front, true. Miss: false (no fill).
    fn probe(&mut self, line: u64) -> bool {
        let set = self.set(line);
        match set.iter().position(|&t| t == line) {
            Some(i) => {
                set.remove(i);
                set.insert(0, line);
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, line: u64) -> bool {
        let set = self.set(line);
        match set.iter().position(|&t| t == line) {
            Some(i) => {
                set.remove(i);
                true
            }
            None => false,
        }
    }

    fn stream(&mut self, lines: u64) {
        for _ in 0..lines {
            let s = self.next_stream_set;
            self.sets[s].insert(0, FRESH);
            self.sets[s].truncate(self.ways);
            self.next_stream_set = (s + 1) % self.sets.len();
        }
    }
}

#[derive(Clone, Debug)]
struct RefHierarchy {
    l1: Vec<RefLevel>,
    l2: Vec<RefLevel>,
    llc: Vec<RefLevel>,
    core_socket: Vec<u32>,
    /// line -> (cores that may hold it privately, owner)
    lines: BTreeMap<u64, (Vec<bool>, Option<usize>)>,
    counters: Vec<Counters>,
}

impl RefHierarchy {
    fn new(cfg: &CacheConfig) -> Self {
        let cores = cfg.core_socket.len();
        let sockets = cfg.core_socket.iter().max().map_or(0, |&s| s as usize + 1);
        Self {
            l1: vec![RefLevel::new(cfg.l1d); cores],
            l2: vec![RefLevel::new(cfg.l2); cores],
            llc: vec![RefLevel::new(cfg.llc); sockets],
            core_socket: cfg.core_socket.clone(),
            lines: BTreeMap::new(),
            counters: vec![Counters::default(); cores],
        }
    }

    fn state(&mut self, line: u64) -> &mut (Vec<bool>, Option<usize>) {
        let n = self.core_socket.len();
        self.lines.entry(line).or_insert_with(|| (vec![false; n], None))
    }

    fn stream(&mut self, core: usize, lines: u64) {
        let socket = self.core_socket[core] as usize;
        self.l1[core].stream(lines);
        self.l2[core].stream(lines);
        self.llc[socket].stream(lines);
    }

    fn access(&mut self, core: usize, line: u64, is_write: bool) -> Outcome {
        let socket = self.core_socket[core] as usize;
        self.counters[core].accesses += 1;
        let served = if self.l1[core].probe(line) {
            self.counters[core].l1_hits += 1;
            Served::L1
        } else {
            self.counters[core].l1_misses += 1;
            let served = if self.l2[core].probe(line) {
                self.counters[core].l2_hits += 1;
                Served::L2
            } else {
                self.counters[core].l2_misses += 1;
                let owner = self.state(line).1;
                let served = match owner {
                    Some(o) if o != core && (self.l1[o].contains(line) || self.l2[o].contains(line)) => {
                        self.counters[core].coherence_misses += 1;
                        self.state(line).1 = None;
                        if !self.llc[socket].probe(line) {
                            self.llc[socket].push_front(line);
                        }
                        Served::Peer {
                            from_core: o as u32,
                            cross_socket: self.core_socket[o] as usize != socket,
                        }
                    }
                    _ if self.llc[socket].probe(line) => {
                        self.counters[core].llc_hits += 1;
                        Served::Llc
                    }
                    _ => {
                        self.counters[core].llc_misses += 1;
                        self.llc[socket].push_front(line);
                        Served::Memory
                    }
                };
                self.l2[core].push_front(line);
                self.state(line).0[core] = true;
                served
            };
            self.l1[core].push_front(line);
            served
        };
        let mut invalidated_cores = 0;
        if is_write {
            let n = self.core_socket.len();
            let may_hold = self.state(line).0.clone();
            for other in (0..n).filter(|&o| o != core) {
                // Every core that may hold the line is looked at (the fast
                // model's filter may look at more, beyond 64 cores: a core
                // without the line loses nothing).
                if may_hold[other] {
                    let (a, c) = (self.l1[other].remove(line), self.l2[other].remove(line));
                    invalidated_cores += u32::from(a || c);
                }
            }
            let st = self.state(line);
            st.0 = (0..n).map(|k| k == core).collect();
            st.1 = Some(core);
            self.counters[core].invalidations += u64::from(invalidated_cores);
        }
        Outcome { served, invalidated_cores }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Access(usize, u64, bool),
    Stream(usize, u64),
}

fn geometry() -> impl Strategy<Value = (LevelConfig, LevelConfig, LevelConfig, Vec<u32>)> {
    let level = |max_set_bits: u32| {
        (0..=max_set_bits, prop_oneof![4 => 1u32..=5, 1 => Just(12u32), 1 => Just(16u32)]).prop_map(|(b, w)| LevelConfig {
            size_bytes: (64 * u64::from(w)) << b,
            ways: w,
        })
    };
    let sockets = prop_oneof![Just(vec![0u32]), Just(vec![0, 0]), Just(vec![0, 1]), Just(vec![0, 0, 1]),];
    (level(2), level(3), level(4), sockets)
}

fn ops(cores: usize) -> impl Strategy<Value = Vec<Op>> {
    // Lines from a small pool so they collide, plus a few whose tags do
    // not fit in 32 bits (the fast model keeps their high halves apart).
    let line = prop_oneof![
        8 => 0u64..24,
        1 => (0u64..4).prop_map(|k| (1 << 38) + k),
        1 => (0u64..4).prop_map(|k| (1 << 40) * 3 + k),
    ];
    let op = prop_oneof![
        8 => (0..cores, line, any::<bool>()).prop_map(|(c, l, w)| Op::Access(c, l, w)),
        1 => (0..cores, 0u64..40).prop_map(|(c, n)| Op::Stream(c, n)),
    ];
    proptest::collection::vec(op, 0..300)
}

#[test]
fn more_than_16_ways_is_rejected() {
    let l = |ways: u32| LevelConfig {
        size_bytes: 64 * u64::from(ways),
        ways,
    };
    let cfg = |ways| CacheConfig {
        l1d: l(ways),
        l2: l(ways),
        llc: l(ways),
        core_socket: vec![0],
    };
    assert!(Hierarchy::new(&cfg(16)).is_ok());
    assert_eq!(Hierarchy::new(&cfg(17)).unwrap_err(), CacheError::BadGeometry("l1d", 64 * 17, 17));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn fast_model_answers_exactly_as_the_reference(
        (g, seq) in geometry().prop_flat_map(|g| { let n = g.3.len(); (Just(g), ops(n)) })
    ) {
        let cfg = CacheConfig { l1d: g.0, l2: g.1, llc: g.2, core_socket: g.3 };
        let mut fast = Hierarchy::new(&cfg).unwrap();
        let mut slow = RefHierarchy::new(&cfg);
        for (step, op) in seq.iter().enumerate() {
            match *op {
                Op::Access(c, l, w) => {
                    prop_assert_eq!(fast.access(c, l, w), slow.access(c, l, w), "step {} {:?}", step, op);
                }
                Op::Stream(c, n) => {
                    fast.stream_fresh(c, n);
                    slow.stream(c, n);
                }
            }
            for c in 0..fast.cores() {
                prop_assert_eq!(fast.counters(c), slow.counters[c]);
                for l in [0u64, 1, 5, 7, 16, 1 << 38] {
                    let want = (slow.l1[c].contains(l), slow.l2[c].contains(l));
                    prop_assert_eq!(fast.private_holds(c, l), want, "core {} line {} after step {}", c, l, step);
                }
            }
            for (s, llc) in slow.llc.iter().enumerate() {
                for l in [0u64, 3, 8, 1 << 38] {
                    prop_assert_eq!(fast.llc_holds(s, l), llc.contains(l));
                }
            }
        }
    }

    /// Beyond 64 cores the sharer filter's bit `c % 64` is shared (cores
    /// `c` and `c + 64`), and the ten-byte states hold the sharers: the
    /// same exact answers, with the accesses drawn from cores that share
    /// filter bits so the superset is exercised.
    #[test]
    fn fast_model_answers_exactly_as_the_reference_beyond_64_cores(
        cores in 65usize..=80,
        split in 1usize..=80,
        (g, seq) in geometry().prop_flat_map(|g| (Just(g), aliased_ops()))
    ) {
        let core_socket: Vec<u32> = (0..cores).map(|c| u32::from(c >= split.min(cores))).collect();
        let cfg = CacheConfig { l1d: g.0, l2: g.1, llc: g.2, core_socket };
        let mut fast = Hierarchy::new(&cfg).unwrap();
        let mut slow = RefHierarchy::new(&cfg);
        for (step, op) in seq.iter().enumerate() {
            match *op {
                Op::Access(c, l, w) => {
                    let c = c % cores;
                    prop_assert_eq!(fast.access(c, l, w), slow.access(c, l, w), "step {} {:?}", step, op);
                }
                Op::Stream(c, n) => {
                    fast.stream_fresh(c % cores, n);
                    slow.stream(c % cores, n);
                }
            }
        }
        for c in 0..cores {
            prop_assert_eq!(fast.counters(c), slow.counters[c]);
            for l in [0u64, 1, 5, 7, 16, 1 << 38] {
                let want = (slow.l1[c].contains(l), slow.l2[c].contains(l));
                prop_assert_eq!(fast.private_holds(c, l), want, "core {} line {}", c, l);
            }
        }
        for (s, llc) in slow.llc.iter().enumerate() {
            for l in [0u64, 3, 8, 1 << 38] {
                prop_assert_eq!(fast.llc_holds(s, l), llc.contains(l));
            }
        }
    }
}

/// Operations on cores 0..4 and 64..80, which share the filter's bits
/// pairwise (`c` and `c + 64`), and on a few cores between.
fn aliased_ops() -> impl Strategy<Value = Vec<Op>> {
    let core = prop_oneof![4 => 0usize..4, 4 => 64usize..80, 1 => 4usize..64];
    let line = prop_oneof![8 => 0u64..24, 1 => (0u64..4).prop_map(|k| (1 << 38) + k)];
    let op = prop_oneof![
        8 => (core.clone(), line, any::<bool>()).prop_map(|(c, l, w)| Op::Access(c, l, w)),
        1 => (core, 0u64..40).prop_map(|(c, n)| Op::Stream(c, n)),
    ];
    proptest::collection::vec(op, 0..300)
}
