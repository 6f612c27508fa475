//! Case 4 (docs/reference/cases.md): the by-size search cutoff on the
//! published freesp, with every counter of the one call exact.
//!
//! The AG: 215 one-block and 994,476 two-block free extents (the 2-3 bin
//! holds 1,988,952 blocks, exactly two each). cntbt and bnobt: 994,691
//! records in leaves of 379 (75% of 505), 2,625 leaves under 11 level-1
//! nodes under the root: 3 levels (any legal fill gives 3: 1,970 to 3,947
//! leaves need more than one node of at most 336 pointers).

use std::path::Path;

use fsmeta::kernel::xfs::alloc::{AllocArgs, CutoffStrategy, xfs_alloc_ag_vextent_size};
use fsmeta::kernel::xfs::freespace::{BtreeStats, FreeSpace};
use fsmeta::machine::find_builtin;
use fsmeta::workload::xfs_alloc::cost::EventPrices;
use fsmeta::workload::xfs_alloc::{FreeSpaceSource, RECORD_NS_FITTED, XfsAllocParams, run_xfs_alloc};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn params(strategy: CutoffStrategy) -> XfsAllocParams {
    XfsAllocParams {
        source: FreeSpaceSource::FreespFile,
        freesp_file: "scenarios/data/case4.freesp".into(),
        maxlen: 4,
        strategy,
        ..XfsAllocParams::default()
    }
}

fn dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The AG built as the scenario builds it, and the counters of one call.
fn one_call(strategy: CutoffStrategy) -> (FreeSpace, BtreeStats) {
    let p = params(strategy);
    let h = p.read_freesp(dir()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut fs = p.build_free_space(h.as_ref(), &mut rng).unwrap();
    fs.reset_stats();
    let got = xfs_alloc_ag_vextent_size(&mut fs, &AllocArgs::new(1, 4), strategy, None).unwrap();
    // The rightmost 2-block extent, taken whole (maxlen 4 > 2).
    assert_eq!((got.len, got.flen), (2, 2));
    let s = fs.stats();
    (fs, s)
}

#[test]
fn lt_counts() {
    let (fs, s) = one_call(CutoffStrategy::Lt);
    assert_eq!((fs.cnt.height(), fs.bno.height()), (3, 3));
    // _small reads the rightmost record (length 2, bestrlen 2); flen < 2
    // is false for the other 994,475 two-block records; the last 1-block
    // record ends the walk: 1 + 994,475 + 1.
    assert_eq!(s.records_examined, 994_477);
    // lookup_ge 3 reads; the walk steps into 2,624 leaves and 10 level-1
    // nodes; lookup_eq back to the last leaf reads its node and leaf (the
    // root is held); bnobt lookup_eq 3; fixup_longest's lookup on the
    // cntbt cursor holds all 3. Visits: 3 + 2,634 + 3 + 3 + 3.
    assert_eq!(s.buffer_reads, 3 + 2_634 + 2 + 3);
    assert_eq!(s.blocks_visited, 3 + 2_634 + 3 + 3 + 3);
    // cntbt and bnobt record deleted (no remainder), agf_longest logged.
    assert_eq!((s.updates, s.cursors, s.agf_logs), (2, 2, 1));
    assert_eq!((s.lines_cold, s.lines_warm, s.keys_compared), (2_850, 2_510, 72));
    assert_eq!(fs.extent_count(), 994_690);
}

#[test]
fn le_counts() {
    let (fs, s) = one_call(CutoffStrategy::Le);
    // _small's record, then one decrement: flen 2 <= bestrlen 2 stops.
    assert_eq!(s.records_examined, 2);
    // Four root-to-leaf lookups of 3 levels: cntbt lookup_ge (3 reads),
    // lookup_eq back to the pick (3 held), bnobt lookup_eq (3 reads),
    // fixup_longest on the cntbt cursor (3 held).
    assert_eq!((s.blocks_visited, s.buffer_reads), (12, 6));
    assert_eq!((s.updates, s.cursors, s.agf_logs), (2, 2, 1));
    assert_eq!((s.lines_cold, s.lines_warm, s.keys_compared), (40, 52, 72));
    assert_eq!(fs.extent_count(), 994_690);
}

/// The fitted knob reproduces the 'before' figure and the 'after' time
/// follows from the counts: the arithmetic of the scenario header.
#[test]
fn times_follow_from_counts_and_one_fitted_cost() {
    let m = find_builtin("cascadelake-gold-6242").unwrap();
    let prices = EventPrices::new(&m, RECORD_NS_FITTED);
    let (_, lt) = one_call(CutoffStrategy::Lt);
    let (_, le) = one_call(CutoffStrategy::Le);
    let rest_lt = prices.call_ps(&lt) - u128::from(lt.records_examined) * u128::from(prices.record_ps);
    assert_eq!(rest_lt, 1_660_139_500);
    // record_ns = (15,597.94 us - 1,660.1395 us) / 994,477 = 14.015 ns.
    let fit = (15_597_940.0 - rest_lt as f64 / 1000.0) / 994_477.0;
    assert!((fit - RECORD_NS_FITTED).abs() < 0.05, "{fit}");
    assert_eq!(prices.call_ps(&le), 7_818_500);
    let run = |s| run_xfs_alloc(&params(s), &m, dir(), &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
    let (a, b) = (run(CutoffStrategy::Lt), run(CutoffStrategy::Le));
    assert!((a["alloc_us"] / 15_597.94 - 1.0).abs() < 0.01, "{a:?}");
    assert_eq!(b["alloc_us"], 7.8185);
    assert_eq!((a["records_walked"], b["records_walked"]), (994_477.0, 2.0));
}
