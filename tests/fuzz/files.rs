//! The readers of what fsmeta writes and reads back (issue 34): shard
//! files, cache entries, `runs.csv`, `summary.csv`, `summary.json`, and
//! the rich rendering of every located error. Mutants (cut short, lines
//! deleted, doubled or swapped, numbers replaced by extremes, bytes
//! inserted, version and build edited) must be refused with a located or
//! named error, or read back to exactly what was written; never a panic,
//! never a different value.

use fsmeta::diagnostic::Style;
use fsmeta::engine::Metrics;
use fsmeta::engine::rng::RunKey;
use fsmeta::plan::Shard;
use fsmeta::report::model::{RunsTable, SummaryJson, SummaryTable};
use fsmeta::runner::cache::RunCache;
use fsmeta::runner::shard::{ShardFile, ShardFileError};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

const VALUES: &[&str] = &[
    "\"NaN\"",
    "\"inf\"",
    "\"-inf\"",
    "NaN",
    "1e999",
    "-0.0",
    "0",
    "1",
    "-1",
    "\"x\"",
    "null",
    "true",
    "[]",
    "{}",
    "18446744073709551616",
    "5e-324",
    "\"\\u0000\"",
    "\"\u{1b}[2J\"",
];
const BYTES: &[&str] = &[
    "\"", ",", "{", "}", "[", "]", ":", "\n", "\\", "\u{0}", "é", " ", "\u{feff}", "1", ".", "e",
];

/// One mutant of `text`.
fn mutate(text: &str, rng: &mut ChaCha8Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let (i, j) = (rng.random_range(0..lines.len()), rng.random_range(0..lines.len()));
    match rng.random_range(0..8u32) {
        0 => {
            let cut = rng.random_range(0..text.len().max(1));
            let cut = (0..=cut).rev().find(|&c| text.is_char_boundary(c)).unwrap_or(0);
            return text[..cut].to_string();
        }
        1 => {
            lines.remove(i);
        }
        2 => {
            let l = lines[i].clone();
            lines.insert(j, l);
        }
        3 => lines.swap(i, j),
        4 | 5 => {
            let v = VALUES[rng.random_range(0..VALUES.len())];
            // The value after a key (JSON) or a field (CSV).
            if let Some((k, _)) = lines[i].split_once(": ") {
                let comma = if lines[i].ends_with(',') { "," } else { "" };
                lines[i] = format!("{k}: {v}{comma}");
            } else if let Some((k, _)) = lines[i].rsplit_once(',') {
                lines[i] = format!("{k},{}", v.trim_matches('"'));
            }
        }
        6 => {
            let l = &mut lines[i];
            let at = rng.random_range(0..l.len() + 1);
            let at = (0..=at).rev().find(|&c| l.is_char_boundary(c)).unwrap_or(0);
            l.insert_str(at, BYTES[rng.random_range(0..BYTES.len())]);
        }
        _ => {
            let l = &mut lines[i];
            if let Some(d) = l.find(|c: char| c.is_ascii_digit()) {
                let digit = (l.as_bytes()[d] - b'0' + 1) % 10;
                l.replace_range(d..d + 1, &digit.to_string());
            }
        }
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn sample_metrics(k: u64) -> Metrics {
    let mut m = Metrics::new();
    m.insert("ops_per_sec".into(), 12_345.678 + k as f64);
    m.insert("p99_ns".into(), 1.0 / 3.0);
    m.insert("a,b \"q\"\né".into(), f64::INFINITY);
    m.insert("zero".into(), -0.0);
    m
}

fn sample_shard() -> ShardFile {
    ShardFile {
        scenario: "fuzz".into(),
        file: PathBuf::from("/s/fuzz.toml"),
        quick: true,
        seed: None,
        study: "0123456789abcdef0123456789abcdef".into(),
        runs: 6,
        shard: Shard { index: 1, count: 2 },
        results: (0..3).map(|k| (2 * k as usize, sample_metrics(k))).collect(),
    }
}

/// Renders a diagnostic every way; a panic here fails the caller.
fn render(d: &fsmeta::diagnostic::Diagnostic) {
    for style in [Style::Plain, Style::Rich, Style::RichColour] {
        let shown = d.show(style);
        assert!(shown.ends_with('\n'));
    }
}

/// Shard-file mutants: refused (located or named) or read back exactly.
pub fn fuzz_shards(count: u64, seed: u64) -> (u64, u64) {
    let good = sample_shard();
    let text = good.to_text("B");
    let (mut same, mut refused) = (0, 0);
    for k in 0..count {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut mutant = mutate(&text, &mut rng);
        if rng.random_bool(0.3) {
            mutant = mutate(&mutant, &mut rng);
        }
        let r = catch_unwind(AssertUnwindSafe(|| {
            let r = ShardFile::parse(Path::new("f.runs"), &mutant, "B");
            if let Err(e) = &r
                && let Some(d) = e.diagnostic()
            {
                render(&d);
            }
            r
        }));
        match r {
            Err(_) => panic!("mutant {k} panicked:\n{mutant}"),
            Ok(Ok(back)) => {
                assert_eq!(back.to_text("B"), text, "mutant {k} read back as something else:\n{mutant}");
                same += 1;
            }
            Ok(Err(e)) => {
                match &e {
                    ShardFileError::Format { line, column, .. } | ShardFileError::Checksum { line, column, .. } => {
                        assert!(*line >= 1 && *column >= 1, "mutant {k}: {e}");
                        assert!(e.diagnostic().is_some(), "mutant {k}: {e}");
                    }
                    ShardFileError::Version { .. } | ShardFileError::Build { .. } => {}
                    other => panic!("mutant {k}: unexpected {other}"),
                }
                assert!(e.to_string().starts_with("f.runs"), "mutant {k}: the file is named: {e}");
                refused += 1;
            }
        }
    }
    (same, refused)
}

/// Cache-entry mutants: a hit only with the metrics written, else a miss
/// with one warning line.
pub fn fuzz_cache(count: u64, seed: u64) -> (u64, u64) {
    let dir = std::env::temp_dir().join(format!("fsmeta-fuzz-cache-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = RunCache::open(&dir).expect("cache opens");
    let key = cache.key(
        "fuzz",
        RunKey {
            seed: 1,
            point: 0,
            replication: 0,
        },
    );
    let m = sample_metrics(0);
    cache.put(&key, &m);
    let path = std::fs::read_dir(&dir)
        .expect("cache dir")
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "run"))
        .expect("the entry");
    let text = std::fs::read_to_string(&path).expect("entry");
    let (mut hits, mut misses) = (0, 0);
    for k in 0..count {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mutant = mutate(&text, &mut rng);
        std::fs::write(&path, &mutant).expect("write mutant");
        let got = catch_unwind(AssertUnwindSafe(|| cache.get(&key))).unwrap_or_else(|_| panic!("mutant {k} panicked:\n{mutant}"));
        let warnings = cache.take_warnings();
        match got {
            Some(back) => {
                let same = back.len() == m.len() && m.iter().all(|(n, v)| back.get(n).is_some_and(|b| b.to_bits() == v.to_bits()));
                assert!(same, "mutant {k} read as other metrics {back:?}:\n{mutant}");
                assert!(warnings.is_empty(), "{warnings:?}");
                hits += 1;
            }
            None => {
                assert_eq!(warnings.len(), 1, "mutant {k}: one warning: {warnings:?}\n{mutant}");
                assert!(
                    !warnings[0].contains('\n') && !warnings[0].contains('\u{1b}'),
                    "mutant {k}: one clean line: {warnings:?}"
                );
                misses += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    (hits, misses)
}

/// Mutants of result files a run wrote: the readers refuse or read, never
/// panic.
pub fn fuzz_result_files(count: u64, seed: u64) -> u64 {
    // The files of a quick run of a shipped scenario, as this build
    // writes them.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let opts = fsmeta::LoadOptions {
        quick: true,
        ..fsmeta::LoadOptions::default()
    };
    let study = fsmeta::Study::load(&root.join("scenarios/queue-theory.toml"), &opts).expect("loads");
    let results = study.run(2, &|| {}).expect("runs");
    let out = std::env::temp_dir().join(format!("fsmeta-fuzz-files-{}-{seed}", std::process::id()));
    let outcome = study.write(&results, &out).expect("writes");
    let dir = outcome.dir;
    let mut read_ok = 0;
    for (name, text) in ["runs.csv", "summary.csv", "summary.json"].map(|n| (n, std::fs::read_to_string(dir.join(n)).unwrap_or_default())) {
        assert!(!text.is_empty(), "{name} sample present");
        for k in 0..count {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let mutant = mutate(&text, &mut rng);
            let ok = catch_unwind(AssertUnwindSafe(|| match name {
                "runs.csv" => RunsTable::from_csv(&mutant).is_ok(),
                "summary.csv" => SummaryTable::from_csv(&mutant).is_ok(),
                _ => SummaryJson::from_json(&mutant).is_ok(),
            }))
            .unwrap_or_else(|_| panic!("{name} mutant {k} panicked:\n{mutant}"));
            read_ok += u64::from(ok);
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    read_ok
}

/// The lab's readers of kernel and tool output (trace text, dump-tree
/// text, freesp totals, mountinfo) on mutants of saved real outputs:
/// each must return (a value or an error), never panic. Returns how many
/// mutants were read without an error by the trace analyses.
pub fn fuzz_lab_parsers(count: u64, seed: u64) -> u64 {
    use fsmeta::lab::{btrfs_delayed, dumptree::Tree, host, trace, xfs_alloc, xfs_handles};
    let data = |name: &str| {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/data").join(name);
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        // A slice keeps each mutant small: the parsers are line by line.
        text.lines().take(400).collect::<Vec<_>>().join("\n") + "\n"
    };
    let seeds = [
        data("btrfs-delayed-1000.trace.txt"),
        data("btrfs-delayed-sync-locks.trace.txt"),
        data("btrfs-delayed-io.trace.txt"),
        data("xfs-handles-1000.trace.txt"),
        data("xfs-alloc-10000.trace.txt"),
        data("btrfs-1000-files.dump-tree.txt"),
        "   from      to extents  blocks    pct\n      1       1    9935    9935 100.00\ntotal free extents 9935\n".to_string(),
        "40 22 7:3 / /tmp/fsmeta-lab-1-0/mnt rw,relatime shared:5 - xfs /dev/loop3 rw\n41 22 0:52 / /tmp/a\\040b rw - btrfs /dev/loop4 rw\n".to_string(),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ok = 0;
    for k in 0..count {
        let base = &seeds[(k % seeds.len() as u64) as usize];
        let mut text = mutate(base, &mut rng);
        for _ in 0..rng.random_range(0..4u32) {
            text = mutate(&text, &mut rng);
        }
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _ = trace::parse(&text);
            let _ = trace::phases(&trace::parse(&text));
            let a = btrfs_delayed::analyse(&text, "27687bd2-84f2-44eb-bab2-c0951f5d7cb0", 16384, 2).is_ok();
            let _ = xfs_handles::analyse(&text, 1000.0);
            let b = xfs_alloc::analyse(&text).is_ok();
            let _ = Tree::parse(&text);
            let _ = xfs_alloc::freesp_extents(&text);
            let _ = host::parse_mountinfo(&text);
            a && b
        }));
        match r {
            Ok(true) => ok += 1,
            Ok(false) => {}
            Err(_) => panic!("a lab parser panicked on mutant {k} (seed {seed}):\n{text}"),
        }
    }
    ok
}

/// Freesp data files (issue 33: `head -c 84 case4.freesp` was accepted and
/// ran with 214 free extents instead of 994,690): every truncation of the
/// shipped file must be refused, located, unless it only drops the final
/// line end; `count` random mutants must load or be refused, located,
/// never panic. Returns (accepted, refused).
pub fn fuzz_freesp(count: u64, seed: u64) -> (u64, u64) {
    use fsmeta::{LoadOptions, Study};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let scenario = std::fs::read_to_string(root.join("xfs-alloc-cutoff.toml")).expect("xfs-alloc-cutoff.toml");
    let full = std::fs::read_to_string(root.join("data/case4.freesp")).expect("case4.freesp");
    let dir = std::env::temp_dir().join(format!("fsmeta-fuzz-freesp-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("data")).expect("temp dir");
    let file = dir.join("s.toml");
    let load = |text: &str| {
        std::fs::write(dir.join("data/case4.freesp"), text).expect("write freesp");
        catch_unwind(AssertUnwindSafe(|| Study::from_text(&file, &scenario, &LoadOptions::default())))
    };
    let (mut accepted, mut refused) = (0, 0);
    let mut tally = |text: &str, what: &str| match load(text) {
        Ok(Ok(_)) => {
            accepted += 1;
            true
        }
        Ok(Err(e)) => {
            assert!(e.location.is_some(), "{what}: an unlocated refusal: {e}\n{text}");
            refused += 1;
            false
        }
        Err(_) => panic!("{what}: the load panicked:\n{text}"),
    };
    for cut in (0..full.len()).filter(|&c| full.is_char_boundary(c)) {
        let text = &full[..cut];
        let ok = tally(text, &format!("cut at byte {cut}"));
        assert!(
            !ok || text.trim_end() == full.trim_end(),
            "a freesp file cut at byte {cut} of {} was accepted:\n{text}",
            full.len()
        );
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for k in 0..count {
        let mut text = mutate(&full, &mut rng);
        for _ in 0..rng.random_range(0..3u32) {
            text = mutate(&text, &mut rng);
        }
        tally(&text, &format!("mutant {k} (seed {seed})"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    (accepted, refused)
}
