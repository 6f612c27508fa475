//! Helpers shared by the test binaries that drive the `fsmeta` executable
//! (included with `#[path]`: each test binary is its own crate).

use std::path::PathBuf;
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

/// A fresh, empty folder `<name>-<pid>` under Cargo's temporary folder
/// for integration tests (`CARGO_TARGET_TMPDIR`, inside the target
/// directory wherever `CARGO_TARGET_DIR` puts it): tests never write into
/// the source tree.
pub fn fresh_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}
