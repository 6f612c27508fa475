//! `fsmeta calibrate`'s parts that can be checked without timing: the
//! sysfs topology parser and the pair classifier on saved snapshots, the
//! plateau detector on synthetic latency curves, the profile written from
//! a synthetic calibration, and one real pointer chase checked against the
//! cache sizes sysfs reports (ratios of latencies only; nothing timed
//! against a clock). Modules:
//! - `sysfs`: snapshots in `data/` -> topology, classes, pairs, errors.
//! - `plateau`: step curves with smooth knees and noise.
//! - `profile`: derive + render -> a file `load_profile` accepts.
//! - `chase`: the real chase at L1d/4, 4x L1d and 4x L2.
//! - `affinity`: a ping-pong leaves the caller's CPU mask as it was.

mod affinity;
mod chase;
mod plateau;
mod profile;
mod sysfs;

use fsmeta::calibrate::sysfs::{HostTopology, Snapshot};

/// A saved sysfs snapshot from `data/`, parsed.
pub fn host(name: &str) -> HostTopology {
    let path = format!("{}/tests/calibrate/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    HostTopology::parse(&Snapshot::parse_text(&text).unwrap()).unwrap()
}
