use super::*;

fn level(size_bytes: u64, ways: u32) -> LevelConfig {
    LevelConfig { size_bytes, ways }
}

fn hier(l1: LevelConfig, l2: LevelConfig, llc: LevelConfig, core_socket: Vec<u32>) -> Hierarchy {
    Hierarchy::new(&CacheConfig {
        l1d: l1,
        l2,
        llc,
        core_socket,
    })
    .unwrap()
}

fn reads(h: &mut Hierarchy, core: usize, lines: &[u64]) -> Vec<Served> {
    lines.iter().map(|&l| h.access(core, l, false).served).collect()
}

#[test]
fn direct_mapped_conflict_always_misses() {
    // 4 sets x 1 way at every level: lines 0 and 4 share set 0.
    let dm = level(4 * 64, 1);
    let mut h = hier(dm, dm, dm, vec![0]);
    let served = reads(&mut h, 0, &[0, 4, 0, 4, 0, 4]);
    assert!(served.iter().all(|s| *s == Served::Memory), "{served:?}");
    let c = h.totals();
    assert_eq!((c.l1_hits, c.l1_misses, c.l2_hits, c.llc_hits, c.llc_misses), (0, 6, 0, 0, 6));
    // Two ways per set: the same pair fits.
    let two = level(8 * 64, 2);
    let mut h = hier(two, two, two, vec![0]);
    reads(&mut h, 0, &[0, 4, 0, 4, 0, 4]);
    assert_eq!((h.totals().l1_hits, h.totals().l1_misses), (4, 2));
}

#[test]
fn two_way_lru_evicts_least_recent() {
    // L1: one set, 2 ways. L2 and LLC large, so L1 victims come back from L2.
    let mut h = hier(level(128, 2), level(64 * 1024, 8), level(1 << 20, 16), vec![0]);
    // A B A C B C: C evicts B (A was used more recently), B evicts A, C still hits.
    let served = reads(&mut h, 0, &[10, 11, 10, 12, 11, 12]);
    use Served::*;
    assert_eq!(served, vec![Memory, Memory, L1, Memory, L2, L1]);
    assert_eq!(h.private_holds(0, 10), (false, true));
    assert_eq!((h.totals().l1_hits, h.totals().l1_misses, h.totals().l2_hits), (2, 4, 1));
}

#[test]
fn working_set_smaller_than_cache_hits_after_warm_up() {
    // L1: 8 sets x 2 ways = 16 lines; 16 distinct lines, 10 rounds.
    let mut h = hier(level(1024, 2), level(8192, 4), level(65536, 8), vec![0]);
    for _ in 0..10 {
        reads(&mut h, 0, &(0..16).collect::<Vec<_>>());
    }
    let c = h.totals();
    assert_eq!((c.l1_misses, c.l1_hits, c.llc_misses), (16, 144, 16));
}

#[test]
fn cyclic_ways_plus_one_lines_in_a_set_always_miss() {
    // L1: 4 sets x 4 ways. Lines 0, 4, 8, 12, 16 all map to set 0: five
    // lines cycled through four LRU ways evict each other every time.
    let mut h = hier(level(1024, 4), level(64 * 1024, 8), level(1 << 20, 16), vec![0]);
    for _ in 0..10 {
        reads(&mut h, 0, &[0, 4, 8, 12, 16]);
    }
    let c = h.totals();
    assert_eq!((c.l1_hits, c.l1_misses), (0, 50));
    assert_eq!((c.l2_hits, c.llc_misses), (45, 5), "after the first round L2 serves them");
}

#[test]
fn write_by_another_core_is_a_coherence_miss() {
    let big = level(32 * 1024, 8);
    let mut h = hier(big, level(256 * 1024, 8), level(1 << 20, 16), vec![0, 0]);
    assert_eq!(h.access(0, 7, false).served, Served::Memory);
    assert_eq!(h.access(1, 7, false).served, Served::Llc);
    let w = h.access(0, 7, true);
    assert_eq!(
        w,
        Outcome {
            served: Served::L1,
            invalidated_cores: 1
        }
    );
    assert_eq!(h.private_holds(1, 7), (false, false));
    assert_eq!(
        h.access(1, 7, false).served,
        Served::Peer {
            from_core: 0,
            cross_socket: false
        }
    );
    assert_eq!(h.access(1, 7, false).served, Served::L1);
    assert_eq!(h.access(0, 7, false).served, Served::L1, "the writer keeps a shared copy");
    // Now core 1 writes: core 0 loses its copy and misses to core 1.
    assert_eq!(h.access(1, 7, true).invalidated_cores, 1);
    assert_eq!(
        h.access(0, 7, false).served,
        Served::Peer {
            from_core: 1,
            cross_socket: false
        }
    );
    let (c0, c1) = (h.counters(0), h.counters(1));
    assert_eq!((c0.coherence_misses, c1.coherence_misses), (1, 1));
    assert_eq!((c0.invalidations, c1.invalidations), (1, 1));
    // A second write by the owner with no other copy invalidates nobody.
    assert_eq!(h.access(0, 7, true).invalidated_cores, 1);
    assert_eq!(h.access(0, 7, true).invalidated_cores, 0);
}

#[test]
fn coherence_miss_across_sockets() {
    let l = level(32 * 1024, 8);
    let mut h = hier(l, l, level(1 << 20, 16), vec![0, 1]);
    h.access(0, 99, true);
    assert_eq!(
        h.access(1, 99, false).served,
        Served::Peer {
            from_core: 0,
            cross_socket: true
        }
    );
    assert!(h.llc_holds(1, 99) && h.llc_holds(0, 99));
}

#[test]
fn ownership_ends_when_the_writer_evicts() {
    // Core 0's L1 and L2 are tiny (1 set x 2 ways): two more lines evict 5.
    let tiny = level(128, 2);
    let mut h = hier(tiny, tiny, level(1 << 20, 16), vec![0, 0]);
    h.access(0, 5, true);
    reads(&mut h, 0, &[6, 7]);
    assert_eq!(h.private_holds(0, 5), (false, false));
    assert_eq!(h.access(1, 5, false).served, Served::Llc, "written back: no peer transfer");
    assert_eq!(h.totals().coherence_misses, 0);
}

#[test]
fn bad_geometry_is_rejected() {
    let ok = level(1024, 2);
    let cfg = |l1: LevelConfig, cores: Vec<u32>| CacheConfig {
        l1d: l1,
        l2: ok,
        llc: ok,
        core_socket: cores,
    };
    assert_eq!(
        Hierarchy::new(&cfg(level(3 * 64, 1), vec![0])).unwrap_err(),
        CacheError::BadGeometry("l1d", 192, 1)
    );
    assert!(Hierarchy::new(&cfg(level(1000, 2), vec![0])).is_err());
    assert!(Hierarchy::new(&cfg(level(1024, 0), vec![0])).is_err());
    assert_eq!(Hierarchy::new(&cfg(ok, vec![])).unwrap_err(), CacheError::NoCores);
    // 48 KiB, 12 ways: 64 sets, fine.
    assert!(Hierarchy::new(&cfg(level(48 * 1024, 12), vec![0])).is_ok());
}

#[test]
fn fresh_stream_pushes_lines_down_their_sets_exactly() {
    // Every level: 2 sets x 2 ways (256 B). Line 0 sits in set 0.
    let l = level(256, 2);
    let mut h = hier(l, l, l, vec![0]);
    assert_eq!(reads(&mut h, 0, &[0]), vec![Served::Memory]);
    // Two fresh lines land on sets 0 and 1: line 0 drops to way 1, kept.
    h.stream_fresh(0, 2);
    assert_eq!(h.private_holds(0, 0), (true, true));
    assert_eq!(reads(&mut h, 0, &[0]), vec![Served::L1]);
    // Four more: two reach set 0 and push line 0 out of every level.
    h.stream_fresh(0, 4);
    assert_eq!(h.private_holds(0, 0), (false, false));
    assert!(!h.llc_holds(0, 0));
    assert_eq!(reads(&mut h, 0, &[0]), vec![Served::Memory]);
    // One fresh line reaches only set 0 (the stream continues at set 0
    // after an even count): line 1 in set 1 stays most recent.
    assert_eq!(reads(&mut h, 0, &[1]), vec![Served::Memory]);
    h.stream_fresh(0, 3); // sets 0, 1, 0
    assert_eq!(reads(&mut h, 0, &[1]), vec![Served::L1]);
    assert_eq!(h.totals().accesses, 5, "streamed lines are not counted as accesses");
}

#[test]
fn a_write_invalidates_every_sharer_beyond_the_filter_width() {
    // 70 cores on one socket (ten-byte states, a 64-bit filter): cores 1
    // and 65 share the filter's bit 1.
    let l = level(32 * 1024, 8);
    let mut h = hier(l, l, level(1 << 20, 16), vec![0; 70]);
    for c in [1, 9, 65, 3] {
        h.access(c, 42, false);
    }
    // Core 9 writes: 1, 65 and 3 lose their copies, 9 keeps its own.
    assert_eq!(h.access(9, 42, true).invalidated_cores, 3);
    for c in [1, 65, 3] {
        assert_eq!(h.private_holds(c, 42), (false, false), "core {c}");
    }
    assert_eq!(h.private_holds(9, 42), (true, true));
    let peer = |from_core| Served::Peer {
        from_core,
        cross_socket: false,
    };
    assert_eq!(h.access(65, 42, false).served, peer(9));
    // Core 1 writes: 65 (its residue) and 9 hold copies.
    assert_eq!(h.access(1, 42, true).invalidated_cores, 2);
    assert_eq!(h.access(9, 42, false).served, peer(1));
    // Core 65 writes: 1 holds the line modified and 9 a copy; both lose
    // them, and 65's own bit is its residue's (1's).
    assert_eq!(h.access(65, 42, true).invalidated_cores, 2);
    assert_eq!(h.access(1, 42, false).served, peer(65));
}

#[test]
fn the_filter_is_exact_through_core_63_and_shared_from_core_64() {
    let l = level(32 * 1024, 8);
    // 64 cores: core 63 has bit 63 to itself.
    let mut h = hier(l, l, level(1 << 20, 16), vec![0; 64]);
    h.access(63, 5, false);
    assert_eq!(h.access(0, 5, true).invalidated_cores, 1);
    assert_eq!(h.private_holds(63, 5), (false, false));
    // 65 cores: core 64 shares bit 0 with core 0, whose write must still
    // reach 64's copy, and whose own copy 64's write must reach.
    let mut h = hier(l, l, level(1 << 20, 16), vec![0; 65]);
    h.access(64, 5, false);
    assert_eq!(h.access(0, 5, true).invalidated_cores, 1);
    assert_eq!(h.private_holds(64, 5), (false, false));
    assert_eq!(h.access(64, 5, true).invalidated_cores, 1);
    assert_eq!(h.private_holds(0, 5), (false, false));
}

#[test]
fn every_sharer_of_a_machine_within_the_filter_is_invalidated() {
    // 40 cores (ten-byte states, one bit a core): a write by core 39
    // invalidates the 38 others that read the line, and no more.
    let l = level(32 * 1024, 8);
    let mut h = hier(l, l, level(1 << 20, 16), vec![0; 40]);
    for c in 1..40 {
        h.access(c, 7, false);
    }
    assert_eq!(h.access(39, 7, true).invalidated_cores, 38);
    assert_eq!(h.totals().invalidations, 38);
    assert!((1..39).all(|c| h.private_holds(c, 7) == (false, false)));
}

#[test]
fn the_last_core_of_the_largest_hierarchy_can_own_a_line() {
    let l = level(1024, 2);
    let last = MAX_CORES - 1;
    let mut h = hier(l, l, l, vec![0; MAX_CORES]);
    h.access(last, 5, true);
    let o = h.access(0, 5, false);
    assert_eq!(
        o.served,
        Served::Peer {
            from_core: last as u32,
            cross_socket: false
        }
    );
    assert_eq!(h.access(last, 5, true).invalidated_cores, 1);
    let cfg = CacheConfig {
        l1d: l,
        l2: l,
        llc: l,
        core_socket: vec![0; MAX_CORES + 1],
    };
    assert_eq!(Hierarchy::new(&cfg).unwrap_err(), CacheError::NoCores);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// Every form of line state that holds the core count answers alike:
    /// two-byte states (up to 8 cores), four-byte (up to 16) and ten-byte
    /// ones give the same outcomes, counters and private contents.
    #[test]
    fn every_form_of_line_state_answers_alike(
        cores in 1usize..=16,
        ops in proptest::collection::vec((0usize..16, 0u64..48, proptest::prelude::any::<bool>(), 0u64..4), 0..400),
    ) {
        let cfg = CacheConfig {
            l1d: level(256, 2),
            l2: level(512, 2),
            llc: level(1024, 4),
            core_socket: (0..cores as u32).map(|c| c / 4).collect(),
        };
        let forms: Vec<Form> = [Form::Narrow, Form::Wide, Form::Broad]
            .into_iter()
            .filter(|f| *f != Form::Narrow || cores <= super::lines::NARROW_CORES)
            .collect();
        let mut hs: Vec<Hierarchy> = forms.iter().map(|&f| Hierarchy::with_form(&cfg, f).unwrap()).collect();
        for (c, line, w, stream) in ops {
            let c = c % cores;
            if stream == 0 {
                hs.iter_mut().for_each(|h| h.stream_fresh(c, line % 5));
                continue;
            }
            let outcomes: Vec<Outcome> = hs.iter_mut().map(|h| h.access(c, line, w)).collect();
            proptest::prop_assert!(outcomes.windows(2).all(|p| p[0] == p[1]), "{:?}", outcomes);
        }
        for c in 0..cores {
            for h in &hs[1..] {
                proptest::prop_assert_eq!(hs[0].counters(c), h.counters(c));
                for line in 0..48 {
                    proptest::prop_assert_eq!(hs[0].private_holds(c, line), h.private_holds(c, line));
                }
            }
        }
    }
}
