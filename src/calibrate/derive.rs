//! From a [`Calibration`] to a machine profile: which measurement gives
//! which field, and how each was found ([`derive()`]).
//!
//! Load latency of each cache level is the chase's samples pooled over the
//! sizes well inside that level as sysfs sizes it: up to half the L1d for
//! L1; from twice the level below to half this level for L2 and L3; from
//! four times the LLC up for DRAM. The knees the chase finds on its own
//! ([`super::plateau`]) are printed beside the sysfs sizes.
//!
//! A level whose latency jumps (more than doubles within a factor of 4 in
//! size) past its window's start, at most an eighth of the way to its
//! sysfs size, is taken at the last size before the rise (the knee,
//! [`LevelFit::effective_bytes`]): its latency pooled from past the level
//! below up to the knee, the next level's window from twice the knee and
//! DRAM's from four times it. A virtual machine may list its host's whole
//! L3 (a 2-vCPU VM of a Xeon 6 model 207 lists 260 MiB) while the chase
//! finds 35 ns only up to 6 MiB and 150 ns past 8 MiB; pooled over the
//! sysfs window, the "L3" latency would be DRAM's.

use super::plateau::{Plateau, plateaus};
use super::stats::Spread;
use super::sysfs::Cpu;
use super::{CalibrateError, Calibration};
use crate::machine::profile::CacheLevels;
use crate::machine::{Distance, MachineProfile};
use std::fmt::Write as _;

mod measured;
use measured::{fresh_line, loop_load, memmove, mitigation, sched, storage, tracepoint};

/// The load latency of one level of the hierarchy.
#[derive(Debug, Clone)]
pub struct LevelFit {
    /// `L1d`, `L2`, `L3`, ..., `DRAM`.
    pub name: String,
    /// Size sysfs gives (`None` for DRAM).
    pub sysfs_bytes: Option<u64>,
    /// Ways sysfs gives (0 if it does not say; 0 for DRAM).
    pub ways: u32,
    /// Chase sizes pooled, bytes (smallest, largest).
    pub window: (usize, usize),
    /// ns per load over the pooled samples.
    pub ns: Spread,
    /// End of the plateau the window lies on, if the chase found one.
    pub knee: Option<usize>,
    /// The size the level was taken at when its latency jumps far below
    /// the sysfs size (see the module header), bytes; `None` when the
    /// sysfs size stands.
    pub effective_bytes: Option<usize>,
}

/// The effective window of a level sysfs sizes `size`, the level below
/// being `below`: when the chase's latency more than doubles within a
/// factor of [`JUMP_SPAN`] in size from some size past `lo`, and the knee
/// (the last size before that rise that is still within [`LEVEL_RISE`]
/// of where it started) is at most an eighth of `size`, the sizes past
/// `below` up to the knee. (A jump, not a plateau's end: a VM's noise
/// breaks plateaus. And the jump may be spread over two or three chase
/// sizes: on a Xeon 6 VM the LLC's 40 ns became DRAM's 134 ns from 4 to
/// 12 MiB without doubling between any two neighbours.)
fn effective_window(curve: &[(usize, f64)], below: usize, lo: usize, size: usize) -> Option<(usize, usize)> {
    let knee = curve.iter().enumerate().filter(|(_, p)| p.0 >= lo).find_map(|(i, &(s, ns))| {
        let after = &curve[i + 1..];
        let jump = after
            .iter()
            .take_while(|p| p.0 <= s.saturating_mul(JUMP_SPAN))
            .position(|p| p.1 > 2.0 * ns)?;
        let level = after[..jump].iter().take_while(|p| p.1 <= LEVEL_RISE * ns).last();
        Some(level.map_or(s, |p| p.0))
    })?;
    let first = curve.iter().find(|p| p.0 > below)?.0;
    (knee.saturating_mul(8) <= size && first <= knee).then_some((first, knee))
}

/// A warning when the chase's latency within the L1d's sysfs size, at
/// three quarters of it, is more than [`SHARED_L1_RISE`] times the L1
/// figure: the L1d holds less than sysfs says, as when a thread outside
/// this VM runs on the physical core's other SMT thread and shares it
/// (seen on the family 23 model 1 host, session 64: 24 KiB of a 32 KiB
/// L1d at L2 latency in one of six runs that morning, and `hit_ns` 10%
/// above the runs before).
fn shared_l1(cal: &Calibration, levels: &[LevelFit]) -> Option<String> {
    let l1 = levels.first().filter(|l| l.name == "L1d")?;
    let size = usize::try_from(l1.sysfs_bytes?).ok()?;
    let at = cal.chase.iter().filter(|p| p.bytes <= size * 3 / 4).max_by_key(|p| p.bytes)?;
    (at.bytes > l1.window.1 && at.ns.median > SHARED_L1_RISE * l1.ns.median).then(|| {
        format!(
            "the chase's latency at {} ({:.2} ns) is {:.1}x the L1d's ({:.2} ns), within its sysfs size {}: the L1d holds less than sysfs says, as when another thread shares the physical core; the profile's figures may be a busy core's: measure again when the host is quiet",
            bytes(at.bytes as u64),
            at.ns.median,
            at.ns.median / l1.ns.median,
            l1.ns.median,
            bytes(size as u64)
        )
    })
}

/// How much slower than the L1d's figure a load within its sysfs size may
/// be before [`shared_l1`] warns: 1.5x.
pub(crate) const SHARED_L1_RISE: f64 = 1.5;

/// How far in size ([`effective_window`]) a level's latency may take to
/// more than double: a factor of 4.
const JUMP_SPAN: usize = 4;

/// A chase size still on a level's plateau ([`effective_window`]): at
/// most 25% above the latency the rise started from.
const LEVEL_RISE: f64 = 1.25;

/// Each cache level of `cpu` and DRAM with its chase latency.
pub fn fit_levels(cal: &Calibration, cpu: &Cpu) -> Result<Vec<LevelFit>, CalibrateError> {
    let curve: Vec<(usize, f64)> = cal.chase.iter().map(|p| (p.bytes, p.ns.median)).collect();
    let found = plateaus(&curve);
    let mut out = Vec::new();
    let mut below = 0usize;
    for c in &cpu.caches {
        let size = c.size as usize;
        let name = if c.level == 1 { "L1d".to_string() } else { format!("L{}", c.level) };
        let window = (2 * below, size / 2);
        let effective = if c.level == 1 {
            None
        } else {
            effective_window(&curve, below, window.0, size)
        };
        let mut fit = pool(cal, &found, name, Some(c.size), c.ways, effective.unwrap_or(window))?;
        fit.effective_bytes = effective.map(|w| w.1);
        out.push(fit);
        below = effective.map_or(size, |w| w.1);
    }
    if below == 0 {
        return Err(CalibrateError::Unsupported(format!("sysfs lists no data cache for CPU {}", cpu.id)));
    }
    out.push(pool(cal, &found, "DRAM".to_string(), None, 0, (4 * below, usize::MAX))?);
    Ok(out)
}

fn pool(
    cal: &Calibration,
    found: &[Plateau],
    name: String,
    sysfs_bytes: Option<u64>,
    ways: u32,
    (lo, hi): (usize, usize),
) -> Result<LevelFit, CalibrateError> {
    let inside: Vec<_> = cal.chase.iter().filter(|p| (lo..=hi).contains(&p.bytes)).collect();
    let (Some(first), Some(last)) = (inside.first(), inside.last()) else {
        return Err(CalibrateError::Unsupported(format!(
            "{name}: the chase has no working set between {} and {}",
            bytes(lo as u64),
            if hi == usize::MAX {
                "the largest".to_string()
            } else {
                bytes(hi as u64)
            }
        )));
    };
    let samples: Vec<f64> = inside.iter().flat_map(|p| p.samples.iter().copied()).collect();
    let ns = Spread::of(&samples).ok_or_else(|| super::no_samples(&name))?;
    let mid = first.bytes / 2 + last.bytes / 2;
    let knee = found
        .iter()
        .find(|p| (p.first_bytes..=p.knee_bytes).contains(&mid) || (first.bytes..=last.bytes).contains(&p.knee_bytes))
        .map(|p| p.knee_bytes);
    Ok(LevelFit {
        name,
        sysfs_bytes,
        ways,
        window: (first.bytes, last.bytes),
        ns,
        knee,
        effective_bytes: None,
    })
}

/// Transfer latency (CAS, one way) per class smt, same_llc, same_socket,
/// cross_socket, and a note for each: measured, or which measured class it
/// repeats (unreachable classes repeat the nearest measured one, nearer
/// side first, as the built-in profiles do).
fn transfers(cal: &Calibration) -> [(f64, String); 4] {
    let classes = [Distance::SmtSibling, Distance::SameLlc, Distance::SameSocket, Distance::CrossSocket];
    let measured: Vec<Option<&super::PairTransfer>> = classes.iter().map(|d| cal.transfers.iter().find(|t| t.distance == *d)).collect();
    std::array::from_fn(|i| {
        if let Some(t) = measured[i] {
            let how = format!(
                "CAS ping-pong CPU {} <-> CPU {}, half the round trip, {} round trips per sample: p10-p90 {:.2}-{:.2} ns, {} samples; load/store ping-pong {}",
                t.a,
                t.b,
                super::ROUND_TRIPS,
                t.cas.p10,
                t.cas.p90,
                t.cas.n,
                t.load_store.show(2)
            );
            return (t.cas.median, how);
        }
        let near = (1..4)
            .flat_map(|k| [i.checked_sub(k), Some(i + k)])
            .flatten()
            .find(|&j| j < 4 && measured[j].is_some());
        let Some(j) = near.and_then(|j| measured[j].map(|t| (j, t))) else {
            return (0.0, "not measured".to_string());
        };
        let (j, t) = j;
        let why = match classes[i] {
            Distance::SmtSibling => "no SMT siblings this process may run on",
            Distance::SameSocket => "no two LLC domains in one socket this process may run on",
            _ => "no other socket this process may run on",
        };
        (
            t.cas.median,
            format!("not measured ({why}); repeats {} (nearest measured)", classes[j].name()),
        )
    })
}

/// Rounds to 0.01 ns (the precision written).
fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Rounds to 0.001 (the precision written).
fn r3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A profile derived from a calibration, with how each field was found.
#[derive(Debug, Clone)]
pub struct Derived {
    /// The profile (validated).
    pub profile: MachineProfile,
    /// Field name (`hit_ns`, `levels.l2_hit_ns`, ...) -> how it was
    /// measured and its spread, or where it comes from.
    pub notes: Vec<(&'static str, String)>,
    /// The chase's latency per level, with the sysfs sizes and knees.
    pub levels: Vec<LevelFit>,
    /// What looks wrong with the measurement (printed by `fsmeta
    /// calibrate` and written into the profile's header).
    pub warnings: Vec<String>,
}

impl Derived {
    /// The note on `field` (empty if none).
    pub fn note(&self, field: &str) -> &str {
        self.notes.iter().find(|(f, _)| *f == field).map_or("", |(_, n)| n.as_str())
    }
}

/// The profile a calibration gives, named `name`, for a CPU described as
/// `cpu`; validated as [`crate::machine::load_profile`] would.
pub fn derive(cal: &Calibration, name: &str, cpu: &str) -> Result<Derived, CalibrateError> {
    let c = cal
        .host
        .cpu(cal.cpu)
        .ok_or_else(|| CalibrateError::Unsupported(format!("CPU {} is not online", cal.cpu)))?;
    let levels = fit_levels(cal, c)?;
    let mut notes = Vec::new();
    let [hit, l2_hit, llc_hit, memory] = load_latencies(&levels, &mut notes);
    notes.push((
        "atomic_ns",
        format!(
            "dependent chain of uncontended lock xadd (fetch_add) on a line this CPU owns, {} ops per sample: p10-p90 {:.2}-{:.2} ns, {} samples",
            super::ATOMIC_OPS,
            cal.atomic.p10,
            cal.atomic.p90,
            cal.atomic.n
        ),
    ));
    let [smt, same_llc, same_socket, cross] = transfer_latencies(cal, hit, &mut notes);
    let g = geometry(c, cal.host.topology.clone(), &levels, &mut notes)?;
    let profile = MachineProfile {
        name: name.to_string(),
        source: "measured on this host by fsmeta calibrate (comments: method, medians, p10-p90 spreads); smt_throughput not measured"
            .to_string(),
        cpu: cpu.to_string(),
        topology: cal.host.topology.clone(),
        hit_ns: hit,
        atomic_ns: r2(cal.atomic.median),
        smt_ns: smt,
        same_llc_ns: same_llc,
        same_socket_ns: same_socket,
        cross_socket_ns: cross,
        socket_distance_ns: None,
        memory_ns: memory,
        l1d_bytes: g.l1d,
        l2_bytes: g.l2,
        llc_bytes_per_socket: g.llc_per_socket,
        cache_ways: g.ways,
        smt_throughput: g.smt_throughput,
        levels: Some(CacheLevels {
            l1d_ways: g.l1d_ways,
            l2_ways: g.l2_ways,
            l2_hit_ns: l2_hit,
            llc_hit_ns: llc_hit,
            fresh_line_ns: Some(fresh_line(cal, &mut notes)),
            loop_load_ns: loop_load(cal, &mut notes),
        }),
        tracepoint: tracepoint(cal, &mut notes),
        mitigation: mitigation(cal, &mut notes),
        storage: storage(cal, &mut notes),
        sched: sched(cal, &mut notes),
        memmove: memmove(cal, &mut notes),
        knob: None,
    };
    profile
        .validate()
        .map_err(|e| CalibrateError::Unsupported(format!("the measured profile is not valid: {e}")))?;
    let warnings = shared_l1(cal, &levels).into_iter().collect();
    Ok(Derived {
        profile,
        notes,
        levels,
        warnings,
    })
}

/// hit, L2 hit, LLC hit and memory latency (ns, rounded), each at least
/// the one before.
fn load_latencies(levels: &[LevelFit], notes: &mut Vec<(&'static str, String)>) -> [f64; 4] {
    let n = levels.len();
    let pick = [0, 1.min(n - 2), n - 2, n - 1].map(|i| &levels[i]);
    let mut v = pick.map(|f| r2(f.ns.median));
    let raised = monotone(&mut v);
    let fields = ["hit_ns", "levels.l2_hit_ns", "levels.llc_hit_ns", "memory_ns"];
    let what = ["L1d load-to-use", "L2 load-to-use", "LLC load-to-use", "DRAM"];
    for i in 0..4 {
        let f = pick[i];
        let inside = match (f.sysfs_bytes, f.effective_bytes) {
            (_, Some(e)) => format!(
                "up to the chase's knee at {}, far below the {} {} of sysfs: the level taken at {}",
                bytes(e as u64),
                bytes(f.sysfs_bytes.unwrap_or(0)),
                f.name,
                bytes(e as u64)
            ),
            (Some(b), None) => format!("well inside the {} {} of sysfs", bytes(b), f.name),
            (None, _) => "at least 4x the LLC".to_string(),
        };
        let mut note = format!(
            "{}: pointer chase over {} to {} ({inside}), samples pooled: p10-p90 {:.2}-{:.2} ns, {} samples",
            what[i],
            bytes(f.window.0 as u64),
            bytes(f.window.1 as u64),
            f.ns.p10,
            f.ns.p90,
            f.ns.n
        );
        if raised[i] {
            let _ = write!(
                note,
                "; raised from {:.2} ns to the level below (load latencies may not fall with distance)",
                r2(f.ns.median)
            );
        }
        notes.push((fields[i], note));
    }
    v
}

/// smt, same_llc, same_socket and cross_socket transfer latencies (ns,
/// rounded), each at least the one before and at least `hit`.
fn transfer_latencies(cal: &Calibration, hit: f64, notes: &mut Vec<(&'static str, String)>) -> [f64; 4] {
    let t = transfers(cal);
    let mut order = [hit, r2(t[0].0), r2(t[1].0), r2(t[2].0), r2(t[3].0)];
    let raised = monotone(&mut order);
    let fields = ["smt_ns", "same_llc_ns", "same_socket_ns", "cross_socket_ns"];
    for (k, (ns, note)) in t.into_iter().enumerate() {
        let mut note = note;
        if raised[k + 1] {
            let _ = write!(
                note,
                "; raised from {ns:.2} ns to the nearer class's value (transfers may not fall with distance)"
            );
        }
        notes.push((fields[k], note));
    }
    [order[1], order[2], order[3], order[4]]
}

/// Cache geometry from sysfs.
struct Geometry {
    l1d: u64,
    l2: u64,
    llc_per_socket: u64,
    ways: u32,
    l1d_ways: u32,
    l2_ways: u32,
    smt_throughput: f64,
}

fn geometry(
    cpu: &Cpu,
    t: crate::machine::Topology,
    levels: &[LevelFit],
    notes: &mut Vec<(&'static str, String)>,
) -> Result<Geometry, CalibrateError> {
    let llc = cpu
        .llc()
        .ok_or_else(|| CalibrateError::Unsupported(format!("sysfs lists no data cache for CPU {}", cpu.id)))?;
    let l1 = cpu.cache(1).unwrap_or(llc);
    let l2 = cpu.cache(2).unwrap_or(llc);
    let n = levels.len();
    let knee = |i: usize| {
        levels[i].knee.map_or("no plateau found there".to_string(), |k| {
            format!("the chase's plateau ends at {}", bytes(k as u64))
        })
    };
    notes.push(("l1d_bytes", format!("sysfs L1d size; {}", knee(0))));
    notes.push(("l2_bytes", format!("sysfs L2 size; {}", knee(1.min(n - 2)))));
    notes.push((
        "llc_bytes_per_socket",
        format!(
            "sysfs LLC size {} x {} LLC domain(s) per socket; {}",
            bytes(llc.size),
            t.llcs_per_socket,
            knee(n - 2)
        ),
    ));
    let ways_note = if llc.ways == 0 {
        "sysfs gives no ways_of_associativity for the LLC: ASSUMED 16"
    } else {
        "sysfs ways_of_associativity of the LLC"
    };
    notes.push(("cache_ways", ways_note.to_string()));
    let smt_note = if t.smt == 1 {
        "1.0: no SMT (as the built-in profiles without SMT); not measured"
    } else {
        "not measured: 1.25 ASSUMED, as every built-in profile (Marr et al., ITJ 6(1) 2002: up to 30%)"
    };
    notes.push(("smt_throughput", smt_note.to_string()));
    Ok(Geometry {
        l1d: l1.size,
        l2: l2.size,
        llc_per_socket: llc.size * u64::from(t.llcs_per_socket),
        ways: if llc.ways == 0 { 16 } else { llc.ways },
        l1d_ways: l1.ways.max(1),
        l2_ways: l2.ways.max(1),
        smt_throughput: if t.smt == 1 { 1.0 } else { 1.25 },
    })
}

/// Raises each value to at least the one before it; which were raised.
fn monotone(xs: &mut [f64]) -> Vec<bool> {
    let mut raised = vec![false; xs.len()];
    for i in 1..xs.len() {
        if xs[i] < xs[i - 1] {
            xs[i] = xs[i - 1];
            raised[i] = true;
        }
    }
    raised
}

/// Formats bytes in B, KiB, MiB or GiB (whole or one decimal).
pub fn bytes(n: u64) -> String {
    for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if n >= size {
            let v = n as f64 / size as f64;
            return if n.is_multiple_of(size) {
                format!("{v} {unit}")
            } else {
                format!("{v:.1} {unit}")
            };
        }
    }
    format!("{n} B")
}
