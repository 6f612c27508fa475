//! Report tests through the `fsmeta` binary and the library: golden text
//! outputs, plot files (PNG and SVG, right size, well formed), statistics
//! against independently computed reference numbers, and the
//! `compare` / `validate` commands.

mod golden;
mod plots;
mod stats;

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
        .join(format!("report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The golden scenario's path, relative to the root.
pub const GOLDEN: &str = "tests/report/golden/scenario.toml";

/// Runs the golden scenario into `out` and returns the output folder.
pub fn run_golden(out: &Path) -> PathBuf {
    let o = fsmeta(&["run", GOLDEN, "--out", out.to_str().expect("utf-8 path"), "--silent", "--jobs", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out.join("golden")
}
