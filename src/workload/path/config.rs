//! The sections a `path` workload reads: `[[path]]` steps, `[lines.NAME]`,
//! `[locks.NAME]` and `[counters.NAME]`, parsed with unknown keys denied.

use crate::kernel::sync::counter::CounterOp;
use crate::machine::lock::LockKind;
use crate::param::ParamError;
use crate::workload::Sections;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything a `path` workload reads from a scenario, in the order it is
/// written back to `scenario.resolved.toml`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
pub struct PathSections {
    /// `[[path]]`: the steps each thread runs per operation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<StepConfig>,
    /// `[lines.NAME]`: optional notes on named shared cache lines.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lines: BTreeMap<String, LineConfig>,
    /// `[locks.NAME]`: named locks.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub locks: BTreeMap<String, LockConfig>,
    /// `[counters.NAME]`: named counters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, CounterConfig>,
}

impl PathSections {
    /// Reads the four sections (each may be absent).
    pub fn read(sections: &Sections<'_>) -> Result<Self, ParamError> {
        Ok(PathSections {
            path: sections.get("path")?,
            lines: sections.get("lines")?,
            locks: sections.get("locks")?,
            counters: sections.get("counters")?,
        })
    }
}

/// A duration distribution, in nanoseconds.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DistConfig {
    /// `fixed`, `exp`, `uniform`, `normal` or `lognormal`.
    pub dist: DistKind,
    /// Mean in ns (fixed, exp, normal, lognormal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ns: Option<f64>,
    /// Standard deviation in ns (normal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd_ns: Option<f64>,
    /// Lower bound in ns (uniform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ns: Option<f64>,
    /// Upper bound in ns (uniform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ns: Option<f64>,
    /// Shape sigma of the underlying normal (lognormal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<f64>,
}

/// Distribution families for `work` steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DistKind {
    /// Always `mean_ns`.
    Fixed,
    /// Exponential with mean `mean_ns`.
    Exp,
    /// Uniform on `[min_ns, max_ns]`.
    Uniform,
    /// Normal (`mean_ns`, `sd_ns`), clamped at 0.
    Normal,
    /// Log-normal with mean `mean_ns` and shape `sigma`.
    Lognormal,
}

/// One `[[path]]` step: exactly one of `work`, `read`, `write`, `atomic`,
/// `lock`, `unlock`, `counter`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    /// CPU work of this duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<DistConfig>,
    /// Read this line (`count` times; with `work`, spread over the work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    /// How many reads the step stands for (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Store to this line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
    /// Atomic read-modify-write of this line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic: Option<String>,
    /// Acquire this lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// Release this lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlock: Option<String>,
    /// Operate on this counter (with `op`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<String>,
    /// The counter operation: `inc`, `dec`, `sum`, `read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<CounterOp>,
}

/// `[lines.NAME]`: documentation of what shares a line.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LineConfig {
    /// The fields that live on this line (documentation only).
    #[serde(default)]
    pub fields: Vec<String>,
}

/// `[locks.NAME]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LockConfig {
    /// `ticket`, `queued` or `mutex`.
    pub kind: LockKind,
    /// The line holding the lock word (default: a line of its own, `NAME.word`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
}

/// Counter designs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CounterKindName {
    /// `atomic_t`.
    Atomic,
    /// `percpu_counter`.
    Percpu,
    /// Per-CPU deltas folding into per-socket counts, then the global one.
    Hierarchical,
}

/// `[counters.NAME]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CounterConfig {
    /// The design.
    pub kind: CounterKindName,
    /// Per-CPU fold threshold (default `max(32, 2 x CPUs)`, as
    /// `compute_batch_value` in lib/percpu_counter.c).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<i64>,
    /// Per-socket fold threshold for `hierarchical` (default `batch x
    /// CPUs per socket`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_batch: Option<i64>,
    /// Line holding the global count and its lock (default: its own line,
    /// named after the counter). Name another line to model false sharing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
}
