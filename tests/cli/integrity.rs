//! Issues 33 and 34: what fsmeta reads back is checked before it is
//! trusted. A shard file that is corrupted, cut short, edited, of another
//! version or not a regular file makes `fsmeta merge` refuse with the
//! file (and line and column where there is one), exit 2, and write
//! nothing; a cache entry in the same state is computed again with a
//! one-line warning, and the outputs are the bytes of a clean run.

use super::shards::{SWEEP, files};
use super::{fsmeta, temp_dir, write};
use std::path::{Path, PathBuf};

/// Two shards of a 4-run study in `dir/shards`; returns their paths.
fn two_shards(dir: &Path) -> Vec<PathBuf> {
    let file = write(dir, "m.toml", &SWEEP.replace("POINTS", "[1, 2]"));
    let shards = dir.join("shards");
    for k in ["1/2", "2/2"] {
        let o = fsmeta(&[
            "run",
            file.to_str().expect("utf8"),
            "--shard",
            k,
            "--out",
            shards.to_str().expect("utf8"),
            "--silent",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
    vec![shards.join("cached.shard-1-of-2.runs"), shards.join("cached.shard-2-of-2.runs")]
}

/// `fsmeta merge` of the shards folder; returns (exit code, stderr).
fn merge(dir: &Path, out: &str) -> (Option<i32>, String) {
    let o = fsmeta(&[
        "merge",
        dir.join("shards").to_str().expect("utf8"),
        "--out",
        dir.join(out).to_str().expect("utf8"),
        "--silent",
        "--error-format",
        "plain",
    ]);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn merge_refuses_damaged_shards_where_the_damage_is_and_writes_nothing() {
    let dir = temp_dir("merge-damage");
    let paths = two_shards(&dir);
    let good = std::fs::read_to_string(&paths[1]).expect("shard");
    let first_value = good.find("\"metrics\": {").expect("metrics");
    let value_line = good[..first_value].matches('\n').count() + 2;
    // The value on the first metric's line, edited.
    let line: &str = good.lines().nth(value_line - 1).expect("a metric line");
    let (name, value) = line.split_once(": ").expect("name: value");
    let edited = good.replacen(line, &format!("{name}: \"NaN\"{}", if value.ends_with(',') { "," } else { "" }), 1);
    let path = paths[1].display().to_string();
    let cases: Vec<(String, String)> = vec![
        (edited, format!("{path}:5:3: the content does not match its checksum")),
        (good[..good.len() / 2].to_string(), format!("{path}:")),
        (
            good.replacen("\"version\": 2", "\"version\": 1", 1),
            format!("{path}: a shard file of format \"fsmeta-shard\" version 1; this fsmeta reads \"fsmeta-shard\" version 2"),
        ),
        ("fsmeta-shard 1\nscenario cached\n".to_string(), format!("{path}:1:")),
        (
            good.replacen("\"build\": \"", "\"build\": \"0.0.9+", 1),
            format!("{path}: written by fsmeta build 0.0.9+"),
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        std::fs::write(&paths[1], text).expect("damage");
        let out = format!("out{i}");
        let (code, err) = merge(&dir, &out);
        assert_eq!(code, Some(2), "case {i}: {err}");
        assert!(err.contains(want.as_str()), "case {i}: want `{want}` in:\n{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!dir.join(&out).exists(), "case {i}: something was written");
    }
    // Shown as rustc shows it: the file's line with a caret, and a help.
    std::fs::write(&paths[1], &cases[0].0).expect("damage");
    let o = fsmeta(&[
        "merge",
        dir.join("shards").to_str().expect("utf8"),
        "--out",
        dir.join("rich").to_str().expect("utf8"),
        "--error-format",
        "rich",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: the content does not match its checksum"), "{err}");
    assert!(err.contains(&format!(" --> {path}:5:3\n")), "{err}");
    assert!(err.contains("5 |   \"checksum\": \""), "{err}");
    assert!(err.contains("= help: the file was changed after fsmeta wrote it"), "{err}");
    // The intact shard merges.
    std::fs::write(&paths[1], &good).expect("restore");
    assert_eq!(merge(&dir, "ok").0, Some(0));
}

#[test]
fn merge_refuses_a_shard_path_that_is_not_a_regular_file_without_reading_it() {
    let o = fsmeta(&["merge", "/dev/zero", "--out", "/dev/null/x", "--error-format", "plain"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/dev/zero: not a regular file") && err.matches("not a regular file").count() == 1,
        "{err}"
    );
}

#[test]
fn damaged_cache_entries_are_computed_again_with_a_one_line_warning() {
    let dir = temp_dir("cache-damage");
    let file = write(&dir, "c.toml", &SWEEP.replace("POINTS", "[1, 2]"));
    let cache = dir.join("cache");
    let run = |out: &str| {
        let o = fsmeta(&[
            "run",
            file.to_str().expect("utf8"),
            "--cache",
            cache.to_str().expect("utf8"),
            "--out",
            dir.join(out).to_str().expect("utf8"),
            "--silent",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    assert_eq!(run("clean"), "", "a first run warns of nothing");
    let mut entries: Vec<PathBuf> = walk(&cache);
    entries.sort();
    assert_eq!(entries.len(), 4);
    let text = std::fs::read_to_string(&entries[0]).expect("entry");
    let damaged = [
        text.replacen("\"version\": 2", "\"version\": 7", 1),
        text[..text.len() - 5].to_string(),
        text.replacen(": ", ": 1", 1),
    ];
    for (i, bad) in damaged.iter().enumerate() {
        std::fs::write(&entries[0], bad).expect("damage");
        let err = run(&format!("again{i}"));
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "case {i}: one warning line: {err}");
        assert!(
            lines[0].starts_with(&format!("fsmeta: warning: cache entry {}: ", entries[0].display()))
                && lines[0].ends_with("; computing the run again"),
            "case {i}: {err}"
        );
        assert_eq!(
            files(&dir.join(format!("again{i}/cached"))),
            files(&dir.join("clean/cached")),
            "case {i}"
        );
        // The entry was rewritten: the next run reads it without a word.
        assert_eq!(run(&format!("after{i}")), "", "case {i}");
    }
    // A FIFO where an entry should be: not opened (it would block the
    // run), computed again with a warning, replaced by the entry.
    std::fs::remove_file(&entries[0]).expect("remove");
    let made = std::process::Command::new("mkfifo").arg(&entries[0]).status().expect("mkfifo runs");
    assert!(made.success());
    let err = run("fifo");
    assert!(err.ends_with("not a regular file; computing the run again\n"), "{err}");
    assert!(entries[0].is_file(), "the entry was rewritten");
}

/// Every `*.run` file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "run") {
            out.push(p);
        }
    }
    out
}

/// Issue 33: a folder where a cache entry goes does not abort the run: it
/// is computed, not stored, with one warning, and the outputs are those of
/// a clean run. Temporary entries of dead processes (a full disk leaves
/// them) are removed by the next run; a cache that cannot be opened says
/// its cause once.
#[test]
fn a_cache_that_cannot_store_an_entry_does_not_stop_the_run_issue33() {
    let dir = temp_dir("cache-unstorable");
    let file = write(&dir, "c.toml", &SWEEP.replace("POINTS", "[1, 2]"));
    let cache = dir.join("cache");
    let run = |out: &str, cache: &Path| {
        fsmeta(&[
            "run",
            file.to_str().expect("utf8"),
            "--cache",
            cache.to_str().expect("utf8"),
            "--out",
            dir.join(out).to_str().expect("utf8"),
            "--silent",
        ])
    };
    assert_eq!(run("clean", &cache).status.code(), Some(0));
    let mut entries = walk(&cache);
    entries.sort();
    // Two entries become folders holding a file (a rename cannot replace
    // them): one warning for the unreadable entries each, one for storing.
    for e in &entries[..2] {
        std::fs::remove_file(e).expect("remove");
        std::fs::create_dir_all(e.join("x")).expect("folder");
    }
    // A temporary entry of a process that cannot exist (above pid_max).
    let sub = entries[0].parent().expect("sub");
    let dead = sub.join(".abcd.tmp-4194305-0");
    let live = sub.join(format!(".abcd.tmp-{}-0", std::process::id()));
    std::fs::write(&dead, "cut").expect("tmp");
    std::fs::write(&live, "in use").expect("tmp");
    let o = run("again", &cache);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("computed and not stored").count(), 1, "{err}");
    assert_eq!(err.matches("computing the run again").count(), 2, "{err}");
    assert_eq!(files(&dir.join("again/cached")), files(&dir.join("clean/cached")));
    assert!(!dead.exists(), "a dead process's temporary entry is removed");
    assert!(live.exists(), "a live process's temporary entry stays");
    // A cache path that is a file: refused, the cause said once.
    let not_dir = write(&dir, "a-file", "x");
    let o = run("never", &not_dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("os error").count(), 1, "{err}");
}
