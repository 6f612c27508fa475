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

/// Puts `btree_folios_added` into `m`: the folios added to the btree
/// inode's page cache over the trace (`mm_filemap_add_to_page_cache`, the
/// instance's filter `i_ino == 1`), from after the lab's preparation to
/// the end: every tree block the script's run instantiated, its folios
/// each, which the unmount invalidates (with those found before it).
pub(super) fn put_btree_folios(m: &mut Metrics, recs: &[Record]) {
    let added = recs.iter().filter(|r| r.event == "mm_filemap_add_to_page_cache").count();
    m.insert("btree_folios_added".into(), added as f64);
}

/// Puts each phase's `delayed_refs` into `m`: the `run_delayed_tree_ref`
/// records of this filesystem (`fsid`) in it, and the script's from the
/// first unlink on, as the twin counts its ref heads.
pub(super) fn put_delayed_refs(m: &mut Metrics, recs: &[Record], phases: &[Option<String>], fsid: &str) {
    let mut script = 0.0;
    for phase in PHASES {
        let n = recs
            .iter()
            .zip(phases)
            .filter(|(r, p)| r.event == "run_delayed_tree_ref" && r.body.starts_with(fsid) && p.as_deref() == Some(phase))
            .count() as f64;
        m.insert(format!("phase.{phase}.delayed_refs"), n);
        if phase != "create" {
            script += n;
        }
    }
    m.insert("phase.script.delayed_refs".into(), script);
}

/// Puts `phase.rm_fr.teardown_us` into `m`: the unmount's time after its
/// commit's I/O, to the `umount2` call's return (the script's point
/// markers `umount2` and `umounted` around the call,
/// [`crate::lab::host::Fs::unmount_noted`]; the second is written within
/// a marker write of the return, its `trace_marker` opened by path). It
/// starts at the loop device's last completed request inside the call,
/// or, when the unmounting task was asleep then (waiting for that
/// request: the commit's last flush, whose wake the twin prices with the
/// flush), at the task's next switch in. What is left is `close_ctree`'s
/// teardown and the superblock's shutdown after it (the helper threads
/// stopped and waited for, their own CPU work). And
/// `phase.rm_fr.teardown_offcpu_us`, the part of it the task spent off
/// its CPU (`sched_switch`: switched out, as `prev_pid`, until switched
/// in, as `next_pid`; a preemption counts too): its waits, the rest being
/// its own CPU work. Nothing when the trace has no such completion or
/// either marker, or when a switch of the task is missing (switched out
/// at the return).
pub(super) fn put_teardown(m: &mut Metrics, recs: &[Record]) {
    let (Some(start), Some(end)) = (noted_at(recs, "umount2"), noted_at(recs, "umounted")) else {
        return;
    };
    let (pid, t0, t1) = (start.pid, start.ts_ns, end.ts_ns);
    let inside = || recs.iter().filter(move |r| r.ts_ns > t0 && r.ts_ns <= t1);
    let Some(io_end) = inside().filter(|r| r.event == "block_rq_complete").map(|r| r.ts_ns).max() else {
        return;
    };
    // The task's switches inside the call, in time order: (time, in).
    let mut switches: Vec<(u64, bool)> = inside()
        .filter_map(|r| match super::switch(r) {
            Some((prev, _, _)) if prev == pid => Some((r.ts_ns, false)),
            Some((_, _, next)) if next == pid => Some((r.ts_ns, true)),
            _ => None,
        })
        .collect();
    switches.sort_by_key(|s| s.0);
    let asleep_at_io_end = switches.iter().rev().find(|s| s.0 <= io_end).is_some_and(|s| !s.1);
    let from = if asleep_at_io_end {
        match switches.iter().find(|s| s.0 > io_end && s.1) {
            Some(s) => s.0,
            None => return,
        }
    } else {
        io_end
    };
    let (mut out_since, mut off_ns) = (None, 0);
    for &(ts, switched_in) in switches.iter().filter(|s| s.0 > from) {
        if switched_in {
            off_ns += out_since.take().map_or(0, |t: u64| ts - t);
        } else {
            out_since = Some(ts);
        }
    }
    if out_since.is_some() {
        return;
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
    fn every_folio_added_to_the_btree_inode_is_counted() {
        let line = |ts: &str, ev: &str, body: &str| format!("  task-9 [000] ..... {ts}: {ev}: {body}\n");
        let add = |ts: &str| line(ts, "mm_filemap_add_to_page_cache", "dev 0:40 ino 1 pfn=0x1 ofs=0 order=0");
        let mut t = add("10.000001");
        t += &line("10.000002", "tracing_mark_write", "fsmeta:unlink");
        t += &add("10.000003");
        t += &line("10.000004", "block_rq_complete", "7,0 WSM () 128 + 8 be,0,4 [0]");
        t += &add("10.000005");
        let mut m = Metrics::new();
        put_btree_folios(&mut m, &parse(&t));
        assert_eq!(m["btree_folios_added"], 3.0);
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
        // which completes while it is out; it is woken at 10.002100 (the
        // teardown starts there: the flush's wake is the commit's), sleeps
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
        assert!((m["phase.rm_fr.teardown_us"] - 900.0).abs() < 1e-6, "{m:?}");
        assert!((m["phase.rm_fr.teardown_offcpu_us"] - 300.0).abs() < 1e-6, "{m:?}");
        // Awake at the completion (switched out and back in before it): the
        // teardown starts at the completion, and only the later sleep counts.
        let awake = t.replace("10.002100: sched_switch", "10.001900: sched_switch");
        let mut m = Metrics::new();
        put_teardown(&mut m, &parse(&awake));
        assert!((m["phase.rm_fr.teardown_us"] - 1000.0).abs() < 1e-6, "{m:?}");
        assert!((m["phase.rm_fr.teardown_offcpu_us"] - 300.0).abs() < 1e-6, "{m:?}");
        // A switch in lost (the task out at its return): nothing.
        let lost = t.replace("10.002800: sched_switch", "10.003100: sched_switch");
        let mut m = Metrics::new();
        put_teardown(&mut m, &parse(&lost));
        assert!(m.is_empty(), "{m:?}");
    }

    #[test]
    fn each_delayed_ref_run_of_this_filesystem_counts_in_its_phase() {
        let line = |ts: &str, ev: &str, body: &str| format!("  sync-9 [000] ..... {ts}: {ev}: {body}\n");
        let rf = |ts: &str, fsid: &str| {
            let body = format!(
                "{fsid}: bytenr=30507008 num_bytes=16384 action=DROP_DELAYED_REF parent=0(-) ref_root=5(FS_TREE) level=0 type=TREE_BLOCK_REF seq=0"
            );
            line(ts, "run_delayed_tree_ref", &body)
        };
        let mut t = line("1.0", "tracing_mark_write", "fsmeta:create");
        t += &rf("1.1", "abc"); // a commit during the creates: not the script's
        t += &line("2.0", "tracing_mark_write", "fsmeta:sync");
        t += &rf("2.1", "abc");
        t += &rf("2.2", "abc");
        t += &rf("2.3", "other"); // another filesystem's
        t += &line("3.0", "tracing_mark_write", "fsmeta:rm_fr");
        t += &rf("3.1", "abc");
        let recs = parse(&t);
        let mut m = Metrics::new();
        put_delayed_refs(&mut m, &recs, &crate::lab::trace::phases(&recs), "abc");
        let g = |p: &str| m[&format!("phase.{p}.delayed_refs")];
        assert_eq!(
            [g("create"), g("unlink"), g("sync"), g("rm_fr"), g("script")],
            [1.0, 0.0, 2.0, 1.0, 3.0]
        );
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
