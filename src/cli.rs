//! Command-line interface: argument parsing, the progress bar, and what
//! each subcommand does. `main.rs` only maps the result to an exit code.

mod calibrate;
mod command;
mod compare;
mod fit;
mod implied;
pub(crate) mod io;
mod lab;
mod merge;
mod preflight;
mod run;
mod twin;
mod validate;

use clap::{Parser, ValueEnum};
use fsmeta::Study;
use fsmeta::report::ReportError;
use fsmeta::runner::RunError;
use fsmeta::scenario::{LoadOptions, ScenarioError};
use std::io::IsTerminal;
use std::path::PathBuf;

pub use command::{Command, Format};

/// fsmeta: a deterministic discrete-event simulator of Linux filesystem
/// metadata paths.
///
/// Exit codes: 0 success; 1 an [[expect]] check failed; 2 bad usage, a bad
/// scenario file, or an I/O error.
#[derive(Debug, Parser)]
#[command(name = "fsmeta", version, about, long_about = None, after_help = "Exit codes: 0 ok, 1 an expectation failed, 2 bad input or I/O error.\nErrors in a file are shown as rustc shows them on a terminal, as one line file:line:col: message otherwise (--error-format).\nExample: fsmeta run scenarios/queue-theory.toml --quick")]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// How located errors (a scenario file's line and column, a shard
    /// file's) are shown: `rich` as rustc shows them (the line with a
    /// caret under the span, the suggestion below), `plain` as one line
    /// `file:line:col: message` for scripts and editors; `auto` (the
    /// default) is rich, in colour, when stderr is a terminal, plain
    /// otherwise.
    #[arg(long, global = true, value_enum, default_value_t = ErrorFormat::Auto)]
    pub error_format: ErrorFormat,
}

/// `--error-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ErrorFormat {
    /// Rich on a terminal (in colour unless NO_COLOR is set), else plain.
    Auto,
    /// As rustc shows errors.
    Rich,
    /// One line, `file:line:col: message`.
    Plain,
}

impl ErrorFormat {
    /// The style this choice gives on this stderr.
    pub fn style(self) -> fsmeta::diagnostic::Style {
        use fsmeta::diagnostic::Style;
        match self {
            ErrorFormat::Plain => Style::Plain,
            ErrorFormat::Rich => Style::Rich,
            ErrorFormat::Auto if !std::io::stderr().is_terminal() => Style::Plain,
            ErrorFormat::Auto if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => Style::Rich,
            ErrorFormat::Auto => Style::RichColour,
        }
    }
}

impl CliError {
    /// A plain message (no place in a file), exit code 2.
    pub fn msg(m: impl std::fmt::Display) -> CliError {
        CliError::Other(anyhow::anyhow!("{m}"))
    }

    /// The error as a located diagnostic, when it has a place in a file.
    pub fn diagnostic(&self) -> Option<fsmeta::diagnostic::Diagnostic> {
        match self {
            CliError::Scenario(e) => e.diagnostic(),
            CliError::ShardFile(e) => e.diagnostic(),
            _ => None,
        }
    }
}

fn default_jobs(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Limits that refuse a scenario before it runs.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Limits {
    /// Refuse a scenario planning more runs than this.
    #[arg(long, default_value_t = fsmeta::scenario::DEFAULT_MAX_RUNS)]
    pub max_runs: u64,
    /// Memory budget in GiB for the runs in flight (default: half the RAM): a point whose one run is estimated to need more is refused; runs that would together need more wait for each other
    #[arg(long, value_name = "GIB")]
    pub max_memory: Option<f64>,
}

impl Default for Limits {
    /// The command line's defaults.
    fn default() -> Self {
        Limits {
            max_runs: fsmeta::scenario::DEFAULT_MAX_RUNS,
            max_memory: None,
        }
    }
}

impl Limits {
    /// Load options with these limits.
    fn options(self) -> LoadOptions {
        let d = LoadOptions::default();
        LoadOptions {
            max_runs: self.max_runs,
            max_memory_bytes: self
                .max_memory
                .map_or(d.max_memory_bytes, |g| (g.max(0.0) * (1u64 << 30) as f64) as u64),
            ..d
        }
    }
}

/// Errors of a CLI command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// A scenario is invalid (exit 2).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A run failed (exit 2).
    #[error(transparent)]
    Run(#[from] RunError),
    /// Outputs could not be written (exit 2).
    #[error(transparent)]
    Report(#[from] ReportError),
    /// Shards cannot be merged (exit 2).
    #[error(transparent)]
    Merge(#[from] fsmeta::study::MergeError),
    /// A shard file cannot be read or written (exit 2).
    #[error(transparent)]
    ShardFile(#[from] fsmeta::runner::shard::ShardFileError),
    /// Another fsmeta is writing the same output (exit 2).
    #[error(transparent)]
    Lock(#[from] fsmeta::report::write::LockError),
    /// The result cache cannot be opened (exit 2).
    #[error(transparent)]
    Cache(#[from] fsmeta::runner::cache::CacheError),
    /// The lab stopped (exit 2): a missing requirement, a failed step or
    /// safety check, an interrupt.
    #[error(transparent)]
    Lab(#[from] fsmeta::lab::LabError),
    /// A command could not run (exit 2).
    #[error("{0}")]
    Other(anyhow::Error),
}

/// What a command ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Everything went well.
    Ok,
    /// At least one expectation failed.
    ExpectationFailed,
}

/// Runs a parsed command.
pub fn execute(cli: Cli) -> Result<Status, CliError> {
    match cli.command {
        Command::Run {
            files,
            out,
            jobs,
            seed,
            quick,
            silent,
            format,
            shard,
            cache,
            sets,
            limits,
        } => {
            if shard.is_some() && !sets.is_empty() {
                return Err(CliError::Other(anyhow::anyhow!(
                    "--set cannot be combined with --shard: `fsmeta merge` rebuilds the study from the files alone"
                )));
            }
            let jobs = preflight::cap_jobs(jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())));
            let opts = LoadOptions {
                quick,
                seed,
                sets,
                ..limits.options()
            };
            let cache = cache.map(|d| fsmeta::runner::cache::RunCache::open(&d)).transpose()?;
            let how = run::How {
                jobs,
                silent,
                format,
                shard,
                cache: cache.as_ref(),
            };
            run::run_leaving_no_empty_out(&files, &out, &opts, &how)
        }
        Command::Merge { dirs, out, silent, limits } => merge::merge(&dirs, &out, &limits.options(), silent),
        Command::Compare {
            files,
            variants,
            jobs,
            seed,
            quick,
            out,
            sets,
            limits,
        } => compare::compare(&compare::CompareArgs {
            files,
            variants,
            jobs: default_jobs(jobs),
            seed,
            quick,
            out,
            sets,
            limits,
        }),
        Command::Validate {
            lab: Some(dir),
            jobs,
            doc,
            sets,
            limits,
            ..
        } => validate::validate_lab(&dir, doc.as_deref(), &sets, default_jobs(jobs), limits),
        Command::Validate {
            files,
            quick,
            jobs,
            doc,
            sets,
            limits,
            lab: None,
        } => validate::validate(&validate::ValidateArgs {
            files,
            quick,
            jobs: default_jobs(jobs),
            doc,
            sets,
            limits,
        }),
        Command::Check { files, sets, limits } => check(&files, sets, limits),
        Command::Bench {
            ops,
            completions,
            repeat,
            simpy,
        } => bench(ops, completions, repeat, simpy.as_deref()),
        Command::Keys { workload } => {
            let registry = fsmeta::workload::registry::REGISTRY;
            if let Some(k) = &workload {
                fsmeta::workload::registry::find(registry, k).map_err(|e| CliError::Other(anyhow::anyhow!("{e}")))?;
            }
            out!("{}", fsmeta::scenario::reference::reference(registry, workload.as_deref()));
            Ok(Status::Ok)
        }
        Command::Lab {
            experiment,
            out,
            runs,
            params,
            silent,
            pool,
            no_twin,
            sample_kernel,
        } => {
            if pool.is_empty() {
                lab::lab(&lab::LabArgs {
                    experiment: experiment.as_deref(),
                    out: &out,
                    runs,
                    params: &params,
                    silent,
                    twin: !no_twin,
                    sample_us: sample_kernel,
                })
            } else {
                lab::lab_pool(&pool, &out, silent)
            }
        }
        Command::Calibrate { out, repeat } => calibrate::calibrate(out.as_deref(), repeat as usize),
        Command::Fit {
            profile,
            out,
            implied: Some(dir),
            ..
        } => implied::implied_knobs(
            &implied::ImpliedArgs {
                profile: &profile,
                dir: &dir,
                out: &out,
            },
            default_jobs(None),
            Limits::default(),
        ),
        Command::Fit {
            profile,
            runs,
            statistic,
            out,
            implied: None,
            from,
        } => fit::fit(&fit::FitArgs {
            profile: &profile,
            runs,
            statistic,
            out: &out,
            from: from.as_deref(),
        }),
        Command::Machines => {
            for p in fsmeta::machine::builtin_profiles() {
                outln!("{}\n", p.describe());
            }
            Ok(Status::Ok)
        }
    }
}

/// `fsmeta check`: loads every file at full scale and quick, validating
/// every point.
fn check(files: &[PathBuf], sets: Vec<(String, toml::Value)>, limits: Limits) -> Result<Status, CliError> {
    // Every point is validated, one at a time: memory does not
    // grow with the number of points.
    let opts = LoadOptions {
        check_only: true,
        sets,
        ..limits.options()
    };
    for f in files {
        let study = Study::load(f, &opts)?;
        Study::load(
            f,
            &LoadOptions {
                quick: true,
                ..opts.clone()
            },
        )?;
        let s = &study.scenario;
        outln!(
            "{}: ok ({} points x {} variants, {} runs)",
            f.display(),
            s.point_count,
            s.variants.len(),
            s.run_count
        );
    }
    Ok(Status::Ok)
}

/// `fsmeta bench`: the engine's figures, printed as `name: value` lines.
fn bench(ops: u64, completions: u64, repeat: u32, simpy: Option<&str>) -> Result<Status, CliError> {
    if simpy.is_some() && completions == 0 {
        return Err(CliError::Other(anyhow::anyhow!(
            "--simpy compares M/M/1//N runs: it needs --completions above 0"
        )));
    }
    let r = crate::bench::engine_bench(ops, completions, repeat, simpy).map_err(CliError::Other)?;
    outln!("repeat: {}", r.repeat);
    if completions > 0 {
        outln!("mm1n_bare_heap_completions_per_sec: {}", r.mm1n_bare_heap as u64);
        outln!("mm1n_fsmeta_completions_per_sec: {}", r.mm1n_fsmeta as u64);
        outln!("mm1n_ratio: {:.3}", r.mm1n_ratio);
        outln!("mm1n_ratio_same_sampler: {:.3}", r.mm1n_ratio_same_sampler);
    }
    if let (Some(rate), Some(ratio)) = (r.mm1n_simpy, r.mm1n_simpy_ratio) {
        outln!("mm1n_simpy_completions_per_sec: {}", rate as u64);
        outln!("mm1n_simpy_ratio: {:.1}", ratio);
    }
    outln!("cache_accesses_per_sec: {}", r.cache_accesses_per_sec as u64);
    outln!("events: {}", r.events);
    outln!("cpu_s: {:.3}", r.cpu_s);
    outln!("events_per_sec_best: {}", r.events_per_sec_best);
    outln!("events_per_sec: {}", r.events_per_sec);
    Ok(Status::Ok)
}

impl Status {
    /// The worse of two statuses.
    pub fn and(self, other: Status) -> Status {
        if self == Status::Ok { other } else { self }
    }
}

/// Prints an outcome (unless `silent`) and returns its status.
pub(crate) fn report(outcome: &fsmeta::report::Outcome, name: &str, silent: bool, format: Format) -> Status {
    if !silent {
        for w in &outcome.warnings {
            errln!("fsmeta: {name}: warning: {w}");
        }
        match format {
            Format::Text => outln!("{}", outcome.text),
            Format::Patch => outln!("{}", outcome.patch),
        }
        outln!("outputs: {}", outcome.dir.display());
    }
    if outcome.passed() { Status::Ok } else { Status::ExpectationFailed }
}

/// `--set PATH=VALUE`: VALUE read as a TOML value (`5.2`, `true`,
/// `[1, 2]`, `"text"`), else taken as a string (`machines/mine.toml`).
fn set_arg(v: &str) -> Result<(String, toml::Value), String> {
    let Some((path, value)) = v.split_once('=') else {
        return Err(format!("`{v}`: expected PATH=VALUE, e.g. machine.profile=machines/mine.toml"));
    };
    let (path, value) = (path.trim(), value.trim());
    if path.is_empty() {
        return Err(format!("`{v}`: the parameter path before `=` is empty"));
    }
    let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    Ok((path.to_string(), parsed))
}

/// `--completions`: 0, or at least 10,000 (a shorter run is too short to
/// time).
fn completions_arg(v: &str) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(n) if n == 0 || n >= 10_000 => Ok(n),
        Ok(n) => Err(format!("{n} completions are too few to time: give 0 (skip) or at least 10000")),
        Err(e) => Err(format!("not a count: {e}")),
    }
}
