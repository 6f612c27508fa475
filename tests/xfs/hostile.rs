//! Hostile input to the `xfs-alloc` workload (issue "Hostile input and
//! faults"): extent counts and calls that used to allocate without bound
//! (or panic with "capacity overflow"), costs whose products wrapped,
//! data files that are devices or huge, and the memory estimate.

use std::path::{Path, PathBuf};

use fsmeta::kernel::ModelError;
use fsmeta::kernel::xfs::alloc::CutoffStrategy;
use fsmeta::kernel::xfs::freespace::FreespHistogram;
use fsmeta::kernel::xfs::freespace::source::HistogramBucket;
use fsmeta::param::{InputError, ParamError};
use fsmeta::workload::Prepared;
use fsmeta::workload::xfs_alloc::{BtreeFill, FreeSpaceSource, PreparedXfsAlloc, XfsAllocParams};
use fsmeta::{LoadOptions, Study};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const HEADER: &str = "   from      to extents  blocks    pct\n";

/// A file in a fresh temporary folder; removed with the folder on drop.
struct TempFile {
    dir: PathBuf,
    path: PathBuf,
}

impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let dir = std::env::temp_dir().join(format!("fsmeta-xfs-hostile-{}-{name}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join(name);
        assert!(std::fs::write(&path, text).is_ok(), "cannot write {}", path.display());
        TempFile { dir, path }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn freesp_params(file: &Path) -> XfsAllocParams {
    XfsAllocParams {
        source: FreeSpaceSource::FreespFile,
        freesp_file: file.display().to_string(),
        ..XfsAllocParams::default()
    }
}

fn prepare(p: XfsAllocParams) -> Result<PreparedXfsAlloc, ParamError> {
    let ideal = fsmeta::machine::find_builtin("ideal").unwrap();
    PreparedXfsAlloc::new_on(p, &ideal, Path::new(env!("CARGO_MANIFEST_DIR")))
}

fn refused(p: XfsAllocParams, field: &str, words: &str) {
    match prepare(p) {
        Err(e) => assert!(e.field == field && e.message.contains(words), "{e}"),
        Ok(_) => panic!("{field}: accepted"),
    }
}

#[test]
fn freesp_extent_counts_beyond_the_ag_are_refused_when_prepared() {
    // The fuzzer's line (capacity overflow), and 1e12 extents (4 TB).
    for (n, blocks) in [(i64::MAX as u64, i64::MAX as u64), (1_000_000_000_000, 2_000_000_000_000)] {
        let f = TempFile::new("huge.freesp", &format!("{HEADER}      1       2 {n} {blocks} 100.00\n"));
        refused(freesp_params(&f.path), "freesp_file", "need at least");
    }
    // The published AG fits its own size and not a smaller one.
    let case4 = XfsAllocParams {
        agblocks: 4_000_000,
        ..freesp_params(Path::new("scenarios/data/case4.freesp"))
    };
    assert!(prepare(case4.clone()).is_ok());
    refused(
        XfsAllocParams {
            agblocks: 2_000_000,
            ..case4
        },
        "freesp_file",
        "the AG has 2000000",
    );
}

#[test]
fn histogram_buckets_beyond_the_ag_are_refused() {
    let p = |extents: u64| XfsAllocParams {
        source: FreeSpaceSource::Histogram,
        histogram: vec![HistogramBucket { from: 1, to: 1, extents }],
        ..XfsAllocParams::default()
    };
    refused(p(i64::MAX as u64), "histogram", "need at least");
    refused(p(u64::MAX), "histogram", "need at least");
    refused(p(8_388_609), "histogram", "the AG has 16777216");
    assert!(prepare(p(8_388_608)).is_ok(), "2^23 one-block extents fit 2^24 blocks");
    let overflow = XfsAllocParams {
        histogram: vec![HistogramBucket {
            from: u32::MAX,
            to: u32::MAX,
            extents: u64::MAX / 2,
        }],
        ..p(1)
    };
    refused(overflow, "histogram", "overflow");
}

#[test]
fn fragmentation_beyond_the_ag_is_refused_and_a_large_one_is_estimated() {
    let big = |free_blocks: u64, small_extent_blocks: u32| XfsAllocParams {
        agblocks: u32::MAX,
        fragmentation: 1.0,
        free_blocks,
        small_extent_blocks,
        ..XfsAllocParams::default()
    };
    // 2^32 - 2 one-block extents (17 GB of lengths before the AG check).
    refused(big(u64::from(u32::MAX) - 1, 1), "free_blocks", "need at least");
    refused(big(u64::from(u32::MAX) - 1, 2), "free_blocks", "need at least");
    // 1.4e9 two-block extents fit; the estimate says what they cost.
    match prepare(big(2_800_000_000, 2)) {
        Ok(p) => assert!(p.memory_bytes() >= 1_400_000_000 * 32, "{}", p.memory_bytes()),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn calls_beyond_memory_are_refused_and_large_ones_are_estimated() {
    let calls = |calls: u64| XfsAllocParams {
        calls,
        ..XfsAllocParams::default()
    };
    refused(calls(i64::MAX as u64), "calls", "too many calls");
    refused(calls(u64::MAX), "calls", "too many calls");
    // 1e9 calls: 8 GB of times at least; the scenario layer's budget decides.
    match prepare(calls(1_000_000_000)) {
        Ok(p) => assert!(p.memory_bytes() >= 8_000_000_000, "{}", p.memory_bytes()),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn the_memory_estimate_covers_the_measured_bytes_and_grows_with_the_run() {
    let case4 = match prepare(XfsAllocParams {
        agblocks: 4_000_000,
        ..freesp_params(Path::new("scenarios/data/case4.freesp"))
    }) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    // ~1M extents at the measured 32.5 bytes each, and not absurdly more.
    let est = case4.memory_bytes();
    assert!((994_691 * 33..200_000_000).contains(&est), "{est}");
    let more_calls = XfsAllocParams {
        calls: 1_000_000,
        ..case4.params().clone()
    };
    assert!(more_calls.memory_bytes(case4.freesp()) >= est + 1_000_000 * 8);
    // Unaligned allocations without frees add no extent; frees add one per
    // call, aligned allocations one more, up to what the AG can hold.
    assert_eq!(more_calls.extents_bound(case4.freesp()), 994_691);
    let frees = XfsAllocParams {
        free_prob: 0.5,
        ..more_calls.clone()
    };
    assert_eq!(frees.extents_bound(case4.freesp()), 1_994_691);
    let aligned = XfsAllocParams { alignment: 4, ..frees };
    assert_eq!(aligned.extents_bound(case4.freesp()), 2_000_001);
    // Tiny blocks: 3 records per leaf measured 153 bytes per extent.
    let tiny = XfsAllocParams {
        block_size: 104,
        btree_fill: BtreeFill::BulkLoad(0.5),
        ..case4.params().clone()
    };
    assert!(tiny.memory_bytes(case4.freesp()) >= 994_691 * 153);
}

#[test]
fn costs_above_one_second_are_refused_and_products_do_not_wrap() {
    refused(
        XfsAllocParams {
            record_ns: fsmeta::workload::xfs_alloc::RecordNs::Fitted(1e12),
            ..XfsAllocParams::default()
        },
        "record_ns",
        "1e9 ns",
    );
    // At the bound, case 4's 1M-record walk costs 1M x 1 s, exactly.
    let p = XfsAllocParams {
        agblocks: 4_000_000,
        record_ns: fsmeta::workload::xfs_alloc::RecordNs::Fitted(1e9),
        strategy: CutoffStrategy::Lt,
        ..freesp_params(Path::new("scenarios/data/case4.freesp"))
    };
    let m = match prepare(p).and_then(|p| {
        p.simulate(&mut ChaCha8Rng::seed_from_u64(1))
            .map_err(|e| ParamError::new("", e.to_string()))
    }) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    assert!(m["records_walked"] > 900_000.0, "{m:?}");
    assert!(m["alloc_us"] >= m["records_walked"] * 1e6, "{m:?}");
}

#[test]
fn freesp_files_that_are_devices_or_huge_are_refused() {
    let m = match FreespHistogram::read_file(Path::new("/dev/null")) {
        Err(ModelError::Input(e @ InputError::Io { .. })) => e.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(m.contains("not a regular file"), "{m}");
    refused(freesp_params(Path::new("/dev/null")), "freesp_file", "not a regular file");
    let f = TempFile::new("big.freesp", HEADER);
    let grown = std::fs::OpenOptions::new()
        .write(true)
        .open(&f.path)
        .and_then(|h| h.set_len(17 << 20));
    assert!(grown.is_ok(), "{grown:?}");
    refused(freesp_params(&f.path), "freesp_file", "16 MiB");
}

#[test]
fn freesp_rows_whose_totals_overflow_are_malformed() {
    // 2^33 extents of 1..2^32-1 blocks: `to x extents` passes u64::MAX,
    // which is no reason to refuse the row.
    let wide = format!("{HEADER}      1 4294967295 8589934592 8589934592 100.00\n");
    let h = FreespHistogram::parse(&wide, Path::new("x"));
    assert!(matches!(&h, Ok(h) if h.total_extents() == 1 << 33), "{h:?}");
    // Rows each fine alone (fields are i64, as xfs_db prints them) whose
    // block total passes u64::MAX at the third.
    let (a, b) = (i64::MAX as u64, 1u64 << 61);
    let two = format!("{HEADER}1 1 {a} {a} 50\n2 2 {b} {} 25\n3 3 {b} {} 25\n", 2 * b, 3 * b);
    match FreespHistogram::parse(&two, Path::new("x")) {
        Err(ModelError::Input(InputError::Malformed { line, message, .. })) => assert!(line == 4 && message.contains("2^64"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_bad_freesp_file_is_a_located_error_when_the_scenario_loads() {
    let f = TempFile::new(
        "s.toml",
        "[scenario]\nname = \"x\"\nreplications = 1\n[workload]\nkind = \"xfs-alloc\"\n\
         [xfs_alloc]\nsource = \"freesp_file\"\nfreesp_file = \"none.freesp\"\n",
    );
    match Study::load(&f.path, &LoadOptions::default()) {
        Err(e) => assert!(
            e.to_string().contains("xfs_alloc.freesp_file") && e.to_string().contains("none.freesp"),
            "{e}"
        ),
        Ok(_) => panic!("loaded a scenario whose freesp file does not exist"),
    }
}

#[test]
fn aging_steps_are_bounded() {
    let aging = |max_steps: u64| XfsAllocParams {
        source: FreeSpaceSource::Aging,
        aging: fsmeta::kernel::xfs::aging::AgingParams {
            max_steps,
            target_short_share: 1.0,
            ..Default::default()
        },
        ..XfsAllocParams::default()
    };
    // An unreachable target with u64::MAX steps used to run for ever.
    refused(aging(u64::MAX), "aging.max_steps", "1..=100000000");
    refused(aging(100_000_001), "aging.max_steps", "1..=100000000");
    refused(aging(0), "aging.max_steps", "1..=");
    assert!(prepare(aging(100_000_000)).is_ok());
}

#[test]
fn a_bad_step_before_the_calls_is_a_located_error() {
    for (step, words) in [("calls:0", "calls:N` or `busy:N`"), ("free:3", "unknown step `free:3`")] {
        let f = TempFile::new(
            "steps.toml",
            &format!(
                "[scenario]\nname = \"x\"\nreplications = 1\n[workload]\nkind = \"xfs-alloc\"\n\
                 [xfs_alloc]\nbefore = [\"{step}\"]\n"
            ),
        );
        match Study::load(&f.path, &LoadOptions::default()) {
            Err(e) => {
                let e = e.to_string();
                assert!(
                    e.contains("steps.toml:7:") && e.contains("xfs_alloc.before") && e.contains(words),
                    "{e}"
                );
            }
            Ok(_) => panic!("loaded before = [\"{step}\"]"),
        }
    }
    let steps = |n: usize| XfsAllocParams {
        before: vec![fsmeta::workload::xfs_alloc::request::Step::Calls(1); n],
        ..XfsAllocParams::default()
    };
    refused(steps(17), "before", "at most 16 steps");
    assert!(prepare(steps(16)).is_ok());
    let marked = XfsAllocParams {
        busy_extents: 4,
        ..steps(1)
    };
    refused(marked, "busy_extents", "not with `before`");
}

#[test]
fn a_layout_needs_its_file_its_fill_and_the_same_run_s_free_space() {
    let layout = |fill: BtreeFill, file: &str| XfsAllocParams {
        btree_fill: fill,
        btree_layout_file: file.into(),
        source: FreeSpaceSource::FreespFile,
        freesp_file: "scenarios/lab/data/xfs-alloc-1000000.freesp".into(),
        agblocks: 2_190_536,
        ..XfsAllocParams::default()
    };
    let other = XfsAllocParams {
        source: FreeSpaceSource::Fragmentation,
        ..layout(BtreeFill::Layout, "x.layout")
    };
    refused(other, "btree_fill", "needs source = \"freesp_file\"");
    refused(
        layout(BtreeFill::Layout, ""),
        "btree_layout_file",
        "required when btree_fill = \"layout\"",
    );
    refused(
        layout(BtreeFill::Inserted, "x.layout"),
        "btree_layout_file",
        "only read when btree_fill = \"layout\"",
    );
    // A leaf of 1,000 records: more than a 4 KiB v5 leaf holds.
    let big = TempFile::new("big.layout", "bnobt level 0: 1000\ncntbt level 0: 1000\n");
    refused(
        layout(BtreeFill::Layout, &big.path.display().to_string()),
        "btree_layout_file",
        "1000 entries",
    );
    // The twin's 10^6 freesp (992,051 extents, 8 of them the AGFL's)
    // with a layout of 600 records: not from the same run.
    let small = TempFile::new(
        "small.layout",
        "bnobt level 0: 300 300\nbnobt level 1: 2\ncntbt level 0: 300 300\ncntbt level 1: 2\n",
    );
    let p = layout(BtreeFill::Layout, &small.path.display().to_string());
    refused(p.clone(), "btree_layout_file", "both must come from the same lab run");
    let p = XfsAllocParams {
        btree_layout_file: "scenarios/lab/data/xfs-alloc-1000000.layout".into(),
        ..p
    };
    assert!(prepare(p).is_ok());
}
