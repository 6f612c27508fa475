//! How fast the host ran around each lab run: a dependent load chase over
//! a working set no cache holds, one within the L1d, and a chain of
//! uncontended `lock xadd`s (`fsmeta calibrate`'s microbenchmarks,
//! [`crate::calibrate::chase`]), timed just before every run on the lab's
//! own thread, and the line transfer between CPUs 0 and 1 (where the two
//! vCPUs sit). [`crate::lab::speed`] holds them to the twin's profile.
//!
//! A virtual machine runs at different speeds from one quarter hour to
//! the next (docs/lab-hosts.md: the untraced btrfs unlink at 19.9 and
//! 13.8 us in two sets ten minutes apart). The probes go into every
//! variant's metrics of the run ([`DRAM_KEY`], [`XADD_KEY`]), so a set's
//! times can be read beside the speed the host had: they are live only
//! (no twin metric has their names) and never enter a twin.

use crate::calibrate::chase::{Chase, loads_for, xadd_chain};
use crate::calibrate::transfer::{Protocol, ping_pong};
use crate::report::stats::median;

/// Metric: ns per dependent load along a random cycle over
/// [`PROBE_BYTES`], the median of [`SAMPLES`] samples of [`LOADS`] loads.
/// The walk goes on from run to run ([`Chase::time_from`]): a run meets
/// 24 MiB of lines no walk touched in the runs before (the cycle comes
/// round after about five runs), so they come from DRAM unless the
/// last-level cache kept them through the runs between.
pub const DRAM_KEY: &str = "host.dram_load_ns";

/// Metric: ns per uncontended `lock xadd` in a dependent chain, the median
/// of [`SAMPLES`] samples of [`XADD_OPS`].
pub const XADD_KEY: &str = "host.xadd_ns";

/// Metric: ns per dependent load along a random cycle over three quarters
/// of the L1d ([`l1_probe_bytes`]), the median of [`SAMPLES`] samples (one
/// untimed pass first): `fsmeta calibrate`'s `hit_ns` on a quiet core, up
/// to L2 latency when another thread shares the physical core and its L1d
/// (calibrate's L1 warning, docs/lab-hosts.md sessions 64 and 65).
pub const L1_KEY: &str = "host.l1_load_ns";

/// The L1 probe's working set: three quarters of CPU 0's L1d as sysfs
/// gives it (calibrate's L1 warning looks at the largest chase size
/// within that), 24 KiB when sysfs does not say or says less than 4 KiB.
/// Read once per process, so a run's setup line and its probes agree.
pub fn l1_probe_bytes() -> usize {
    use crate::calibrate::sysfs::{HostTopology, SYSFS_CPU_ROOT, Snapshot};
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        let l1 = Snapshot::read(std::path::Path::new(SYSFS_CPU_ROOT))
            .ok()
            .and_then(|s| HostTopology::parse(&s).ok())
            .and_then(|h| h.cpu(0).and_then(|c| c.cache(1)).map(|c| c.size));
        l1.and_then(|b| usize::try_from(b).ok())
            .filter(|&b| b >= 4096)
            .map_or(24 << 10, |b| b * 3 / 4)
    })
}

/// Metric: a cache line's one-way transfer between CPUs 0 and 1, ns
/// (calibrate's CAS ping-pong, the median of [`TRANSFER_SAMPLES`] samples
/// of [`TRANSFER_ROUND_TRIPS`](super::output::TRANSFER_ROUND_TRIPS)): where the two vCPUs sit for this run
/// (SMT siblings about 8 ns, apart 60-90 on the Xeon 6 VM). Absent on a
/// host with one CPU.
pub const TRANSFER_KEY: &str = "host.transfer_ns";

/// Samples of the per-run transfer probe (round trips per sample:
/// [`crate::lab::output::TRANSFER_ROUND_TRIPS`], as around the runs).
pub const TRANSFER_SAMPLES: usize = 5;

/// A cache line's one-way transfer between CPUs 0 and 1, ns: the median of
/// `samples` samples of calibrate's CAS ping-pong, or why not. The lab
/// measures it around its runs ([`crate::lab::LabRun::transfer`], 15
/// samples) and before each run ([`TRANSFER_KEY`]).
pub fn line_transfer(samples: usize) -> Result<f64, String> {
    let t = ping_pong(0, 1, Protocol::Cas, crate::lab::output::TRANSFER_ROUND_TRIPS, samples).map_err(|e| e.to_string())?;
    if t.is_empty() {
        return Err("no samples".to_string());
    }
    Ok(median(&t))
}

/// The chase's cycle, bytes.
pub const PROBE_BYTES: usize = 128 << 20;

/// Loads per chase sample (about 20 ms at 150 ns).
pub const LOADS: u64 = 1 << 17;

/// `lock xadd`s per sample (about 2 ms at 10 ns).
pub const XADD_OPS: u64 = 200_000;

/// Samples of each probe per run.
pub const SAMPLES: usize = 3;

/// The chase's buffer, built once for a lab run's probes, and where its
/// walk stands.
#[derive(Debug)]
pub struct Probe {
    chase: Chase,
    /// The chase within the L1d ([`L1_KEY`]).
    l1: Chase,
    /// Where the chase's walk stands ([`Chase::time_from`]).
    at: usize,
}

impl Default for Probe {
    fn default() -> Self {
        Probe::new()
    }
}

impl Probe {
    /// Builds the chases (random cycles over [`PROBE_BYTES`] and over
    /// [`l1_probe_bytes`]).
    pub fn new() -> Probe {
        let chase = Chase::new(PROBE_BYTES);
        let at = chase.start();
        let l1 = Chase::new(l1_probe_bytes());
        Probe { chase, l1, at }
    }

    /// The probes now, as `(metric, ns)`; the transfer only where CPUs 0
    /// and 1 can be pinned. The chase goes on from where the last call
    /// stopped.
    pub fn measure(&mut self) -> Vec<(&'static str, f64)> {
        let dram = median(&self.chase.time_from(&mut self.at, LOADS, SAMPLES));
        let l1 = median(&self.l1.time(loads_for(self.l1.lines()), SAMPLES));
        let mut out = vec![(DRAM_KEY, dram), (L1_KEY, l1), (XADD_KEY, median(&xadd_chain(XADD_OPS, SAMPLES)))];
        if let Ok(t) = line_transfer(TRANSFER_SAMPLES) {
            out.push((TRANSFER_KEY, t));
        }
        out
    }
}
