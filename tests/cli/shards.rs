//! Sharded sweeps and the result cache: for every shipped scenario (quick
//! mode), shards 1/3, 2/3 and 3/3 merged give the bytes of the unsharded
//! run; `fsmeta merge` refuses incomplete or foreign shards; a re-run
//! through `--cache` computes nothing, an added point computes only its
//! runs; `contrib/slurm/sweep.sbatch` runs under a fake `sbatch`.

use super::{fsmeta, root, temp_dir, write};
use fsmeta::plan::Shard;
use fsmeta::runner::shard::ShardFile;
use fsmeta::{LoadOptions, Study};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every file of an output set, by name, with its bytes.
pub(super) fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).expect("output set") {
        let p = e.expect("entry").path();
        let name = p.file_name().and_then(|n| n.to_str()).expect("utf8").to_string();
        out.insert(name, std::fs::read(&p).expect("read"));
    }
    out
}

fn scenarios() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("scenarios"))
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn three_shards_merged_give_the_unsharded_bytes_for_every_scenario() {
    let out = temp_dir("shards-all");
    let opts = LoadOptions {
        quick: true,
        ..LoadOptions::default()
    };
    let mut fractions = 0;
    for file in scenarios() {
        let study = Study::load(&file, &opts).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = study.scenario.doc.scenario.name.clone();
        let whole = study.run(2, &|| {}).expect("runs");
        fractions += within_bounds(&name, &study, &whole);
        study.write(&whole, &out.join("whole")).expect("writes");
        let mut shards = Vec::new();
        for k in 1..=3 {
            let sh = Shard { index: k, count: 3 };
            let r = study.run_with(2, &|| {}, Some(sh), None).expect("shard runs");
            let path = study
                .shard_file(&file, &opts, sh, &r)
                .write(&out.join("shards"))
                .expect("shard file");
            shards.push(ShardFile::read(&path).expect("reads back"));
        }
        let total: usize = shards.iter().map(|s| s.results.len()).sum();
        assert_eq!(total, study.plan().len(), "{name}: the shards hold every run once");
        let merged = study.merge(&shards).expect("merges");
        study.write(&merged, &out.join("merged")).expect("writes");
        let (a, b) = (files(&out.join("whole").join(&name)), files(&out.join("merged").join(&name)));
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "{name}: same files");
        for (f, bytes) in &a {
            assert!(*bytes == b[f], "{name}/{f}: merged bytes differ from the unsharded run's");
        }
        // Incomplete or doubled shards are refused, naming what is wrong
        // (with fewer than 3 runs, shard 3/3 is empty and may be left out).
        if study.plan().len() >= 3 {
            let e = study.merge(&shards[..2]).expect_err("a shard is missing");
            assert!(e.to_string().contains("missing shard(s) 3/3"), "{e}");
            let doubled = [shards[0].clone(), shards[0].clone(), shards[1].clone(), shards[2].clone()];
            assert!(study.merge(&doubled).is_err(), "{name}: a doubled shard merges");
        }
    }
    assert!(fractions > 100, "utilisations and shares are checked: {fractions}");
}

/// Every metric declared a fraction (utilisation, shares) lies in
/// [0, 1], and none is negative or not finite where a count or time is.
fn within_bounds(name: &str, study: &Study, results: &fsmeta::Results) -> usize {
    let specs = study.scenario.first().map(|p| p.metrics()).unwrap_or_default();
    let mut fractions = 0;
    for r in &results.runs {
        for (metric, &v) in &r.metrics {
            let unit = specs.iter().find(|m| &m.name == metric).map_or("", |m| m.unit);
            if unit == "fraction" {
                fractions += 1;
                assert!((0.0..=1.0).contains(&v), "{name}: {metric} = {v} is not a fraction");
            }
        }
    }
    fractions
}

pub(super) const SWEEP: &str = r#"[scenario]
name = "cached"
replications = 2
ops = 2000

[machine]
profile = "ideal"

[workload]
kind = "path"
threads = 1

[locks.l]
kind = "queued"

[[path]]
work = { dist = "exp", mean_ns = 1000.0 }
[[path]]
lock = "l"
[[path]]
work = { dist = "exp", mean_ns = 100.0 }
[[path]]
unlock = "l"

[sweep]
"workload.threads" = POINTS
"#;

/// `fsmeta run` through a cache; returns (read, computed) from its note.
fn cached_run(file: &Path, cache: &Path, out: &Path) -> (u64, u64) {
    let o = fsmeta(&[
        "run",
        file.to_str().expect("utf8"),
        "--cache",
        cache.to_str().expect("utf8"),
        "--out",
        out.to_str().expect("utf8"),
        "--jobs",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("cache:"))
        .unwrap_or_else(|| panic!("no cache note in {err}"));
    let n: Vec<u64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    (n[0], n[1])
}

#[test]
fn the_cache_computes_only_new_runs_and_changes_no_byte() {
    let dir = temp_dir("cache");
    let cache = dir.join("cache");
    let three = write(&dir, "three.toml", &SWEEP.replace("POINTS", "[1, 2, 4]"));
    assert_eq!(cached_run(&three, &cache, &dir.join("a")), (0, 6), "first run: everything computed");
    assert_eq!(
        cached_run(&three, &cache, &dir.join("b")),
        (6, 0),
        "unchanged re-run: nothing computed"
    );
    assert_eq!(
        files(&dir.join("a/cached")),
        files(&dir.join("b/cached")),
        "cached outputs are the same bytes"
    );
    let four = write(&dir, "four.toml", &SWEEP.replace("POINTS", "[1, 2, 4, 8]"));
    assert_eq!(
        cached_run(&four, &cache, &dir.join("c")),
        (6, 2),
        "an added point: its 2 runs computed"
    );
    // A point between two others: a point's random numbers follow from
    // its own coordinates, not its place in the grid, so only it is new.
    let middle = write(&dir, "middle.toml", &SWEEP.replace("POINTS", "[1, 2, 3, 4, 8]"));
    assert_eq!(
        cached_run(&middle, &cache, &dir.join("c2")),
        (8, 2),
        "a point in the middle: its 2 runs computed"
    );
    let more = write(
        &dir,
        "more.toml",
        &SWEEP
            .replace("POINTS", "[1, 2, 4, 8]")
            .replace("replications = 2", "replications = 3"),
    );
    assert_eq!(
        cached_run(&more, &cache, &dir.join("d")),
        (8, 4),
        "an added replication: one run per point"
    );
    let changed = write(
        &dir,
        "changed.toml",
        &SWEEP.replace("POINTS", "[1, 2, 4, 8]").replace("100.0", "101.0"),
    );
    assert_eq!(
        cached_run(&changed, &cache, &dir.join("e")),
        (0, 8),
        "a changed model: every run computed"
    );
    // The cached study's bytes are those of an uncached run.
    let o = fsmeta(&[
        "run",
        four.to_str().expect("utf8"),
        "--out",
        dir.join("f").to_str().expect("utf8"),
        "--silent",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(files(&dir.join("c/cached")), files(&dir.join("f/cached")));
}

#[test]
fn a_value_added_to_the_fast_axis_of_a_grid_computes_only_its_points() {
    let dir = temp_dir("cache-grid");
    let cache = dir.join("cache");
    let grid = |threads: &str| {
        SWEEP
            .replace("POINTS", threads)
            .replace("[sweep]\n", "[sweep]\n\"scenario.ops\" = [2000, 3000]\n")
    };
    let two = write(&dir, "two.toml", &grid("[1, 2]"));
    assert_eq!(cached_run(&two, &cache, &dir.join("a")), (0, 8), "2 x 2 points, 2 replications");
    // threads is the fast axis: with points keyed by their index, every
    // point after (2000, 2) would move and be computed again.
    let three = write(&dir, "three.toml", &grid("[1, 2, 4]"));
    assert_eq!(
        cached_run(&three, &cache, &dir.join("b")),
        (8, 4),
        "one new value of the fast axis: its 2 points' runs computed"
    );
}

#[test]
fn merge_through_the_binary_and_its_refusals() {
    let dir = temp_dir("merge-cli");
    let file = write(&dir, "m.toml", &SWEEP.replace("POINTS", "[1, 2]"));
    let f = file.to_str().expect("utf8");
    let shards = dir.join("shards");
    for k in ["1/2", "2/2"] {
        let o = fsmeta(&["run", f, "--shard", k, "--out", shards.to_str().expect("utf8")]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("shard {k}: 2 of 4 runs")));
    }
    let o = fsmeta(&[
        "merge",
        shards.to_str().expect("utf8"),
        "--out",
        dir.join("merged").to_str().expect("utf8"),
        "--silent",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let o = fsmeta(&["run", f, "--out", dir.join("whole").to_str().expect("utf8"), "--silent"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(files(&dir.join("merged/cached")), files(&dir.join("whole/cached")));
    // A bad shard spec, an empty folder, a changed scenario: exit 2.
    let o = fsmeta(&["run", f, "--shard", "3/2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected K/N"));
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let o = fsmeta(&["merge", empty.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no shard files"));
    write(
        &dir,
        "m.toml",
        &SWEEP.replace("POINTS", "[1, 2]").replace("ops = 2000", "ops = 3000"),
    );
    let o = fsmeta(&[
        "merge",
        shards.to_str().expect("utf8"),
        "--out",
        dir.join("merged2").to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("different study"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_slurm_script_runs_under_a_fake_sbatch_and_merges_to_the_same_bytes() {
    let dir = temp_dir("slurm");
    let file = write(&dir, "s.toml", &SWEEP.replace("POINTS", "[1, 2, 4]"));
    let path = format!(
        "{}:{}",
        root().join("contrib/slurm/fake").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = std::process::Command::new("bash")
        .arg(root().join("contrib/slurm/sweep.sbatch"))
        .args([file.to_str().expect("utf8"), "4", "--seed", "5"])
        .current_dir(&dir)
        .env("PATH", path)
        .env("FSMETA", env!("CARGO_BIN_EXE_fsmeta"))
        .env("FSMETA_OUT", dir.join("merged"))
        .env("FAKE_SBATCH_STATE", dir.join("state"))
        .output()
        .expect("bash runs");
    let log = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{log}");
    assert!(log.contains("array 1-4"), "{log}");
    for k in 1..=4 {
        assert!(
            dir.join(format!("sweep-s/cached.shard-{k}-of-4.runs")).is_file(),
            "shard {k}: {log}"
        );
    }
    let o = fsmeta(&[
        "run",
        file.to_str().expect("utf8"),
        "--seed",
        "5",
        "--out",
        dir.join("whole").to_str().expect("utf8"),
        "--silent",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(files(&dir.join("merged/cached")), files(&dir.join("whole/cached")));
}
