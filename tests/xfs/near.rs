//! 6.x's near allocator and the lab's fallocate calls, on the AG the lab
//! makes: one-block free extents on every other block. A trace of one
//! `fallocate(16 KiB)` on 6.18 showed the by-size allocation (maxlen 4)
//! take the highest free block, then three `xfs_alloc_ag_vextent_near`
//! calls (maxlen 3, 2, 1) each take the free block 2 below the last one's
//! (diff 3 from a target one past it), through the locality search.

use fsmeta::kernel::xfs::alloc::{AllocArgs, CutoffStrategy, xfs_alloc_ag_vextent_near};
use fsmeta::kernel::xfs::freespace::{AllocRec, BtreeGeometry, BtreeLayout, FreeSpace};
use fsmeta::workload::xfs_alloc::request::{Request, Step, make_call, replay};

/// Free blocks 100, 102, ..., 100 + 2 (n - 1), trees grown by inserts.
fn every_other(n: u32) -> FreeSpace {
    let recs: Vec<AllocRec> = (0..n).map(|i| AllocRec::new(100 + 2 * i, 1)).collect();
    FreeSpace::grown(1 << 20, BtreeGeometry::v5_4k(), &recs).unwrap()
}

#[test]
fn a_user_data_near_allocation_takes_the_free_block_before_its_target() {
    let mut fs = every_other(1000);
    let top = 100 + 2 * 999;
    let args = AllocArgs {
        agbno: top + 1,
        userdata: true,
        ..AllocArgs::new(1, 3)
    };
    let r = xfs_alloc_ag_vextent_near(&mut fs, &args).unwrap();
    assert_eq!((r.agbno, r.len), (top, 1), "the highest block, 1 below the target");
    let args = AllocArgs { agbno: top - 1, ..args };
    let r = xfs_alloc_ag_vextent_near(&mut fs, &args).unwrap();
    assert_eq!((r.agbno, r.len), (top - 2, 1), "the one left of the target");
    assert_eq!(fs.extent_count(), 998);
    assert_eq!(fs.check(), Ok(()));
}

#[test]
fn the_near_allocator_passes_busy_blocks_by() {
    // Busy 1004 right of the target 1003: the left record (1002) is the
    // hit, the right walk trims 1004 and stops at 1006 (farther).
    let mut fs = every_other(1000);
    assert!(fs.busy.insert(1004, 1));
    fs.reset_stats();
    let args = AllocArgs {
        agbno: 1003,
        userdata: true,
        ..AllocArgs::new(1, 3)
    };
    let r = xfs_alloc_ag_vextent_near(&mut fs, &args).unwrap();
    assert_eq!(r.agbno, 1002);
    assert_eq!(fs.stats().busy_trims, 1);
    // Busy on both sides: with nothing of maxlen the cntbt cursor is
    // inactive, so the locality loop looks at one record a side and
    // stops; only busy ones met, the kernel forces the log out and
    // retries (xfs_extent_busy_flush), the model gives up.
    assert!(fs.busy.insert(1000, 1));
    let args = AllocArgs { agbno: 1001, ..args };
    assert_eq!(xfs_alloc_ag_vextent_near(&mut fs, &args), None);
}

#[test]
fn a_fallocate_call_takes_four_blocks_down_the_by_size_order() {
    let mut fs = every_other(1000);
    let top = 100 + 2 * 999;
    let call = make_call(&mut fs, &AllocArgs::new(1, 4), CutoffStrategy::Le, Request::Fallocate);
    assert_eq!(call.extents, vec![(top, 1), (top - 2, 1), (top - 4, 1), (top - 6, 1)]);
    assert_eq!(call.first.map(|r| r.agbno), Some(top));
    // The timed part is the by-size allocation alone: 2 records walked.
    assert_eq!(call.stats.records_examined, 2);
    let one = make_call(&mut fs, &AllocArgs::new(1, 4), CutoffStrategy::Le, Request::One);
    assert_eq!(one.extents, vec![(top - 8, 1)]);
}

#[test]
fn a_busy_step_frees_what_its_calls_took_and_leaves_it_busy() {
    let mut fs = every_other(1000);
    let args = AllocArgs::new(1, 4);
    let made = replay(
        &mut fs,
        &[Step::Calls(2), Step::Busy(10)],
        &args,
        CutoffStrategy::Le,
        Request::Fallocate,
    );
    assert_eq!(made, 10);
    assert_eq!(fs.busy.len(), 10);
    // The two calls took 8 blocks for good; the busy ones are free again.
    assert_eq!(fs.extent_count(), 992);
    assert_eq!(fs.check(), Ok(()));
    // The next call's walk passes all ten busy records.
    let call = make_call(&mut fs, &args, CutoffStrategy::Le, Request::Fallocate);
    assert_eq!(call.stats.busy_trims, 10);
    assert_eq!(call.first.map(|r| r.agbno), Some(100 + 2 * 999 - 2 * 18));
}

#[test]
fn trees_take_the_layout_read_from_the_live_ag() {
    let recs: Vec<AllocRec> = (0..1000).map(|i| AllocRec::new(100 + 2 * i, 1)).collect();
    let layout = BtreeLayout {
        bno: vec![vec![400, 300, 300], vec![3]],
        cnt: vec![vec![253, 495, 252], vec![3]],
    };
    let fs = FreeSpace::from_layout(1 << 20, BtreeGeometry::v5_4k(), &recs, &layout).unwrap();
    assert_eq!(fs.bno.level_sizes(0), vec![400, 300, 300]);
    assert_eq!(fs.cnt.level_sizes(0), vec![253, 495, 252]);
    assert_eq!(fs.check(), Ok(()));
    let short = BtreeLayout {
        bno: vec![vec![400, 300, 299], vec![3]],
        ..layout.clone()
    };
    let e = FreeSpace::from_layout(1 << 20, BtreeGeometry::v5_4k(), &recs, &short)
        .unwrap_err()
        .to_string();
    assert!(e.contains("btree_layout_file") && e.contains("999 records"), "{e}");
    let big = BtreeLayout {
        cnt: vec![vec![506, 494], vec![2]],
        ..layout
    };
    let e = FreeSpace::from_layout(1 << 20, BtreeGeometry::v5_4k(), &recs, &big)
        .unwrap_err()
        .to_string();
    assert!(e.contains("506 entries"), "{e}");
}
