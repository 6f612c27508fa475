//! Invariants of the free-space btrees under random operations.

use std::collections::BTreeSet;

use fsmeta::kernel::xfs::alloc::{AllocArgs, CutoffStrategy, xfs_alloc_ag_vextent_near, xfs_alloc_ag_vextent_size, xfs_free_ag_extent};
use fsmeta::kernel::xfs::freespace::source::lay_out;
use fsmeta::kernel::xfs::freespace::{AllocBtree, AllocRec, BtreeGeometry, BtreeKind, FreeSpace};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const AG: u32 = 3000;

/// 128-byte blocks: 9 records per leaf (min 4), 6 pointers per node (min 3).
fn tiny() -> BtreeGeometry {
    BtreeGeometry::new(128, 56).unwrap()
}

#[derive(Clone, Debug)]
enum Op {
    Size { maxlen: u32, align: u32, strategy: u8 },
    Near { maxlen: u32, hint: u32 },
    Free { pick: usize, part: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1u32..40, 1u32..5, 0u8..3).prop_map(|(maxlen, align, strategy)| Op::Size { maxlen, align, strategy }),
        (1u32..40, 0..AG).prop_map(|(maxlen, hint)| Op::Near { maxlen, hint }),
        (any::<usize>(), any::<bool>()).prop_map(|(pick, part)| Op::Free { pick, part }),
    ]
}

/// Allocated ranges between the free extents of a fresh layout.
fn gaps(free: &[AllocRec]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut at = 0u64;
    for r in free {
        if u64::from(r.startblock) > at {
            out.push((at as u32, (u64::from(r.startblock) - at) as u32));
        }
        at = r.end();
    }
    if at < u64::from(AG) {
        out.push((at as u32, (u64::from(AG) - at) as u32));
    }
    out
}

fn apply(fs: &mut FreeSpace, live: &mut Vec<(u32, u32)>, op: &Op) {
    match *op {
        Op::Size { maxlen, align, strategy } => {
            let s = [CutoffStrategy::Lt, CutoffStrategy::Le, CutoffStrategy::Budget(2)][strategy as usize];
            let args = AllocArgs {
                alignment: align,
                ..AllocArgs::new(1, maxlen)
            };
            if let Some(r) = xfs_alloc_ag_vextent_size(fs, &args, s, None) {
                assert!(r.len >= 1 && r.len <= maxlen);
                live.push((r.agbno, r.len));
            }
        }
        Op::Near { maxlen, hint } => {
            let args = AllocArgs {
                agbno: hint,
                ..AllocArgs::new(1, maxlen)
            };
            if let Some(r) = xfs_alloc_ag_vextent_near(fs, &args) {
                live.push((r.agbno, r.len));
            }
        }
        Op::Free { pick, part } if !live.is_empty() => {
            let i = pick % live.len();
            let (bno, len) = live[i];
            if part && len >= 3 {
                assert!(xfs_free_ag_extent(fs, bno + 1, 1));
                live[i] = (bno, 1);
                live.push((bno + 2, len - 2));
            } else {
                assert!(xfs_free_ag_extent(fs, bno, len));
                live.swap_remove(i);
            }
        }
        Op::Free { .. } => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn allocate_free_keeps_trees_consistent(
        lengths in prop::collection::vec(1u32..30, 0..120),
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 1..150),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ext = lay_out(lengths, AG, &mut rng).unwrap();
        let mut fs = FreeSpace::from_extents(AG, tiny(), &ext, 0.75).unwrap();
        let mut live = gaps(&ext);
        for op in &ops {
            apply(&mut fs, &mut live, op);
            prop_assert_eq!(fs.check(), Ok(()));
            let bno: BTreeSet<AllocRec> = fs.bno.records().into_iter().collect();
            let cnt: BTreeSet<AllocRec> = fs.cnt.records().into_iter().collect();
            prop_assert_eq!(&bno, &cnt);
            let allocated: u64 = live.iter().map(|&(_, l)| u64::from(l)).sum();
            prop_assert_eq!(fs.free_blocks() + allocated, u64::from(AG));
        }
        // Freeing everything leaves one free extent covering the AG.
        while !live.is_empty() {
            apply(&mut fs, &mut live, &Op::Free { pick: 0, part: false });
        }
        prop_assert_eq!(fs.bno.records(), vec![AllocRec::new(0, AG)]);
        prop_assert_eq!(fs.cnt.height(), 1);
    }

    #[test]
    fn btree_insert_delete_matches_btreeset(
        ops in prop::collection::vec((any::<bool>(), 0u32..400, 1u32..6), 1..600),
        fill in 0.5f64..1.0,
        preload in prop::collection::btree_set(0u32..400, 0..200),
    ) {
        let recs: Vec<AllocRec> = preload.iter().map(|&b| AllocRec::new(b, 1)).collect();
        let mut t = AllocBtree::bulk_load(BtreeKind::Bno, tiny(), &recs, fill);
        prop_assert_eq!(t.check(), Ok(()));
        let mut model: BTreeSet<u32> = preload.clone();
        for (ins, b, l) in ops {
            if ins {
                prop_assert_eq!(t.insert(AllocRec::new(b, l)), model.insert(b));
            } else if let Some(&k) = model.range(b..).next() {
                let rec = t.records().into_iter().find(|r| r.startblock == k).unwrap();
                prop_assert!(t.delete(rec));
                model.remove(&k);
            }
            prop_assert_eq!(t.check(), Ok(()));
        }
        let keys: Vec<u32> = t.records().iter().map(|r| r.startblock).collect();
        prop_assert_eq!(keys, model.into_iter().collect::<Vec<_>>());
    }
}
