//! The lab on the live kernel. These tests need root, loop devices,
//! tracefs and xfsprogs / btrfs-progs, so `cargo test` lists them as
//! ignored; `.ci/run` runs them (`--ignored`) where all of that exists and
//! otherwise prints why it did not. A test never returns early as a pass:
//! a missing requirement fails it.
//!
//! Modules:
//! - `counts`: each experiment's counts at small scale against the code's
//!   hand counts and the twins;
//! - `fit`: `fsmeta calibrate` then `fsmeta fit` on this host, the twin
//!   on the fitted profile against the live figure;
//! - `safety`: interrupted labs (SIGINT; SIGKILL then a new lab) leave no
//!   mount, loop device, tracefs instance, image or folder; a non-root lab
//!   refuses before doing anything.

mod counts;
mod fit;
mod safety;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `fsmeta` binary under test.
pub fn fsmeta() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fsmeta"))
}

/// Panics unless the lab can run here (the test must not pass silently).
pub fn require_lab() {
    let missing = fsmeta::lab::host::missing_requirements();
    assert!(missing.is_empty(), "the lab cannot run here: {missing:?}");
}

/// A fresh output folder under the target directory.
pub fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lab-live").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("out dir");
    d
}

/// Runs `fsmeta args` from the repository root and returns its output.
pub fn run(args: &[&str]) -> Output {
    fsmeta()
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run fsmeta")
}

/// Runs `fsmeta args`, asserting exit 0.
pub fn run_ok(args: &[&str]) -> Output {
    let o = run(args);
    assert!(
        o.status.success(),
        "fsmeta {args:?}: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The mean of `metric` for `variant` in `dir/summary.csv`.
pub fn mean(dir: &Path, variant: &str, metric: &str) -> f64 {
    let text = std::fs::read_to_string(dir.join("summary.csv")).expect("summary.csv");
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f.get(1) == Some(&variant) && f.get(2) == Some(&metric) {
            return f[3].parse().expect("a number");
        }
    }
    panic!("{}: no {variant} / {metric}", dir.display());
}

/// The per-run values of `metric` for `variant` in `dir/runs.csv`.
pub fn per_run(dir: &Path, variant: &str, metric: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(dir.join("runs.csv")).expect("runs.csv");
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = head
        .iter()
        .position(|h| *h == metric)
        .unwrap_or_else(|| panic!("{}: no column {metric}", dir.display()));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f.get(1) == Some(&variant))
        .map(|f| f[col].parse().expect("a number"))
        .collect()
}

/// What the lab processes with these pids left behind: mounts, loop
/// devices, tracefs instances and temporary folders.
pub fn leftovers(pid: u32) -> Vec<String> {
    let tag = format!("fsmeta-lab-{pid}-");
    let mut out = Vec::new();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    out.extend(mounts.lines().filter(|l| l.contains(&tag)).map(|l| format!("mount: {l}")));
    if let Ok(rd) = std::fs::read_dir("/sys/block") {
        for e in rd.flatten() {
            if let Ok(b) = std::fs::read_to_string(e.path().join("loop/backing_file"))
                && b.contains(&tag)
            {
                out.push(format!("loop: {} -> {}", e.file_name().to_string_lossy(), b.trim()));
            }
        }
    }
    let inst = format!("fsmeta-{pid}-");
    if let Ok(rd) = std::fs::read_dir("/sys/kernel/tracing/instances") {
        out.extend(
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&inst))
                .map(|n| format!("instance: {n}")),
        );
    }
    if let Ok(rd) = std::fs::read_dir(std::env::temp_dir()) {
        out.extend(
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&tag))
                .map(|n| format!("folder: {n}")),
        );
    }
    out
}
