//! `fsmeta calibrate`: measure this host and write a machine profile.
//!
//! DESIGN.md: "a machine we can touch is measured, not assumed". Only
//! microbenchmarks run here, never a filesystem:
//! - cache-line transfers between one pair of CPUs per distance class the
//!   host offers (SMT sibling, same LLC, same socket, other socket; pairs
//!   classified from sysfs, [`sysfs`]): load/store and CAS ping-pong, one
//!   way = half the round trip ([`transfer`]);
//! - atomics: a dependent chain of uncontended `lock xadd`, and `fetch_add`
//!   on one line hammered by two CPUs ([`chase::xadd_chain`],
//!   [`transfer::contended_add`]);
//! - load latency by a dependent pointer chase over working sets from
//!   4 KiB up to 8x the LLC ([`chase`]), with its plateaus and knees
//!   ([`plateau`]) reported beside the cache sizes sysfs gives.
//!
//! Every figure is the median of `repeat` samples with its p10-p90 spread
//! ([`stats::Spread`]). [`render`] turns a [`Calibration`] into a profile
//! that [`crate::machine::load_profile`] accepts, each value with a comment
//! saying how it was measured.
//!
//! These measurements are of the host and differ from run to run; nothing
//! here is called by `fsmeta run`, and nothing below this layer imports it.

pub mod chase;
pub mod derive;
pub mod fresh;
pub mod host;
pub mod loop_load;
pub mod memmove;
pub mod mitigation;
pub mod plateau;
pub mod render;
pub mod returns;
pub mod sched;
pub mod stats;
pub mod storage;
pub mod sysfs;
pub mod tracepoint;
pub mod transfer;

mod pin;

use crate::machine::Distance;
use stats::Spread;
use std::time::Instant;
use sysfs::HostTopology;

pub use pin::{allowed_cpus, pin_to};

/// Why calibration stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    /// A sysfs file could not be read.
    #[error("cannot read {path}: {detail}")]
    Sysfs {
        /// The file.
        path: String,
        /// The I/O error.
        detail: String,
    },
    /// sysfs describes no topology a profile can hold, or a file is
    /// malformed.
    #[error("host topology: {0}")]
    Topology(String),
    /// A thread could not be pinned, or the allowed CPUs not read.
    #[error("cannot pin to CPU {}: {detail}", cpu.map_or("?".to_string(), |c| c.to_string()))]
    Affinity {
        /// The CPU asked for (`None`: reading the allowed set failed).
        cpu: Option<u32>,
        /// The OS error.
        detail: String,
    },
    /// Something the host lacks (one allowed CPU, a cache level).
    #[error("cannot calibrate this host: {0}")]
    Unsupported(String),
    /// `repeat` or another option is out of range.
    #[error("{0}")]
    Option(String),
}

/// The largest chase working set by default for an LLC of `llc_bytes`:
/// 8x the LLC, clamped to 64 MiB..4 GiB, so that DRAM's window (from 4x
/// the LLC up, [`derive::fit_levels`]) holds a size up to an LLC of
/// 1 GiB (a 2-vCPU VM of a Xeon 6 model 207 lists a 260 MiB L3).
pub fn default_max_chase(llc_bytes: u64) -> usize {
    usize::try_from(llc_bytes.saturating_mul(8))
        .unwrap_or(usize::MAX)
        .clamp(64 << 20, 4 << 30)
}

/// What to measure and how often.
#[derive(Debug, Clone)]
pub struct Options {
    /// Samples per measurement (at least 3): medians and p10-p90 are over
    /// these.
    pub repeat: usize,
    /// Largest chase working set in bytes, 64 KiB to 4 GiB (default:
    /// [`default_max_chase`]).
    pub max_chase_bytes: Option<usize>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            repeat: DEFAULT_REPEAT,
            max_chase_bytes: None,
        }
    }
}

/// Default samples per measurement: enough for a stable median and a
/// p10-p90 spread, and a whole calibration within 60 s on 2 CPUs.
pub const DEFAULT_REPEAT: usize = 15;

/// Round trips per ping-pong sample.
const ROUND_TRIPS: u64 = 2000;
/// Operations per atomic sample (uncontended chain and contended).
const ATOMIC_OPS: u64 = 200_000;

/// Transfers between one pair of CPUs.
#[derive(Debug, Clone)]
pub struct PairTransfer {
    /// Their distance class.
    pub distance: Distance,
    /// Initiator CPU.
    pub a: u32,
    /// Responder CPU.
    pub b: u32,
    /// One-way ns, load/store ping-pong.
    pub load_store: Spread,
    /// One-way ns, CAS ping-pong (the method of the published figures).
    pub cas: Spread,
    /// ns per `fetch_add` on `a` while `b` hammers the same line, over
    /// the samples in which the two overlapped (at least
    /// [`CONTENDED_HANDOFFS`] of `a`'s operations followed one of `b`'s);
    /// `None` if none did.
    pub contended_add: Option<Spread>,
    /// Samples of the contended measurement in all.
    pub contended_samples: usize,
    /// Fraction of `a`'s operations that followed one of `b`'s, over the
    /// overlapping samples.
    pub handoffs: Option<Spread>,
}

/// Least fraction of operations following the other CPU's for a contended
/// sample to count (below it the other CPU was mostly descheduled).
pub const CONTENDED_HANDOFFS: f64 = 0.05;

/// One working-set size of the pointer chase.
#[derive(Debug, Clone)]
pub struct ChasePoint {
    /// Working set, bytes.
    pub bytes: usize,
    /// Dependent loads per sample.
    pub loads: u64,
    /// ns per load.
    pub ns: Spread,
    /// Raw samples (ns per load), for pooling over a window of sizes.
    pub samples: Vec<f64>,
}

/// Everything one calibration measured.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The host's CPUs and caches (sysfs).
    pub host: HostTopology,
    /// CPU the single-CPU chains (chase, uncontended atomics) ran on.
    pub cpu: u32,
    /// One pair per reachable distance class, nearest first.
    pub transfers: Vec<PairTransfer>,
    /// ns per uncontended `lock xadd` in a dependent chain.
    pub atomic: Spread,
    /// The chase, ascending in size.
    pub chase: Vec<ChasePoint>,
    /// Whether the large chase buffers asked for huge pages successfully.
    pub huge_pages: bool,
    /// One enabled tracepoint's cost, or why it was not measured.
    pub tracepoint: Result<tracepoint::TracepointCost, tracepoint::NotMeasured>,
    /// What the kernel's Spectre v2 mitigation adds to an indirect call,
    /// or why it was not measured.
    pub indirect_call: Result<mitigation::IndirectCallCost, mitigation::NotMeasured>,
    /// What the kernel's return mitigation (SRSO Safe RET, the untrained
    /// return thunk) adds to a return, or why it was not measured.
    pub returns: Result<returns::ReturnCost, mitigation::NotMeasured>,
    /// `fsync` times of a sparse image after a btrfs commit's writes, in
    /// the folder the lab makes its images in, or why they were not
    /// measured.
    pub storage: Result<storage::StorageCost, storage::NotMeasured>,
    /// A wake round trip and a thread stop with the woken thread on
    /// another, idle CPU, and a thread stop placed by the scheduler
    /// ([`sched`]).
    pub sched: Result<sched::SchedCost, sched::NotMeasured>,
    /// ns per line of a new object zeroed in lines no cache holds
    /// ([`fresh`]), over the chase's largest working set.
    pub fresh_line: Spread,
    /// ns per L1 load in a hot loop's body ([`loop_load`]).
    pub loop_load: Spread,
    /// ns per 64 bytes of the kernel's `memmove` inside a leaf
    /// ([`memmove`]); `None` where it was not measured (off x86-64).
    pub memmove: Option<MemmoveCost>,
    /// Samples per measurement.
    pub repeat: usize,
    /// Wall time of the measurements, s.
    pub wall_s: f64,
}

/// Runs every measurement on this host. `progress` hears one line per
/// step.
pub fn calibrate(opts: &Options, progress: &dyn Fn(&str)) -> Result<Calibration, CalibrateError> {
    if !(3..=10_000).contains(&opts.repeat) {
        return Err(CalibrateError::Option(format!("--repeat {}: expected 3 to 10000", opts.repeat)));
    }
    let start = Instant::now();
    let host = HostTopology::parse(&sysfs::Snapshot::read(std::path::Path::new(sysfs::SYSFS_CPU_ROOT))?)?;
    let allowed = allowed_cpus()?;
    let pairs = host.representative_pairs(&allowed);
    if pairs.is_empty() {
        return Err(CalibrateError::Unsupported(format!(
            "cache-line transfers need two CPUs this process may run on; allowed: {allowed:?}"
        )));
    }
    let n = opts.repeat;
    let mut transfers = Vec::new();
    for &(distance, a, b) in &pairs {
        progress(&format!("transfers {} (CPU {a} <-> CPU {b})", distance.name()));
        let spread = |v: Vec<f64>| Spread::of(&v).ok_or_else(|| no_samples(distance.name()));
        transfers.push(PairTransfer {
            load_store: spread(transfer::ping_pong(a, b, transfer::Protocol::LoadStore, ROUND_TRIPS, n)?)?,
            cas: spread(transfer::ping_pong(a, b, transfer::Protocol::Cas, ROUND_TRIPS, n)?)?,
            ..contended(distance, a, b, n)?
        });
    }
    let cpu = pairs[0].1;
    let llc = host
        .cpu(cpu)
        .and_then(|c| c.llc())
        .ok_or_else(|| CalibrateError::Unsupported(format!("sysfs lists no data cache for CPU {cpu}")))?;
    let max = opts.max_chase_bytes.unwrap_or_else(|| default_max_chase(llc.size));
    if !(64 << 10..=4 << 30).contains(&max) {
        return Err(CalibrateError::Option(format!(
            "largest chase working set {max} B: expected 64 KiB to 4 GiB"
        )));
    }
    let SingleCpu {
        atomic,
        chase,
        huge_pages,
        tracepoint,
        indirect_call,
        returns,
        fresh_line,
        loop_load,
        memmove,
    } = single_cpu(cpu, n, max, progress)?;
    let sched = match sched::pick_pair(&pairs) {
        Some((a, b)) => {
            progress(&format!("a thread on an idle CPU woken, and stopped (CPU {a} -> CPU {b})"));
            sched::measure(a, b, n)
        }
        None => Err(sched::NotMeasured("no pair of CPUs".into())),
    };
    progress("the images' folder: fsync after a btrfs commit's writes");
    let storage = storage::measure(&std::env::temp_dir());
    Ok(Calibration {
        host,
        cpu,
        transfers,
        atomic,
        chase,
        huge_pages,
        tracepoint,
        indirect_call,
        returns,
        storage,
        sched,
        fresh_line,
        loop_load,
        memmove,
        repeat: n,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// The contended measurement of one pair (the ping-pong fields empty).
fn contended(distance: Distance, a: u32, b: u32, n: usize) -> Result<PairTransfer, CalibrateError> {
    let all = transfer::contended_add(a, b, ATOMIC_OPS, n)?;
    let overlapped: Vec<_> = all.iter().filter(|c| c.handoffs >= CONTENDED_HANDOFFS).collect();
    let empty = Spread {
        median: f64::NAN,
        p10: f64::NAN,
        p90: f64::NAN,
        n: 0,
    };
    Ok(PairTransfer {
        distance,
        a,
        b,
        load_store: empty,
        cas: empty,
        contended_add: Spread::of(&overlapped.iter().map(|c| c.ns).collect::<Vec<_>>()),
        contended_samples: all.len(),
        handoffs: Spread::of(&overlapped.iter().map(|c| c.handoffs).collect::<Vec<_>>()),
    })
}

fn no_samples(what: &str) -> CalibrateError {
    CalibrateError::Unsupported(format!("{what}: no sample was taken"))
}

/// What one pinned CPU measures alone (the fields of [`Calibration`] of
/// the same names).
struct SingleCpu {
    atomic: Spread,
    chase: Vec<ChasePoint>,
    huge_pages: bool,
    tracepoint: Result<tracepoint::TracepointCost, tracepoint::NotMeasured>,
    indirect_call: Result<mitigation::IndirectCallCost, mitigation::NotMeasured>,
    returns: Result<returns::ReturnCost, mitigation::NotMeasured>,
    fresh_line: Spread,
    loop_load: Spread,
    memmove: Option<MemmoveCost>,
}

/// The three moves of [`memmove`], ns per 64 bytes, and how the forward
/// ones were made.
#[derive(Clone, Debug)]
pub struct MemmoveCost {
    /// The items' data moved up ([`memmove::backward`]).
    pub backward: Spread,
    /// The headers moved down by one header ([`memmove::forward_near`]).
    pub forward_near: Spread,
    /// The headers moved down by three ([`memmove::forward_far`]).
    pub forward: Spread,
    /// `rep movsb` or 32-byte turns, as `__memmove` picks on this CPU.
    pub how: memmove::Forward,
}

impl MemmoveCost {
    /// The three moves on the calling thread (pin it first), `n` samples
    /// each; `None` where nothing is measured (off x86-64).
    fn measure(n: usize) -> Option<MemmoveCost> {
        let how = memmove::Forward::of_cpuinfo(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default());
        Some(MemmoveCost {
            backward: Spread::of(&memmove::backward(n))?,
            forward_near: Spread::of(&memmove::forward_near(n, how))?,
            forward: Spread::of(&memmove::forward_far(n, how))?,
            how,
        })
    }
}

fn single_cpu(cpu: u32, n: usize, max: usize, progress: &dyn Fn(&str)) -> Result<SingleCpu, CalibrateError> {
    progress(&format!("uncontended lock xadd chain (CPU {cpu})"));
    progress(&format!("pointer chase 4 KiB .. {} MiB (CPU {cpu})", max >> 20));
    progress(&format!("an enabled tracepoint, kept and filtered out (CPU {cpu})"));
    progress(&format!("an indirect call through the kernel's Spectre v2 sequence (CPU {cpu})"));
    progress(&format!("a return through the kernel's return thunk (CPU {cpu})"));
    progress(&format!("new 1 KiB objects zeroed where no cache holds them (CPU {cpu})"));
    progress(&format!("independent loads in a hot loop's body (CPU {cpu})"));
    progress(&format!("the kernel's memmove inside a btrfs leaf, up and down (CPU {cpu})"));
    std::thread::scope(|s| {
        s.spawn(|| {
            pin_to(cpu)?;
            let atomic = Spread::of(&chase::xadd_chain(ATOMIC_OPS, n)).ok_or_else(|| no_samples("xadd"))?;
            let (points, huge) = chase_curve(&chase::sizes(max), n)?;
            let fresh_line = Spread::of(&fresh::fresh_line_ns(max, n)).ok_or_else(|| no_samples("fresh lines"))?;
            let loop_load = Spread::of(&loop_load::loop_load_ns(n)).ok_or_else(|| no_samples("loop loads"))?;
            Ok(SingleCpu {
                atomic,
                chase: points,
                huge_pages: huge,
                tracepoint: tracepoint::measure(),
                indirect_call: mitigation::measure(),
                returns: returns::measure(),
                fresh_line,
                loop_load,
                memmove: MemmoveCost::measure(n),
            })
        })
        .join()
        .map_err(|_| CalibrateError::Unsupported("the measuring thread panicked".to_string()))?
    })
}

/// The chase at each size in `sizes`, `n` samples each, on the calling
/// thread (pin it first); also whether every buffer of 2 MiB or more got
/// its huge-page advice.
pub fn chase_curve(sizes: &[usize], n: usize) -> Result<(Vec<ChasePoint>, bool), CalibrateError> {
    let mut huge = true;
    let mut out = Vec::with_capacity(sizes.len());
    for &bytes in sizes {
        let c = chase::Chase::new(bytes);
        if bytes >= 2 << 20 {
            huge &= c.huge_pages;
        }
        let loads = chase::loads_for(c.lines());
        let samples = c.time(loads, n);
        let ns = Spread::of(&samples).ok_or_else(|| no_samples("chase"))?;
        out.push(ChasePoint { bytes, loads, ns, samples });
    }
    Ok((out, huge))
}
