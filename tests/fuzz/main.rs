//! A mutation fuzzer over every shipped scenario, through the library's
//! `Study::from_text` (what `fsmeta check` does): deleted, duplicated and
//! swapped lines, extreme numbers, wrong types, unknown keys, truncation,
//! unicode, deep nesting, huge sweeps, bad data-file paths and names that
//! cannot be file names. Every mutant must load or fail with a located
//! message; none may panic, and none that loads may hold a name that
//! cannot be written as a file name.
//!
//! `cargo test --release --test fuzz` runs a fixed budget (3,000 mutants);
//! `cargo test --release --test fuzz -- --ignored fuzz_long` runs 100,000.
//! [`files`] does the same for the files fsmeta reads back (shard files,
//! cache entries, the result files), the rich rendering of errors, and
//! the lab's readers of kernel and tool output (trace, dump-tree, freesp
//! totals, mountinfo).

#![allow(clippy::result_large_err)]

mod files;

use fsmeta::diagnostic::Style;
use fsmeta::{LoadOptions, Study};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// Values that replace a number or a string.
const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "1e300",
    "-1e300",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "4294967296",
    "1e-300",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "\"x\"",
    "true",
    "[1, 2, 3]",
    "{ a = 1 }",
    "\"\"",
    "\"/dev/zero\"",
    "\"/dev/urandom\"",
    "\"machines\"",
    "\"no-such-file.toml\"",
    "\"data/case4.freesp\"",
    "\"é✓\u{202e}\"",
];

/// One mutant of `text`, drawn from `rng`.
fn mutate(text: &str, rng: &mut ChaCha8Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    let i = rng.random_range(0..n);
    let j = rng.random_range(0..n);
    match rng.random_range(0..11u32) {
        0 => {
            lines.remove(i);
        }
        10 => {
            // A name that becomes a file name (issue 33): after a section
            // that takes one, or in place of a `name = ...` line.
            let long = "n".repeat(rng.random_range(90..300));
            let names = [
                ".",
                "..",
                "",
                "a/b",
                "a\\b",
                "a\\u0000b",
                "\\u001b[2J",
                ".hidden",
                "\\t",
                &long,
                "ok name",
            ];
            let line = format!("name = \"{}\"", names[rng.random_range(0..names.len())]);
            match lines.iter().position(|l| l.trim_start().starts_with("name =")) {
                Some(at) if rng.random_bool(0.7) => lines[at] = line,
                _ => lines.insert(i, line),
            }
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(j, l);
        }
        2 => lines.swap(i, j),
        3 | 4 => {
            let v = EXTREMES[rng.random_range(0..EXTREMES.len())];
            if let Some((k, _)) = lines[i].split_once('=') {
                lines[i] = format!("{k}= {v}");
            } else {
                lines.insert(i, format!("threads = {v}"));
            }
        }
        5 => lines.insert(
            i,
            format!(
                "{} = 1",
                ["thraeds", "filez", "kind", "seed", "ops", "x.y", "sweep"][rng.random_range(0..7)]
            ),
        ),
        6 => {
            let cut = rng.random_range(0..text.len().max(1));
            let cut = (0..=cut).rev().find(|&c| text.is_char_boundary(c)).unwrap_or(0);
            return text[..cut].to_string();
        }
        7 => {
            let depth = rng.random_range(1..200);
            lines.insert(i, format!("deep = {}1{}", "[".repeat(depth), "]".repeat(depth)));
        }
        8 => {
            let len = rng.random_range(1..5000);
            let list: Vec<String> = (0..len).map(|k| k.to_string()).collect();
            let key = [
                "workload.threads",
                "scenario.ops",
                "btrfs_dir.files",
                "xfs_alloc.fragmentation",
                "machine.profile",
            ][rng.random_range(0..5)];
            lines.push(format!("[sweep]\n\"{key}\" = [{}]", list.join(", ")));
        }
        _ => {
            let at = rng.random_range(0..lines[i].len().max(1) + 1).min(lines[i].len());
            let at = (0..=at).rev().find(|&c| lines[i].is_char_boundary(c)).unwrap_or(0);
            lines[i].insert_str(
                at,
                ["\u{0}", "é", "\"", "[", "]", "=", "#", "\u{feff}", "{", "'"][rng.random_range(0..10)],
            );
        }
    }
    lines.join("\n")
}

/// How a mutant ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Ok,
    LocatedError,
    UnlocatedError,
    Panic,
}

fn check(file: &Path, text: &str) -> (Outcome, String) {
    let opts = LoadOptions {
        max_runs: 2_000,
        max_memory_bytes: 4 << 30,
        ..LoadOptions::default()
    };
    match catch_unwind(AssertUnwindSafe(|| Study::from_text(file, text, &opts))) {
        Ok(Ok(study)) => match unsafe_name(&study) {
            None => (Outcome::Ok, String::new()),
            Some(why) => (
                Outcome::UnlocatedError,
                format!("accepted a name that cannot be a file name: {why}"),
            ),
        },
        Ok(Err(e)) if e.location.is_some() => {
            // Shown as rustc shows it, every way, without a panic.
            let shown = catch_unwind(AssertUnwindSafe(|| {
                e.diagnostic()
                    .map(|d| [Style::Plain, Style::Rich, Style::RichColour].map(|s| d.show(s)))
            }));
            match shown {
                Ok(Some(_)) => (Outcome::LocatedError, String::new()),
                Ok(None) => (Outcome::UnlocatedError, format!("located without a diagnostic: {e}")),
                Err(_) => (Outcome::Panic, format!("rendering panicked: {e}")),
            }
        }
        Ok(Err(e)) => (Outcome::UnlocatedError, e.to_string()),
        Err(_) => (Outcome::Panic, String::new()),
    }
}

/// A name of a loaded study that cannot be written as a file name (the
/// scenario's, a plot's, a variant's): `check` must refuse those.
fn unsafe_name(study: &Study) -> Option<String> {
    let s = &study.scenario;
    let names = std::iter::once(s.doc.scenario.name.as_str())
        .chain(s.doc.plot.iter().filter_map(|p| p.name.as_deref()))
        .chain(s.variants.iter().map(|v| v.name.as_str()));
    names
        .filter_map(|n| fsmeta::text::file_name_problem(n).map(|why| format!("`{}`: {why}", fsmeta::text::quote_short(n))))
        .next()
}

fn scenarios() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "toml"));
    files.sort();
    files
        .into_iter()
        .map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap_or_default()))
        .collect()
}

/// Runs `count` mutants and returns the outcome counts; fails on a panic or
/// an unlocated error, printing the mutant.
fn fuzz(count: u64, seed: u64) -> BTreeMap<Outcome, u64> {
    let files = scenarios();
    assert!(!files.is_empty(), "no shipped scenarios found");
    let mut counts = BTreeMap::new();
    std::panic::set_hook(Box::new(|info| {
        let _ = std::fs::write(std::env::temp_dir().join("fsmeta-fuzz-panic.txt"), info.to_string());
    }));
    for k in 0..count {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let (file, text) = &files[(k as usize) % files.len()];
        let mut mutant = mutate(text, &mut rng);
        if rng.random_bool(0.3) {
            mutant = mutate(&mutant, &mut rng);
        }
        let (outcome, message) = check(file, &mutant);
        *counts.entry(outcome).or_insert(0) += 1;
        if matches!(outcome, Outcome::Panic | Outcome::UnlocatedError) {
            let _ = std::panic::take_hook();
            let report = format!("mutant {k} of {} gave {outcome:?}: {message}\n---\n{mutant}\n---", file.display());
            eprintln!("{report}");
            let _ = std::fs::write(std::env::temp_dir().join("fsmeta-fuzz-failure.txt"), &report);
            panic!("{report}");
        }
    }
    let _ = std::panic::take_hook();
    eprintln!("fuzz: {count} mutants: {counts:?}");
    counts
}

/// Whether a loaded mutant is small enough to run inside the fuzzer's
/// budget: a path run of at most 200,000 operations (or 5 ms simulated),
/// other workloads within 256 MiB (checked by the loader).
fn small(study: &Study) -> bool {
    study.scenario.points.iter().flat_map(|p| &p.configs).all(|c| {
        let s = &c.doc.scenario;
        s.ops.is_none_or(|n| n <= 200_000) && s.time_ms.is_none_or(|t| t <= 5.0)
    }) && study.plan().len() <= 40
}

/// Runs `count` mutants in quick mode and returns the outcome counts
/// (`Ok` = ran; `LocatedError` = refused when loading or failed with a
/// run error; loads that are too large to run here count as skipped).
fn fuzz_run(count: u64, seed: u64) -> BTreeMap<&'static str, u64> {
    let files = scenarios();
    let opts = LoadOptions {
        quick: true,
        max_runs: 40,
        max_memory_bytes: 256 << 20,
        ..LoadOptions::default()
    };
    let mut counts = BTreeMap::new();
    for k in 0..count {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let (file, text) = &files[(k as usize) % files.len()];
        let mutant = mutate(text, &mut rng);
        let outcome = catch_unwind(AssertUnwindSafe(|| match Study::from_text(file, &mutant, &opts) {
            Err(e) if e.location.is_some() => "refused, located",
            Err(_) => "refused, unlocated",
            Ok(study) if !small(&study) => "loaded, too large to run here",
            Ok(study) => match study.run(2, &|| {}) {
                Ok(_) => "ran",
                Err(_) => "run error",
            },
        }));
        let outcome = outcome.unwrap_or("panic");
        *counts.entry(outcome).or_insert(0) += 1;
        assert!(
            outcome != "panic" && outcome != "refused, unlocated",
            "mutant {k} of {}: {outcome}\n{mutant}",
            file.display()
        );
    }
    eprintln!("fuzz run: {count} mutants: {counts:?}");
    counts
}

#[test]
fn fuzz_run_ci_budget() {
    let counts = fuzz_run(300, 3);
    assert!(counts.get("ran").copied().unwrap_or(0) > 20, "{counts:?}");
}

#[test]
fn fuzz_ci_budget() {
    let counts = fuzz(3_000, 1);
    assert!(counts.get(&Outcome::LocatedError).copied().unwrap_or(0) > 1_000, "{counts:?}");
    assert!(counts.get(&Outcome::Ok).copied().unwrap_or(0) > 100, "{counts:?}");
}

#[test]
#[ignore = "long: 100,000 mutants"]
fn fuzz_long() {
    fuzz(100_000, 2);
}

#[test]
#[ignore = "long: 3,000 run-mode mutants"]
fn fuzz_run_long() {
    fuzz_run(3_000, 4);
}

#[test]
fn fuzz_shard_files_ci_budget() {
    let (same, refused) = files::fuzz_shards(3_000, 5);
    eprintln!("fuzz shards: {same} read back the same, {refused} refused");
    assert!(refused > 2_000, "{same} / {refused}");
}

#[test]
fn fuzz_cache_entries_ci_budget() {
    let (hits, misses) = files::fuzz_cache(1_000, 6);
    eprintln!("fuzz cache: {hits} hits (same metrics), {misses} misses with a warning");
    assert!(misses > 600, "{hits} / {misses}");
}

#[test]
fn fuzz_freesp_files_ci_budget() {
    let (accepted, refused) = files::fuzz_freesp(400, 12);
    eprintln!("fuzz freesp: {accepted} accepted, {refused} refused");
    assert!(refused > 100, "{accepted} / {refused}");
}

#[test]
fn fuzz_result_files_ci_budget() {
    let ok = files::fuzz_result_files(1_000, 7);
    eprintln!("fuzz result files: {ok} of 3000 mutants read");
}

#[test]
#[ignore = "long: 100,000 shard and 20,000 cache mutants"]
fn fuzz_files_long() {
    files::fuzz_shards(100_000, 8);
    files::fuzz_cache(20_000, 9);
    files::fuzz_result_files(20_000, 10);
    files::fuzz_freesp(20_000, 13);
}

#[test]
fn fuzz_lab_parsers_ci_budget() {
    let ok = files::fuzz_lab_parsers(3_000, 11);
    eprintln!("fuzz lab parsers: {ok} of 3000 mutants analysed without an error");
    // Most mutants of the two traces with allocations keep some: the
    // analyses' success path is exercised too, not only their refusals.
    assert!(ok >= 100, "only {ok} mutants analysed");
}
