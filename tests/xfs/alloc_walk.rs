//! Hand-checked walks of `xfs_alloc_ag_vextent_size` on small trees.

use fsmeta::kernel::xfs::alloc::{AllocArgs, CutoffStrategy, xfs_alloc_ag_vextent_size};
use fsmeta::kernel::xfs::freespace::{AllocRec, BtreeGeometry, FreeSpace};

/// 128-byte blocks, 56-byte header: 9 records per leaf, 6 pointers per node.
fn tiny() -> BtreeGeometry {
    BtreeGeometry::new(128, 56).unwrap()
}

/// (10,1), (20,2), then twelve 3-block extents at 100, 110, ..., 210.
fn equal_lengths() -> FreeSpace {
    let mut ext = vec![AllocRec::new(10, 1), AllocRec::new(20, 2)];
    ext.extend((0..12).map(|i| AllocRec::new(100 + 10 * i, 3)));
    FreeSpace::from_extents(1000, tiny(), &ext, 1.0).unwrap()
}

/// Records read by the allocator, and the (agbno, len) it returned.
type Walk = (Vec<(u32, u32)>, Option<(u32, u32)>);

fn run(fs: &mut FreeSpace, args: &AllocArgs, s: CutoffStrategy) -> Walk {
    let mut trace = Vec::new();
    let got = xfs_alloc_ag_vextent_size(fs, args, s, Some(&mut trace));
    let walked = trace.iter().map(|r| (r.startblock, r.blockcount)).collect();
    (walked, got.map(|r| (r.agbno, r.len)))
}

#[test]
fn lt_walks_every_equal_length_record() {
    // maxlen 4: lookup_ge(4) fails; _small takes the rightmost (210,3);
    // best rlen 3; lt keeps going while flen >= 3: 200, 190, ..., 100,
    // then (20,2) has 2 < 3 and stops the walk. No record improves.
    let mut fs = equal_lengths();
    assert_eq!(fs.cnt.height(), 2);
    let (walked, got) = run(&mut fs, &AllocArgs::new(1, 4), CutoffStrategy::Lt);
    let mut want = vec![(210, 3)];
    want.extend((0..11).rev().map(|i| (100 + 10 * i, 3)));
    want.push((20, 2));
    assert_eq!(walked, want);
    assert_eq!(got, Some((210, 3)));
    fs.check().unwrap();
    assert_eq!(fs.extent_count(), 13);
}

#[test]
fn le_stops_at_first_equal_length_record() {
    let mut fs = equal_lengths();
    let (walked, got) = run(&mut fs, &AllocArgs::new(1, 4), CutoffStrategy::Le);
    assert_eq!(walked, vec![(210, 3), (200, 3)]);
    assert_eq!(got, Some((210, 3)));
    fs.check().unwrap();
}

#[test]
fn budget_caps_the_walk() {
    let mut fs = equal_lengths();
    let (walked, _) = run(&mut fs, &AllocArgs::new(1, 4), CutoffStrategy::Budget(3));
    assert_eq!(walked, vec![(210, 3), (200, 3), (190, 3), (180, 3)]);
}

#[test]
fn leaf_boundary_counts_a_block() {
    // 14 records in two leaves of 7 under one root. lookup_ge: 2 blocks.
    // The lt walk crosses into the left leaf once: 1 block. lookup_eq: 2.
    let mut fs = equal_lengths();
    fs.reset_stats();
    let mut cur = fs.cnt.cursor();
    fs.cnt
        .lookup(&mut cur, fsmeta::kernel::xfs::freespace::LookupDir::Ge, AllocRec::new(0, 4));
    assert_eq!(fs.cnt.stats.blocks_visited, 2);
    let mut n = 0;
    while fs.cnt.decrement(&mut cur) {
        n += 1;
    }
    assert_eq!(n, 14);
    assert_eq!(fs.cnt.stats.blocks_visited, 3);
}

/// Aligned case: (26,3) (33,4) (1,5) (64,5) (9,6) (17,6) in cntbt order.
#[test]
fn aligned_walk_finds_a_better_record() {
    let ext = [(1, 5), (9, 6), (17, 6), (26, 3), (33, 4), (64, 5)].map(|(b, l)| AllocRec::new(b, l));
    let args = AllocArgs {
        alignment: 4,
        ..AllocArgs::new(1, 4)
    };
    for s in [CutoffStrategy::Lt, CutoffStrategy::Le] {
        let mut fs = FreeSpace::from_extents(200, tiny(), &ext, 1.0).unwrap();
        // lookup_ge(4 + 3 = 7) fails; _small: (17,6) aligned to 20, rlen 3.
        // (9,6): aligned 12, rlen 3, not > 3. (64,5): aligned 64, rlen
        // min(4, 5) = 4 > 3: new best and == maxlen, stop.
        let (walked, got) = run(&mut fs, &args, s);
        assert_eq!(walked, vec![(17, 6), (9, 6), (64, 5)], "{s}");
        assert_eq!(got, Some((64, 4)));
        fs.check().unwrap();
        assert!(fs.bno.records().contains(&AllocRec::new(68, 1)));
    }
}

#[test]
fn full_fit_takes_first_ge_record_and_splits_remainders() {
    // lookup_ge(5) lands on (40,6); allocate 5 at 40, remainder (45,1).
    let ext = [(10, 2), (20, 9), (40, 6)].map(|(b, l)| AllocRec::new(b, l));
    let mut fs = FreeSpace::from_extents(100, tiny(), &ext, 1.0).unwrap();
    let (walked, got) = run(&mut fs, &AllocArgs::new(1, 5), CutoffStrategy::Lt);
    assert_eq!(walked, vec![(40, 6)]);
    assert_eq!(got, Some((40, 5)));
    assert_eq!(
        fs.bno.records(),
        vec![AllocRec::new(10, 2), AllocRec::new(20, 9), AllocRec::new(45, 1)]
    );
    fs.check().unwrap();
}
