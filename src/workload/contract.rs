//! The workload contract: what every kind of study (`path`, `btrfs-dir`,
//! `xfs-alloc`, ...) implements once, and nothing else needs to know about
//! a kind. A [`Workload`] names the top-level sections it reads, parses
//! and validates them into a [`Prepared`] study for one run point, which
//! declares its metrics (name, unit, meaning) and runs with a [`RunKey`].

use super::sections::Sections;
use crate::engine::Metrics;
use crate::engine::rng::RunKey;
use crate::machine::{MachineCache, MachineConfig};
use crate::param::ParamError;
use std::fmt;
use std::path::Path;

/// One metric a workload reports: declared once, used to validate
/// `[[expect]]` and `[[plot]]`, to document (`fsmeta keys`) and to fill
/// results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricSpec {
    /// Name as it appears in outputs, e.g. `ops_per_sec` or
    /// `xfs_mount_hot.utilisation`.
    pub name: String,
    /// Unit in plain words (`ops/s`, `ns`, `count`, `fraction`).
    pub unit: &'static str,
    /// One line on what it measures.
    pub meaning: String,
}

impl MetricSpec {
    /// A metric with a fixed name.
    pub fn new(name: &str, unit: &'static str, meaning: &str) -> Self {
        MetricSpec {
            name: name.to_string(),
            unit,
            meaning: meaning.to_string(),
        }
    }
}

/// An axis a workload reports along besides the swept parameters: the
/// log2 buckets of a latency histogram, the phases of a script. At each
/// step it reports every one of `values`, as the metric
/// `<name>.<step key>.<value>` (see [`StepAxis::metric`]); a `[[plot]]`
/// may name the axis as its `x`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepAxis {
    /// Name used in metric names and as a plot's `x`, e.g. `insert_hist`.
    pub name: &'static str,
    /// Axis label with its unit, e.g. `insert latency (ns, log2 buckets)`.
    pub label: &'static str,
    /// What the steps are.
    pub scale: StepScale,
    /// The steps in order: (key in metric names, label on the axis).
    pub steps: Vec<(String, String)>,
    /// What is reported at each step (name, unit, meaning).
    pub values: Vec<MetricSpec>,
}

/// What the steps of a [`StepAxis`] are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepScale {
    /// Step `k` is the bucket `[2^k, 2^(k+1))` of this unit (`ns`); its
    /// values are counts of samples in the bucket: a histogram.
    Log2 {
        /// Unit of the bucketed quantity.
        unit: &'static str,
    },
    /// Named steps in order (phases of a script).
    Named,
}

impl StepAxis {
    /// The metric holding `value` at step `key`.
    pub fn metric(&self, key: &str, value: &str) -> String {
        format!("{}.{key}.{value}", self.name)
    }

    /// Every metric of the axis, declared (for [`Prepared::metrics`]).
    pub fn metric_specs(&self) -> Vec<MetricSpec> {
        let mut m = Vec::new();
        for (key, label) in &self.steps {
            for v in &self.values {
                m.push(MetricSpec {
                    name: self.metric(key, &v.name),
                    unit: v.unit,
                    meaning: format!("{} ({label})", v.meaning),
                });
            }
        }
        m
    }

    /// The documented form of its metrics, with a placeholder for the
    /// step (for [`Workload::metric_docs`]).
    pub fn metric_docs(&self, placeholder: &str) -> Vec<MetricSpec> {
        let steps: Vec<&str> = self.steps.iter().map(|s| s.0.as_str()).collect();
        let shown = if steps.len() > 6 {
            format!("{} .. {}", steps[0], steps[steps.len() - 1])
        } else {
            steps.join(", ")
        };
        self.values
            .iter()
            .map(|v| MetricSpec {
                name: self.metric(placeholder, &v.name),
                unit: v.unit,
                meaning: format!("{}; {placeholder} is one of {shown}", v.meaning),
            })
            .collect()
    }
}

/// One parameter a scenario may set, for `fsmeta keys` and
/// `docs/scenario-reference.md`. The default is not written here: the
/// reference takes it from the workload's own defaults, so it cannot drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// Dotted path, e.g. `btrfs_dir.files` (`NAME` for a user-chosen name).
    pub path: &'static str,
    /// The type in plain words (`a whole number`, `a time in ns`, ...).
    pub kind: &'static str,
    /// Allowed values in plain words (`1 to 50,000,000`).
    pub range: &'static str,
    /// One line on what it sets.
    pub meaning: &'static str,
}

/// A [`ParamSpec`], in a form short enough for tables of them.
pub const fn param(path: &'static str, kind: &'static str, range: &'static str, meaning: &'static str) -> ParamSpec {
    ParamSpec {
        path,
        kind,
        range,
        meaning,
    }
}

/// Stop condition of a time-driven run (`[scenario] ops` / `time_ms`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StopConfig {
    /// Stop after this many operations (all threads).
    pub ops: Option<u64>,
    /// Stop at this simulated time, in ms.
    pub time_ms: Option<f64>,
}

/// What a workload is prepared from: its sections of the resolved document
/// plus the common settings.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The document's sections (the workload reads only its own).
    pub sections: Sections<'a>,
    /// `[machine]`.
    pub machine: &'a MachineConfig,
    /// Machines already built for this scenario (shared between points).
    pub machines: &'a MachineCache,
    /// `workload.threads`.
    pub threads: crate::machine::Threads,
    /// `[scenario]` stop condition.
    pub stop: StopConfig,
    /// The scenario's folder: relative data-file paths resolve from here.
    pub dir: &'a Path,
}

/// Why a run failed after its parameters were accepted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunFailure {
    /// A model rejected its input or an input file (e.g. freesp text).
    #[error(transparent)]
    Model(#[from] crate::kernel::ModelError),
    /// The simulator stopped on an internal inconsistency.
    #[error(transparent)]
    Sim(#[from] super::path::sim::SimError),
}

impl RunFailure {
    /// The scenario key a failure comes from, when one does (so the
    /// runner can locate it in the file): a clock overflow from the
    /// number of operations, a work draw beyond the clock from its step.
    pub fn key(&self) -> Option<String> {
        use super::path::sim::SimError;
        match self {
            RunFailure::Sim(SimError::TimeOverflow(_)) => Some("scenario.ops".into()),
            RunFailure::Sim(SimError::DurationOutOfRange { step }) => Some(format!("path[{step}]")),
            _ => None,
        }
    }
}

/// A kind of study.
pub trait Workload: Sync + fmt::Debug {
    /// The `workload.kind` string, e.g. `btrfs-dir`.
    fn kind(&self) -> &'static str;
    /// One line on what it models.
    fn about(&self) -> &'static str;
    /// The top-level sections it reads (e.g. `["btrfs_dir"]`).
    fn sections(&self) -> &'static [&'static str];
    /// The shared parameters it reads among `machine` (the whole section),
    /// `machine.profile` (the profile alone), `workload.threads`,
    /// `scenario.ops` and `scenario.time_ms`; setting one it does not read
    /// is an error. Default: none.
    fn reads_shared(&self) -> &'static [&'static str] {
        &[]
    }
    /// Every parameter of its sections (for the reference).
    fn params(&self) -> Vec<ParamSpec> {
        Vec::new()
    }
    /// Its metrics as documented in the reference (names may hold a
    /// placeholder such as `LINE.`).
    fn metric_docs(&self) -> Vec<MetricSpec> {
        Vec::new()
    }
    /// Its sections with every default filled, as TOML text (empty when
    /// the document has none), for `scenario.resolved.toml`.
    fn resolved_toml(&self, sections: &Sections<'_>) -> Result<String, ParamError>;
    /// What [`Workload::resolved_toml`]'s text parses to. Default: the
    /// text, parsed; a workload may build the table directly (faster, for
    /// a check of many points).
    fn resolved_table(&self, sections: &Sections<'_>) -> Result<toml::Table, ParamError> {
        let text = self.resolved_toml(sections)?;
        toml::from_str(&text).map_err(|e| ParamError::new(self.kind(), format!("the resolved document does not read back: {e}")))
    }
    /// Parses and validates its sections for one run point.
    fn prepare(&self, input: &Input<'_>) -> Result<Box<dyn Prepared>, ParamError>;
}

/// A workload ready to run at one point: parameters parsed and validated,
/// shared structures (machine, data files) built once.
pub trait Prepared: Send + Sync + fmt::Debug {
    /// Every metric a run reports.
    fn metrics(&self) -> Vec<MetricSpec>;
    /// Every metric a run would report priced on `profile` instead (a
    /// host's figures, `expect[].measured_on`, may name metrics only some
    /// profiles give). Default: [`Prepared::metrics`].
    fn metrics_on(&self, profile: &crate::machine::MachineProfile) -> Vec<MetricSpec> {
        let _ = profile;
        self.metrics()
    }
    /// The metrics the printed report shows, in order.
    fn key_metrics(&self) -> &'static [&'static str];
    /// Estimated peak memory of one run, in bytes (0 when negligible). The
    /// scenario layer refuses a point whose estimate exceeds the memory
    /// budget (`--max-memory`), so the estimate must be an upper bound.
    fn memory_bytes(&self) -> u64 {
        0
    }
    /// The expected CPU cost of one run, in any unit the workload keeps
    /// the same over its points (larger is longer), or 1 when all its
    /// runs cost about the same. Only the order in which runs start
    /// follows it (longest first, so that no worker is left with one long
    /// run at the end); no output depends on it.
    fn work_estimate(&self) -> f64 {
        1.0
    }
    /// The step axes its metrics are reported along (histogram buckets,
    /// script phases), each also listed in [`Prepared::metrics`]. Default:
    /// none.
    fn step_axes(&self) -> Vec<StepAxis> {
        Vec::new()
    }
    /// Its sections as read for this point, as the table
    /// [`Workload::resolved_table`] gives for them, when it keeps them
    /// (saves reading them twice in a check of many points). Default:
    /// `None`.
    fn resolved_sections(&self) -> Option<Result<toml::Table, ParamError>> {
        None
    }
    /// Runs once with the random streams of `key`.
    fn run(&self, key: RunKey) -> Result<Metrics, RunFailure>;

    /// What this point builds, for a workload whose model is derived from
    /// parameters that several values map onto (a fragmentation level
    /// rounds to a whole number of extents): two points of one variant
    /// with the same key build the same model, and the report warns that
    /// their differences are only random numbers. `None`: not known.
    fn model_key(&self) -> Option<String> {
        None
    }
    /// A text report of one run in the workload's own shape (written as
    /// `<variant>[.pN].txt` for the first replication of each point and
    /// variant), or `None`. Default: none.
    fn text_outputs(&self, _metrics: &Metrics) -> Option<String> {
        None
    }
}
