//! The typed scenario document: the sections every scenario shares
//! (`[scenario]`, `[machine]`, `[workload]`, `[[variant]]`, `[sweep]`,
//! `[[plot]]`, `[[expect]]`), with every default written down and unknown
//! keys denied. A workload's own sections (`[[path]]`, `[btrfs_dir]`, ...)
//! are kept aside as a table and read by the workload through its contract.

pub use crate::machine::MachineConfig;
use serde::{Deserialize, Serialize};

/// The shared sections of a scenario file.
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
    /// `[[variant]]`: named overrides of any parameter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variant: Vec<toml::Table>,
    /// `[sweep]`: parameter path -> list of values (or `{ values, labels }`),
    /// and `zip`, the `[[sweep.zip]]` groups; the grid is their product
    /// (read by [`super::sweep::axes`]).
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub sweep: toml::Table,
    /// `[[plot]]`: plots to draw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plot: Vec<PlotConfig>,
    /// `[[expect]]`: checks on the results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<ExpectConfig>,
}

/// The top-level keys of [`Document`].
pub const SHARED_SECTIONS: &[&str] = &["scenario", "machine", "workload", "variant", "sweep", "plot", "expect"];

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
    /// `sweep.PATH` key replaces that sweep's list, keeping the labels of
    /// its values).
    /// `quick = {}` says the full scale is already quick enough (no warning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quick: Option<toml::Table>,
}

/// `[workload]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// The kind of study: a name in the workload registry (`path`,
    /// `btrfs-dir`, `xfs-alloc`, ...).
    pub kind: String,
    /// Number of threads (kind `path`), default 1.
    #[serde(default)]
    pub threads: crate::machine::Threads,
}

/// `[[plot]]`: a metric against a swept parameter, one series per variant
/// (or per value of another swept parameter); or, by `kind`, grouped bars,
/// a heat map over two swept parameters, or the busiest lines and locks.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlotConfig {
    /// `line` (default), `bars` (variants side by side at each x),
    /// `heatmap` (`metric` over swept `x` and `y`), `utilisation` (the
    /// busiest lines and locks per variant, workload `path`) or
    /// `histogram` (a log2-bucket step axis such as `insert_hist`, one
    /// series of bars per variant, side by side in each bucket).
    #[serde(default = "default_kind", skip_serializing_if = "is_line")]
    pub kind: String,
    /// File stem (default `<y>-vs-<x>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Swept parameter on the x axis, or a step axis the workload reports
    /// along (`phase`, `insert_hist`; see its metrics); not for
    /// `utilisation`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub x: String,
    /// Metric on the y axis (on a step axis: the value reported at each
    /// step, e.g. `batches_per_flush`; for `histogram`, default the
    /// axis's first value); for `heatmap`, the swept parameter on the y
    /// axis.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub y: String,
    /// `heatmap` only: the metric whose mean colours each cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// `heatmap` only: colour the ratio of `metric`, `of` over `over`,
    /// instead of one map per variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<RatioConfig>,
    /// `utilisation` only: how many resources to show (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<usize>,
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
    /// The x axis transform: `linear`, `log` (as `x_log`) or `log1m`,
    /// `1 - x` on a log axis, for levels near 1 (0.99, 0.999, 0.9999).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_scale: Option<String>,
    /// Logarithmic y axis.
    #[serde(default)]
    pub y_log: bool,
    /// `histogram` only: bars show each variant's share of its samples
    /// (%) instead of counts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub share: bool,
    /// Reference marks: published figures drawn as distinct markers beside
    /// the simulated ones (`line`, `bars`), or as vertical lines at
    /// `value` on the bucketed axis (`histogram`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<MarkConfig>,
}

impl PlotConfig {
    /// The file stem its `.svg` and `.png` are written under: `name` (a
    /// file name, checked at load), or one made from its kind and axes,
    /// with `/`, `\\` and spaces made `_`.
    pub fn file_stem(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| match self.kind.as_str() {
                "utilisation" => "utilisation".into(),
                "histogram" => format!("{}-histogram", self.x),
                "heatmap" => format!("{}-by-{}-and-{}", self.metric.as_deref().unwrap_or("metric"), self.x, self.y),
                _ => format!("{}-vs-{}", self.y, self.x),
            })
            .replace(['/', '\\', ' '], "_")
    }
}

/// One reference mark of a `[[plot]]`: a published figure at a point.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MarkConfig {
    /// The point: swept parameter (or step axis) -> value; must give the
    /// plot's `x` (not for `histogram`).
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub at: toml::Table,
    /// The variant (series) it belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The figure, in the metric's unit (`histogram`: in the bucketed
    /// axis's unit, e.g. ns).
    pub value: f64,
    /// Legend text for the mark (default `published`).
    #[serde(default = "default_mark_label")]
    pub label: String,
}

fn default_kind() -> String {
    "line".into()
}

fn is_line(kind: &str) -> bool {
    kind == "line"
}

fn default_mark_label() -> String {
    "published".into()
}

/// The values `[[plot]] kind` accepts.
pub const PLOT_KINDS: &[&str] = &["line", "bars", "heatmap", "utilisation", "histogram"];

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
    pub within: Option<Vec<f64>>,
    /// A reference value, with `tolerance_pct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// Allowed relative deviation from `target`, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance_pct: Option<f64>,
    /// Free text printed with the check (e.g. the published figure's source).
    #[serde(default)]
    pub note: String,
    /// `fitted` (a knob was fitted on this figure) or `predicted` (the
    /// default): how `fsmeta validate` labels the figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Why the model cannot reach this figure with physical values: the
    /// check is reported as a known gap (with its actual value), never as a
    /// pass, and does not fail the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_gap: Option<String>,
    /// The machine profile of the host the figure was measured on, as
    /// `[machine] profile` names one (a built-in name, or a file relative
    /// to the scenario): a lab time belongs to its host. A run priced on
    /// another profile (`--set machine.profile=...`) reports the check as
    /// not applicable, neither passed nor failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_on: Option<String>,
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
