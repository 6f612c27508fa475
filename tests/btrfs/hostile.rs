//! Hostile input to the `btrfs-dir` workload (issue "Hostile input and
//! faults"): conflicting deletion keys, costs whose products overflowed,
//! and the memory estimate a `--max-memory` budget checks.

use fsmeta::kernel::ModelError;
use fsmeta::kernel::btrfs::delayed::DeleteRunStats;
use fsmeta::machine::find_builtin;
use fsmeta::workload::btrfs_dir::{BtrfsDir, BtrfsDirParams, DeletePattern, delayed_cost, run_btrfs_dir};
use fsmeta::workload::{Sections, Workload};
use fsmeta::{LoadOptions, Study};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;

const SCENARIO: &str = r#"
[scenario]
name = "dir"
replications = 1

[workload]
kind = "btrfs-dir"

[btrfs_dir]
files = 100
"#;

fn load(extra: &str) -> Result<Study, String> {
    let text = format!("{SCENARIO}{extra}");
    Study::from_text(Path::new("dir.toml"), &text, &LoadOptions::default()).map_err(|e| e.to_string())
}

fn run(p: &BtrfsDirParams) -> Result<std::collections::BTreeMap<String, f64>, ModelError> {
    let machine = find_builtin("icelake-2s").expect("built-in profile");
    run_btrfs_dir(p, &machine, &mut ChaCha8Rng::seed_from_u64(7))
}

#[test]
fn delete_every_and_delete_fraction_together_are_an_error_naming_both() {
    let e = match load("delete_every = 3\ndelete_fraction = 0.5\n") {
        Err(e) => e,
        Ok(_) => panic!("both deletion keys were accepted"),
    };
    assert!(e.contains("btrfs_dir.delete_every") && e.contains("`delete_fraction`"), "{e}");
    let p = BtrfsDirParams {
        delete_every: Some(3),
        delete_fraction: Some(0.5),
        ..Default::default()
    };
    assert!(p.validate().is_err());
    // Each alone is fine.
    assert!(load("delete_every = 3\n").is_ok());
    assert!(load("delete_fraction = 0.5\n").is_ok());
}

#[test]
fn the_default_pattern_is_every_second_file_and_resolves_as_such() {
    let p = BtrfsDirParams::default();
    assert_eq!(p.delete_pattern(), DeletePattern::Every(2));
    let every2 = BtrfsDirParams {
        delete_every: Some(2),
        ..Default::default()
    };
    let (a, b) = (run(&p).ok(), run(&every2).ok());
    assert!(a.is_some() && a == b, "default and delete_every = 2 differ");
    assert_eq!(a.map(|m| m["files_deleted"]), Some(500.0));
    let resolved = |text: &str| {
        let table: toml::Table = toml::from_str(text).unwrap_or_default();
        BtrfsDir.resolved_toml(&Sections::Table(&table)).unwrap_or_default()
    };
    assert!(resolved("[btrfs_dir]\nfiles = 10\n").contains("delete_every = 2\n"));
    let fraction = resolved("[btrfs_dir]\ndelete_fraction = 0.25\n");
    assert!(
        fraction.contains("delete_fraction = 0.25") && !fraction.contains("delete_every"),
        "{fraction}"
    );
}

#[test]
fn costs_above_one_second_are_refused() {
    let huge = BtrfsDirParams {
        batch_overhead_ns: 1e16,
        ..Default::default()
    };
    assert!(matches!(huge.validate(), Err(e) if e.field == "batch_overhead_ns" && e.message.contains("1e9")));
    let e = load("batch_overhead_ns = 1e16\n").err().unwrap_or_default();
    assert!(e.contains("btrfs_dir.batch_overhead_ns"), "{e}");
    let e = load("del_items_ns = 3800.0\n").err().unwrap_or_default();
    assert!(e.contains("del_items_ns"), "a removed cost key is refused: {e}");
    let max = BtrfsDirParams {
        batch_overhead_ns: 1e9,
        ..Default::default()
    };
    assert!(max.validate().is_ok());
}

#[test]
fn delayed_deletion_time_does_not_wrap() {
    // The fuzzer's case: 1,001 batches at 1e16 ns gave 1.19e13 us (a wrap).
    // At the largest accepted cost the time is at least the product.
    let p = BtrfsDirParams {
        batch_overhead_ns: 1e9,
        ..Default::default()
    };
    let m = match run(&p) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    assert!(m["delete_delayed_us"] >= m["batches"] * 1e6, "{m:?}");
    // Counts beyond what u64 ps could hold times a 1 s cost.
    let machine = find_builtin("ideal").expect("built-in profile");
    let cost = delayed_cost(&p, &machine);
    let s = DeleteRunStats {
        batches: 1_000_000_000,
        items_released: u64::MAX,
        ..Default::default()
    };
    let ps = cost.delete_ps(&s).unwrap_or_default();
    assert_eq!(ps, 1_000_000_000u128 * 1_000_000_000_000);
    let icelake = delayed_cost(&p, &find_builtin("icelake-2s").expect("built-in profile"));
    assert!(icelake.delete_ps(&s).is_ok_and(|t| t > ps));
}

#[test]
fn the_memory_estimate_covers_the_measured_bytes() {
    let est = |files: u64| {
        let text = SCENARIO.replace("files = 100", &format!("files = {files}"));
        match Study::from_text(Path::new("dir.toml"), &text, &LoadOptions::default()) {
            Ok(s) => s.scenario.first().map_or(0, |p| p.memory_bytes()),
            Err(e) => panic!("{e}"),
        }
    };
    // Measured at most 202 bytes per file with 12-byte names (4 KiB nodes,
    // no deletions) and 514 with 255-byte names (see FILE_BYTES).
    let short = BtrfsDirParams {
        files: 1_000_000,
        ..Default::default()
    };
    assert_eq!(short.longest_name(), 12);
    assert!(short.memory_bytes() >= 1_000_000 * 202, "{}", short.memory_bytes());
    let long = BtrfsDirParams {
        name_len: Some(255),
        ..short.clone()
    };
    assert!(short.memory_bytes() < 1_000_000 * 300, "{}", short.memory_bytes());
    assert!(long.memory_bytes() >= 1_000_000 * 514, "{}", long.memory_bytes());
    assert!(long.memory_bytes() < 1_000_000 * 2000, "{}", long.memory_bytes());
    // The workload reports it, and the 50M-file maximum stays a finite figure.
    assert_eq!(est(short.files), short.memory_bytes());
    let most = BtrfsDirParams {
        files: 50_000_000,
        name_len: Some(255),
        ..Default::default()
    };
    assert!(most.validate().is_ok() && most.memory_bytes() < 100 << 30);
}
