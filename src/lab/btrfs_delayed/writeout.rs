//! The writeback flusher's time per tree block, from the lock tracepoint
//! the lab already traces.
//!
//! `syncfs` starts with `writeback_inodes_sb`, whose work a writeback
//! kworker runs (`wb_workfn`); it reaches the btree inode, and
//! `btree_write_cache_pages` writes each dirty tree block out in page
//! order: `lock_extent_buffer_for_io` takes the block's lock
//! (`btrfs_tree_lock`, the one tracepoint a block fires there), then
//! `write_one_eb` prepares the block, checks it (the tree checker),
//! checksums it and submits it (fs/btrfs/extent_io.c, disk-io.c). So the
//! time from one block's lock to the next one's, by the same task with no
//! switch out between, is one block's write-out on the CPU, with the loop
//! over the folios around it. The flusher is told from the other tasks by
//! what it does: it takes write locks only, no read lock, and releases no
//! delayed-item reservation (the delayed-item worker, also a kworker,
//! does both).
//!
//! What the rule cannot see: the lab traces the fs tree's locks only
//! (`owner == 5`), so a gap also holds any other tree's block written
//! between two of the fs tree's (none is dirty before the sync's commit
//! in this script, whose other trees change in the commit); a kworker
//! that ran the delayed-item work and then the write-back in one phase is
//! left out there (its figure is then 0). On a kernel before upstream
//! 4e159150a9a5 the first write-back pass skips the tree under 32 MiB of
//! dirty metadata and `sync_inodes_sb`'s pass writes it: the same steps.

use super::windows::lock_block;
use super::{PHASES, release, switch};
use crate::lab::Metrics;
use crate::lab::trace::Record;
use std::collections::{BTreeMap, BTreeSet};

/// A gap of a millisecond or more is not one block's write-out (the
/// flusher waited or was interrupted without a switch being traced).
const MAX_GAP_NS: u64 = 1_000_000;

/// Puts per phase `phase.P.writeout_us` (the upper median of the
/// flusher's gaps from one block's lock to the next, us; 0 without one)
/// and `phase.P.writeout_blocks` (the distinct blocks it locked: a
/// WB_SYNC_ALL pass may lock a block again after waiting for its
/// writeback) into `m`, and the script's (the phases' blocks summed, the
/// median over all their gaps), from `recs` with their `phases` on the
/// filesystem `fsid`.
pub(super) fn put_writeout(m: &mut Metrics, recs: &[Record], phases: &[Option<String>], fsid: &str) {
    // Tasks that read-lock or release a reservation in a phase: not the
    // flusher there.
    let mut others: BTreeSet<(&str, u32)> = BTreeSet::new();
    for (r, ph) in recs.iter().zip(phases) {
        let Some(ph) = ph.as_deref() else { continue };
        let read_lock = r.event == "btrfs_tree_read_lock" && lock_block(r, fsid).is_some();
        if read_lock || release(r, fsid).is_some() || !r.task.starts_with("kworker") {
            others.insert((ph, r.pid));
        }
    }
    // Per (phase, pid): the last lock's time (None after a switch out).
    let mut last: BTreeMap<(&str, u32), Option<u64>> = BTreeMap::new();
    let mut gaps: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut blocks: BTreeMap<&str, BTreeSet<u64>> = BTreeMap::new();
    for (r, ph) in recs.iter().zip(phases) {
        let Some(ph) = ph.as_deref() else { continue };
        if let Some((prev, _, _)) = switch(r) {
            last.insert((ph, prev), None);
            continue;
        }
        let Some(block) = lock_block(r, fsid).filter(|_| r.event == "btrfs_tree_lock") else {
            continue;
        };
        if others.contains(&(ph, r.pid)) {
            continue;
        }
        blocks.entry(ph).or_default().insert(block);
        if let Some(Some(t)) = last.get(&(ph, r.pid)) {
            let gap = r.ts_ns.saturating_sub(*t);
            if gap < MAX_GAP_NS {
                gaps.entry(ph).or_default().push(gap as f64 / 1e3);
            }
        }
        last.insert((ph, r.pid), Some(r.ts_ns));
    }
    let (mut all, mut all_blocks) = (Vec::new(), 0);
    for phase in PHASES.iter().filter(|&&p| p != "create") {
        let mut v = gaps.remove(phase).unwrap_or_default();
        all.extend_from_slice(&v);
        let n = blocks.get(phase).map_or(0, BTreeSet::len);
        all_blocks += n;
        m.insert(format!("phase.{phase}.writeout_us"), super::upper_median(&mut v));
        m.insert(format!("phase.{phase}.writeout_blocks"), n as f64);
    }
    m.insert("phase.script.writeout_us".into(), super::upper_median(&mut all));
    m.insert("phase.script.writeout_blocks".into(), all_blocks as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::trace;

    const FS: &str = "1351c052-79a9-4cc6-a073-057295b2ba62";

    fn lock(task: &str, ts: &str, event: &str, block: u64) -> String {
        format!("{task} [001] ..... {ts}: {event}: {FS}: block={block} generation=8 diff_ns=100 owner=5 is_log_tree=0\n")
    }

    #[test]
    fn the_flushers_gaps_are_between_its_own_locks_and_stop_at_a_switch() {
        let mut t = String::from("fsmeta-7 [001] ...1. 1.000000: tracing_mark_write: fsmeta:sync\n");
        t += &lock("kworker/u8:2-20", "1.000100", "btrfs_tree_lock", 30_638_080);
        t += &lock("kworker/u8:2-20", "1.000130", "btrfs_tree_lock", 30_654_464); // 30 us
        t += &lock("kworker/u8:2-20", "1.000170", "btrfs_tree_lock", 30_670_848); // 40 us
        t += "kworker/u8:2-20 [001] ..... 1.000180: sched_switch: prev_comm=kworker/u8:2 prev_pid=20 prev_prio=120 prev_state=R ==> next_comm=x next_pid=9 next_prio=120\n";
        t += &lock("kworker/u8:2-20", "1.000500", "btrfs_tree_lock", 30_687_232); // after a switch: no gap
        t += &lock("kworker/u8:2-20", "1.000550", "btrfs_tree_lock", 30_703_616); // 50 us
        // The same block locked again (a WB_SYNC_ALL pass): one more gap,
        // not one more block.
        t += &lock("kworker/u8:2-20", "1.000570", "btrfs_tree_lock", 30_703_616); // 20 us
        // The script's own locks (the commit's) and a worker's: not the flusher.
        t += &lock("fsmeta-7", "1.000600", "btrfs_tree_lock", 30_507_008);
        t += &lock("fsmeta-7", "1.000601", "btrfs_tree_lock", 30_654_464);
        t += &lock("kworker/u8:3-21", "1.000610", "btrfs_tree_read_lock", 30_507_008);
        t += &lock("kworker/u8:3-21", "1.000611", "btrfs_tree_lock", 30_507_008);
        t += &lock("kworker/u8:3-21", "1.000612", "btrfs_tree_lock", 30_654_464);
        // Another filesystem's block.
        t += "kworker/u8:2-20 [001] ..... 1.000560: btrfs_tree_lock: other-fsid: block=1 generation=8 owner=5\n";
        let recs = trace::parse(&t);
        let phases = trace::phases(&recs);
        let mut m = Metrics::new();
        put_writeout(&mut m, &recs, &phases, FS);
        assert_eq!(m["phase.sync.writeout_blocks"], 5.0);
        // Gaps 30, 40, 50, 20: the upper median.
        assert!((m["phase.sync.writeout_us"] - 40.0).abs() < 1e-6, "{}", m["phase.sync.writeout_us"]);
        assert_eq!(m["phase.script.writeout_blocks"], 5.0);
        assert!((m["phase.script.writeout_us"] - 40.0).abs() < 1e-6);
        assert_eq!(m["phase.unlink.writeout_us"], 0.0);
        assert_eq!(m["phase.rm_fr.writeout_blocks"], 0.0);
        assert!(!m.contains_key("phase.create.writeout_us"));
    }
}
