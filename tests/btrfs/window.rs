//! The lab's window of a delayed-deletion batch, priced from hand-made
//! counts: the terms of `DelayedCost::window_ps`, the rest of the
//! function, and which loads `work_scale` scales.

use fsmeta::kernel::btrfs::delayed::DeleteRunStats;
use fsmeta::machine::builtin::find_builtin;
use fsmeta::workload::btrfs_dir::cost::{
    BATCH_FIXED, BLOCK_VISIT, DEL_ITEMS, DelayedCost, ITEM_COLLECT, ITEM_RELEASE, ITEM_SHIFT, KEY_COMPARE, LinePrices, MOVE_LINE,
    PUSH_FIXED, PUSH_ITEM, SIBLING_LOCK, TRACE_EVENT,
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
        + 100 * ITEM_SHIFT.price(p);
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
    let extra =
        2 * (SIBLING_LOCK.price(p) + TRACE_EVENT.price(p)) + PUSH_FIXED.price(p) + 10 * PUSH_ITEM.price(p) + 30 * ITEM_SHIFT.price(p);
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
    for l in [KEY_COMPARE, ITEM_COLLECT, ITEM_SHIFT, MOVE_LINE, ITEM_RELEASE] {
        assert!(l.iterated);
        assert_eq!(extra(l), 0);
    }
}
