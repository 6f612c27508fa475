//! Property tests for the cache model against small reference models
//! written differently (timestamps instead of ordered ways; explicit
//! per-core validity instead of a line table).

use std::collections::{BTreeMap, BTreeSet};

use fsmeta::machine::cache::{CacheConfig, Hierarchy, LevelConfig, Served};
use proptest::prelude::*;

/// A timestamp LRU cache: (set -> (line -> last use)).
struct RefLevel {
    sets: u64,
    ways: usize,
    content: BTreeMap<u64, BTreeMap<u64, u64>>,
}

impl RefLevel {
    fn new(cfg: LevelConfig) -> Self {
        Self {
            sets: cfg.size_bytes / 64 / u64::from(cfg.ways),
            ways: cfg.ways as usize,
            content: BTreeMap::new(),
        }
    }

    fn hit(&mut self, line: u64, now: u64) -> bool {
        let set = self.content.entry(line % self.sets).or_default();
        set.get_mut(&line).map(|t| *t = now).is_some()
    }

    fn fill(&mut self, line: u64, now: u64) {
        let set = self.content.entry(line % self.sets).or_default();
        if set.len() == self.ways {
            let (&lru, _) = set.iter().min_by_key(|(_, t)| **t).unwrap();
            set.remove(&lru);
        }
        set.insert(line, now);
    }
}

fn geometry() -> impl Strategy<Value = LevelConfig> {
    (0u32..3, 1u32..5).prop_map(|(sets_log2, ways)| LevelConfig {
        size_bytes: (64 * u64::from(ways)) << sets_log2,
        ways,
    })
}

proptest! {
    #[test]
    fn single_core_matches_timestamp_lru(
        l1 in geometry(), l2 in geometry(), llc in geometry(),
        seq in prop::collection::vec(0u64..24, 1..400),
    ) {
        let mut h = Hierarchy::new(&CacheConfig { l1d: l1, l2, llc, core_socket: vec![0] }).unwrap();
        let (mut r1, mut r2, mut r3) = (RefLevel::new(l1), RefLevel::new(l2), RefLevel::new(llc));
        for (now, &line) in seq.iter().enumerate() {
            let now = now as u64;
            let want = if r1.hit(line, now) {
                Served::L1
            } else if r2.hit(line, now) {
                r1.fill(line, now);
                Served::L2
            } else {
                let s = if r3.hit(line, now) { Served::Llc } else { r3.fill(line, now); Served::Memory };
                r2.fill(line, now);
                r1.fill(line, now);
                s
            };
            prop_assert_eq!(h.access(0, line, false).served, want, "access {} to line {}", now, line);
        }
    }

    #[test]
    fn coherence_matches_validity_model(ops in prop::collection::vec((0usize..4, 0u64..32, any::<bool>()), 1..400)) {
        // Caches big enough that nothing is evicted: outcomes follow from
        // coherence alone. Cores 0, 1 on socket 0; 2, 3 on socket 1.
        let big = LevelConfig { size_bytes: 64 * 1024, ways: 16 };
        let sockets = [0u32, 0, 1, 1];
        let mut h = Hierarchy::new(&CacheConfig { l1d: big, l2: big, llc: big, core_socket: sockets.to_vec() }).unwrap();
        let mut valid: BTreeSet<(usize, u64)> = BTreeSet::new();
        let mut llc: BTreeSet<(u32, u64)> = BTreeSet::new();
        let mut dirty: BTreeMap<u64, usize> = BTreeMap::new();
        for (core, line, write) in ops {
            let socket = sockets[core];
            let want = if valid.contains(&(core, line)) {
                Served::L1
            } else {
                let s = match dirty.get(&line).copied() {
                    Some(w) if w != core => {
                        dirty.remove(&line);
                        Served::Peer { from_core: w as u32, cross_socket: sockets[w] != socket }
                    }
                    _ if llc.contains(&(socket, line)) => Served::Llc,
                    _ => Served::Memory,
                };
                valid.insert((core, line));
                llc.insert((socket, line));
                s
            };
            let mut invalidated = 0;
            if write {
                for other in (0..4).filter(|&o| o != core) {
                    invalidated += u32::from(valid.remove(&(other, line)));
                }
                dirty.insert(line, core);
            }
            let got = h.access(core, line, write);
            prop_assert_eq!(got.served, want);
            prop_assert_eq!(got.invalidated_cores, invalidated);
        }
    }
}
