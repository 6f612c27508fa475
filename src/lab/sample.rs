//! `fsmeta lab --sample-kernel`: where the live kernel spends the runs'
//! time, function by function, from `perf`'s software clock.
//!
//! Kprobes and function tracing may be refused on the lab's host (they
//! are on the project's VMs), but a `cpu-clock` sample with its kernel
//! stack is taken by the timer interrupt and needs neither. While the
//! runs go on, `perf record -e cpu-clock -c PERIOD -a -g` samples every
//! CPU once per PERIOD ns; afterwards `perf script` gives each sample's
//! stack, and [`KernelSamples`] counts, per kernel function, the samples
//! it was running in (`self`) and those it was on the stack of
//! (`inclusive`), over all the samples and below each of the
//! experiment's roots (e.g. `btrfs_delete_delayed_items`). A sample
//! stands for PERIOD ns of its CPU's time, so a count times PERIOD over
//! the runs is time per run, within the sampling's spread (a count of n
//! is good to about 1/sqrt(n)).
//!
//! The timer's interrupt waits while interrupts are off: such time is
//! counted where they are turned on again (`_raw_spin_unlock_irq` and
//! the like). The interrupts themselves cost the runs time: their
//! figures are not the quiet kernel's.
//!
//! The samples cover the whole of the runs: each run's every variant
//! with its `mkfs`, mount and unmount, and the lab's speed probes; and
//! every CPU, idle or not (idle samples, below `do_idle`, are counted
//! apart). `perf record` itself is in the `perf` module.

use super::LabError;
use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;

mod perf;
pub use perf::Sampler;

/// The shortest and longest periods accepted, us (the kernel's default
/// `perf_event_max_sample_rate` is 100,000 a second).
pub const PERIOD_RANGE_US: (u32, u32) = (10, 100_000);

/// How `lab.txt` starts the setup line of a sampled set (pool and
/// validate look for it).
pub const SAMPLED: &str = "sampled:";

/// Below this share of the samples the CPUs' time should have given, the
/// report says perf lost or throttled some.
pub const COVERAGE_WARNING: f64 = 0.9;

/// Kernel text starts here on x86-64 (the upper half); a frame below is
/// user space.
const KERNEL_START: u64 = 0xffff_8000_0000_0000;

/// Samples of one function: as the running frame, and anywhere on the
/// stack (once per sample).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Samples taken in the function itself.
    pub self_samples: u64,
    /// Samples with the function on the stack.
    pub inclusive: u64,
}

/// What ran below one root function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Below {
    /// The root's name.
    pub root: String,
    /// Samples with the root on the stack.
    pub samples: u64,
    /// Per function below the root (the root itself with its own self
    /// samples).
    pub functions: BTreeMap<String, Counts>,
}

/// Kernel samples of a lab run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelSamples {
    /// ns of CPU time a sample stands for.
    pub period_ns: u64,
    /// The lab runs they cover.
    pub runs: u32,
    /// All samples, user and kernel, of every CPU.
    pub total: u64,
    /// Samples taken in the kernel.
    pub kernel: u64,
    /// Of the kernel's, samples with `do_idle` on the stack: an idle CPU,
    /// or an interrupt it took while idle.
    pub idle: u64,
    /// About how many samples the CPUs' time while sampling should have
    /// given (wall time x CPUs / period); 0 where not known.
    pub expected: u64,
    /// Per kernel function, over all samples.
    pub functions: BTreeMap<String, Counts>,
    /// Below each root the experiment names, in its order.
    pub roots: Vec<Below>,
}

impl KernelSamples {
    /// Empty counts for `roots`.
    pub fn new(period_ns: u64, runs: u32, roots: &[&str]) -> KernelSamples {
        KernelSamples {
            period_ns,
            runs,
            roots: roots
                .iter()
                .map(|r| Below {
                    root: (*r).to_string(),
                    ..Below::default()
                })
                .collect(),
            ..KernelSamples::default()
        }
    }

    /// Counts one sample whose stack, running frame first, is `frames`
    /// (kernel functions only; empty for a sample in user space).
    pub fn add(&mut self, frames: &[&str]) {
        self.total += 1;
        let Some(&leaf) = frames.first() else { return };
        self.kernel += 1;
        if frames.contains(&"do_idle") {
            self.idle += 1;
        }
        count(&mut self.functions, frames, leaf);
        for b in &mut self.roots {
            // The outermost call of the root (recursion counts once).
            if let Some(p) = frames.iter().rposition(|f| *f == b.root) {
                b.samples += 1;
                count(&mut b.functions, &frames[..=p], leaf);
            }
        }
    }

    /// The share of the expected samples that were taken, where the
    /// expectation is known.
    pub fn coverage(&self) -> Option<f64> {
        (self.expected > 0).then(|| self.total as f64 / self.expected as f64)
    }

    /// us of CPU time per run that `samples` stand for.
    pub fn us_per_run(&self, samples: u64) -> f64 {
        samples as f64 * self.period_ns as f64 / 1e3 / f64::from(self.runs.max(1))
    }

    /// `kernel-samples.csv`: one row per function and scope (`all`, then
    /// each root), most inclusive samples first.
    pub fn to_csv(&self) -> Result<String, LabError> {
        #[derive(serde::Serialize)]
        struct Row<'a> {
            scope: &'a str,
            function: &'a str,
            self_samples: u64,
            inclusive_samples: u64,
            self_us_per_run: f64,
            inclusive_us_per_run: f64,
        }
        let mut w = csv::Writer::from_writer(Vec::new());
        let scopes = std::iter::once(("all", &self.functions)).chain(self.roots.iter().map(|b| (b.root.as_str(), &b.functions)));
        for (scope, fns) in scopes {
            for (function, c) in ranked(fns) {
                w.serialize(Row {
                    scope,
                    function,
                    self_samples: c.self_samples,
                    inclusive_samples: c.inclusive,
                    self_us_per_run: self.us_per_run(c.self_samples),
                    inclusive_us_per_run: self.us_per_run(c.inclusive),
                })
                .map_err(|e| LabError::step("write kernel-samples.csv", e))?;
            }
        }
        let bytes = w.into_inner().map_err(|e| LabError::step("write kernel-samples.csv", e))?;
        String::from_utf8(bytes).map_err(|e| LabError::step("write kernel-samples.csv", e))
    }

    /// The text report: below each root, its `top` functions by
    /// inclusive samples.
    pub fn report(&self, top: usize) -> String {
        use std::fmt::Write;
        let mut s = format!(
            "kernel samples: {} over {} run(s) (each run: every variant, with its mkfs, mount and unmount), {} in the kernel, {} of them in an idle CPU (do_idle on the stack, interrupts included); one per {} us of a CPU's time (perf record -e cpu-clock -a -g)\n",
            self.total,
            self.runs,
            self.kernel,
            self.idle,
            self.period_ns as f64 / 1e3
        );
        if let Some(c) = self.coverage() {
            let _ = writeln!(
                s,
                "  {:.1}% of the {} samples the CPUs' time should have given",
                100.0 * c,
                self.expected
            );
            if c < COVERAGE_WARNING {
                let _ = writeln!(
                    s,
                    "  warning: perf lost or throttled samples: the times per run below are low by as much"
                );
            }
        }
        for b in &self.roots {
            if b.samples == 0 {
                let _ = writeln!(s, "{}: no sample", b.root);
                continue;
            }
            let _ = writeln!(s, "{}: {} samples, {:.1} us per run", b.root, b.samples, self.us_per_run(b.samples));
            let _ = writeln!(
                s,
                "  {:<44} {:>9} {:>12} {:>9} {:>12}",
                "function", "inclusive", "us per run", "self", "us per run"
            );
            for (f, c) in ranked(&b.functions).into_iter().filter(|(f, _)| *f != b.root).take(top) {
                let _ = writeln!(
                    s,
                    "  {:<44} {:>9} {:>12.1} {:>9} {:>12.1}",
                    crate::text::escape_controls(f),
                    c.inclusive,
                    self.us_per_run(c.inclusive),
                    c.self_samples,
                    self.us_per_run(c.self_samples)
                );
            }
        }
        s
    }
}

/// About how many samples `cpus` CPUs give over `wall` at one per
/// `period_ns` of each CPU's time.
pub fn expected_samples(wall: std::time::Duration, cpus: usize, period_ns: u64) -> u64 {
    u64::try_from(wall.as_nanos() * cpus as u128 / u128::from(period_ns.max(1))).unwrap_or(u64::MAX)
}

/// Why a period of `period_us` is refused: outside [`PERIOD_RANGE_US`],
/// or more samples a second per CPU than `max_rate`
/// (`kernel.perf_event_max_sample_rate`, where known).
pub fn period_refused(period_us: u32, max_rate: Option<u64>) -> Option<String> {
    let (lo, hi) = PERIOD_RANGE_US;
    if !(lo..=hi).contains(&period_us) {
        return Some(format!("--sample-kernel={period_us}: expected {lo} to {hi} us"));
    }
    let rate = u64::from(1_000_000 / period_us);
    match max_rate {
        Some(max) if rate > max => Some(format!(
            "--sample-kernel={period_us}: {rate} samples a second per CPU, over this kernel's kernel.perf_event_max_sample_rate ({max}); take a period of at least {} us",
            1_000_000u64.div_ceil(max.max(1))
        )),
        _ => None,
    }
}

/// Adds one stack (running frame first) to `fns`.
fn count(fns: &mut BTreeMap<String, Counts>, frames: &[&str], leaf: &str) {
    let mut seen = BTreeSet::new();
    for f in frames {
        if seen.insert(*f) {
            fns.entry((*f).to_string()).or_default().inclusive += 1;
        }
    }
    fns.entry(leaf.to_string()).or_default().self_samples += 1;
}

/// Functions by inclusive samples, most first, then by name.
fn ranked(fns: &BTreeMap<String, Counts>) -> Vec<(&str, Counts)> {
    let mut v: Vec<(&str, Counts)> = fns.iter().map(|(f, c)| (f.as_str(), *c)).collect();
    v.sort_by(|a, b| b.1.inclusive.cmp(&a.1.inclusive).then(a.0.cmp(b.0)));
    v
}

/// Reads `perf script -F cpu,ip,sym` output: a header line per sample
/// (`[CPU]`), then one frame per line (`\t<hex ip> <symbol>`, the
/// running frame first), a blank line after. A sample's kernel frames
/// are those before its first user-space one. Bytes that are not UTF-8
/// are read lossily; only lines starting with a tab are frames.
pub fn parse(mut input: impl BufRead, into: &mut KernelSamples) -> std::io::Result<()> {
    let mut frames: Vec<String> = Vec::new();
    let (mut open, mut in_user) = (false, false);
    let flush = |frames: &mut Vec<String>, open: &mut bool, into: &mut KernelSamples| {
        if *open {
            let refs: Vec<&str> = frames.iter().map(String::as_str).collect();
            into.add(&refs);
        }
        frames.clear();
        *open = false;
    };
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            flush(&mut frames, &mut open, into);
        } else if let Some(frame) = line.strip_prefix('\t') {
            let mut parts = frame.split_whitespace();
            let (Some(ip), Some(sym)) = (parts.next(), parts.next()) else {
                continue;
            };
            let kernel = u64::from_str_radix(ip, 16).is_ok_and(|a| a >= KERNEL_START);
            in_user |= !kernel;
            if open && !in_user {
                frames.push(sym.to_string());
            }
        } else {
            flush(&mut frames, &mut open, into);
            (open, in_user) = (true, false);
        }
    }
    flush(&mut frames, &mut open, into);
    Ok(())
}

#[cfg(test)]
mod tests;
