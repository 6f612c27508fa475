//! The tree blocks the script's commits wrote, from the loop device's
//! write requests ([`writes`](crate::lab::blockio::writes)), by the twin's names.

use super::{PHASES, SUPER_OFFSETS};
use crate::lab::Metrics;
use crate::lab::trace::{Record, noted_at};

/// Copies of each tree block on the device: the lab makes its btrfs with
/// `-m dup` (one device: two copies, `BTRFS_BLOCK_GROUP_DUP`; `fresh` in
/// the parent module).
const METADATA_COPIES: u64 = 2;

/// Puts each phase's superblock writes and tree blocks written into `m`
/// from its write requests (`writes`, [`writes`](crate::lab::blockio::writes)): the bytes of
/// the other writes over `nodesize` and [`METADATA_COPIES`] (a request may
/// merge adjacent blocks), as the twin counts `tree_blocks_written`. The
/// script's is the phases' from the first unlink on, as the twin's.
pub(super) fn put_tree_writes(m: &mut Metrics, writes: &[(Option<&str>, u64, u64)], nodesize: u64) {
    let per_block = nodesize as f64 * METADATA_COPIES as f64;
    let (mut script_blocks, mut script_supers) = (0.0, 0.0);
    // A 4 KiB write at a superblock copy's offset (in 512-byte sectors).
    let is_super = |w: &&(Option<&str>, u64, u64)| w.2 == 4096 && SUPER_OFFSETS.iter().any(|&o| o / 512 == w.1);
    for phase in PHASES {
        let mine = writes.iter().filter(|w| w.0 == Some(phase));
        let supers = mine.clone().filter(is_super).count() as f64;
        let bytes: u64 = mine.filter(|w| !is_super(w)).map(|w| w.2).sum();
        let blocks = bytes as f64 / per_block;
        m.insert(format!("phase.{phase}.super_writes"), supers);
        m.insert(format!("phase.{phase}.tree_blocks_written"), blocks);
        if phase != "create" {
            script_blocks += blocks;
            script_supers += supers;
        }
    }
    m.insert("phase.script.super_writes".into(), script_supers);
    m.insert("phase.script.tree_blocks_written".into(), script_blocks);
}

/// Puts `phase.rm_fr.teardown_us` into `m`: the unmount's time after its
/// last block request completed, from that completion to the `umount2`
/// call's return (the script's point markers `umount2` and `umounted`
/// around the call, [`crate::lab::host::Fs::unmount_noted`]; the second
/// is written within a marker write of the return). The final commit's
/// writes and flushes are over by then; what is left is `close_ctree`'s
/// teardown and the superblock's shutdown after it (the helper threads
/// stopped and waited for, their own CPU work). And
/// `phase.rm_fr.teardown_offcpu_us`, the part of it the unmounting task
/// spent off its CPU (`sched_switch`: switched out, as `prev_pid`, until
/// switched in, as `next_pid`): its waits, the rest being its own CPU
/// work. Nothing when the trace has no such completion or either marker.
pub(super) fn put_teardown(m: &mut Metrics, recs: &[Record]) {
    let marker = |text| recs.iter().find(|r| noted_at(std::slice::from_ref(r), text).is_some());
    let (Some(start), Some(end)) = (marker("umount2"), marker("umounted")) else {
        return;
    };
    let (pid, t0, t1) = (start.pid, start.ts_ns, end.ts_ns);
    let Some(from) = recs
        .iter()
        .filter(|r| r.event == "block_rq_complete" && r.ts_ns > t0 && r.ts_ns <= t1)
        .map(|r| r.ts_ns)
        .max()
    else {
        return;
    };
    // The task's switches inside the call, in time order: switched out
    // (prev) until switched in (next), counted from the completion on.
    let mut out_since = None;
    let mut off_ns = 0;
    for r in recs.iter().filter(|r| r.ts_ns > t0 && r.ts_ns <= t1) {
        match super::switch(r) {
            Some((prev, _, _)) if prev == pid => out_since = Some(r.ts_ns.max(from)),
            Some((_, _, next)) if next == pid => {
                off_ns += out_since.take().map_or(0, |t: u64| r.ts_ns.max(from).saturating_sub(t));
            }
            _ => {}
        }
    }
    m.insert("phase.rm_fr.teardown_us".into(), t1.saturating_sub(from) as f64 / 1e3);
    m.insert("phase.rm_fr.teardown_offcpu_us".into(), off_ns as f64 / 1e3);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::trace::parse;

    #[test]
    fn the_teardown_runs_from_the_unmounts_last_completion_to_its_return() {
        let line = |ts: &str, ev: &str, body: &str| format!("  task-9 [000] ..... {ts}: {ev}: {body}\n");
        let done = |ts: &str| line(ts, "block_rq_complete", "7,0 WSM () 128 + 8 be,0,4 [0]");
        let mut t = line("10.000000", "tracing_mark_write", "fsmeta:rm_fr");
        t += &done("10.000500"); // before the unmount: not its
        t += &line("10.001000", "tracing_mark_write", "fsmeta-at:umount2");
        t += &done("10.001400");
        t += &done("10.002100"); // the last of the unmount's
        t += &line("10.003000", "tracing_mark_write", "fsmeta-at:umounted");
        t += &done("10.003500"); // after the call: not its
        let mut m = Metrics::new();
        put_teardown(&mut m, &parse(&t));
        assert!((m["phase.rm_fr.teardown_us"] - 900.0).abs() < 1e-6, "{m:?}");
        assert_eq!(m["phase.rm_fr.teardown_offcpu_us"], 0.0, "no switch: on its CPU throughout");
        // The point markers start no phase.
        let phases = crate::lab::trace::phases(&parse(&t));
        assert!(phases.iter().all(|p| p.as_deref() == Some("rm_fr")), "{phases:?}");
        // No completion inside the call, or no marker: nothing.
        let mut m = Metrics::new();
        let quiet = t.replace("10.001400", "10.000600").replace("10.002100", "10.000700");
        put_teardown(&mut m, &parse(&quiet));
        assert!(m.is_empty(), "{m:?}");
        put_teardown(&mut m, &parse(&t.replace("fsmeta-at:umounted", "fsmeta-at:other")));
        assert!(m.is_empty(), "{m:?}");
    }

    #[test]
    fn the_teardowns_waits_are_the_unmounting_tasks_time_switched_out() {
        let at = |ts: &str, task: &str, ev: &str, body: &str| format!("  {task} [000] ..... {ts}: {ev}: {body}\n");
        let sw = |ts: &str, prev: u32, state: &str, next: u32| {
            at(
                ts,
                "x-1",
                "sched_switch",
                &format!("prev_comm=a prev_pid={prev} prev_prio=120 prev_state={state} ==> next_comm=b next_pid={next} next_prio=120"),
            )
        };
        let done = |ts: &str| {
            at(
                ts,
                "kworker-5",
                "block_rq_complete",
                "7,0 FF () 18446744073709551615 + 0 none,0,0 [0]",
            )
        };
        // The unmounting task (pid 7) sleeps through its commit's flush,
        // which completes while it is out; it is woken at 10.002100, sleeps
        // again (a thread stop) for 300 us, and returns at 10.003000.
        let mut t = at("10.001000", "fsmeta-7", "tracing_mark_write", "fsmeta-at:umount2");
        t += &sw("10.001200", 7, "D", 0);
        t += &done("10.002000");
        t += &sw("10.002100", 0, "R", 7);
        t += &sw("10.002500", 7, "D", 0);
        t += &sw("10.002700", 3, "S", 0); // another task: not the unmount's
        t += &sw("10.002800", 0, "R", 7);
        t += &at("10.003000", "fsmeta-7", "tracing_mark_write", "fsmeta-at:umounted");
        let mut m = Metrics::new();
        put_teardown(&mut m, &parse(&t));
        assert!((m["phase.rm_fr.teardown_us"] - 1000.0).abs() < 1e-6, "{m:?}");
        // Out from the completion to 10.002100 (100 us), then 300 us.
        assert!((m["phase.rm_fr.teardown_offcpu_us"] - 400.0).abs() < 1e-6, "{m:?}");
    }

    #[test]
    fn superblocks_are_told_from_tree_blocks_by_sector_and_size() {
        let w = [
            (Some("sync"), 75_872, 16_384),
            (Some("sync"), 141_408, 16_384),
            (Some("sync"), 75_904, 32_768), // two blocks merged
            (Some("sync"), 141_440, 32_768),
            (Some("sync"), 128, 4096),     // the primary superblock
            (Some("sync"), 131_072, 4096), // its first mirror
            (Some("rm_fr"), 200, 4096),    // a 4 KiB write elsewhere: data of a 4 KiB node
            (None, 128, 4096),             // before the first phase: not counted
        ];
        let mut m = Metrics::new();
        put_tree_writes(&mut m, &w, 16_384);
        assert_eq!(m["phase.sync.tree_blocks_written"], 3.0);
        assert_eq!(m["phase.sync.super_writes"], 2.0);
        assert_eq!(m["phase.rm_fr.tree_blocks_written"], 0.125);
        assert_eq!(m["phase.rm_fr.super_writes"], 0.0);
        assert_eq!(m["phase.create.tree_blocks_written"], 0.0);
        assert_eq!(m["phase.script.tree_blocks_written"], 3.125);
        assert_eq!(m["phase.script.super_writes"], 2.0);
    }
}
