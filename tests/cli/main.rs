//! End-to-end tests through the `fsmeta` binary, one binary: `bad_input`
//! (located errors, exit 2), `determinism` (same bytes for any `--jobs`),
//! `kill` (a run killed at any instant leaves the old or the new outputs),
//! `machine` (the machine model through scenarios), `shards` (shard, merge
//! and the result cache), `theory` (M/M/1//N).

mod bad_input;
mod crn;
mod determinism;
mod kill;
mod machine;
mod meaning;
mod precision;
mod shards;
mod sweeps;
mod theory;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the fsmeta binary with `args` from the project root.
pub fn fsmeta(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fsmeta"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("fsmeta runs")
}

/// A fresh temporary folder under target/.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = root()
        .join("target")
        .join("test-out")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write scenario");
    p
}
