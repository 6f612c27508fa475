//! The two cutoffs compared on random free space (proptest): what the
//! case-4 scenario used to state as ratio expectations, checked here over
//! many inputs instead of on one.
//!
//! Why they hold: the walk visits records in the same order under both
//! cutoffs; `le` stops at the first record with `flen <= bestrlen`, `lt`
//! at the first with `flen < bestrlen`. The records in between have
//! `flen == bestrlen`, and since `rlen <= flen` none can beat the best, so
//! both pick the same extent and `le`'s walk is a prefix of `lt`'s.

use fsmeta::kernel::xfs::alloc::{AllocArgs, CutoffStrategy, xfs_alloc_ag_vextent_size};
use fsmeta::kernel::xfs::freespace::source::lay_out;
use fsmeta::kernel::xfs::freespace::{AllocRec, BtreeGeometry, FreeSpace};
use fsmeta::machine::find_builtin;
use fsmeta::workload::xfs_alloc::RECORD_NS_FITTED;
use fsmeta::workload::xfs_alloc::cost::EventPrices;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const AG: u32 = 20_000;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn le_never_walks_further_nor_costs_more_than_lt(
        lengths in prop::collection::vec(1u32..12, 1..1500),
        seed in any::<u64>(),
        fill in 0.5f64..1.0,
        maxlen in 1u32..16,
        minlen_cut in 0u32..16,
        align in 1u32..5,
    ) {
        let minlen = 1 + minlen_cut % maxlen;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ext: Vec<AllocRec> = lay_out(lengths, AG, &mut rng).unwrap();
        let geo = BtreeGeometry::new(256, 56).unwrap(); // 25 records per leaf
        let base = FreeSpace::from_extents(AG, geo, &ext, fill).unwrap();
        let args = AllocArgs { alignment: align, ..AllocArgs::new(minlen, maxlen) };
        let prices = EventPrices::new(&find_builtin("cascadelake-gold-6242").unwrap(), RECORD_NS_FITTED);
        let run = |s: CutoffStrategy| {
            let mut fs = base.clone();
            fs.reset_stats();
            let mut trace = Vec::new();
            let got = xfs_alloc_ag_vextent_size(&mut fs, &args, s, Some(&mut trace));
            let st = fs.stats();
            (got, trace, st, fs.bno.records())
        };
        let (got_lt, walk_lt, s_lt, recs_lt) = run(CutoffStrategy::Lt);
        let (got_le, walk_le, s_le, recs_le) = run(CutoffStrategy::Le);
        prop_assert_eq!(got_lt, got_le);
        prop_assert_eq!(recs_lt, recs_le);
        prop_assert!(walk_lt.starts_with(&walk_le));
        prop_assert!(s_le.records_examined <= s_lt.records_examined);
        prop_assert!(s_le.buffer_reads <= s_lt.buffer_reads);
        prop_assert!(prices.call_ps(&s_le) <= prices.call_ps(&s_lt));
    }
}
