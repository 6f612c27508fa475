//! The one map from a `workload.kind` string to its implementation.

use super::Workload;
use crate::param::ParamError;
use crate::text::closest;

/// Every built-in workload. Adding a workload = one line here.
pub static REGISTRY: &[&dyn Workload] = &[
    &super::path::PathWorkload,
    &super::btrfs_dir::BtrfsDir,
    &super::xfs_alloc::XfsAlloc,
    &super::fsmark::Fsmark,
];

/// The workload called `kind` in `registry`, or an error naming the kinds
/// there are and the closest one.
pub fn find<'r>(registry: &[&'r dyn Workload], kind: &str) -> Result<&'r dyn Workload, ParamError> {
    registry.iter().copied().find(|w| w.kind() == kind).ok_or_else(|| {
        let kinds: Vec<&str> = registry.iter().map(|w| w.kind()).collect();
        ParamError::new(
            "workload.kind",
            format!("no workload kind `{kind}`; kinds are: {}", kinds.join(", ")),
        )
        .suggest(closest(kind, kinds.iter().copied()))
    })
}

/// The workload in `registry` that reads top-level section `name`, if any.
pub fn owner_of<'r>(registry: &[&'r dyn Workload], name: &str) -> Option<&'r dyn Workload> {
    registry.iter().copied().find(|w| w.sections().contains(&name))
}
