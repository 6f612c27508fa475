//! The typed scenario document: what a scenario file may contain, with
//! every default written down. Parsed with unknown keys denied.

use crate::machine::lock::LockKind;
use crate::machine::topology::{Placement, Topology};
use crate::kernel::sync::counter::CounterOp;
use crate::workload::btrfs_dir::BtrfsDirParams;
use crate::workload::xfs_alloc::XfsAllocParams;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A whole scenario file.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// `[scenario]`: name, seed, replications, stop condition, quick mode.
    pub scenario: ScenarioMeta,
    /// `[machine]`: profile, topology, placement.
    #[serde(default)]
    pub machine: MachineConfig,
    /// `[workload]`: which kind of study and how many threads.
    pub workload: WorkloadConfig,
    /// `[[path]]`: the steps each thread runs per operation (kind `path`).
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
    /// `[btrfs_dir]`: parameters of the btrfs directory script (kind `btrfs-dir`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub btrfs_dir: Option<BtrfsDirParams>,
    /// `[xfs_alloc]`: parameters of the XFS allocator study (kind `xfs-alloc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xfs_alloc: Option<XfsAllocParams>,
    /// `[[variant]]`: named overrides of any parameter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variant: Vec<toml::Table>,
    /// `[sweep]`: parameter path -> list of values; the grid is their product.
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub sweep: toml::Table,
    /// `[[plot]]`: plots to draw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plot: Vec<PlotConfig>,
    /// `[[expect]]`: checks on the results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<ExpectConfig>,
}

fn one() -> u32 {
    1
}

fn default_seed() -> u64 {
    1
}

/// `[scenario]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioMeta {
    /// Name of the study; also the output folder's name.
    pub name: String,
    /// One line on what the study shows.
    #[serde(default)]
    pub about: String,
    /// Master seed (default 1).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Runs per point and variant (default 1).
    #[serde(default = "one")]
    pub replications: u32,
    /// Stop a `path` run after this many operations (all threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<u64>,
    /// Stop a `path` run at this simulated time, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<f64>,
    /// Overrides applied by `--quick` (parameter path -> value; a
    /// `sweep.PATH` key replaces that sweep's list).
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub quick: toml::Table,
}

/// `[machine]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    /// A built-in profile name (`fsmeta machines` lists them) or a path to
    /// a profile TOML, relative to the scenario file. Default `ideal`.
    #[serde(default = "default_profile")]
    pub profile: String,
    /// Overrides the profile's topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// How threads are placed on CPUs (default `spread`).
    #[serde(default = "default_placement")]
    pub placement: Placement,
    /// Scheduler wake-up latency for a sleeping mutex waiter, ns (default 0).
    #[serde(default)]
    pub wakeup_ns: f64,
}

fn default_profile() -> String {
    "ideal".into()
}

fn default_placement() -> Placement {
    Placement::Spread
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            profile: default_profile(),
            topology: None,
            placement: default_placement(),
            wakeup_ns: 0.0,
        }
    }
}

/// Which kind of study a scenario runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// Threads running `[[path]]` on the modelled machine.
    Path,
    /// The btrfs directory script (`[btrfs_dir]`).
    BtrfsDir,
    /// XFS by-size allocations (`[xfs_alloc]`).
    XfsAlloc,
}

/// `[workload]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// The kind of study.
    pub kind: WorkloadKind,
    /// Number of threads (kind `path`), default 1.
    #[serde(default = "one")]
    pub threads: u32,
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

/// `[[plot]]`: a metric against a swept parameter, one series per variant
/// (or per value of another swept parameter).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlotConfig {
    /// File stem (default `<y>-vs-<x>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Swept parameter on the x axis.
    pub x: String,
    /// Metric on the y axis.
    pub y: String,
    /// `variant` (default) or a swept parameter path.
    #[serde(default = "default_series")]
    pub series: String,
    /// Only points whose swept parameters have these values.
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub at: toml::Table,
    /// Only these variants (default all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    /// Title (default from the metric and parameter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Axis labels with units (default: the names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_label: Option<String>,
    /// Y axis label with unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y_label: Option<String>,
    /// Logarithmic x axis.
    #[serde(default)]
    pub x_log: bool,
    /// Logarithmic y axis.
    #[serde(default)]
    pub y_log: bool,
}

fn default_series() -> String {
    "variant".into()
}

/// `[[expect]]`: a metric (or a ratio of a metric between two variants)
/// must lie within bounds at the selected points.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectConfig {
    /// The metric checked.
    pub metric: String,
    /// The variant checked (for a plain value; default: every variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Ratio of the metric: `of` variant over `over` variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<RatioConfig>,
    /// Only points whose swept parameters have these values.
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub at: toml::Table,
    /// Inclusive bounds `[lo, hi]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<[f64; 2]>,
    /// A reference value, with `tolerance_pct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// Allowed relative deviation from `target`, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance_pct: Option<f64>,
    /// Free text printed with the check (e.g. the published figure's source).
    #[serde(default)]
    pub note: String,
}

/// Variants of a ratio expectation.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RatioConfig {
    /// Numerator variant.
    pub of: String,
    /// Denominator variant.
    pub over: String,
}
