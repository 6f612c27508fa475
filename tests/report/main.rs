//! Report tests through the `fsmeta` binary and the library: golden text
//! outputs, plot files (PNG and SVG, right size, well formed), statistics
//! against independently computed reference numbers, and the
//! `compare` / `validate` commands; `files`: the result files read back
//! through the typed model.

mod files;
mod golden;
mod plots;
mod stats;

use std::path::{Path, PathBuf};

#[path = "../common/bin.rs"]
mod bin;
use bin::fresh_dir;
pub use bin::{fsmeta, root};

/// A fresh temporary folder under target/.
pub fn temp_dir(name: &str) -> PathBuf {
    fresh_dir(&format!("report-{name}"))
}

/// The golden scenario's path, relative to the root.
pub const GOLDEN: &str = "tests/report/golden/scenario.toml";

/// Runs the golden scenario into `out` and returns the output folder.
pub fn run_golden(out: &Path) -> PathBuf {
    let o = fsmeta(&["run", GOLDEN, "--out", out.to_str().expect("utf-8 path"), "--silent", "--jobs", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out.join("golden")
}
