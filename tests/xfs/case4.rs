//! Case 4 (docs/reference/cases.md): the by-size search cutoff on the published freesp.

use std::path::Path;

use fsmeta::kernel::xfs::alloc::CutoffStrategy;
use fsmeta::workload::xfs_alloc::{FreeSpaceSource, XfsAllocParams, run_xfs_alloc};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn case4(strategy: CutoffStrategy) -> std::collections::BTreeMap<String, f64> {
    let p = XfsAllocParams {
        source: FreeSpaceSource::FreespFile,
        freesp_file: "scenarios/data/case4.freesp".into(),
        maxlen: 4,
        strategy,
        ..XfsAllocParams::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    run_xfs_alloc(&p, Path::new(env!("CARGO_MANIFEST_DIR")), &mut rng).unwrap()
}

#[test]
fn case4_lt_and_le() {
    let lt = case4(CutoffStrategy::Lt);
    let le = case4(CutoffStrategy::Le);
    // Published: 15597.94 us before (lt), 19.176 us after (le).
    assert!((lt["alloc_us"] / 15597.94 - 1.0).abs() < 0.15, "{lt:?}");
    assert!((le["alloc_us"] / 19.176 - 1.0).abs() < 0.15, "{le:?}");
    // All 994476 two-block records are read, plus the one 1-block record
    // that ends the walk; le reads the rightmost record and one more.
    assert_eq!(lt["records_walked"], 994_477.0);
    assert_eq!(le["records_walked"], 2.0);
    assert_eq!(lt["alloc_len"], 2.0);
    assert_eq!(le["alloc_len"], 2.0);
    assert_eq!(lt["free_extents"], 994_690.0);
    assert_eq!(le["largest_free"], 2.0);
}
