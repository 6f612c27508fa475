//! `perf record` while the runs go on, and `perf script` after.
//!
//! The host is left as it was:
//! - `perf record` runs with `--no-buildid --no-buildid-cache` (no copies
//!   of binaries into `~/.debug`) and `--kernel-callchains`, its output
//!   capped (`--max-size`), and with a workload that ends when this
//!   process does (`tail --pid`), so a lab killed outright stops the
//!   sampling too;
//! - its data and its stderr live in a folder of the lab's ledger,
//!   removed on every exit path (and by the next lab after a kill);
//! - a period the kernel would throttle is refused
//!   (`kernel.perf_event_max_sample_rate`, which the kernel lowers by
//!   itself when samples take too long).

use super::KernelSamples;
use crate::lab::LabError;
use crate::lab::ledger::{Entry, Ledger, proc_stat};
use std::io::BufReader;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The data file's cap (`perf record --max-size`).
const MAX_DATA: &str = "1G";

/// Free space the temporary folder must have for the data, bytes.
const MIN_FREE_BYTES: u64 = 1 << 30;

/// How long `perf record` may take to open its events.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// How long it may take to stop after SIGINT before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A running `perf record` and the ledger folder its data goes to.
#[derive(Debug)]
pub struct Sampler {
    perf: PathBuf,
    child: Option<Child>,
    dir: PathBuf,
    data: PathBuf,
    log: PathBuf,
    period_ns: u64,
    started: Instant,
    ledger: Option<Ledger>,
}

fn err(detail: impl std::fmt::Display) -> LabError {
    LabError::step("sample the kernel", detail)
}

impl Sampler {
    /// Starts sampling every CPU once per `period_us`, the data in a
    /// folder under `tmp`.
    pub fn start(tmp: &Path, period_us: u32) -> Result<Sampler, LabError> {
        let (perf, tail, dir) = preflight(tmp, period_us)?;
        let mut ledger = Ledger::open()?;
        ledger.record(Entry::Dir(dir.clone()))?;
        if let Err(e) = std::fs::create_dir(&dir) {
            // Not ours: forget it rather than remove it.
            ledger.close();
            return Err(err(format!("mkdir {}: {e}", dir.display())));
        }
        let mut s = Sampler {
            perf: perf.clone(),
            child: None,
            data: dir.join("perf.data"),
            log: dir.join("perf.stderr"),
            dir,
            period_ns: u64::from(period_us) * 1000,
            started: Instant::now(),
            ledger: Some(ledger),
        };
        let log = std::fs::File::create(&s.log).map_err(|e| err(format!("{}: {e}", s.log.display())))?;
        let child = Command::new(&perf)
            .args([
                "record",
                "-e",
                "cpu-clock",
                "-c",
                &s.period_ns.to_string(),
                "-a",
                "-g",
                "--kernel-callchains",
            ])
            .args(["--no-buildid", "--no-buildid-cache", "--max-size", MAX_DATA, "-o"])
            .arg(&s.data)
            .arg("--")
            .arg(&tail)
            .args(["--pid", &std::process::id().to_string(), "-f", "/dev/null"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| err(format!("{}: {e}", perf.display())))?;
        s.child = Some(child);
        s.wait_started()?;
        s.started = Instant::now();
        Ok(s)
    }

    /// The sampling period, us.
    pub fn period_us(&self) -> u32 {
        u32::try_from(self.period_ns / 1000).unwrap_or(u32::MAX)
    }

    /// Waits until `perf record` has started its workload: it execs it
    /// once its events are enabled, so the workload's name turns from
    /// perf's to `tail`.
    fn wait_started(&mut self) -> Result<(), LabError> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let c = self.child.as_mut().ok_or_else(|| err("perf record is not running"))?;
            if let Ok(Some(status)) = c.try_wait() {
                self.child = None;
                return Err(err(format!("perf record exited with {status}: {}", self.stderr())));
            }
            if workload_started(c.id()) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(err(format!(
                    "perf record did not start its workload in {} s",
                    START_TIMEOUT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops sampling and counts the samples of `runs` runs on `cpus`
    /// CPUs below `roots`.
    pub fn finish(mut self, runs: u32, cpus: usize, roots: &[&str]) -> Result<KernelSamples, LabError> {
        let wall = self.started.elapsed();
        self.stop()?;
        let perf = self.perf.clone();
        let script_log = std::fs::File::create(self.dir.join("script.stderr")).map_err(err)?;
        let mut child = Command::new(&perf)
            .args(["script", "-F", "cpu,ip,sym", "-i"])
            .arg(&self.data)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(script_log)
            .spawn()
            .map_err(|e| err(format!("{}: {e}", perf.display())))?;
        let mut out = KernelSamples::new(self.period_ns, runs, roots);
        out.expected = super::expected_samples(wall, cpus, self.period_ns);
        let stdout = child.stdout.take().ok_or_else(|| err("perf script gave no output"))?;
        let parsed = super::parse(BufReader::new(stdout), &mut out);
        let status = child.wait().map_err(err)?;
        parsed.map_err(err)?;
        if !status.success() {
            let log = std::fs::read_to_string(self.dir.join("script.stderr")).unwrap_or_default();
            return Err(err(format!("perf script exited with {status}: {}", last_lines(&log))));
        }
        if out.total == 0 {
            return Err(err("perf recorded no sample"));
        }
        Ok(out)
    }

    /// Ends `perf record`: SIGINT (it stops its workload, closes its file
    /// and exits 0 or by SIGINT or SIGTERM), killed if it has not stopped within [`STOP_TIMEOUT`]. It must
    /// still be running when asked: one that stopped early lost samples.
    fn stop(&mut self) -> Result<(), LabError> {
        let Some(mut c) = self.child.take() else { return Ok(()) };
        if let Ok(Some(status)) = c.try_wait() {
            return Err(err(format!(
                "perf record stopped early ({status}; its output is capped at {MAX_DATA}B: on many CPUs take a longer period): {}",
                self.stderr()
            )));
        }
        let pid = libc::pid_t::try_from(c.id()).map_err(err)?;
        // SAFETY: signals our own child, which has not been reaped yet.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let deadline = Instant::now() + STOP_TIMEOUT;
        let status = loop {
            match c.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    let _ = c.kill();
                    let _ = c.wait();
                    return Err(err(format!("waiting for perf record: {e}")));
                }
                Ok(None) => {
                    let _ = c.kill();
                    let _ = c.wait();
                    return Err(err(format!(
                        "perf record did not stop within {} s of SIGINT",
                        STOP_TIMEOUT.as_secs()
                    )));
                }
            }
        };
        // perf ends its workload and then itself by the signal it took
        // (seen: SIGTERM after our SIGINT), having written its file.
        if status.success() || matches!(status.signal(), Some(libc::SIGINT | libc::SIGTERM)) {
            Ok(())
        } else {
            Err(err(format!("perf record exited with {status}: {}", self.stderr())))
        }
    }

    /// The end of `perf record`'s stderr.
    fn stderr(&self) -> String {
        last_lines(&std::fs::read_to_string(&self.log).unwrap_or_default())
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        let _ = self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(l) = self.ledger.take() {
            crate::lab::host::undo(l.entries());
            l.close();
        }
    }
}

/// What [`Sampler::start`] checks before it sets anything up: the period
/// against the kernel's rate limit, the tools, the free space and the
/// folder's name. Gives `perf`, `tail` and the folder to make.
fn preflight(tmp: &Path, period_us: u32) -> Result<(PathBuf, PathBuf, PathBuf), LabError> {
    if let Some(why) = super::period_refused(period_us, max_sample_rate()) {
        return Err(LabError::Param(why));
    }
    let perf = tool("perf", "linux-perf")?;
    let tail = tool("tail", "coreutils")?;
    let free = crate::lab::host::free_bytes(tmp).unwrap_or(0);
    if free < MIN_FREE_BYTES {
        return Err(LabError::Missing {
            what: format!(
                "free space in {} for the kernel samples: 1 GiB needed, {} MiB free",
                tmp.display(),
                free >> 20
            ),
            hint: Some("set TMPDIR to a folder with more room".into()),
        });
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = tmp.join(format!("fsmeta-lab-samples-{}-{n}", std::process::id()));
    crate::lab::host::plain_dir(&dir)?;
    Ok((perf, tail, dir))
}

fn tool(name: &str, package: &str) -> Result<PathBuf, LabError> {
    crate::lab::host::which(name).ok_or_else(|| LabError::Missing {
        what: format!("{name} (for --sample-kernel)"),
        hint: Some(format!("Debian: apt-get install {package}")),
    })
}

/// `kernel.perf_event_max_sample_rate`, samples a second per CPU.
fn max_sample_rate() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether a child of `parent` runs as `tail` (`/proc/PID/stat`: its
/// name in parentheses, then its state and its parent's pid).
fn workload_started(parent: u32) -> bool {
    let Ok(rd) = std::fs::read_dir("/proc") else { return false };
    rd.flatten().any(|e| {
        let pid = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok());
        let Some((name, rest)) = pid.and_then(proc_stat) else {
            return false;
        };
        let ppid = rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok());
        name == "tail" && ppid == Some(parent)
    })
}

/// The last few lines of a tool's stderr, for an error message.
fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(4)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sampler whose "perf" is a `sleep`: dropping it reaps the child
    /// and removes its folder and ledger.
    #[test]
    fn dropping_a_sampler_stops_its_child_and_removes_its_folder() {
        let dir = std::env::temp_dir().join(format!("fsmeta-sampler-drop-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new("sleep").arg("60").spawn().unwrap();
        let pid = child.id();
        let s = Sampler {
            perf: PathBuf::from("perf"),
            child: Some(child),
            data: dir.join("perf.data"),
            log: dir.join("perf.stderr"),
            dir: dir.clone(),
            period_ns: 50_000,
            started: Instant::now(),
            ledger: None,
        };
        drop(s);
        assert!(!dir.exists());
        // Reaped: no /proc entry (a zombie would still have one).
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
    }

    #[test]
    fn a_sampler_that_stopped_early_is_an_error_not_a_short_count() {
        let dir = std::env::temp_dir().join(format!("fsmeta-sampler-early-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = Command::new("true").spawn().unwrap();
        let _ = child.wait();
        let mut s = Sampler {
            perf: PathBuf::from("perf"),
            child: Some(child),
            data: dir.join("perf.data"),
            log: dir.join("perf.stderr"),
            dir,
            period_ns: 50_000,
            started: Instant::now(),
            ledger: None,
        };
        let e = s.stop().unwrap_err();
        assert!(e.to_string().contains("stopped early"), "{e}");
    }

    #[test]
    fn the_stderr_tail_keeps_the_last_lines() {
        assert_eq!(last_lines("a\n\nb\nc\nd\ne\n"), "b / c / d / e");
    }
}
