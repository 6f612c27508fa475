//! The `xfs_alloc` workload: parameters, sources, streams.

use std::path::Path;

use fsmeta::kernel::ModelError;
use fsmeta::kernel::xfs::alloc::CutoffStrategy;
use fsmeta::kernel::xfs::freespace::source::lengths_from_fragmentation;
use fsmeta::workload::xfs_alloc::{BtreeFill, FreeSpaceSource, XfsAllocParams, run_xfs_alloc};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn run(p: &XfsAllocParams) -> Result<std::collections::BTreeMap<String, f64>, ModelError> {
    let m = fsmeta::machine::find_builtin("cascadelake-gold-6242").unwrap();
    run_xfs_alloc(p, &m, Path::new(env!("CARGO_MANIFEST_DIR")), &mut ChaCha8Rng::seed_from_u64(7))
}

#[test]
fn toml_section_parses_and_rejects_unknown_keys() {
    let p: XfsAllocParams =
        toml::from_str("source = \"histogram\"\nstrategy = \"budget:8\"\nhistogram = [{ from = 2, to = 3, extents = 100 }]\n").unwrap();
    assert_eq!(p.strategy, CutoffStrategy::Budget(8));
    assert_eq!(p.source, FreeSpaceSource::Histogram);
    assert!(toml::from_str::<XfsAllocParams>("maxlenn = 3\n").is_err());
    assert!(toml::from_str::<XfsAllocParams>("strategy = \"lte\"\n").is_err());
    let back: XfsAllocParams = toml::from_str(&toml::to_string(&p).unwrap()).unwrap();
    assert_eq!(back, p);
}

#[test]
fn validate_names_the_field() {
    let p = XfsAllocParams {
        fragmentation: 1.5,
        ..XfsAllocParams::default()
    };
    assert!(matches!(p.validate(), Err(e) if e.field == "fragmentation"));
    let p = XfsAllocParams {
        source: FreeSpaceSource::FreespFile,
        ..XfsAllocParams::default()
    };
    assert!(matches!(p.validate(), Err(e) if e.field == "freesp_file"));
    let p = XfsAllocParams {
        minlen: 5,
        maxlen: 4,
        ..XfsAllocParams::default()
    };
    assert!(matches!(p.validate(), Err(e) if e.field == "maxlen"));
}

#[test]
fn missing_freesp_file_is_a_parameter_error_on_the_file() {
    let p = XfsAllocParams {
        source: FreeSpaceSource::FreespFile,
        freesp_file: "data/none.freesp".into(),
        ..XfsAllocParams::default()
    };
    assert!(matches!(run(&p), Err(ModelError::InvalidParam(e)) if e.field == "freesp_file" && e.message.contains("cannot read")));
}

#[test]
fn fragmentation_level_sets_the_small_share() {
    let lengths = |level: f64| lengths_from_fragmentation(level, 1000, 2, 2000).unwrap_or_default();
    assert_eq!(lengths(0.0), vec![1000]);
    let half = lengths(0.5);
    assert_eq!(half.iter().filter(|&&l| l == 2).count(), 250);
    assert_eq!(half.iter().map(|&l| u64::from(l)).sum::<u64>(), 1000);
    assert_eq!(lengths(1.0), vec![2; 500]);
}

#[test]
fn walk_grows_only_when_no_extent_fits() {
    // Below level 1 one long extent satisfies maxlen: no walk under lt.
    let base = XfsAllocParams {
        free_blocks: 20_000,
        agblocks: 100_000,
        strategy: CutoffStrategy::Lt,
        ..XfsAllocParams::default()
    };
    let m = run(&XfsAllocParams {
        fragmentation: 0.9,
        ..base.clone()
    })
    .unwrap();
    assert_eq!(m["records_walked"], 1.0);
    assert_eq!(m["alloc_len"], 4.0);
    let m = run(&XfsAllocParams {
        fragmentation: 1.0,
        ..base.clone()
    })
    .unwrap();
    assert_eq!(m["records_walked"], 10_000.0);
    let m = run(&XfsAllocParams {
        fragmentation: 1.0,
        strategy: CutoffStrategy::Budget(100),
        ..base
    })
    .unwrap();
    assert_eq!(m["records_walked"], 101.0);
}

#[test]
fn stream_of_calls_with_frees() {
    let p = XfsAllocParams {
        agblocks: 200_000,
        free_blocks: 50_000,
        fragmentation: 0.5,
        calls: 2000,
        free_prob: 0.5,
        maxlen: 16,
        ..XfsAllocParams::default()
    };
    let m = run(&p).unwrap();
    assert_eq!(m["calls"], 2000.0);
    assert!(m["alloc_us_p50"] <= m["alloc_us_p99"]);
    assert_eq!(m["alloc_len"], 16.0);
    assert_eq!(run(&p).unwrap(), m, "deterministic");
}

#[test]
fn aging_reaches_its_target() {
    use fsmeta::kernel::xfs::aging::{AgingParams, age};
    use fsmeta::kernel::xfs::freespace::{AllocRec, BtreeGeometry, FreeSpace};
    let geo = BtreeGeometry::new(512, 56).unwrap();
    let mut fs = FreeSpace::from_extents(200_000, geo, &[AllocRec::new(0, 200_000)], 0.75).unwrap();
    let p = AgingParams::default();
    let steps = age(&mut fs, &p, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
    assert!(steps > 1000);
    assert!(fs.small_share() >= 0.9);
    let short: u64 = fs
        .cnt
        .records()
        .iter()
        .filter(|r| r.blockcount < 4)
        .map(|r| u64::from(r.blockcount))
        .sum();
    assert!(short as f64 >= 0.9 * fs.free_blocks() as f64);
    assert_eq!(fs.check(), Ok(()));
    let m = run(&XfsAllocParams {
        source: FreeSpaceSource::Aging,
        agblocks: 200_000,
        ..XfsAllocParams::default()
    })
    .unwrap();
    assert!(m["free_extents"] > 1000.0, "{m:?}");
}

#[test]
fn trees_grown_by_inserts_are_fuller_than_a_bulk_load_at_three_quarters() {
    // 10,000 two-block extents inserted in block order: every leaf of the
    // by-size tree holds 505 records but the last two, so the lt walk
    // over all of them steps through fewer leaves than in 379-record
    // leaves (a bulk load at 0.75).
    let p: XfsAllocParams = toml::from_str("btree_fill = \"inserted\"\n").unwrap();
    assert_eq!(p.btree_fill, BtreeFill::Inserted);
    let back: XfsAllocParams = toml::from_str(&toml::to_string(&p).unwrap()).unwrap();
    assert_eq!(back, p);
    assert!(toml::from_str::<XfsAllocParams>("btree_fill = \"inserts\"\n").is_err());
    let base = XfsAllocParams {
        free_blocks: 20_000,
        agblocks: 100_000,
        fragmentation: 1.0,
        strategy: CutoffStrategy::Lt,
        ..XfsAllocParams::default()
    };
    let bulk = run(&base).unwrap();
    let grown = run(&XfsAllocParams {
        btree_fill: BtreeFill::Inserted,
        ..base
    })
    .unwrap();
    assert_eq!(grown["records_walked"], bulk["records_walked"]);
    let leaves = |recs_per_leaf: f64| (10_000.0 / recs_per_leaf).ceil();
    // The lookups and the fix-up read as many blocks in both; the walk
    // enters one leaf per leaf's worth of records.
    let steps = bulk["blocks_visited"] - grown["blocks_visited"];
    // (The grown tree's last leaf may hold fewer: one leaf either way.)
    let want = leaves(379.0) - leaves(505.0);
    assert!(
        (steps - want).abs() <= 1.0,
        "{steps} leaves fewer, want {want}: bulk {bulk:?} grown {grown:?}"
    );
}
