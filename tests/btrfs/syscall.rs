//! The syscall thread's own work in `unlink(2)`: the tree work the model
//! keeps for the last call (`Fs::last_unlink`), against a hand count of
//! `btrfs_unlink` + `btrfs_evict_inode` (6.x), and its pricing
//! (`UnlinkCost`).

use fsmeta::engine::histogram::LatencyHistogram;
use fsmeta::kernel::btrfs::ctree::{Key, ORPHAN_ITEM_KEY, ORPHAN_OBJECTID, TreeStats};
use fsmeta::kernel::btrfs::delayed::{Rules, Thresholds};
use fsmeta::kernel::btrfs::fs::{Fs, ROOT_DIR_INO, rm_rf};
use fsmeta::workload::btrfs_dir::cost::ROOT_TRADE;
use fsmeta::workload::btrfs_dir::syscalls::{UnlinkCost, phase_us};
use fsmeta::workload::btrfs_dir::{BtrfsDirParams, delayed_cost};

/// A filesystem with `n` files in testdir, all committed (as after the
/// lab's creates and a sync), and testdir's inode.
fn committed(n: u64) -> (Fs, u64) {
    let mut fs = Fs::new(16384, Thresholds::default(), Rules::default());
    let dir = fs.mkdir(ROOT_DIR_INO, b"testdir").expect("mkdir");
    for i in 1..=n {
        fs.create(dir, format!("file_{i}").as_bytes());
    }
    fs.sync();
    (fs, dir)
}

#[test]
fn an_unlink_makes_the_kernels_five_searches_and_four_deletions() {
    // btrfs_unlink: the DIR_ITEM (btrfs_lookup_dir_item, -1, then
    // btrfs_delete_one_dir_name) and the orphan item's insert; eviction:
    // the inode item's write-back with its INODE_REF's deletion, the
    // truncate of the inode item (one search: its items end before the
    // leaf does) and the orphan item's deletion. The dir index and the
    // INODE_REF are delayed; the worker's batches are not the call's.
    let (mut fs, dir) = committed(20);
    assert!(fs.unlink(dir, b"file_7"));
    let d = fs.last_unlink;
    assert_eq!(d.searches, 5, "{d:?}");
    assert_eq!(d.del_items_calls, 4, "{d:?}");
    assert_eq!(d.items_deleted, 4, "{d:?}");
    // A one-leaf tree: one block per search.
    assert_eq!((d.node_visits, d.leaf_visits), (0, 5), "{d:?}");
    // The first touch of the committed leaf copies it once.
    assert_eq!(d.cow_blocks, 1, "{d:?}");
    // The orphan item is gone again.
    assert_eq!(fs.tree.lookup(&Key::new(ORPHAN_OBJECTID, ORPHAN_ITEM_KEY, 264)), None);
    // The next unlink finds the leaf copied already.
    assert!(fs.unlink(dir, b"file_9"));
    assert_eq!((fs.last_unlink.searches, fs.last_unlink.cow_blocks), (5, 0));
}

#[test]
fn rm_rf_hands_over_each_unlink() {
    let (mut fs, dir) = committed(20);
    let mut calls = Vec::new();
    rm_rf(&mut fs, dir, &mut |fs| calls.push(fs.last_unlink));
    assert_eq!(calls.len(), 20);
    assert!(calls.iter().all(|d| d.searches >= 5), "{calls:?}");
}

fn cost(reservation_tracepoints: bool) -> UnlinkCost {
    let p = BtrfsDirParams {
        lock_tracepoints: true,
        reservation_tracepoints,
        work_scale: fsmeta::workload::work_scale::WorkScale::Value(2.0),
        ..Default::default()
    };
    let machine = fsmeta::machine::find_builtin("icelake-2s").expect("built-in profile");
    UnlinkCost::new(&p, &machine, delayed_cost(&p, &machine))
}

#[test]
fn a_search_more_costs_its_root_trade_and_lock_event() {
    let c = cost(false);
    let p = delayed_cost(
        &BtrfsDirParams {
            lock_tracepoints: true,
            work_scale: fsmeta::workload::work_scale::WorkScale::Value(2.0),
            ..Default::default()
        },
        &fsmeta::machine::find_builtin("icelake-2s").expect("profile"),
    );
    let one = TreeStats {
        searches: 1,
        ..Default::default()
    };
    let two = TreeStats { searches: 2, ..one };
    let trade = ROOT_TRADE.price(&p.prices);
    let event = fsmeta::workload::btrfs_dir::cost::TRACE_EVENT.price(&p.prices);
    assert!(trade > 0 && event > 0);
    assert_eq!(c.call_ps(&two).unwrap() - c.call_ps(&one).unwrap(), trade + event);
}

#[test]
fn the_reservation_tracepoints_cost_18_events_and_a_stack() {
    // 18 btrfs_space_reservation events per unlink and eviction, one of
    // them (the delayed_item reserve) kept with its stack, 17 discarded
    // by the lab's filter: with the key on, a call costs that much more,
    // and the key is not ignored.
    let d = TreeStats::default();
    let (off, on) = (cost(false).call_ps(&d).unwrap(), cost(true).call_ps(&d).unwrap());
    let m = fsmeta::machine::find_builtin("icelake-2s").expect("profile");
    let event_ns = fsmeta::kernel::tracing::TRACE_EVENT_LOADS * m.hit_ns * 2.0;
    let discard_ns = fsmeta::kernel::tracing::TRACE_DISCARD_LOADS * m.hit_ns * 2.0;
    assert!(discard_ns < event_ns);
    let stack_ns = fsmeta::kernel::tracing::stack_trace().ns(&m, 2.0);
    // The unwinder's frames are a loop (hit_ns, unscaled): only the
    // stack's ring-buffer entry, 60 straight-line loads, takes the scale.
    let scaled_ns = stack_ns - fsmeta::kernel::tracing::stack_trace().ns(&m, 1.0);
    assert!((scaled_ns - 60.0 * m.hit_ns).abs() < 1e-9, "{scaled_ns}");
    let expect_ns = event_ns + 17.0 * discard_ns + stack_ns;
    let got_ns = (on - off) as f64 / 1e3;
    assert!((got_ns - expect_ns).abs() < 0.01, "{got_ns} vs {expect_ns}");
    // A copy on write adds its two reservation events too (both discarded).
    let cow = TreeStats {
        cow_blocks: 1,
        ..Default::default()
    };
    let cow_extra = |c: &UnlinkCost| c.call_ps(&cow).unwrap() - c.call_ps(&d).unwrap();
    let diff = (cow_extra(&cost(true)) - cow_extra(&cost(false))) as f64 / 1e3;
    assert!((diff - 2.0 * discard_ns).abs() < 0.01, "{diff}");
}

#[test]
fn a_phase_gives_its_median_call_and_the_exact_sum() {
    let c = cost(false);
    let a = TreeStats::default();
    let b = TreeStats {
        searches: 3,
        ..Default::default()
    };
    let (pa, pb) = (c.call_ps(&a).unwrap(), c.call_ps(&b).unwrap());
    assert!(pb > pa);
    let mut h = LatencyHistogram::new();
    for ps in [pa, pb, pb] {
        h.record(ps);
    }
    let (median, sum) = phase_us(&h);
    let pb_us = pb as f64 / 1e6;
    assert!((median - pb_us).abs() <= pb_us / 128.0, "{median} vs {pb_us}");
    assert!((sum - (pa + 2 * pb) as f64 / 1e6).abs() < 1e-9);
    assert_eq!(phase_us(&LatencyHistogram::new()), (0.0, 0.0));
}
