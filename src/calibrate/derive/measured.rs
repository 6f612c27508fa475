//! The profile's fields measured beside the caches' latencies and
//! transfers: a new object's line, a hot loop's load, the images'
//! storage, a tracepoint, the kernel's mitigations on calls and returns;
//! each with the note the profile writes above it, or why it was not
//! measured.

use super::{r2, r3};
use crate::calibrate::Calibration;
use crate::calibrate::stats::Spread;

/// ns per load in a hot loop's body, with its note; `None` (and a note)
/// when the median is not a positive price.
pub(super) fn loop_load(cal: &Calibration, notes: &mut Vec<(&'static str, String)>) -> Option<f64> {
    use crate::calibrate::loop_load::{LOADS_PER_TURN, RECORDS, WALKS};
    let f = &cal.loop_load;
    let how = format!(
        "{RECORDS} 64-byte records (16 KiB) walked last to first, {LOADS_PER_TURN} independent loads a record compared with a bound and one another, the flags stored into the record, nothing carried from turn to turn, {WALKS} walks per sample, per load: p10-p90 {:.3}-{:.3} ns, {} samples",
        f.p10, f.p90, f.n
    );
    // Three decimals: a tenth of a ns is a few percent of this price.
    let ns = (f.median * 1000.0).round() / 1000.0;
    if ns.is_finite() && ns > 0.0 && ns <= 1e3 {
        notes.push(("levels.loop_load_ns", how));
        Some(ns)
    } else {
        notes.push(("levels.loop_load_ns", format!("not kept ({ns} ns): {how}")));
        None
    }
}

/// ns per line of a new object initialised in lines no cache holds, with
/// its note.
pub(super) fn fresh_line(cal: &Calibration, notes: &mut Vec<(&'static str, String)>) -> f64 {
    let f = &cal.fresh_line;
    let region = cal
        .chase
        .last()
        .map_or(0, |p| p.bytes)
        .clamp(crate::calibrate::fresh::REGION.0, crate::calibrate::fresh::REGION.1);
    notes.push((
        "levels.fresh_line_ns",
        format!(
            "write_bytes (memset) of {} {}-byte objects per sample, in one random order over {} MiB (huge pages asked for, pages faulted in first), per 64-byte line: p10-p90 {:.2}-{:.2} ns, {} samples",
            crate::calibrate::fresh::OBJECTS,
            crate::calibrate::fresh::OBJECT,
            region >> 20,
            f.p10,
            f.p90,
            f.n
        ),
    ));
    r2(f.median.max(0.0))
}

/// The wake and thread-stop prices, pinned and placed (us, two
/// decimals), with their notes;
/// none when out of range (a note says why).
pub(super) fn sched(cal: &Calibration, notes: &mut Vec<(&'static str, String)>) -> Option<crate::machine::SchedPrices> {
    let s = match &cal.sched {
        Ok(s) => s,
        Err(e) => {
            notes.push(("sched", format!("not measured: {}", e.0)));
            return None;
        }
    };
    let gap = crate::calibrate::sched::GAP.as_micros();
    let how = |what: &str, f: &Spread| {
        format!(
            "{what}, the caller on CPU {} and the woken thread on CPU {}, back to back, the caller running {gap} us before each sample while the other CPU idles: p10-p90 {:.1}-{:.1} us, {} samples",
            s.a, s.b, f.p10, f.p90, f.n
        )
    };
    let prices = crate::machine::SchedPrices {
        wake_us: r2(s.wake.median),
        thread_stop_us: r2(s.thread_stop.median),
        placed_stop_us: None,
    };
    if let Err((field, why)) = prices.check() {
        notes.push(("sched", format!("not kept: {field}: {why}")));
        return None;
    }
    // The placed stop is optional: kept when measured and in range.
    let placed = s.placed_stop.filter(|p| {
        let with = crate::machine::SchedPrices {
            placed_stop_us: Some(r2(p.median)),
            ..prices.clone()
        };
        with.check().is_ok()
    });
    let prices = crate::machine::SchedPrices {
        placed_stop_us: placed.map(|p| r2(p.median)),
        ..prices
    };
    notes.push((
        "sched.wake_us",
        how(
            "a thread asleep in a futex wait woken (unpark) and waking the caller back, the caller asleep meanwhile",
            &s.wake,
        ),
    ));
    notes.push((
        "sched.thread_stop_us",
        how(
            if cfg!(target_arch = "x86_64") {
                "a thread running nothing but system calls (a raw clone) asleep in a futex wait, woken, exiting, and its exit waited for (the futex the kernel wakes at a thread's exit)"
            } else {
                "a std thread asleep in a futex wait, woken, exiting, and joined"
            },
            &s.thread_stop,
        ),
    ));
    notes.push((
        "sched.placed_stop_us",
        match placed {
            Some(p) => format!(
                "the same stop of a thread made on the caller's CPU {} and asleep there, free to run on it or on CPU {}, so the host's scheduler places its wake (a workqueue's rescuer, made at the mount and asleep until kthread_stop, is woken so), the caller running {gap} us before each sample: p10-p90 {:.1}-{:.1} us, {} samples{}",
                s.a,
                s.b,
                p.p10,
                p.p90,
                p.n,
                s.placed_on_caller
                    .map_or(String::new(), |k| format!("; the thread ran on CPU {} (getcpu after its wake) in {k} of them", s.a))
            ),
            None => "not measured or out of range: the rescuers' stops are priced at thread_stop_us".to_string(),
        },
    ));
    Some(prices)
}

/// The storage prices when they were measured (a note either way).
pub(super) fn storage(cal: &Calibration, notes: &mut Vec<(&'static str, String)>) -> Option<crate::machine::StoragePrices> {
    let st = match &cal.storage {
        Ok(st) => st,
        Err(e) => {
            notes.push(("storage", format!("not measured: {}", e.0)));
            return None;
        }
    };
    storage_notes(st, notes);
    // An optional field: out of range, it alone is left out.
    let drop_folio_us = st.drop_folio.as_ref().ok().map(|d| r3(d.median)).filter(|&us| {
        let kept = crate::machine::StoragePrices::check_drop_folio(us);
        if let Err(why) = &kept {
            notes.retain(|(f, _)| *f != "storage.drop_folio_us");
            notes.push(("storage.drop_folio_us", format!("not kept: {why}")));
        }
        kept.is_ok()
    });
    let prices = crate::machine::StoragePrices {
        flush_kib: st.flush.iter().map(|(kib, _)| *kib as f64).collect(),
        flush_us: st.flush.iter().map(|(_, s)| s.median.round()).collect(),
        block_flush_us: Some(st.block_flush.iter().map(|(_, s)| s.median.round()).collect()),
        super_flush_us: st.super_flush.median.round(),
        write_us: r2(st.write.median),
        drop_folio_us,
    };
    // An optional table: one out of range leaves the rest of the profile.
    if let Err((field, why)) = prices.check() {
        notes.retain(|(f, _)| !f.starts_with("storage."));
        notes.push(("storage", format!("not kept: {field}: {why}")));
        return None;
    }
    Some(prices)
}

/// How each field of the `[storage]` table was measured, with its
/// spreads (the profile's comments).
fn storage_notes(st: &crate::calibrate::storage::StorageCost, notes: &mut Vec<(&'static str, String)>) {
    use crate::calibrate::storage::{DROP_PAGES, IMAGE_BYTES, QUEUED, RUNS_AT, SAMPLES};
    // Each size's median and spread, for a table's note.
    let each = |t: &[(u64, Spread)]| -> String {
        let sizes: Vec<String> = t
            .iter()
            .map(|(kib, s)| format!("{kib} KiB {:.0} us (p10-p90 {:.0}-{:.0})", s.median, s.p10, s.p90))
            .collect();
        sizes.join("; ")
    };
    notes.push((
        "storage.flush_us",
        format!(
            "in {} (the lab's temporary folder): {SAMPLES} new sparse files of {} MiB per size, each two runs of 16 KiB buffered writes of the size at {} and {} MiB, then fsync, timed: {}",
            st.folder.parent().unwrap_or(&st.folder).display(),
            IMAGE_BYTES >> 20,
            RUNS_AT[0] >> 20,
            RUNS_AT[1] >> 20,
            each(&st.flush)
        ),
    ));
    notes.push((
        "storage.block_flush_us",
        format!(
            "{SAMPLES} more files per size, each size written as separate 16 KiB blocks with a 16 KiB gap after each (every block its own region, as a commit's tree blocks reach the loop device: one write request a block copy), then fsync, timed: {}",
            each(&st.block_flush)
        ),
    ));
    let s = &st.super_flush;
    notes.push((
        "storage.super_flush_us",
        format!(
            "in the contiguous runs' files, after their fsync, 4 KiB at 64 KiB and at 64 MiB (the superblocks) and fsync, timed: p10-p90 {:.0}-{:.0} us, {} samples",
            s.p10, s.p90, s.n
        ),
    ));
    let how = match &st.drop_folio {
        Ok(d) => format!(
            "a file of {DROP_PAGES} pages there, written and fsynced (clean), read back into the page cache with readahead off (POSIX_FADV_RANDOM: order-0 folios, as a btrfs tree block's), then dropped by posix_fadvise(POSIX_FADV_DONTNEED) over the whole file, timed over {DROP_PAGES} (the pages checked gone by mincore): p10-p90 {:.3}-{:.3} us, {} samples",
            d.p10, d.p90, d.n
        ),
        Err(e) => format!("not measured: {}", e.0),
    };
    notes.push(("storage.drop_folio_us", how));
    let w = &st.write;
    notes.push((
        "storage.write_us",
        format!(
            "a new sparse image of {} MiB there on a loop device, {QUEUED} buffered 16 KiB writes through it (every other block of a new region), sent and waited for by sync_file_range, timed over {QUEUED}: p10-p90 {:.2}-{:.2} us, {} samples",
            IMAGE_BYTES >> 20,
            w.p10,
            w.p90,
            w.n
        ),
    ));
}

/// The tracepoint prices when they were measured (a note either way).
pub(super) fn tracepoint(cal: &Calibration, notes: &mut Vec<(&'static str, String)>) -> Option<crate::machine::TracepointPrices> {
    match &cal.tracepoint {
        Ok(t) => {
            let how = |s: &Spread, what: &str| {
                format!(
                    "{what}: task:task_rename fired by prctl(PR_SET_NAME) in a private tracefs instance (trace clock {}, as the lab's), {} calls per timing, on minus the mean of the offs around it, per call: p10-p90 {:.1}-{:.1} ns, {} samples",
                    t.clock,
                    crate::calibrate::tracepoint::CALLS,
                    s.p10,
                    s.p90,
                    s.n
                )
            };
            notes.push(("tracepoint.event_ns", how(&t.kept, "a record kept (no filter)")));
            notes.push((
                "tracepoint.discard_ns",
                how(&t.discarded, "a record the filter rejects (common_pid == 0)"),
            ));
            notes.push((
                "tracepoint.passed_ns",
                how(
                    &t.passed,
                    "a record the filter passes (common_pid != 0), as the lab's filtered events are",
                ),
            ));
            // A stack's price only with the frames it was measured at,
            // and only when positive; else the twins count its loads.
            let stack = t.stack_frames.map(|f| (r2(t.stack.median), f)).filter(|&(ns, _)| ns > 0.0);
            match (stack, t.stack_frames) {
                (Some((_, f)), _) => notes.push((
                    "tracepoint.stack_ns",
                    format!(
                        "a kept record's stack on top of the record: the same calls with the instance's options/stacktrace on, less the kept timing beside them ({f} frames shown, from the event's handler to the syscall entry), per call: p10-p90 {:.1}-{:.1} ns, {} samples",
                        t.stack.p10, t.stack.p90, t.stack.n
                    ),
                )),
                (None, Some(_)) => notes.push(("tracepoint.stack_ns", format!("not kept (median {:.1} ns, not a price)", t.stack.median))),
                (None, None) => notes.push(("tracepoint.stack_ns", "not kept: no stack was read back from the trace".to_string())),
            }
            Some(crate::machine::TracepointPrices {
                event_ns: r2(t.kept.median.max(0.0)),
                discard_ns: r2(t.discarded.median.max(0.0)),
                // A noisy median at or below 0 is not a price: the
                // unfiltered one stands in (kernel::tracing::kept_ps).
                passed_ns: Some(r2(t.passed.median)).filter(|ns| *ns > 0.0),
                stack_ns: stack.map(|s| s.0),
                stack_frames: stack.map(|s| s.1),
            })
        }
        Err(why) => {
            notes.push(("tracepoint", format!("not measured: {}", why.0)));
            None
        }
    }
}

/// The indirect call's price when the host's line names a sequence (a
/// note either way).
pub(super) fn mitigation(cal: &Calibration, notes: &mut Vec<(&'static str, String)>) -> Option<crate::machine::MitigationPrices> {
    match &cal.indirect_call {
        Ok(c) => {
            let how = match &c.extra {
                Some(s) => format!(
                    "{}, timed in user space on the pinned CPU: {} calls of an empty function through it less the mean of {} plain call *%rax before and after, per call: p10-p90 {:.2}-{:.2} ns, {} samples",
                    c.sequence.describe(),
                    crate::calibrate::mitigation::CALLS,
                    crate::calibrate::mitigation::CALLS,
                    s.p10,
                    s.p90,
                    s.n
                ),
                None => c.sequence.describe().to_string(),
            };
            notes.push(("mitigation.indirect_call_ns", how));
            let (spec_rstack_overflow, return_ns) = returns(cal, notes);
            Some(crate::machine::MitigationPrices {
                spectre_v2: c.spectre_v2.clone(),
                indirect_call_ns: c.extra.map_or(0.0, |s| r2(s.median.max(0.0))),
                spec_rstack_overflow,
                return_ns,
            })
        }
        Err(why) => {
            // The table holds both prices and names the spectre_v2 line:
            // without that measurement neither is written, the return's
            // included (said here, so a measured return is not lost
            // silently).
            notes.push((
                "mitigation",
                format!("not measured: {}; so no [mitigation] table, and no return price either", why.0),
            ));
            None
        }
    }
}

/// The return's price and the `spec_rstack_overflow` line it was measured
/// for (none and 0 when it was not measured, with a note saying why).
fn returns(cal: &Calibration, notes: &mut Vec<(&'static str, String)>) -> (Option<String>, f64) {
    match &cal.returns {
        Ok(r) => {
            let named = format!(
                "{} (spec_rstack_overflow: {}; retbleed: {})",
                r.sequence.describe(),
                r.spec_rstack_overflow,
                r.retbleed
            );
            let how = match &r.extra {
                Some(s) => format!(
                    "{named}, timed in user space on the pinned CPU: {} calls of an empty function returning through it less the mean of {} returning with a plain ret before and after, per return: p10-p90 {:.2}-{:.2} ns, {} samples",
                    crate::calibrate::returns::RETURNS,
                    crate::calibrate::returns::RETURNS,
                    s.p10,
                    s.p90,
                    s.n
                ),
                None => named,
            };
            notes.push(("mitigation.return_ns", how));
            (Some(r.spec_rstack_overflow.clone()), r.extra.map_or(0.0, |s| r2(s.median.max(0.0))))
        }
        Err(why) => {
            notes.push(("mitigation.return_ns", format!("not measured: {}; returns are not priced", why.0)));
            (None, 0.0)
        }
    }
}

/// The kernel's `memmove` inside a leaf, ns per 64 bytes (two decimals),
/// with its notes; none (and a note) where it was not measured or a
/// median is out of range.
pub(super) fn memmove(cal: &Calibration, notes: &mut Vec<(&'static str, String)>) -> Option<crate::machine::MemmovePrices> {
    use crate::calibrate::memmove::{BACK_BYTES, BACK_SHIFT, FAR_SHIFT, FORWARD_BYTES, MOVES, NEAR_SHIFT};
    let Some(m) = &cal.memmove else {
        notes.push((
            "memmove",
            "not measured: the kernel's memmove is measured on x86-64 only".to_string(),
        ));
        return None;
    };
    let prices = crate::machine::MemmovePrices {
        backward_ns: r2(m.backward.median),
        forward_near_ns: r2(m.forward_near.median),
        forward_far_ns: r2(m.forward.median),
    };
    if let Err((field, why)) = prices.check() {
        notes.push(("memmove", format!("not kept: {field}: {why}")));
        return None;
    }
    let spread = |f: &Spread| format!("p10-p90 {:.2}-{:.2} ns, {} samples", f.p10, f.p90, f.n);
    notes.push((
        "memmove.backward_ns",
        format!(
            "{BACK_BYTES} bytes moved up by {BACK_SHIFT} inside a 16 KiB buffer, 32-byte turns from the top (four 8-byte loads, then four stores), {MOVES} moves per sample, per 64 bytes: {}",
            spread(&m.backward)
        ),
    ));
    let forward = |by: usize, f: &Spread| {
        format!(
            "{FORWARD_BYTES} bytes moved down by {by} inside a 16 KiB buffer by {}, {MOVES} moves per sample, per 64 bytes: {}",
            m.how.name(),
            spread(f)
        )
    };
    notes.push(("memmove.forward_near_ns", forward(NEAR_SHIFT, &m.forward_near)));
    notes.push(("memmove.forward_far_ns", forward(FAR_SHIFT, &m.forward)));
    Some(prices)
}
