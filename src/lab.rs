//! The lab: the live kernel as the oracle for counts.
//!
//! `fsmeta lab EXPERIMENT` builds the real counterpart of a shipped
//! scenario (its twin, `scenarios/lab/EXPERIMENT.toml`) on a filesystem in
//! an image file it made, attached to a loop device it attached, counts
//! what the running kernel did through tracepoints in a private tracefs
//! instance, and writes the same `summary.csv` (long format, same metric
//! names), `runs.csv` and `report.txt` as `fsmeta run`, plus `lab.txt`
//! (kernel, CPU, mkfs and mount options, tool versions, what was traced).
//!
//! Safety, in the order the code enforces it ([`host`]):
//! - requirements are checked first (root, loop devices, tracefs, the
//!   tools) and a missing one is named with its package, before anything
//!   is made;
//! - what the lab makes (temporary folder, image, loop device, mount,
//!   tracefs instance) is written to a ledger in `/run/fsmeta-lab` *before*
//!   it is made, and undone in reverse order on every exit path: success,
//!   error, SIGINT/SIGTERM (a flag checked between steps), panic (`Drop`);
//!   a lab killed by SIGKILL leaves its ledger, and the next lab run undoes
//!   what it names before anything else;
//! - every write goes through a directory handle opened only after
//!   `/proc/self/mountinfo` showed the mount point mounted from the lab's
//!   own loop device, and the check is repeated before each phase;
//! - images are bounded in size and need that much free space.
//!
//! Counts are never fitted: a count that differs from the twin's is a
//! modelling gap for `docs/lab.md`.

pub mod blockio;
pub mod btrfs_delayed;
pub mod btrfs_layout;
pub mod dumptree;
pub mod host;
pub mod ledger;
pub mod output;
pub mod pool;
pub mod probe;
pub mod profiles;
pub mod sample;
pub mod speed;
pub mod trace;
pub mod twin;
pub mod xfs_alloc;
pub mod xfs_handles;
pub mod xfs_scaling;

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Why a lab run stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    /// Something the lab needs is missing (nothing was set up).
    #[error("the lab cannot run here: {what}{}", hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default())]
    Missing {
        /// What is missing.
        what: String,
        /// How to get it (the package that provides it).
        hint: Option<String>,
    },
    /// A step failed; everything set up so far was undone.
    #[error("lab step failed: {step}: {detail}")]
    Step {
        /// The step.
        step: String,
        /// What went wrong (the command's stderr, the I/O error).
        detail: String,
    },
    /// A safety check failed; the lab stopped before writing.
    #[error("lab safety check failed, stopped before writing: {0}")]
    Unsafe(String),
    /// SIGINT or SIGTERM arrived; everything set up was undone.
    #[error("interrupted; everything the lab set up was undone")]
    Interrupted,
    /// A parameter is not valid for the experiment.
    #[error("lab parameter: {0}")]
    Param(String),
    /// The outputs could not be written.
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
}

impl LabError {
    /// A failed step.
    pub fn step(step: impl Into<String>, detail: impl std::fmt::Display) -> LabError {
        LabError::Step {
            step: step.into(),
            detail: detail.to_string(),
        }
    }
}

/// One run of an experiment: its metrics, by the twin's names.
pub type Metrics = BTreeMap<String, f64>;

/// What a lab run is given.
#[derive(Debug, Clone)]
pub struct LabOptions {
    /// Repetitions of the experiment (each on a fresh filesystem).
    pub runs: u32,
    /// Experiment parameters (`NAME=VALUE`), checked by the experiment.
    pub params: BTreeMap<String, String>,
    /// Print progress to stderr.
    pub verbose: bool,
    /// Sample the kernel's stacks every this many us of each CPU's time
    /// while the runs go on (`--sample-kernel`; [`sample`]).
    pub sample_us: Option<u32>,
}

/// An experiment's parameters: declared defaults, overridden by the
/// user's `NAME=VALUE`; an unknown name is refused with the closest one.
#[derive(Debug, Clone)]
pub struct Params {
    values: BTreeMap<&'static str, u64>,
}

impl Params {
    /// The defaults `decl` (name, default, lowest, highest) overridden by
    /// `given`.
    pub fn resolve(decl: &[(&'static str, u64, u64, u64)], given: &BTreeMap<String, String>) -> Result<Params, LabError> {
        let mut values: BTreeMap<&'static str, u64> = decl.iter().map(|d| (d.0, d.1)).collect();
        for (k, v) in given {
            let Some(&(name, _, lo, hi)) = decl.iter().find(|d| d.0 == k) else {
                let names: Vec<&str> = decl.iter().map(|d| d.0).collect();
                let hint = crate::text::closest(k, names.iter().copied())
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                return Err(LabError::Param(format!(
                    "unknown parameter `{}` (this experiment takes {}){hint}",
                    short(k),
                    names.join(", ")
                )));
            };
            let n: u64 = v
                .replace('_', "")
                .parse()
                .map_err(|_| LabError::Param(format!("{name} = `{}`: expected a whole number", short(v))))?;
            if n < lo || n > hi {
                return Err(LabError::Param(format!("{name} = {n}: expected {lo} to {hi}")));
            }
            values.insert(name, n);
        }
        Ok(Params { values })
    }

    /// The value of a declared parameter.
    pub fn get(&self, name: &str) -> u64 {
        self.values.get(name).copied().unwrap_or(0)
    }

    /// `name=value` pairs, for `lab.txt`.
    pub fn describe(&self) -> String {
        self.values.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }
}

/// What one run of an experiment produced.
#[derive(Debug, Clone, Default)]
pub struct Trial {
    /// Metrics per variant (as the twin names its variants), in order.
    pub variants: Vec<(String, Metrics)>,
    /// Setup lines for `lab.txt` (mkfs and mount options, what was traced).
    pub setup: Vec<String>,
    /// Extra files to write beside the outputs (name, bytes), e.g. the
    /// AG's freesp text.
    pub files: Vec<(String, Vec<u8>)>,
}

/// What an experiment produced over all its runs.
#[derive(Debug, Clone)]
pub struct LabRun {
    /// The experiment's name.
    pub experiment: &'static str,
    /// Its twin's name (`scenarios/lab/TWIN.toml`; the outputs go to
    /// `OUT/lab-TWIN/`).
    pub twin: String,
    /// Variant names, in order.
    pub variants: Vec<String>,
    /// `runs[v][r]`: variant v's metrics in run r.
    pub runs: Vec<Vec<Metrics>>,
    /// Setup lines of the first run.
    pub setup: Vec<String>,
    /// The parameters used.
    pub params: String,
    /// Extra files of the first run.
    pub files: Vec<(String, Vec<u8>)>,
    /// Wall time of the whole lab run, seconds.
    pub wall_s: f64,
    /// `/proc/loadavg` when the run started (times measured on a busy host
    /// are not this machine's quiet times).
    pub load: String,
    /// A cache line's one-way transfer between CPUs 0 and 1 in ns, as
    /// measured just before and just after the runs (the caller measures
    /// it: `fsmeta calibrate`'s CAS ping-pong), or why not. On a virtual
    /// machine the two vCPUs may be SMT siblings in one run and further
    /// apart in the next (8 against 60-77 ns on the Xeon 6 lab host), and
    /// every time with a transfer in it follows; `lab.txt` keeps it, and
    /// the twin's table warns when its profile priced another placement
    /// ([`twin::transfer_mismatch`]).
    pub transfer: Option<Result<(f64, f64), String>>,
    /// With `--sample-kernel`: where the kernel's time went over the runs
    /// ([`sample::KernelSamples::report`]; also in `kernel-samples.txt`).
    pub kernel_samples: Option<String>,
}

/// One experiment: its name, what it does, its parameters, how it runs.
#[derive(Debug, Clone, Copy)]
pub struct Experiment {
    /// The name on the command line and of the twin.
    pub name: &'static str,
    /// One line on what it measures.
    pub about: &'static str,
    /// Parameters: name, default, lowest, highest.
    pub params: &'static [(&'static str, u64, u64, u64)],
    /// Runs the experiment once (run number given) on a fresh filesystem.
    pub run: fn(&host::Host, &Params, u32) -> Result<Trial, LabError>,
    /// Refuses parameters that are each in range but cannot go together
    /// or that the experiment cannot take (`LabError::Param`, saying
    /// why): checked before the host is touched ([`resolve`]).
    pub check: fn(&Params) -> Result<(), LabError>,
    /// A parameter whose non-default value names another twin:
    /// `NAME-VALUE` (e.g. `xfs-alloc-100000` for `-p extents=100000`).
    pub twin_param: Option<&'static str>,
    /// Kernel functions whose samples `--sample-kernel` breaks down (what
    /// ran below each), in this order.
    pub sample_roots: &'static [&'static str],
    /// Whether the twin models a run with parameter `name` at `value`
    /// other than its default ([`off_twin`]): true where the twin's
    /// variants cover it (xfs-alloc's `quiet=1` pass is its `le-quiet`
    /// variant); [`defaults_only`] for a twin of the defaults alone.
    pub twin_models: fn(&str, u64) -> bool,
}

/// A twin that models its experiment's default parameters only
/// ([`Experiment::twin_models`]).
pub fn defaults_only(_name: &str, _value: u64) -> bool {
    false
}

/// Accepts every parameter set in range ([`Experiment::check`]).
pub fn any_params(_: &Params) -> Result<(), LabError> {
    Ok(())
}

/// `e`'s parameters with `given` applied, each in its range and the set
/// accepted by the experiment's [`Experiment::check`]: what `fsmeta lab`
/// checks before it probes or prepares the host.
pub fn resolve(e: &Experiment, given: &BTreeMap<String, String>) -> Result<Params, LabError> {
    let p = Params::resolve(e.params, given)?;
    (e.check)(&p)?;
    Ok(p)
}

/// Every experiment, by name.
pub const EXPERIMENTS: &[Experiment] = &[
    xfs_handles::EXPERIMENT,
    xfs_alloc::EXPERIMENT,
    btrfs_layout::EXPERIMENT,
    btrfs_delayed::EXPERIMENT,
    xfs_scaling::EXPERIMENT,
];

/// The experiment called `name`, or an error naming the closest one.
pub fn find(name: &str) -> Result<&'static Experiment, LabError> {
    EXPERIMENTS.iter().find(|e| e.name == name).ok_or_else(|| {
        let hint = crate::text::closest(name, EXPERIMENTS.iter().map(|e| e.name))
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        LabError::Param(format!(
            "unknown experiment `{}` (experiments: {}){hint}",
            short(name),
            EXPERIMENTS.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
        ))
    })
}

/// Runs experiment `e` `opts.runs` times, each on a fresh filesystem,
/// after checking the requirements and undoing what dead labs left.
pub fn run(e: &Experiment, opts: &LabOptions) -> Result<LabRun, LabError> {
    let params = resolve(e, &opts.params)?;
    let host = host::Host::prepare(opts.verbose)?;
    let start = std::time::Instant::now();
    let mut out = LabRun {
        experiment: e.name,
        twin: twin_name(e, &params),
        variants: Vec::new(),
        runs: Vec::new(),
        setup: Vec::new(),
        params: params.describe(),
        files: Vec::new(),
        wall_s: 0.0,
        load: std::fs::read_to_string("/proc/loadavg").unwrap_or_default(),
        transfer: None,
        kernel_samples: None,
    };
    // Other work on the CPUs, over half a second in which the lab sleeps.
    let stat = || std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let before = stat();
    std::thread::sleep(std::time::Duration::from_millis(500));
    if let Some(w) = busy_share(&before, &stat()).and_then(|b| load_warning(b, &out.load)) {
        host.warn(&w);
    }
    let allowed = crate::calibrate::allowed_cpus().map_or(0, |c| c.len());
    if let Some(w) = mask_warning(allowed, online_cpus()) {
        host.warn(&w);
    }
    let mut probe = probe::Probe::new();
    let sampler = opts.sample_us.map(|us| sample::Sampler::start(&host.tmp, us)).transpose()?;
    for r in 0..opts.runs {
        host.progress(&format!("{}: run {}/{}", e.name, r + 1, opts.runs));
        let speed = probe.measure();
        let t = (e.run)(&host, &params, r)?;
        if r == 0 {
            out.variants = t.variants.iter().map(|v| v.0.clone()).collect();
            out.runs = vec![Vec::new(); t.variants.len()];
            out.setup = t.setup;
            out.setup.push(probe_setup_line());
            out.files = t.files;
        }
        for (i, (name, mut m)) in t.variants.into_iter().enumerate() {
            m.extend(speed.iter().map(|&(k, v)| (k.to_string(), v)));
            match out.variants.get(i) {
                Some(n) if *n == name => out.runs[i].push(m),
                _ => return Err(LabError::step("collect", format!("run {r} gave variant `{name}` out of order"))),
            }
        }
    }
    out.wall_s = start.elapsed().as_secs_f64();
    if let Some(s) = sampler {
        keep_samples(&host, &mut out, s, e, opts.runs);
    }
    Ok(out)
}

/// Stops `s` and adds its counts to `out` (files, a setup line, the
/// report); a sampling that failed is said and the runs are kept.
fn keep_samples(host: &host::Host, out: &mut LabRun, s: sample::Sampler, e: &Experiment, runs: u32) {
    let period_us = s.period_us();
    let how = format!(
        "{} perf record -e cpu-clock -c {} -a -g over the runs (every CPU once per {period_us} us; the times above include the sampling's interrupts)",
        sample::SAMPLED,
        u64::from(period_us) * 1000
    );
    let samples = match s
        .finish(runs, online_cpus(), e.sample_roots)
        .and_then(|k| k.to_csv().map(|c| (k, c)))
    {
        Ok(k) => k,
        Err(err) => {
            // The runs were slowed all the same: lab.txt says so.
            host.warn(&format!("the kernel samples are not kept: {err}; the runs are"));
            out.setup.push(format!("{how}; the samples were not kept: {err}"));
            return;
        }
    };
    let (samples, csv) = samples;
    out.setup.push(format!("{how}; kernel-samples.csv and kernel-samples.txt"));
    let text = samples.report(KERNEL_SAMPLES_TOP);
    out.files.push(("kernel-samples.csv".into(), csv.into_bytes()));
    out.files.push(("kernel-samples.txt".into(), text.clone().into_bytes()));
    out.kernel_samples = Some(text);
}

/// The setup line that says how the host's speed was probed.
fn probe_setup_line() -> String {
    format!(
        "host speed before every run, live only: {} (a dependent load chase going on along a random cycle over {} MiB), {} (the same over {} KiB, within the L1d) and {} (a chain of uncontended lock xadd), each the median of {} samples; {} where CPUs 0 and 1 can be pinned (CAS ping-pong, the median of {} samples)",
        probe::DRAM_KEY,
        probe::PROBE_BYTES >> 20,
        probe::L1_KEY,
        probe::l1_probe_bytes() >> 10,
        probe::XADD_KEY,
        probe::SAMPLES,
        probe::TRANSFER_KEY,
        probe::TRANSFER_SAMPLES
    )
}

/// Functions shown below each root in the kernel samples' report.
pub const KERNEL_SAMPLES_TOP: usize = 15;

/// Where a lab run's outputs go: `OUT/lab-<twin>/`.
pub fn out_name(twin: &str) -> String {
    format!("lab-{twin}")
}

/// The twin of experiment `e` run with `params`: its name, or
/// `NAME-VALUE` when its [`Experiment::twin_param`] is not the default.
pub fn twin_name(e: &Experiment, params: &Params) -> String {
    match e.twin_param.and_then(|p| e.params.iter().find(|d| d.0 == p)) {
        Some(&(p, default, _, _)) if params.get(p) != default => format!("{}-{}", e.name, params.get(p)),
        _ => e.name.to_string(),
    }
}

/// The parameters of a run that differ from `e`'s defaults, other than
/// the one that names the twin ([`Experiment::twin_param`]) and those
/// its variants cover ([`Experiment::twin_models`]), as `name=value`: the
/// twin models the defaults, so a run with any of these is not its lab
/// run.
pub fn off_twin(e: &Experiment, params: &Params) -> Vec<String> {
    e.params
        .iter()
        .filter(|d| Some(d.0) != e.twin_param && params.get(d.0) != d.1 && !(e.twin_models)(d.0, params.get(d.0)))
        .map(|d| format!("{}={}", d.0, params.get(d.0)))
        .collect()
}

/// The twin scenario of an experiment, relative to the repository.
pub fn twin_path(experiment: &str) -> PathBuf {
    PathBuf::from(format!("scenarios/lab/{experiment}.toml"))
}

/// `s` for a message: control characters escaped, at most 60 characters.
pub fn short(s: &str) -> String {
    let mut out: String = s.chars().take(60).flat_map(char::escape_debug).collect();
    if s.chars().count() > 60 {
        out.push_str("...");
    }
    out
}

/// The largest raw text (trace, dump) kept beside the outputs, bytes.
pub const KEEP_MAX_BYTES: usize = 32 << 20;

/// `text` as the file `name` of the outputs, unless it is over
/// [`KEEP_MAX_BYTES`].
pub fn keep(name: &str, text: String) -> Vec<(String, Vec<u8>)> {
    if text.len() <= KEEP_MAX_BYTES {
        vec![(name.to_string(), text.into_bytes())]
    } else {
        Vec::new()
    }
}

/// `docs/lab.md`: each experiment's setup (from its `lab.txt`), its
/// figures beside the twin's, and the notes on where they differ.
/// `notes(experiment)` gives the hand-written notes on where the live
/// kernel and the twin differ (`docs/lab-notes/EXPERIMENT.md`: measured
/// figures live in docs, never in code).
pub fn markdown(entries: &[(&Experiment, twin::Outputs, twin::Outputs)], notes: &dyn Fn(&str) -> Option<String>) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "# The lab: live kernel against the simulated twins\n\n\
Generated by `fsmeta validate --lab DIR` from the outputs of `fsmeta lab` (DIR/lab-EXPERIMENT/) and fresh runs of \
the twins (`scenarios/lab/EXPERIMENT.toml`). Counts are never fitted: a count that differs is a modelling gap, \
explained under each table. \"twin - live\" is relative to the live median; **differs** marks a twin value \
outside the live runs' range. \"live fast\" is the fast runs' figure of a time or a rate: a time's 10th \
percentile over the runs, a rate's 90th (nearest rank: the fastest run under 10 runs); where the host runs at two \
speeds from run to run, a set's median is whichever speed most of its runs had (docs/lab-hosts.md). \"twin - \
fast\" is relative to it.\n",
    );
    for (e, live, twin) in entries {
        let rows = twin::join(live, twin);
        let name = twin.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let _ = writeln!(s, "\n## `{name}`: {}\n", e.about);
        if let Some(t) = &live.lab_txt {
            s.push_str("```\n");
            for l in t.lines().filter(|l| !l.starts_with("setup: traced")) {
                let _ = writeln!(s, "{l}");
            }
            s.push_str("```\n\n");
        }
        s.push_str(&twin::markdown_table(&rows));
        match notes(e.name) {
            Some(n) => {
                let _ = writeln!(s, "\n{}", n.trim());
            }
            None => {
                let _ = writeln!(s, "\n(No notes yet: docs/lab-notes/{}.md.)", e.name);
            }
        }
        let only = twin::live_only(live, twin);
        if !only.is_empty() {
            let _ = writeln!(s, "\nMeasured live only (no twin metric of that name):\n");
            s.push_str(&only);
        }
    }
    s
}

/// `docs/lab.md` after a `validate --lab` of some experiments: the new
/// text (`fresh`, from [`markdown`]) with the sections of `old` whose
/// experiment it does not have kept, so validating one experiment does
/// not drop the others. Sections (`## `NAME`...`) come out sorted by
/// name, as [`markdown`] writes them; the head is the fresh one.
pub fn merge_markdown(old: &str, fresh: &str) -> String {
    fn split(doc: &str) -> (&str, std::collections::BTreeMap<String, &str>) {
        let mut at: Vec<usize> = doc.match_indices("\n## `").map(|(i, _)| i + 1).collect();
        let head = &doc[..at.first().copied().unwrap_or(doc.len())];
        at.push(doc.len());
        let sections = at
            .windows(2)
            .map(|w| {
                let sec = &doc[w[0]..w[1]];
                let name = sec[4..].split('`').next().unwrap_or_default().to_string();
                (name, sec)
            })
            .collect();
        (head, sections)
    }
    let (_, mut sections) = split(old);
    let (head, new) = split(fresh);
    sections.extend(new);
    if sections.is_empty() {
        return fresh.to_string();
    }
    let mut s = head.trim_end().to_string();
    for sec in sections.values() {
        s.push_str("\n\n");
        s.push_str(sec.trim_end());
    }
    s.push('\n');
    s
}

/// The share of CPU time other work used between two readings of
/// `/proc/stat` (`before`, `after`: its text), from the `cpu` line:
/// 1 - (idle + iowait) / total over the interval. The lab samples it while
/// it sleeps, so its own use is not in it.
pub fn busy_share(before: &str, after: &str) -> Option<f64> {
    fn times(stat: &str) -> Option<(u64, u64)> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line.split_whitespace().skip(1).map(|x| x.parse().ok()).collect::<Option<_>>()?;
        let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
        Some((v.iter().sum(), idle))
    }
    let (t0, i0) = times(before)?;
    let (t1, i1) = times(after)?;
    let total = t1.checked_sub(t0)?;
    let idle = i1.checked_sub(i0)?;
    (total > 0).then(|| 1.0 - idle.min(total) as f64 / total as f64)
}

/// A warning when other work kept more than a quarter of the CPUs busy
/// (`busy`, from [`busy_share`]) just before a run: live times measured
/// on a busy host are slower and spread wider than on a quiet one.
/// `load` is `/proc/loadavg`'s text, quoted for context.
pub fn load_warning(busy: f64, load: &str) -> Option<String> {
    let one = load.split_whitespace().next().unwrap_or("?");
    (busy > 0.25).then(|| {
        format!(
            "other work kept {:.0}% of the CPUs busy just before the run (load average {one}): live times will be slower and spread wider than on a quiet host (compare with care, or rerun when it is quiet)",
            busy * 100.0
        )
    })
}

/// CPUs online (`sysconf(_SC_NPROCESSORS_ONLN)`), 0 when unknown.
fn online_cpus() -> usize {
    // SAFETY: sysconf reads a system value and has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(0)
}

/// What to say when this process may run on fewer CPUs than are online
/// (`allowed` from `sched_getaffinity`): the lab's threads and the tools
/// it starts inherit the mask, so a multi-thread figure would measure
/// fewer CPUs than the twin prices. `None` when they agree or either is
/// unknown (0).
pub fn mask_warning(allowed: usize, online: usize) -> Option<String> {
    (allowed > 0 && online > 0 && allowed < online).then(|| {
        format!(
            "this process may run on {allowed} of the {online} online CPUs (its CPU mask: taskset, a cgroup's cpuset): every thread and tool the lab starts inherits it, so multi-thread figures measure {allowed} CPU(s); run it unconfined to test the twin"
        )
    })
}
