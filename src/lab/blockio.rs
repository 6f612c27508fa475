//! The block requests of the lab's loop device, per phase (live only).
//!
//! `block_rq_issue` and `block_rq_complete` (6.18 `include/trace/events/block.h`),
//! filtered on the loop device's number in the run's own tracefs instance,
//! give each request the driver took and when it finished:
//! `MAJ,MIN RWBS BYTES (CMD) SECTOR + NR_SECTOR IOPRIO [COMM]` at issue,
//! `MAJ,MIN RWBS (CMD) SECTOR + NR_SECTOR IOPRIO [ERROR]` at completion.
//! The loop driver (`drivers/block/loop.c`) serves a write by writing the
//! image file through its page cache and a flush (`REQ_OP_FLUSH`, RWBS
//! `FF`, no sectors) by `vfs_fsync` of the image file: the host
//! filesystem's writeback of what the writes left dirty, its journal and
//! the host disk's cache flush. So a flush's time is the storage cost that
//! a commit waits for (`write_all_supers`: the flush of
//! `barrier_all_devices`, then the primary superblock written with FUA,
//! which a device without FUA, as the loop device, turns into a write and
//! a flush after it: `blk_insert_flush`).
//!
//! Per phase (the phase a request was issued in): `io_writes` (write
//! requests), `io_write_kib`, `io_write_runs` (the contiguous runs of
//! sectors they wrote, adjacent or overlapping requests merged: the host
//! filesystem writes each run of the image's dirty pages back as one
//! request, and a flush takes longer with more runs, docs/lab-hosts.md
//! session 70; a superblock's write is a run of its own), `io_flushes`,
//! `io_flush_us` (their time from issue to completion, summed) and
//! `io_busy_us` (the time with at least one write or flush of the device
//! in flight): how much of a phase's wall time is the image's I/O. The btrfs twin counts the tree blocks written
//! and, on a profile with a `[storage]` table, prices the flushes
//! (`io_flush_us`); the rest is live only.
//!
//! Two kinds of completion have no issue of their own and are skipped: a
//! write of no sectors (the empty PREFLUSH bio of `barrier_all_devices`,
//! which the flush machinery completes without issuing it) and the second
//! completion of a FUA-emulated write (`blk_flush_restore_request` at the
//! end of its flush sequence, again with no sectors left). Requests are
//! queued whatever their phase, so that one issued before the first
//! phase cannot take another's completion.

use super::Metrics;
use super::trace::{EventSpec, Record};
use std::collections::{BTreeMap, VecDeque};

/// The two events, filtered on kernel device number `dev`
/// (`MAJOR << 20 | MINOR`, [`super::host::Fs::dev`]).
pub fn events(dev: u64) -> [EventSpec; 2] {
    let ev = |event| EventSpec {
        event,
        filter: Some(format!("dev == {dev}")),
        stack: false,
    };
    [ev("block/block_rq_issue"), ev("block/block_rq_complete")]
}

/// What a request is, from its RWBS text (`blk_fill_rwbs`: `F` for a
/// preflush, then the operation's letter: `W`, `R`, `D` for a discard, `F`
/// for a flush with no data, `N` for any other; then `F` for FUA, `S`,
/// `M`...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A write of data (possibly with a preflush or FUA).
    Write,
    /// A cache flush with no data (`FF`).
    Flush,
    /// Anything else (reads, discards).
    Other,
}

/// A request's kind from its RWBS and sector count.
pub fn kind(rwbs: &str, sectors: u64) -> Kind {
    let op = rwbs.trim_start_matches('F').chars().next();
    if rwbs.starts_with('F') && sectors == 0 && !rwbs.contains('W') && !rwbs.contains('R') {
        return Kind::Flush;
    }
    match op {
        Some('W') => Kind::Write,
        _ => Kind::Other,
    }
}

/// One request record: (issue?, kind, sector, sectors, bytes at issue).
fn request(r: &Record) -> Option<(bool, Kind, u64, u64, u64)> {
    let issue = match r.event.as_str() {
        "block_rq_issue" => true,
        "block_rq_complete" => false,
        _ => return None,
    };
    let t: Vec<&str> = r.body.split_whitespace().collect();
    let plus = t.iter().position(|x| *x == "+")?;
    let rwbs = t.get(1)?;
    let sector: u64 = t.get(plus.checked_sub(1)?)?.parse().ok()?;
    let sectors: u64 = t.get(plus + 1)?.parse().ok()?;
    let bytes = if issue { t.get(2)?.parse().ok()? } else { 0 };
    Some((issue, kind(rwbs, sectors), sector, sectors, bytes))
}

/// Per phase: the counts and times of [`put`].
#[derive(Debug, Default, Clone, PartialEq)]
struct PhaseIo {
    writes: f64,
    write_bytes: f64,
    /// Each write's `(first sector, sectors)`.
    extents: Vec<(u64, u64)>,
    flushes: f64,
    flush_ns: u64,
    /// In-flight intervals of the phase's requests, ns.
    spans: Vec<(u64, u64)>,
}

/// Puts each phase's requests into `m` (`recs` with their `phases`, as
/// [`super::trace::phases`] gives them; `names`, the phases to report,
/// each reported even without requests). A request whose completion is
/// not in the trace counts at issue but adds no time; records outside the
/// named phases are left out.
pub fn put(m: &mut Metrics, recs: &[Record], phases: &[Option<String>], names: &[&str]) {
    let mut by: BTreeMap<&str, PhaseIo> = names.iter().map(|n| (*n, PhaseIo::default())).collect();
    // Requests in flight, with their issue's time and phase: writes by
    // sector, flushes in order.
    let mut writes: BTreeMap<u64, (u64, Option<&str>)> = BTreeMap::new();
    let mut flushes: VecDeque<(u64, Option<&str>)> = VecDeque::new();
    for (r, ph) in recs.iter().zip(phases) {
        let Some((issue, kind, sector, sectors, bytes)) = request(r) else {
            continue;
        };
        let phase = ph.as_deref();
        if issue {
            let io = phase.and_then(|p| by.get_mut(p));
            match kind {
                Kind::Write => {
                    if let Some(io) = io {
                        io.writes += 1.0;
                        io.write_bytes += bytes as f64;
                        io.extents.push((sector, sectors));
                    }
                    writes.insert(sector, (r.ts_ns, phase));
                }
                Kind::Flush => {
                    if let Some(io) = io {
                        io.flushes += 1.0;
                    }
                    flushes.push_back((r.ts_ns, phase));
                }
                Kind::Other => {}
            }
            continue;
        }
        let started = match kind {
            Kind::Write if sectors > 0 => writes.remove(&sector),
            Kind::Flush => flushes.pop_front(),
            Kind::Write | Kind::Other => None,
        };
        let Some((t0, Some(p0))) = started else {
            continue;
        };
        if let Some(io) = by.get_mut(p0) {
            let t1 = r.ts_ns.max(t0);
            io.spans.push((t0, t1));
            if kind == Kind::Flush {
                io.flush_ns += t1 - t0;
            }
        }
    }
    for (phase, io) in by {
        m.insert(format!("phase.{phase}.io_writes"), io.writes);
        m.insert(format!("phase.{phase}.io_write_kib"), io.write_bytes / 1024.0);
        m.insert(format!("phase.{phase}.io_write_runs"), runs(io.extents) as f64);
        m.insert(format!("phase.{phase}.io_flushes"), io.flushes);
        m.insert(format!("phase.{phase}.io_flush_us"), io.flush_ns as f64 / 1e3);
        m.insert(format!("phase.{phase}.io_busy_us"), union_ns(io.spans) as f64 / 1e3);
    }
}

/// Every write request issued, in order: (its phase, first sector, bytes).
pub fn writes<'a>(recs: &[Record], phases: &'a [Option<String>]) -> Vec<(Option<&'a str>, u64, u64)> {
    recs.iter()
        .zip(phases)
        .filter_map(|(r, ph)| match request(r)? {
            (true, Kind::Write, sector, _, bytes) => Some((ph.as_deref(), sector, bytes)),
            _ => None,
        })
        .collect()
}

/// How many contiguous runs the extents `(first, count)` make, those
/// that touch or overlap merged into one.
fn runs(extents: Vec<(u64, u64)>) -> usize {
    merged(
        extents
            .into_iter()
            .map(|(first, count)| (first, first.saturating_add(count)))
            .collect(),
    )
    .len()
}

/// The length of the union of intervals `[a, b)`, ns.
fn union_ns(spans: Vec<(u64, u64)>) -> u64 {
    merged(spans).iter().map(|&(a, b)| b.saturating_sub(a)).sum()
}

/// Intervals `[a, b)` (`a <= b`) sorted, those that touch or overlap
/// merged into one.
fn merged(mut spans: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    spans.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::trace;

    #[test]
    fn rwbs_kinds() {
        assert_eq!(kind("FF", 0), Kind::Flush);
        assert_eq!(kind("WSM", 32), Kind::Write);
        assert_eq!(kind("FWS", 8), Kind::Write, "a write with a preflush is a write");
        assert_eq!(kind("WFS", 8), Kind::Write, "a FUA write");
        assert_eq!(kind("RA", 8), Kind::Other);
        assert_eq!(kind("N", 0), Kind::Other);
    }

    #[test]
    fn runs_merge_adjacent_and_overlapping_extents() {
        // 100..132 and 132..164 touch, 200..208 twice, 300 alone.
        assert_eq!(runs(vec![(132, 32), (300, 8), (100, 32), (200, 8), (200, 8)]), 3);
        // A gap of one sector keeps two runs.
        assert_eq!(runs(vec![(0, 32), (33, 32)]), 2);
        assert_eq!(runs(Vec::new()), 0);
    }

    #[test]
    fn union_merges_overlaps_and_keeps_gaps() {
        assert_eq!(union_ns(vec![(10, 20), (15, 30), (40, 45), (41, 42)]), 25);
        assert_eq!(union_ns(Vec::new()), 0);
    }

    /// Two phases: in `sync` two writes (overlapping) and two flushes, in
    /// `rm_fr` one write whose completion is missing; a read is ignored.
    #[test]
    fn requests_are_counted_and_timed_by_the_phase_they_were_issued_in() {
        let line = |ts: &str, ev: &str, body: &str| format!("  kworker/u8:3-9 [000] ..... {ts}: {ev}: {body}\n");
        // A flush and a write issued before the first phase, completed
        // inside it: they count nowhere and take no other's completion.
        let mut t = line("9.000000", "block_rq_issue", "7,0 FF 0 () 0 + 0 none,0,0 [kworker/1:2H]");
        t += &line("9.000100", "block_rq_issue", "7,0 WSM 16384 () 75872 + 32 be,0,4 [sync]");
        t += "  fsmeta-1 [000] ..... 10.000000: tracing_mark_write: fsmeta:sync\n";
        t += &line("10.000001", "block_rq_complete", "7,0 FF () 18446744073709551615 + 0 none,0,0 [0]");
        t += &line("10.000002", "block_rq_complete", "7,0 WSM () 75872 + 32 be,0,4 [0]");
        t += &line("10.000010", "block_rq_issue", "7,0 WSM 16384 () 75872 + 32 be,0,4 [sync]");
        t += &line("10.000012", "block_rq_issue", "7,0 WSM 16384 () 141408 + 32 be,0,4 [sync]");
        t += &line("10.000013", "block_rq_issue", "7,0 RA 4096 () 500 + 8 be,0,4 [sync]");
        t += &line("10.000030", "block_rq_complete", "7,0 WSM () 75872 + 32 be,0,4 [0]");
        t += &line("10.000040", "block_rq_complete", "7,0 WSM () 141408 + 32 be,0,4 [0]");
        t += &line("10.000045", "block_rq_complete", "7,0 WS () 0 + 0 none,0,0 [0]");
        t += &line("10.000050", "block_rq_issue", "7,0 FF 0 () 0 + 0 none,0,0 [kworker/1:2H]");
        t += &line("10.002050", "block_rq_complete", "7,0 FF () 18446744073709551615 + 0 none,0,0 [0]");
        t += &line("10.002060", "block_rq_issue", "7,0 FF 0 () 0 + 0 none,0,0 [kworker/1:2H]");
        t += &line("10.002160", "block_rq_complete", "7,0 FF () 18446744073709551615 + 0 none,0,0 [0]");
        // The FUA write's second completion (no sectors left) ends nothing.
        t += &line("10.002170", "block_rq_complete", "7,0 WSM () 75872 + 0 be,0,4 [0]");
        t += "  fsmeta-1 [000] ..... 10.003000: tracing_mark_write: fsmeta:rm_fr\n";
        t += &line("10.003010", "block_rq_issue", "7,0 WM 16384 () 76000 + 32 be,0,4 [umount]");
        // A FUA write: its data's completion, and the second one, with no
        // sectors, that ends its flush sequence, both after another write
        // at its sector is issued.
        t += &line("10.003020", "block_rq_issue", "7,0 WSM 4096 () 128 + 8 be,0,4 [umount]");
        t += &line("10.003030", "block_rq_complete", "7,0 WSM () 128 + 8 be,0,4 [0]");
        t += &line("10.003040", "block_rq_issue", "7,0 WSM 4096 () 128 + 8 be,0,4 [umount]");
        t += &line("10.003050", "block_rq_complete", "7,0 WSM () 128 + 0 be,0,4 [0]");
        t += &line("10.003090", "block_rq_complete", "7,0 WSM () 128 + 8 be,0,4 [0]");
        let recs = trace::parse(&t);
        let phases = trace::phases(&recs);
        let mut m = Metrics::new();
        put(&mut m, &recs, &phases, &["unlink", "sync", "rm_fr"]);
        assert_eq!(m["phase.sync.io_writes"], 2.0);
        assert_eq!(m["phase.sync.io_write_kib"], 32.0);
        assert_eq!(m["phase.sync.io_write_runs"], 2.0, "75872 and 141408, far apart");
        assert_eq!(m["phase.rm_fr.io_write_runs"], 2.0, "76000, and 128 written twice");
        assert_eq!(m["phase.unlink.io_write_runs"], 0.0);
        assert_eq!(m["phase.sync.io_flushes"], 2.0);
        assert!(
            (m["phase.sync.io_flush_us"] - 2100.0).abs() < 1e-6,
            "{}",
            m["phase.sync.io_flush_us"]
        );
        // Writes 10..40 us (30 us), then the flushes (2000 + 100 us).
        assert!((m["phase.sync.io_busy_us"] - 2130.0).abs() < 1e-6, "{}", m["phase.sync.io_busy_us"]);
        assert_eq!(m["phase.rm_fr.io_writes"], 3.0);
        // 76000 never completes (no time); the two writes at sector 128:
        // 10 us, then 50 us to the completion with sectors.
        assert!((m["phase.rm_fr.io_busy_us"] - 60.0).abs() < 1e-6, "{}", m["phase.rm_fr.io_busy_us"]);
        assert_eq!(m["phase.unlink.io_flushes"], 0.0, "reported without requests");
        let w = writes(&recs, &phases);
        assert_eq!(
            w,
            vec![
                (None, 75872, 16384),
                (Some("sync"), 75872, 16384),
                (Some("sync"), 141408, 16384),
                (Some("rm_fr"), 76000, 16384),
                (Some("rm_fr"), 128, 4096),
                (Some("rm_fr"), 128, 4096)
            ]
        );
    }
}
