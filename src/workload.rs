//! Workload generators: each turns a resolved scenario document into runs
//! of the simulator or of a functional model, and returns their metrics.

pub mod btrfs_dir;
pub mod path;
pub mod xfs_alloc;

use crate::scenario::config::{Document, WorkloadKind};
use crate::scenario::validate::FieldError;
use btrfs_dir::BtrfsDirParams;
use std::path::Path;
use xfs_alloc::XfsAllocParams;

/// The `[btrfs_dir]` section (defaults when absent).
pub fn btrfs_dir_params(doc: &Document) -> Result<BtrfsDirParams, FieldError> {
    Ok(doc.btrfs_dir.clone().unwrap_or_default())
}

/// The `[xfs_alloc]` section (defaults when absent).
pub fn xfs_alloc_params(doc: &Document) -> Result<XfsAllocParams, FieldError> {
    Ok(doc.xfs_alloc.clone().unwrap_or_default())
}

/// Names of the metrics a run of `doc` reports.
pub fn metric_names_of(doc: &Document, dir: &Path) -> Vec<String> {
    match doc.workload.kind {
        WorkloadKind::Path => path::metric_names(doc, dir),
        WorkloadKind::BtrfsDir => btrfs_dir::METRICS.iter().map(|s| s.to_string()).collect(),
        WorkloadKind::XfsAlloc => xfs_alloc::METRICS.iter().map(|s| s.to_string()).collect(),
    }
}

use crate::engine::Metrics;
use crate::engine::rng::RunKey;
use crate::kernel::ModelError;

/// Runs the btrfs directory script of `doc`.
pub fn run_btrfs_dir(doc: &Document, key: RunKey) -> Result<Metrics, ModelError> {
    let p = doc.btrfs_dir.clone().unwrap_or_default();
    btrfs_dir::run_btrfs_dir(&p, &mut key.stream("btrfs_dir"))
}

/// Runs the XFS allocation study of `doc`.
pub fn run_xfs_alloc(doc: &Document, dir: &Path, key: RunKey) -> Result<Metrics, ModelError> {
    let p = doc.xfs_alloc.clone().unwrap_or_default();
    xfs_alloc::run_xfs_alloc(&p, dir, &mut key.stream("xfs_alloc"))
}
