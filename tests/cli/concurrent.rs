//! Two runs into one `--out` at once (issue 33): both used to exit 0 and
//! the later commit silently discarded the other's results. The second is
//! now refused before any work, naming the first's process id.

use super::{fsmeta, temp_dir, write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCENARIO: &str = r#"[scenario]
name = "busy"
ops = 200

[workload]
kind = "path"
threads = 1

[[path]]
work = { dist = "exp", mean_ns = 100.0 }
"#;

#[test]
fn a_second_run_into_the_same_out_is_refused_while_the_first_writes_issue33() {
    let dir = temp_dir("concurrent");
    let f = write(&dir, "busy.toml", SCENARIO);
    let out = dir.join("out");
    let first = Command::new(env!("CARGO_BIN_EXE_fsmeta"))
        .args(["run", "--silent", "--jobs", "1"])
        .arg(&f)
        .arg("--out")
        .arg(&out)
        // Every step of the write sleeps: the first is still writing when
        // the second starts.
        .env("FSMETA_TEST_SLOW_COMMIT_MS", "300")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fsmeta starts");
    let pid = first.id();
    let writing = format!(".busy.tmp-{pid}-");
    let start = Instant::now();
    // Wait until the first is writing its set (it holds the lock by then);
    // the bound only keeps a broken build from hanging the suite.
    while !std::fs::read_dir(&out)
        .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().starts_with(&writing)))
        .unwrap_or(false)
    {
        assert!(start.elapsed() < Duration::from_secs(120), "the first run never started writing");
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = fsmeta(&["run", "--silent", f.to_str().expect("utf8"), "--out", out.to_str().expect("utf8")]);
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "the second run must be refused: {err}");
    assert!(
        err.contains("busy is being written by another fsmeta") && err.contains(&format!("pid {pid}")) && err.contains("nothing was run"),
        "{err}"
    );
    let done = first.wait_with_output().expect("first run");
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(out.join("busy/summary.csv").is_file());
    assert!(!out.join(".busy.lock").exists(), "the lock file is removed with the lock");
    // Free again once the first is done.
    let third = fsmeta(&["run", "--silent", f.to_str().expect("utf8"), "--out", out.to_str().expect("utf8")]);
    assert_eq!(third.status.code(), Some(0), "{}", String::from_utf8_lossy(&third.stderr));
}

/// Shards of one study are written by separate runs, possibly at once:
/// each locks its own shard file, not the study's folder.
#[test]
fn different_shards_into_one_out_do_not_conflict_issue33() {
    let dir = temp_dir("concurrent-shards");
    let f = write(&dir, "busy.toml", SCENARIO);
    let out = dir.join("out");
    let _held = fsmeta::report::write::OutputLock::acquire(&out, "busy.shard-1-of-2.runs").expect("lock shard 1");
    let o = fsmeta(&[
        "run",
        "--shard",
        "2/2",
        f.to_str().expect("utf8"),
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let o = fsmeta(&[
        "run",
        "--shard",
        "1/2",
        f.to_str().expect("utf8"),
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(2), "shard 1 is held: {}", String::from_utf8_lossy(&o.stderr));
}
