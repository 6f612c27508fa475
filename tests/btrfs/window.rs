//! The lab's window of a delayed-deletion batch, priced from hand-made
//! counts: the terms of `DelayedCost::window_ps`, the rest of the
//! function, and which loads `work_scale` scales.

use fsmeta::kernel::btrfs::delayed::DeleteRunStats;
use fsmeta::machine::builtin::find_builtin;
use fsmeta::workload::btrfs_dir::cost::{
    BATCH_FIXED, BLOCK_VISIT, COW_SWAP, DEL_ITEMS, DELAYED_TREE_REF, DelayedCost, EB_DIRTY, EB_FOLIO_ADD, EB_FOLIO_CLEAN, EB_FOLIO_DIRTY,
    ITEM_COLLECT, ITEM_RELEASE, ITEM_SHIFT, ITEM_SHIFT_ESTIMATE, KEY_COMPARE, LEAF_FREE, LinePrices, MOVE_LINE, Moved, PUSH_FIXED,
    PUSH_ITEM, SIBLING_LOCK, TRACE_EVENT, TREE_BLOCK_ALLOC, TREE_BLOCK_UNALLOC,
};

fn one_item_batches() -> DeleteRunStats {
    // Two one-item batches over a height-2 tree: 2 node and 2 leaf
    // visits, 20 probes, 100 offsets rewritten, 128 lines memmoved.
    DeleteRunStats {
        runs: 1,
        batches: 2,
        searches: 2,
        node_visits: 2,
        leaf_visits: 2,
        key_compares: 20,
        bytes_moved: 128 * 64,
        items_released: 2,
        items_shifted: 100,
        ..Default::default()
    }
}

fn cost(work_scale: f64, traced: bool) -> DelayedCost {
    let m = find_builtin("icelake-2s").expect("built-in profile");
    DelayedCost {
        prices: LinePrices::from_profile(&m, work_scale),
        nodesize: 16384,
        batch_overhead_ps: 1_000,
        lock_tracepoints: traced,
        release_events: Default::default(),
    }
}

#[test]
fn the_window_is_the_hand_sum_of_its_terms() {
    let c = cost(1.0, true);
    let p = &c.prices;
    let s = one_item_batches();
    let hand = 4 * (BLOCK_VISIT.price(p) + TRACE_EVENT.price(p))
        + 20 * KEY_COMPARE.price(p)
        + 128 * MOVE_LINE.price(p)
        + 2 * DEL_ITEMS.price(p)
        + 2 * ITEM_COLLECT.price(p)
        + 100 * ITEM_SHIFT_ESTIMATE.price(p);
    assert_eq!(c.window_ps(&s).ok(), Some(u128::from(hand)));
    // The whole function adds each batch's loop turn and fitted cost and
    // each item's release, outside the window.
    let rest = 2 * (BATCH_FIXED.price(p) + 1_000) + 2 * ITEM_RELEASE.price(p);
    assert_eq!(c.delete_ps(&s).ok(), Some(u128::from(hand + rest)));
    // Without the lab's lock tracepoints the window loses one event per visit.
    let untraced = cost(1.0, false).window_ps(&s).unwrap_or_default();
    assert_eq!(u128::from(hand) - untraced, u128::from(4 * TRACE_EVENT.price(p)));
}

#[test]
fn a_thin_leaf_merge_adds_its_siblings_pushes_and_offsets() {
    // The batches above, one of which merged its leaf: two siblings read
    // and locked (each a traced lock), one push of 10 items whose
    // offsets, with 20 more, the push rewrote.
    let c = cost(1.0, true);
    let p = &c.prices;
    let plain = one_item_batches();
    let merged = DeleteRunStats {
        sibling_reads: 2,
        leaf_pushes: 1,
        items_pushed: 10,
        push_offsets: 30,
        ..plain
    };
    let extra = 2 * (SIBLING_LOCK.price(p) + TRACE_EVENT.price(p))
        + PUSH_FIXED.price(p)
        + 10 * PUSH_ITEM.price(p)
        + 30 * ITEM_SHIFT_ESTIMATE.price(p);
    let (a, b) = (c.window_ps(&plain).unwrap_or_default(), c.window_ps(&merged).unwrap_or_default());
    assert_eq!(b - a, u128::from(extra));
    // The sibling's lock and the push's set-up are per-call code (their
    // hits scale with work_scale); the count loop's items are an inner
    // loop (not scaled).
    let two = cost(2.0, true);
    let scaled = |l: fsmeta::workload::btrfs_dir::cost::Lines| l.price(&two.prices) - l.price(p);
    assert_eq!(scaled(SIBLING_LOCK), SIBLING_LOCK.hits * p.hit_ps);
    assert_eq!(scaled(PUSH_FIXED), PUSH_FIXED.hits * p.hit_ps);
    assert_eq!(scaled(PUSH_ITEM), 0);
}

#[test]
fn work_scale_scales_per_batch_code_not_inner_loops() {
    let (one, two) = (cost(1.0, true), cost(2.0, true));
    // Per-level and per-batch code: its hits double.
    let extra = |l: fsmeta::workload::btrfs_dir::cost::Lines| l.price(&two.prices) - l.price(&one.prices);
    assert_eq!(extra(BLOCK_VISIT), BLOCK_VISIT.hits * one.prices.hit_ps);
    assert_eq!(extra(DEL_ITEMS), DEL_ITEMS.hits * one.prices.hit_ps);
    // Inner loops (probes, items, offsets, moved lines) run hot: hit_ns.
    for l in [KEY_COMPARE, ITEM_COLLECT, ITEM_SHIFT, ITEM_SHIFT_ESTIMATE, MOVE_LINE, ITEM_RELEASE] {
        assert!(l.iterated);
        assert_eq!(extra(l), 0);
    }
}

/// On a profile with `[memmove]`, `btrfs_del_items`' two moves are priced
/// per 64 bytes at its prices (the data up, the headers down near or
/// far), every other byte moved as [`MOVE_LINE`]s, and an offset rewrite
/// as [`ITEM_SHIFT`]'s 32 loads at `loop_load_ns` (its turns overlap);
/// without the table, as before session 71.
#[test]
fn a_profile_with_memmove_prices_the_deletions_moves_and_the_overlapped_rewrite() {
    let mut m = find_builtin("icelake-2s").expect("built-in profile");
    m.levels = Some(fsmeta::machine::profile::CacheLevels {
        l1d_ways: 12,
        l2_ways: 20,
        l2_hit_ns: 5.0,
        llc_hit_ns: 30.0,
        fresh_line_ns: None,
        loop_load_ns: Some(0.25),
    });
    let plain = LinePrices::from_profile(&m, 1.0);
    m.memmove = Some(fsmeta::machine::MemmovePrices {
        backward_ns: 1.6,
        forward_near_ns: 20.8,
        forward_far_ns: 0.8,
    });
    let p = LinePrices::from_profile(&m, 1.0);
    assert_eq!(p.memmove_ps, Some([1_600, 20_800, 800]));
    // The table without the loop's measured price is not used: the
    // rewrite would fall back to 32 loads at hit_ns.
    let no_loop = fsmeta::machine::MachineProfile { levels: None, ..m.clone() };
    assert_eq!(LinePrices::from_profile(&no_loop, 1.0).memmove_ps, None);
    let moved = Moved {
        total: 8_300,
        data_up: 4_100,
        headers_near: 2_500,
        headers_far: 1_500,
    };
    // 200 other bytes: 4 lines (rounded up); the rest per byte, rounded
    // down to the ps.
    let hand = 4 * MOVE_LINE.price(&p) + 4_100 * 1_600 / 64 + 2_500 * 20_800 / 64 + 1_500 * 800 / 64;
    assert_eq!(p.moved_ps(&moved), hand);
    assert_eq!(plain.moved_ps(&moved), 130 * MOVE_LINE.price(&plain));
    // The rewrite: 32 loads at 0.25 ns (no return thunk on this profile),
    // against the estimate's 12 at hit_ns.
    const { assert!(ITEM_SHIFT.overlapped && !ITEM_SHIFT_ESTIMATE.overlapped) };
    assert_eq!(p.item_shift_ps(), 32 * 250);
    assert_eq!(plain.item_shift_ps(), 12 * plain.loop_hit_ps);
    // The window takes both.
    let c = DelayedCost {
        prices: p,
        ..cost(1.0, true)
    };
    let s = DeleteRunStats {
        bytes_moved: moved.total,
        del_data_moved: moved.data_up,
        del_headers_near: moved.headers_near,
        del_headers_far: moved.headers_far,
        ..one_item_batches()
    };
    let base = DeleteRunStats {
        bytes_moved: 0,
        items_shifted: 0,
        ..one_item_batches()
    };
    let d = c.window_ps(&s).unwrap_or_default() - c.window_ps(&base).unwrap_or_default();
    assert_eq!(d, u128::from(hand + 100 * 32 * 250));
}

#[test]
fn a_copy_on_write_and_a_freed_leaf_are_their_counted_steps() {
    // The batches above, one of which copied its leaf on write and one of
    // which freed an emptied leaf, at nodesize 16 KiB: four 4 KiB folios.
    let c = cost(1.0, true);
    let p = &c.prices;
    assert_eq!(c.folios(), 4);
    let plain = one_item_batches();
    let more = DeleteRunStats {
        cow_blocks: 1,
        leaves_freed: 1,
        ..plain
    };
    // btrfs_force_cow_block: the new block (btrfs_alloc_tree_block, each
    // folio added to the btree inode's page cache and dirtied, the
    // buffer's dirty bit), the 16 KiB copy (256 lines), the old block's
    // side, an ADD and a DROP delayed ref.
    let cow = TREE_BLOCK_ALLOC.price(p)
        + 4 * (EB_FOLIO_ADD.price(p) + EB_FOLIO_DIRTY.price(p))
        + EB_DIRTY.price(p)
        + 256 * MOVE_LINE.price(p)
        + COW_SWAP.price(p)
        + 2 * DELAYED_TREE_REF.price(p);
    // btrfs_del_leaf of a leaf of this transaction: its folios cleaned,
    // the parent's pointer and unlocks, its DROP ref, the head's cleanup
    // and the free-space return.
    let free = 4 * EB_FOLIO_CLEAN.price(p) + LEAF_FREE.price(p) + DELAYED_TREE_REF.price(p) + TREE_BLOCK_UNALLOC.price(p);
    assert_eq!((c.cow_price(), c.leaf_free_price()), (cow, free));
    // The lab's events: btrfs_cow_block and four mm_filemap_add_to_page_cache
    // per COW, btrfs_reserved_extent_free per leaf freed.
    let (a, b) = (c.window_ps(&plain).unwrap_or_default(), c.window_ps(&more).unwrap_or_default());
    assert_eq!(b - a, u128::from(cow + free + 6 * TRACE_EVENT.price(p)));
    let untraced = cost(1.0, false);
    let d = untraced.window_ps(&more).unwrap_or_default() - untraced.window_ps(&plain).unwrap_or_default();
    assert_eq!(d, u128::from(cow + free));
    // A 64 KiB node has sixteen folios, a 4 KiB one one.
    for (nodesize, folios) in [(65536, 16), (4096, 1)] {
        assert_eq!(DelayedCost { nodesize, ..c }.folios(), folios);
    }
}

#[test]
fn the_copy_on_write_steps_hold_their_hand_counts_from_the_code() {
    // Loads and locked operations per step, summed from the doc comments'
    // per-function counts (6.x extent-tree.c, extent_io.c, delayed-ref.c,
    // ctree.c, mm/filemap.c, mm/page-writeback.c).
    let counts = |l: fsmeta::workload::btrfs_dir::cost::Lines| (l.hits, l.misses, l.atomics, l.iterated);
    assert_eq!(counts(TREE_BLOCK_ALLOC), (430, 0, 18, false));
    // One DRAM line per folio: its struct page, last written at free.
    assert_eq!(counts(EB_FOLIO_ADD), (210, 1, 8, false));
    assert_eq!(counts(EB_FOLIO_DIRTY), (90, 0, 2, false));
    assert_eq!(counts(EB_DIRTY), (25, 0, 1, false));
    assert_eq!(counts(DELAYED_TREE_REF), (180, 0, 4, false));
    assert_eq!(counts(COW_SWAP), (125, 0, 4, false));
    assert_eq!(counts(EB_FOLIO_CLEAN), (80, 0, 4, false));
    assert_eq!(counts(LEAF_FREE), (65, 0, 5, false));
    assert_eq!(counts(TREE_BLOCK_UNALLOC), (385, 0, 23, false));
}

/// The lab's release event with its stack, by who runs the batch: on a
/// profile that measured a stack (`tracepoint.stack_ns` at
/// `stack_frames`), that price in proportion to the frames walked (each
/// context's frames shown plus the 4 the tracing code skips); without
/// it, every context at the counted 16-frame loop.
#[test]
fn a_release_events_stack_is_priced_by_its_frames_where_a_stack_was_measured() {
    use fsmeta::kernel::btrfs::delayed::{COMMIT_DELETE_RELEASE_FRAMES, WORKER_DELETE_RELEASE_FRAMES, WORKER_INSERT_RELEASE_FRAMES};
    use fsmeta::kernel::tracing::{STACK_SKIPPED, stack_trace};
    use fsmeta::workload::btrfs_dir::cost::ReleaseEvents;
    assert_eq!(
        (
            WORKER_DELETE_RELEASE_FRAMES,
            COMMIT_DELETE_RELEASE_FRAMES,
            WORKER_INSERT_RELEASE_FRAMES
        ),
        (9, 8, 10)
    );
    let mut m = find_builtin("icelake-2s").expect("built-in profile");
    let counted = fsmeta::machine::ns_to_ps(stack_trace().ns(&m, 1.0));
    let prices = LinePrices::from_profile(&m, 1.0);
    let plain = ReleaseEvents::priced(&m, &prices, 1.0);
    let each = prices.trace_event_ps + counted;
    assert_eq!(
        (plain.worker_delete_ps, plain.commit_delete_ps, plain.insert_ps),
        (each, each, each)
    );
    m.tracepoint = Some(fsmeta::machine::TracepointPrices {
        event_ns: 90.0,
        discard_ns: 30.0,
        passed_ns: Some(100.0),
        stack_ns: Some(450.0),
        stack_frames: Some(5),
    });
    assert_eq!(STACK_SKIPPED, 4.0);
    let prices = LinePrices::from_profile(&m, 1.0);
    let r = ReleaseEvents::priced(&m, &prices, 1.0);
    // 450 ns over 5 + 4 frames walked: 50 ns a frame.
    assert_eq!(prices.trace_event_ps, 100_000);
    assert_eq!(
        (r.worker_delete_ps, r.commit_delete_ps, r.insert_ps),
        (100_000 + 650_000, 100_000 + 600_000, 100_000 + 700_000)
    );
    // The whole function charges the worker's batches the worker's
    // stack and the commit's its own.
    let c = DelayedCost {
        prices,
        release_events: r,
        ..cost(1.0, true)
    };
    let base = c.delete_ps(&one_item_batches()).unwrap_or_default();
    let own = DeleteRunStats {
        own_batches: 1,
        ..one_item_batches()
    };
    let p = &c.prices;
    let moved = c.delete_ps(&own).unwrap_or_default();
    let local = BATCH_FIXED.price(p) - BATCH_FIXED.local().price(p);
    assert_eq!(base - moved, u128::from(local + 50_000));
}

/// Each context's frames are those the kernel's stacks show: the saved
/// trace of case 3's script on 6.18 (tests/lab/data), every stack of each
/// kind (the parser drops the event's own `trace_event_raw_event_*`
/// frame, which the count includes). The commit's are `syncfs`'s; the
/// unmount's commit (one release here, deeper) is priced as it.
#[test]
fn each_contexts_stack_frames_are_those_the_kernels_stacks_show() {
    use fsmeta::kernel::btrfs::delayed::{COMMIT_DELETE_RELEASE_FRAMES, WORKER_DELETE_RELEASE_FRAMES, WORKER_INSERT_RELEASE_FRAMES};
    use fsmeta::kernel::btrfs::syscall::UNLINK_STACK_FRAMES;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/data/btrfs-delayed-1000.trace.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut seen: std::collections::BTreeMap<&str, Vec<usize>> = std::collections::BTreeMap::new();
    for r in &fsmeta::lab::trace::parse(&text) {
        let has = |f: &str| r.stack.iter().any(|s| s.starts_with(f));
        let release = r.body.contains(" release ");
        let kind = if release && has("btrfs_delete_delayed_items") && has("btrfs_async_run_delayed_root") {
            "worker delete"
        } else if release && has("btrfs_delete_delayed_items") && has("__x64_sys_syncfs") {
            "commit delete"
        } else if release && has("btrfs_delayed_item_release_leaves") {
            "insert"
        } else if r.body.contains(" reserve ") && has("btrfs_delete_delayed_dir_index") && has("btrfs_unlink") {
            "unlink reserve"
        } else {
            continue;
        };
        seen.entry(kind).or_default().push(1 + r.stack.len());
    }
    for (kind, frames, n) in [
        ("worker delete", WORKER_DELETE_RELEASE_FRAMES, 396),
        ("commit delete", COMMIT_DELETE_RELEASE_FRAMES, 111),
        ("insert", WORKER_INSERT_RELEASE_FRAMES, 8),
        ("unlink reserve", UNLINK_STACK_FRAMES, 1000),
    ] {
        let got = &seen[kind];
        assert_eq!(got.len(), n, "{kind}");
        assert!(got.iter().all(|&f| f == frames as usize), "{kind}: {got:?} against {frames}");
    }
}
