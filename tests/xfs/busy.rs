//! Busy extents in the by-size walk, counted against the code by hand
//! (fs/xfs/xfs_alloc.c `xfs_alloc_ag_vextent_size`,
//! fs/xfs/xfs_extent_busy.c `xfs_extent_busy_trim`), and the pricing of
//! the lab's window (src/workload/xfs_alloc/cost.rs).

use fsmeta::kernel::xfs::alloc::{AllocArgs, CutoffStrategy, xfs_alloc_ag_vextent_size};
use fsmeta::kernel::xfs::freespace::{AllocRec, BtreeGeometry, FreeSpace};
use fsmeta::machine::builtin::find_builtin;
use fsmeta::workload::xfs_alloc::cost::{
    BUFFER_READ, BUSY_NODE, BUSY_TRIM, BetweenCalls, EventPrices, FIX_FREELIST, HEADER_READ, Pricing, Probes, TRACE_EVENT,
    TRACE_EVENT_ITERATED, TimedFrom,
};

/// 1,000 one-block free extents at 0, 2, 4, ..., 1998 (as the lab's
/// hole punching leaves them), 4 KiB v5 blocks.
fn one_block_extents() -> FreeSpace {
    let ext: Vec<AllocRec> = (0..1000).map(|i| AllocRec::new(2 * i, 1)).collect();
    FreeSpace::from_extents(4096, BtreeGeometry::new(4096, 56).unwrap(), &ext, 0.75).unwrap()
}

#[test]
fn the_walk_passes_every_busy_record_and_takes_the_first_free_one() {
    for busy in [0u64, 1, 7, 256] {
        let mut fs = one_block_extents();
        assert_eq!(fs.mark_busy_last(busy), busy);
        fs.reset_stats();
        let mut trace = Vec::new();
        let got = xfs_alloc_ag_vextent_size(&mut fs, &AllocArgs::new(1, 4), CutoffStrategy::Le, Some(&mut trace)).unwrap();
        let s = fs.stats();
        // lookup_ge(4) fails; _small takes the last record (1998); each
        // busy one trims to 0 and the walk goes on (flen 1 > bestrlen 0);
        // the first free record gives rlen 1; the next (flen 1 <= 1)
        // stops the walk: busy + 2 records, compute_aligned on busy + 1.
        assert_eq!(s.records_examined, busy + 2, "busy {busy}");
        assert_eq!(s.busy_trims, busy);
        assert_eq!(s.busy_searches, if busy == 0 { 0 } else { busy + 1 });
        let top_free = 2 * (999 - busy as u32);
        assert_eq!((got.agbno, got.len), (top_free, 1));
        assert_eq!(trace.len() as u64, busy + 2);
    }
}

#[test]
fn every_record_busy_fails_the_call() {
    let mut fs = one_block_extents();
    fs.mark_busy_last(1000);
    // The kernel would flush the log (xfs_extent_busy_flush) and retry;
    // the model fails the call instead (named in cost.rs).
    assert!(xfs_alloc_ag_vextent_size(&mut fs, &AllocArgs::new(1, 4), CutoffStrategy::Le, None).is_none());
}

#[test]
fn the_lab_window_adds_two_header_reads_the_fixup_and_each_probe_firing() {
    let m = find_builtin("cascadelake-gold-6242").unwrap();
    let base = Pricing {
        record_ns: Some(14.0),
        ..Pricing::default()
    };
    let lab = Pricing {
        timed_from: TimedFrom::XfsAllocReadAgf,
        probes: Probes::from_names(&[
            "xfs_trans_read_buf".into(),
            "xfs_extent_busy_trim".into(),
            "xfs_alloc_size_done".into(),
        ])
        .unwrap(),
        ..base.clone()
    };
    let (a, b) = (EventPrices::with(&m, &base).unwrap(), EventPrices::with(&m, &lab).unwrap());
    let mut fs = one_block_extents();
    fs.mark_busy_last(5);
    fs.reset_stats();
    xfs_alloc_ag_vextent_size(&mut fs, &AllocArgs::new(1, 4), CutoffStrategy::Le, None).unwrap();
    let s = fs.stats();
    // Fired inside the window: the AGF and AGFL reads, every btree read,
    // every trim, and one for the two boundary events.
    assert_eq!(b.trace_events(&s), 2 + s.buffer_reads + 5 + 1);
    assert_eq!(a.trace_events(&s), 0);
    let ps = |w: fsmeta::workload::xfs_alloc::cost::Work| fsmeta::machine::ns_to_ps(w.ns(&m));
    let extra = 2 * ps(HEADER_READ) + ps(FIX_FREELIST) + b.trace_events(&s) * ps(TRACE_EVENT);
    assert_eq!(b.call_ps(&s) - a.call_ps(&s), u128::from(extra));
    assert_eq!(HEADER_READ.hits, BUFFER_READ.hits + 20.0);
}

#[test]
fn work_scale_multiplies_only_the_instruction_path() {
    let m = find_builtin("cascadelake-gold-6242").unwrap();
    let p = |work_scale| Pricing {
        record_ns: None,
        work_scale,
        ..Pricing::default()
    };
    let (one, two) = (EventPrices::with(&m, &p(1.0)).unwrap(), EventPrices::with(&m, &p(2.0)).unwrap());
    let hits = |w: fsmeta::workload::xfs_alloc::cost::Work| fsmeta::machine::ns_to_ps(w.hits * m.hit_ns);
    assert_eq!(two.buffer_read_ps - one.buffer_read_ps, hits(BUFFER_READ));
    // Lines and locked operations are measured, not scaled.
    assert_eq!((one.line_cold_ps, one.line_warm_ps), (two.line_cold_ps, two.line_warm_ps));
    // Inner loops (record steps, probes, the busy walk) run hot: hit_ns.
    assert_eq!(one.record_ps, two.record_ps);
    assert_eq!((one.key_compare_ps, one.busy_node_ps), (two.key_compare_ps, two.busy_node_ps));
    assert_eq!(one.trace_event_iterated_ps, two.trace_event_iterated_ps);
    assert_eq!(two.trace_event_ps - one.trace_event_ps, hits(TRACE_EVENT));
}

#[test]
fn a_measured_tracepoint_prices_the_per_call_events_not_the_loops() {
    // calibrate measures one firing per syscall; the busy walk's event
    // fires per turn of the kernel's loop, hot, and keeps its counted
    // loads at hit_ns, at most the measured firing (docs/lab-hosts.md).
    let mut m = find_builtin("cascadelake-gold-6242").unwrap();
    let counted = EventPrices::with(&m, &Pricing::default()).unwrap();
    m.tracepoint = Some(fsmeta::machine::TracepointPrices {
        event_ns: 321.0,
        discard_ns: 158.0,
        passed_ns: None,
        stack_ns: None,
        stack_frames: None,
    });
    let measured = EventPrices::with(&m, &Pricing::default()).unwrap();
    assert_eq!(measured.trace_event_ps, 321_000);
    assert_ne!(counted.trace_event_ps, measured.trace_event_ps);
    assert_eq!(measured.trace_event_iterated_ps, counted.trace_event_iterated_ps);
    assert_eq!(
        measured.trace_event_iterated_ps,
        fsmeta::machine::ns_to_ps(TRACE_EVENT_ITERATED.ns(&m))
    );
    // The cold firing bounds the hot one: a measured cost below the
    // loop's counted price is the price.
    let cheap = TRACE_EVENT_ITERATED.ns(&m) / 2.0;
    m.tracepoint = Some(fsmeta::machine::TracepointPrices {
        event_ns: cheap,
        discard_ns: cheap / 2.0,
        passed_ns: None,
        stack_ns: None,
        stack_frames: None,
    });
    let bounded = EventPrices::with(&m, &Pricing::default()).unwrap();
    assert_eq!(bounded.trace_event_iterated_ps, fsmeta::machine::ns_to_ps(cheap));
}

#[test]
fn a_measured_loop_load_prices_the_walks_loads_not_the_straight_line_ones() {
    // levels.loop_load_ns prices the loads of loops whose turns overlap
    // (the record steps, the busy search, its nodes and trims); other
    // loops keep hit_ns, straight-line work hit_ns x work_scale.
    let mut m = find_builtin("cascadelake-gold-6242").unwrap();
    let hit = EventPrices::with(&m, &Pricing::default()).unwrap();
    assert_eq!(hit.busy_node_ps, fsmeta::machine::ns_to_ps(BUSY_NODE.hits * m.hit_ns));
    let loop_ns = m.hit_ns / 4.0;
    m.levels = Some(fsmeta::machine::profile::CacheLevels {
        l1d_ways: 8,
        l2_ways: 8,
        l2_hit_ns: 4.0,
        llc_hit_ns: 14.0,
        fresh_line_ns: None,
        loop_load_ns: Some(loop_ns),
    });
    let looped = EventPrices::with(&m, &Pricing::default()).unwrap();
    assert_eq!(looped.busy_node_ps, fsmeta::machine::ns_to_ps(BUSY_NODE.hits * loop_ns));
    assert_eq!(looped.busy_trim_ps, fsmeta::machine::ns_to_ps(BUSY_TRIM.hits * loop_ns));
    assert!(looped.record_ps < hit.record_ps);
    assert_eq!(looped.buffer_read_ps, hit.buffer_read_ps, "straight-line work keeps hit_ns");
    assert_eq!(looped.cursor_ps, hit.cursor_ps);
    assert_eq!(
        looped.key_compare_ps, hit.key_compare_ps,
        "a binary search's probes wait on each other"
    );
    let btrfs = fsmeta::workload::btrfs_dir::cost::LinePrices::from_profile(&m, 2.0);
    assert_eq!(btrfs.loop_hit_ps, fsmeta::machine::ns_to_ps(m.hit_ns));
}

#[test]
fn a_kept_record_is_priced_as_one_its_filter_passed() {
    // Every event the lab enables has a filter: where calibrate measured
    // a record passing one, that is a kept record's price (per loop turn,
    // at most that); without it, the unfiltered one.
    let mut m = find_builtin("cascadelake-gold-6242").unwrap();
    m.tracepoint = Some(fsmeta::machine::TracepointPrices {
        event_ns: 120.0,
        discard_ns: 60.0,
        passed_ns: None,
        stack_ns: None,
        stack_frames: None,
    });
    let unfiltered = EventPrices::with(&m, &Pricing::default()).unwrap();
    assert_eq!(unfiltered.trace_event_ps, 120_000);
    m.tracepoint = Some(fsmeta::machine::TracepointPrices {
        event_ns: 120.0,
        discard_ns: 60.0,
        passed_ns: Some(100.0),
        stack_ns: None,
        stack_frames: None,
    });
    let passed = EventPrices::with(&m, &Pricing::default()).unwrap();
    assert_eq!(passed.trace_event_ps, 100_000);
    let counted = fsmeta::machine::ns_to_ps(TRACE_EVENT_ITERATED.ns(&m));
    assert!(counted > 100_000, "{counted}");
    assert_eq!(passed.trace_event_iterated_ps, 100_000, "at most the measured firing");
    let btrfs = fsmeta::workload::btrfs_dir::cost::LinePrices::from_profile(&m, 1.0);
    assert_eq!(btrfs.trace_event_ps, 100_000);
    assert_eq!(btrfs.trace_unfiltered_ps, 120_000, "btrfs_reserved_extent_free has no filter");
    assert_eq!(btrfs.trace_discard_ps, 60_000);
}

#[test]
fn a_cache_level_the_profile_lacks_is_an_error() {
    let m = find_builtin("cascadelake-gold-6242").unwrap();
    assert!(m.levels.is_none());
    let p = Pricing {
        between_calls: BetweenCalls::L2,
        ..Pricing::default()
    };
    let e = EventPrices::with(&m, &p).unwrap_err();
    assert!(e.contains("[levels]") && e.contains("calibrate"), "{e}");
}

#[test]
fn lines_an_earlier_call_touched_are_recent_when_kept_warm() {
    let run = |warm: bool| {
        let mut fs = one_block_extents();
        fs.keep_warm(warm);
        let mut out = Vec::new();
        for _ in 0..3 {
            fs.reset_stats();
            xfs_alloc_ag_vextent_size(&mut fs, &AllocArgs::new(1, 4), CutoffStrategy::Le, None).unwrap();
            out.push(fs.stats());
        }
        out
    };
    let (cold, warm) = (run(false), run(true));
    assert_eq!(cold[0].lines_cold, warm[0].lines_cold);
    assert_eq!(warm[0].lines_recent, 0);
    // Later calls find the root and the leaves they share recent.
    assert!(warm[2].lines_recent > 0 && warm[2].lines_cold < cold[2].lines_cold, "{warm:?}");
    assert_eq!(warm[2].lines_recent + warm[2].lines_cold, cold[2].lines_cold);
}

/// A profile's measured `mitigation.return_ns` prices the returns the
/// walk's loops count (issue 30, session 54): each record step 11, each
/// key probe 2, a non-empty tree's extra search none; without the table,
/// or at 0 ns, nothing changes.
#[test]
fn a_measured_return_prices_each_counted_return_of_the_walk() {
    let mut m = find_builtin("cascadelake-gold-6242").unwrap();
    let p = Pricing {
        record_ns: None,
        ..Pricing::default()
    };
    let without = EventPrices::with(&m, &p).unwrap();
    m.mitigation = Some(fsmeta::machine::MitigationPrices {
        spectre_v2: "Mitigation: Retpolines".into(),
        indirect_call_ns: 0.0,
        spec_rstack_overflow: Some("Mitigation: Safe RET".into()),
        return_ns: 0.0,
    });
    assert_eq!(EventPrices::with(&m, &p).unwrap(), without, "0 ns a return changes nothing");
    m.mitigation.as_mut().unwrap().return_ns = 10.0;
    let with = EventPrices::with(&m, &p).unwrap();
    assert_eq!(with.record_ps - without.record_ps, 11 * 10_000);
    assert_eq!(with.key_compare_ps - without.key_compare_ps, 2 * 10_000);
    assert_eq!(with.busy_search_ps, without.busy_search_ps);
    assert_eq!(with.busy_node_ps, without.busy_node_ps);
    assert_eq!(with.buffer_read_ps, without.buffer_read_ps, "straight-line work counts no return");
}
