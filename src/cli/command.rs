//! The command line's subcommands and their options (clap's derive):
//! what each takes, its defaults and help; `super::execute` runs them.

use super::{Limits, completions_arg, fit, set_arg};
use clap::{Subcommand, ValueEnum};
use std::path::PathBuf;

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios and write CSV, JSON, plots and a report.
    Run {
        /// Scenario files (TOML).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output folder; each scenario writes to OUT/<name>/.
        #[arg(long, default_value = "plots")]
        out: PathBuf,
        /// Parallel runs (default: all cores). Results do not depend on it.
        #[arg(long)]
        jobs: Option<usize>,
        /// Replace each scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Reduced scale declared by the scenario ([scenario.quick]), for CI.
        #[arg(long)]
        quick: bool,
        /// Do not print the report or progress (files are still written).
        #[arg(long)]
        silent: bool,
        /// What to print: the report, or before / after tables for a patch
        /// description (both are written as report.txt and patch.txt).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Run only slice K of N of each scenario's runs (every N-th run,
        /// from the K-th) and write them to OUT/<name>.shard-K-of-N.runs
        /// for `fsmeta merge`; no report.
        #[arg(long, value_name = "K/N")]
        shard: Option<fsmeta::plan::Shard>,
        /// Result cache: runs found in DIR are read instead of computed,
        /// computed runs are stored there (keyed by the resolved
        /// configuration, the run's seed and the fsmeta build).
        #[arg(long, value_name = "DIR")]
        cache: Option<PathBuf>,
        /// Set a parameter of every scenario, PATH=VALUE (repeatable), as
        /// if written in the file: e.g. `--set machine.profile=machines/mine.toml`
        /// or `--set xfs_alloc.work_scale=5.2`. VALUE is a TOML value, else a
        /// string. Checked as the file's keys are; a path a sweep or a
        /// variant sets is refused.
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = set_arg)]
        sets: Vec<(String, toml::Value)>,
        #[command(flatten)]
        limits: Limits,
    },
    /// Run two scenarios (before, after), or two variants of one with
    /// --variants, with the same random numbers, and print before / after
    /// tables with paired differences, CIs and Welch's p-values.
    Compare {
        /// One scenario (with --variants) or two: before, then after.
        #[arg(required = true, num_args = 1..=2)]
        files: Vec<PathBuf>,
        /// Two variants of one file: BEFORE,AFTER.
        #[arg(long, value_delimiter = ',')]
        variants: Vec<String>,
        /// Parallel runs (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Seed for both sides (default: the first file's).
        #[arg(long)]
        seed: Option<u64>,
        /// Reduced scale declared by the scenarios.
        #[arg(long)]
        quick: bool,
        /// Also write OUT/<before>-vs-<after>/: compare.csv (means, paired
        /// differences and ratios with CIs), compare.txt and ratios.svg/png.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Set a parameter on both sides, PATH=VALUE (repeatable), as
        /// `fsmeta run --set` does (e.g. the machine both run on).
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = set_arg)]
        sets: Vec<(String, toml::Value)>,
        #[command(flatten)]
        limits: Limits,
    },
    /// Run every case scenario (or FILES) and print one row per published
    /// figure: published, simulated with CI, fitted or predicted, verdict;
    /// written to docs/validation.md (with --quick only if --doc is given).
    Validate {
        /// Scenario files (default: the four case scenarios that exist).
        files: Vec<PathBuf>,
        /// Reduced scale declared by the scenarios.
        #[arg(long)]
        quick: bool,
        /// Parallel runs (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Write the Markdown table here (default docs/validation.md; with
        /// --lab, docs/lab.md).
        #[arg(long)]
        doc: Option<PathBuf>,
        /// Instead of the cases: every lab run in DIR (DIR/lab-NAME/, from
        /// `fsmeta lab`) beside a fresh run of its twin
        /// scenarios/lab/NAME.toml, written to docs/lab.md (the sections of experiments DIR has no run of are kept).
        #[arg(long, value_name = "DIR")]
        lab: Option<PathBuf>,
        /// Set a parameter of every scenario (each case, or each twin with
        /// --lab), PATH=VALUE (repeatable), as `run --set` does: e.g.
        /// `--set machine.profile=machines/mine.toml` (for a twin, instead
        /// of the profile of the lab's host). The table is then written
        /// only where --doc says.
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = set_arg)]
        sets: Vec<(String, toml::Value)>,
        #[command(flatten)]
        limits: Limits,
    },
    /// Join the shard files (*.runs) that `run --shard K/N` wrote in the
    /// given folders into the outputs one unsharded run writes.
    Merge {
        /// Folders (or files) holding shard files.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output folder; each scenario writes to OUT/<name>/.
        #[arg(long, default_value = "plots")]
        out: PathBuf,
        /// Do not print the report (files are still written).
        #[arg(long)]
        silent: bool,
        #[command(flatten)]
        limits: Limits,
    },
    /// Validate scenarios (every point, variant and data file) without
    /// running them.
    Check {
        /// Scenario files (TOML).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Set a parameter of every scenario, PATH=VALUE (repeatable), as
        /// `fsmeta run --set` does: checks the values before a long run.
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = set_arg)]
        sets: Vec<(String, toml::Value)>,
        #[command(flatten)]
        limits: Limits,
    },
    /// Measure the engine's speed (thread CPU time, median of --repeat
    /// runs): events per second on a fixed path, and M/M/1//N through
    /// fsmeta next to a bare-heap loop (their ratio, and how fast this
    /// machine is), and the cache model's accesses per second on case 2's
    /// access pattern. The last line is `events_per_sec: <integer>`.
    Bench {
        /// Operations of the fixed path per run (at least 10,000: a
        /// shorter run is too short to time).
        #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(10_000..))]
        ops: u64,
        /// M/M/1//N completions per run (0 skips the comparison; else at
        /// least 10,000).
        #[arg(long, default_value_t = 200_000, value_parser = completions_arg)]
        completions: u64,
        /// Runs of each kind; the medians are reported (many short runs
        /// resist a shared machine's slow phases better than a few long
        /// ones).
        #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u32).range(1..=1000))]
        repeat: u32,
        /// Also run M/M/1//N in SimPy (benches/simpy_mm1n.py) under this
        /// Python interpreter, in turns with fsmeta's run, and print the
        /// ratio (issue 35's "vs SimPy"); the interpreter needs the
        /// `simpy` package.
        #[arg(long, value_name = "PYTHON")]
        simpy: Option<String>,
    },
    /// Run an experiment on the live kernel (root; XFS and btrfs on loop
    /// devices made from image files; tracepoints in a private tracefs
    /// instance) and write the same summary.csv as its simulated twin
    /// scenarios/lab/EXPERIMENT.toml, plus lab.txt. Without EXPERIMENT,
    /// list the experiments and their parameters.
    #[command(
        after_help = "Experiments: xfs-handles, xfs-alloc, btrfs-layout, btrfs-delayed, xfs-create-scaling.\nExample: sudo fsmeta lab btrfs-delayed --runs 5\nwrites plots/lab-btrfs-delayed/, then runs the twin scenarios/lab/btrfs-delayed.toml into plots/btrfs-delayed/ and prints live beside twin.\nA twin with work_scale = \"host\" is priced for this host when scenarios/machines/ has its profile (fsmeta calibrate) with its knob fitted; otherwise a warning says its times are another host's."
    )]
    Lab {
        /// The experiment (see `fsmeta lab` for the list).
        experiment: Option<String>,
        /// Output folder; the experiment writes OUT/lab-EXPERIMENT/.
        #[arg(long, default_value = "plots")]
        out: PathBuf,
        /// Repetitions, each on a fresh filesystem (medians and ranges in
        /// report.txt, means and CIs in summary.csv).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
        runs: u32,
        /// An experiment parameter, NAME=VALUE (repeatable).
        #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// Do not print the report, progress or the table beside the twin
        /// (files are still written; the one line naming the profile the
        /// twin was priced on, and warnings, still go to stderr).
        #[arg(long)]
        silent: bool,
        /// Instead of running: join earlier runs of one experiment and
        /// setup (each DIR a lab-NAME folder `fsmeta lab` wrote; two or
        /// more) into OUT/lab-NAME/, one set over all their runs.
        #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with_all = ["experiment", "runs", "params"])]
        pool: Vec<PathBuf>,
        /// Do not run the twin after the live runs. By default the twin
        /// (scenarios/lab/TWIN.toml) runs into OUT/TWIN/ and its table is
        /// printed beside the live one, priced for this host when
        /// scenarios/machines/ holds a profile `fsmeta calibrate` measured
        /// on this CPU with its knob fitted ([knob] in the profile).
        #[arg(long, conflicts_with = "pool")]
        no_twin: bool,
        /// Also sample every CPU's kernel stack once per US microseconds
        /// (`--sample-kernel=US`; 50 without a value) of its time while
        /// the runs go on (`perf record -e cpu-clock
        /// -a -g`; needs `perf`), and write where the kernel's time went,
        /// per function and below the experiment's own functions, to
        /// kernel-samples.csv and kernel-samples.txt. The runs' times
        /// then include the sampling's interrupts.
        #[arg(long, value_name = "US", num_args = 0..=1, require_equals = true, default_missing_value = "50", conflicts_with = "pool",
              value_parser = clap::value_parser!(u32).range(i64::from(fsmeta::lab::sample::PERIOD_RANGE_US.0)..=i64::from(fsmeta::lab::sample::PERIOD_RANGE_US.1)))]
        sample_kernel: Option<u32>,
    },
    /// Measure this host with microbenchmarks (cache-line transfers
    /// between pinned CPUs, atomics, load latency by pointer chase) and
    /// write a machine profile, each value with its method and spread.
    Calibrate {
        /// Write the profile here (its name is the file stem), e.g.
        /// scenarios/machines/NAME.toml; without it, print it.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Samples per measurement (medians and p10-p90 spreads are over
        /// them).
        #[arg(long, default_value_t = fsmeta::calibrate::DEFAULT_REPEAT as u32, value_parser = clap::value_parser!(u32).range(3..=1000))]
        repeat: u32,
    },
    /// Fit a measured host's one knob (work_scale) on its one named
    /// figure and write it into the profile as [knob]: the live `le`
    /// allocation at 10^5 extents (fsmeta lab xfs-alloc -p
    /// extents=100000; root), solved on its twin priced by PROFILE. Every
    /// other time on the host is then a prediction.
    #[command(
        after_help = "Example: sudo fsmeta calibrate --out scenarios/machines/myhost.toml && sudo fsmeta fit scenarios/machines/myhost.toml --runs 9\nThen fsmeta lab EXPERIMENT prices its twin on this host's profile and knob. Run from the repository's folder, the machine's other work stopped."
    )]
    Fit {
        /// The profile `fsmeta calibrate` measured on this host; its
        /// [knob] is written (replaced if there is one).
        profile: PathBuf,
        /// Live runs of the figure, each on a fresh filesystem.
        #[arg(long, default_value_t = 9, value_parser = clap::value_parser!(u32).range(1..=100))]
        runs: u32,
        /// Which statistic of the runs is the figure: `median`, or `p10`
        /// (their 10th percentile: the fast runs of a VM that runs at two
        /// speeds).
        #[arg(long, value_enum, default_value = "median")]
        statistic: fit::Statistic,
        /// Where the live runs' outputs go (OUT/lab-xfs-alloc-100000/),
        /// or with --implied the table (OUT/implied-knob.csv).
        #[arg(long, default_value = "plots")]
        out: PathBuf,
        /// Instead of fitting: for every lab run in DIR (DIR/lab-NAME/),
        /// the knob each of its times and rates would need on PROFILE
        /// (the twin at PROFILE's knob and at twice it, a line in the
        /// knob, solved on the live median): which figures the fitted
        /// knob carries to. Needs no root; the profile is not changed.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["runs", "statistic", "from"])]
        implied: Option<PathBuf>,
        /// Fit on earlier live runs of the figure instead of new ones: a
        /// folder `fsmeta lab xfs-alloc -p extents=100000` or `fsmeta
        /// fit` wrote on this host (DIR/lab-xfs-alloc-100000/ or that
        /// folder itself). Needs no root: to refit after the model or
        /// the profile changed, on the same runs.
        #[arg(long, value_name = "DIR", conflicts_with = "runs")]
        from: Option<PathBuf>,
    },
    /// List the built-in machine profiles.
    Machines,
    /// Print every scenario parameter (type, allowed values, default,
    /// meaning) and every metric, for all workloads or one.
    Keys {
        /// Only this workload kind (the possible values come from the
        /// workload registry).
        #[arg(value_parser = workload_kinds())]
        workload: Option<String>,
    },
}

/// What `fsmeta run` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The report (tables per point, bottlenecks, expectations).
    Text,
    /// Before / after tables per metric for a patch description.
    Patch,
}

/// The workload kinds of the registry, for `fsmeta keys WORKLOAD`.
fn workload_kinds() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(fsmeta::workload::registry::REGISTRY.iter().map(|w| w.kind()))
}
