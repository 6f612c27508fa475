//! End-to-end tests through the `fsmeta` binary, one binary: `bad_input`
//! (located errors, exit 2), `bench` (what `fsmeta bench` prints),
//! `concurrent` (two runs into one `--out`), `determinism` (same bytes for any `--jobs`),
//! `integrity` (damaged shard files refused by merge, damaged cache
//! entries recomputed with a warning),
//! `hostile` (issue 33: sound tables, outputs checked before the work),
//! `kill` (a run killed at any instant leaves the old or the new outputs),
//! `labels` (issue 32: named sweep points in every output),
//! `machine` (the machine model through scenarios), `names` (names that
//! become file names, checked at load), `shards` (shard, merge
//! and the result cache), `theory` (M/M/1//N), `xfs_path` (issue 31: the
//! 6.x transaction path's shared steps per create and unlink).

mod bad_input;
mod bench;
mod compare;
mod concurrent;
mod crn;
mod determinism;
mod hostile;
mod indexed;
mod integrity;
mod kill;
mod lab_twin;
mod labels;
mod machine;
mod meaning;
mod names;
mod noop;
mod per_locks;
mod precision;
mod readme;
mod set;
mod shards;
mod smallprint;
mod start;
mod sweeps;
mod sync;
mod theory;
mod whatif;
mod xfs_path;

use std::path::{Path, PathBuf};

#[path = "../common/bin.rs"]
mod bin;
use bin::fresh_dir;
pub use bin::{fsmeta, root};

/// A fresh temporary folder under target/.
pub fn temp_dir(name: &str) -> PathBuf {
    fresh_dir(name)
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write scenario");
    p
}
