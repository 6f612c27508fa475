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
//! The host is left as it was: `perf record` runs with a workload that
//! ends when this process does (`tail --pid`), so a lab killed outright
//! stops the sampling too; its data file lives in a folder of the lab's
//! ledger, removed on every exit path.

use super::LabError;
use super::ledger::{Entry, Ledger};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The default sampling period, us.
pub const DEFAULT_PERIOD_US: u32 = 50;

/// The shortest and longest periods accepted, us.
pub const PERIOD_RANGE_US: (u32, u32) = (10, 100_000);

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
        count(&mut self.functions, frames, leaf);
        for b in &mut self.roots {
            // The outermost call of the root (recursion counts once).
            if let Some(p) = frames.iter().rposition(|f| *f == b.root) {
                b.samples += 1;
                count(&mut b.functions, &frames[..=p], leaf);
            }
        }
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
            "kernel samples: {} over {} run(s), {} in the kernel, one per {} us of a CPU's time (perf record -e cpu-clock -a -g)\n",
            self.total,
            self.runs,
            self.kernel,
            self.period_ns as f64 / 1e3
        );
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

/// Reads `perf script -F comm,ip,sym` output: a header line per sample,
/// then one frame per line (`\t<hex ip> <symbol>`, the running frame
/// first), a blank line after. A sample's kernel frames are those before
/// its first user-space one.
pub fn parse(input: impl BufRead, into: &mut KernelSamples) -> std::io::Result<()> {
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
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            flush(&mut frames, &mut open, into);
        } else if line.starts_with(['\t', ' ']) {
            let mut parts = line.split_whitespace();
            let (Some(ip), Some(sym)) = (parts.next(), parts.next()) else {
                continue;
            };
            let kernel = u64::from_str_radix(ip, 16).is_ok_and(|a| a >= KERNEL_START);
            in_user |= !kernel;
            if !in_user {
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

/// A running `perf record` and the ledger folder its data goes to.
#[derive(Debug)]
pub struct Sampler {
    child: Option<Child>,
    dir: PathBuf,
    data: PathBuf,
    period_ns: u64,
    ledger: Option<Ledger>,
}

impl Sampler {
    /// Starts sampling every CPU once per `period_us`.
    pub fn start(period_us: u32) -> Result<Sampler, LabError> {
        let (lo, hi) = PERIOD_RANGE_US;
        if !(lo..=hi).contains(&period_us) {
            return Err(LabError::Param(format!(
                "--sample-kernel: {period_us} us: expected {lo} to {hi} us"
            )));
        }
        let perf = super::host::which("perf").ok_or_else(|| LabError::Missing {
            what: "perf (for --sample-kernel)".into(),
            hint: Some("Debian: apt-get install linux-perf".into()),
        })?;
        let tail = super::host::which("tail").ok_or_else(|| LabError::Missing {
            what: "tail (for --sample-kernel)".into(),
            hint: Some("Debian: coreutils".into()),
        })?;
        let mut ledger = Ledger::open()?;
        let dir = std::env::temp_dir().join(format!("fsmeta-lab-samples-{}", std::process::id()));
        ledger.record(Entry::Dir(dir.clone()))?;
        let mut s = Sampler {
            child: None,
            data: dir.join("perf.data"),
            dir,
            period_ns: u64::from(period_us) * 1000,
            ledger: Some(ledger),
        };
        std::fs::create_dir(&s.dir).map_err(|e| LabError::step("sample the kernel", format!("mkdir {}: {e}", s.dir.display())))?;
        let period = s.period_ns.to_string();
        let pid = std::process::id().to_string();
        let data = s.data.to_string_lossy().into_owned();
        let child = Command::new(&perf)
            .args(["record", "-q", "-e", "cpu-clock", "-c", &period, "-a", "-g", "-o", &data, "--"])
            .arg(&tail)
            .args(["--pid", &pid, "-f", "/dev/null"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| LabError::step("sample the kernel", format!("{}: {e}", perf.display())))?;
        s.child = Some(child);
        s.wait_started()?;
        Ok(s)
    }

    /// Waits until `perf record` has written its file's header (its
    /// counters are open by then), or says why it stopped.
    fn wait_started(&mut self) -> Result<(), LabError> {
        for _ in 0..100 {
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                let mut err = String::new();
                if let Some(mut e) = c.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                self.child = None;
                return Err(LabError::step(
                    "sample the kernel",
                    format!("perf record exited with {status}: {}", err.trim()),
                ));
            }
            if std::fs::metadata(&self.data).is_ok_and(|m| m.len() > 0) {
                // The header is written once the events are open.
                std::thread::sleep(std::time::Duration::from_millis(100));
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Err(LabError::step("sample the kernel", "perf record wrote nothing in 5 s"))
    }

    /// Stops sampling and counts the samples of `runs` runs below `roots`.
    pub fn finish(mut self, runs: u32, roots: &[&str]) -> Result<KernelSamples, LabError> {
        self.stop()?;
        let perf = super::host::which("perf").ok_or_else(|| LabError::step("read the kernel samples", "perf is gone"))?;
        let data = self.data.to_string_lossy().into_owned();
        let mut child = Command::new(&perf)
            .args(["script", "-i", &data, "-F", "comm,ip,sym"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| LabError::step("read the kernel samples", format!("{}: {e}", perf.display())))?;
        let mut out = KernelSamples::new(self.period_ns, runs, roots);
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| LabError::step("read the kernel samples", "no output"))?;
        let parsed = parse(BufReader::new(stdout), &mut out);
        let status = child.wait().map_err(|e| LabError::step("read the kernel samples", e))?;
        parsed.map_err(|e| LabError::step("read the kernel samples", e))?;
        if !status.success() {
            return Err(LabError::step(
                "read the kernel samples",
                format!("perf script exited with {status}"),
            ));
        }
        Ok(out)
    }

    /// Ends `perf record` (SIGINT: it stops its workload and closes the
    /// file) and waits for it.
    fn stop(&mut self) -> Result<(), LabError> {
        let Some(mut c) = self.child.take() else { return Ok(()) };
        let pid = libc::pid_t::try_from(c.id()).map_err(|e| LabError::step("stop perf record", e))?;
        // SAFETY: signals our own child, which has not been reaped yet.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let status = c.wait().map_err(|e| LabError::step("stop perf record", e))?;
        let mut err = String::new();
        if let Some(mut e) = c.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        if !std::fs::metadata(&self.data).is_ok_and(|m| m.len() > 0) {
            return Err(LabError::step("stop perf record", format!("{status}, no data: {}", err.trim())));
        }
        Ok(())
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        let _ = self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(l) = self.ledger.take() {
            super::host::undo(l.entries());
            l.close();
        }
    }
}

#[cfg(test)]
mod tests;
