//! The phases' wall times, on a profile whose `[storage]` table prices the
//! loop device (`fsmeta calibrate`): what the script's thread waits for,
//! step by step, as a trace of the lab's script on 6.18 shows them
//! (docs/lab-hosts.md, session 62).
//!
//! A commit of a sync or of the unmount (`sync_filesystem`, then
//! `btrfs_commit_transaction`), one step after the other:
//! - the write-back: the flusher writes each dirty tree block out
//!   ([`writeout::writeout`]) and the loop device's worker writes both
//!   DUP copies into the image (`write_us` each); `sync_inodes_sb` waits
//!   for them. Traced, the flusher and the loop worker take turns on one
//!   CPU while the other idles, so their times add;
//! - the commit's delayed items ([`DelayedCost::delete_ps`],
//!   [`DelayedCost::insert_ps`]) and delayed refs ([`DelayedCost::refs_ps`]:
//!   the extent, free space and root trees' changes,
//!   src/kernel/btrfs/extent.rs) on the committing thread;
//! - `btrfs_write_and_wait_transaction`: the blocks the commit dirtied
//!   and the other trees' leaves, written out by the committing thread
//!   and through the loop device the same way;
//! - `write_all_supers`: the first flush
//!   ([`StoragePrices::block_flush_us_at`] at the commit's blocks per
//!   stripe, each block its own region as the lab's block trace shows
//!   them), the superblock and its copy (two requests), the second flush
//!   (`super_flush_us`).
//!
//! Not counted (known gaps, docs/lab.md): the commit's other CPU work
//! (the transaction's state changes, the freed extents' unpinning), the
//! time from `syncfs` to the flusher's first block (about 0.2-0.5 ms in
//! the lab's traces), the rmdir's own path (its wait for a flush is
//! counted), the CPU work of the unmount's teardown after its commit
//! but the btree inode's folios it invalidates (priced where the
//! profile's `[storage]` has `drop_folio_us`: [`unmount::btree_folios`];
//! its waits for the kernel's helper threads are counted where the
//! profile has `[sched]`: [`unmount::teardown_waits_us`]). A flush the last
//! unlink queued and the worker has not run by the sync is run by the
//! commit here (`Fs::sync`), its batches priced in the commit's delayed
//! items; live, the worker may run some of it in the time before the
//! flusher starts.
//!
//! Per phase, `wall_us`: the unlink phase's calls (their own paths and
//! their waits for the flush worker); the sync's commit; `rm -fr`'s calls,
//! the rmdir's wait, the unmount's commit and its teardown (with
//! `[sched]`; then also `rm -fr`'s [`UMOUNT_US`]: the commit and the
//! teardown, [`TEARDOWN_US`]: the teardown alone, and
//! [`TEARDOWN_OFFCPU_US`]: its waits, here all of it); the script's, the
//! three.

use std::collections::BTreeMap;

use super::cost::DelayedCost;
use super::phases::{axis, per_phase_us, phase_commits};
use crate::kernel::ModelError;
use crate::kernel::btrfs::fs::CommitWork;
use crate::kernel::btrfs::unmount;
use crate::kernel::btrfs::writeout::{self, BlockShape};
use crate::machine::{MachineProfile, StoragePrices};
use crate::workload::MetricSpec;

/// The name of a phase's wall time.
pub const WALL_US: &str = "wall_us";

/// What [`WALL_US`] is (the reference's line for it).
pub const WALL_MEANING: &str = "the phase's wall time as the script's thread waits it: the unlink calls (their own paths and their waits for the flush worker), the rmdir's wait for a flush, and each commit's steps in turn: the flusher's write-out of the dirty tree blocks and the loop device's writes of both DUP copies, the commit's delayed items and delayed refs (the extent, free space and root trees' changes), its own blocks written out and through the loop device, the two flushes and the superblocks between them (src/workload/btrfs_dir/walls.rs), and for rm -fr the unmount's teardown: its waits where the profile has [sched] (umount_us) and the btree inode's folios invalidated where [storage] has drop_folio_us (btree_folios); not counted: the commit's other CPU work (its state changes, the freed extents' unpinning), the time before the flusher starts, the rmdir's own path, the rest of close_ctree's own CPU work; reported only with a profile that has [storage]";

/// The wall-time metrics ([`WALL_US`] per phase), declared only on a
/// machine whose profile has a `[storage]` table, and `rm -fr`'s
/// [`UMOUNT_US`], [`TEARDOWN_US`] and [`TEARDOWN_OFFCPU_US`] where it
/// also has `[sched]`.
pub fn wall_metrics(profile: &MachineProfile) -> Vec<MetricSpec> {
    let mut m = per_phase_us(WALL_US, WALL_MEANING);
    if profile.sched.is_some() {
        m.push(MetricSpec::new(&axis().metric("rm_fr", UMOUNT_US), "us", UMOUNT_MEANING));
        m.push(MetricSpec::new(&axis().metric("rm_fr", TEARDOWN_US), "us", TEARDOWN_MEANING));
        m.push(MetricSpec::new(
            &axis().metric("rm_fr", TEARDOWN_OFFCPU_US),
            "us",
            TEARDOWN_OFFCPU_MEANING,
        ));
    }
    m
}

/// The name of the unmount's time (`rm -fr`'s last step).
pub const UMOUNT_US: &str = "umount_us";

/// What [`UMOUNT_US`] is (the reference's line for it).
pub const UMOUNT_MEANING: &str = "the unmount's time (umount2 as the lab calls it): its commit's steps as in wall_us, then its teardown (teardown_us): the waits for the kernel's helper threads, counted from 6.18's close_ctree, namespace_unlock and generic_shutdown_super (15 kthread stops: the 13 workqueue rescuers' at the profile's sched.placed_stop_us where measured, else sched.thread_stop_us, the transaction and cleaner kthreads' at sched.thread_stop_us, 5 wake round trips at sched.wake_us; src/kernel/btrfs/unmount.rs), and the btree inode's folios invalidated where [storage] has drop_folio_us; not counted: the rest of close_ctree's own CPU work; reported only with a profile that has [storage] and [sched]";

/// The name of the unmount's time after its commit's last I/O.
pub const TEARDOWN_US: &str = "teardown_us";

/// What [`TEARDOWN_US`] is (the reference's line for it).
pub const TEARDOWN_MEANING: &str = "the unmount's teardown after its commit's I/O, as the lab times it (traced: from the loop device's last request completed inside umount2 to the call's return): the waits for the kernel's helper threads counted from 6.18 (15 kthread stops: the 13 workqueue rescuers' at the profile's sched.placed_stop_us where measured, else sched.thread_stop_us, the transaction and cleaner kthreads' at sched.thread_stop_us, 5 wake round trips at sched.wake_us; src/kernel/btrfs/unmount.rs) and, where the profile has storage.drop_folio_us, the btree inode's folios close_ctree invalidates (btree_folios, each at that price); not counted: the rest of close_ctree's and generic_shutdown_super's own CPU work (the workqueues destroyed, the sysfs entries removed, bdi_unregister); reported only with a profile that has [storage] and [sched]";

/// The name of the teardown's waits: the unmounting thread off its CPU.
pub const TEARDOWN_OFFCPU_US: &str = "teardown_offcpu_us";

/// What [`TEARDOWN_OFFCPU_US`] is (the reference's line for it).
pub const TEARDOWN_OFFCPU_MEANING: &str = "the part of teardown_us the unmounting thread spends off its CPU (live: switched out and back in, sched_switch), waiting for the kernel's helper threads: in the twin the 15 kthread stops and 5 wake round trips priced by [sched]; teardown_us less this is the thread's own CPU work, of which the twin counts only the btree inode's folios dropped (storage.drop_folio_us); reported only with a profile that has [storage] and [sched]";

/// What prices a commit's steps.
#[derive(Debug, Clone, Copy)]
pub struct CommitPrices<'a> {
    /// The delayed-item functions' prices.
    pub cost: &'a DelayedCost,
    /// The machine.
    pub machine: &'a MachineProfile,
    /// The run's knob.
    pub work_scale: f64,
    /// The lab's lock tracepoint, fired once a block written out, ps (0
    /// untraced).
    pub event_ps: u64,
    /// Tree block bytes.
    pub nodesize: u32,
    /// The loop device's prices.
    pub storage: &'a StoragePrices,
}

/// Copies of each tree block the loop device writes (DUP metadata).
const COPIES: f64 = 2.0;

/// Superblock copies a commit writes on the lab's 1 GiB device (at 64 KiB
/// and 64 MiB; `write_dev_supers`).
const SUPERS: f64 = 2.0;

impl CommitPrices<'_> {
    /// Blocks of `shapes` written out on one CPU and through the loop
    /// device, us.
    fn blocks_us(&self, shapes: &[BlockShape]) -> f64 {
        let cpu: u64 = shapes
            .iter()
            .map(|b| writeout::writeout_ps(b, self.nodesize, self.machine, self.work_scale) + self.event_ps)
            .sum();
        cpu as f64 / 1e6 + shapes.len() as f64 * COPIES * self.storage.write_us
    }

    /// One commit's steps (module header), us.
    pub fn commit_us(&self, c: &CommitWork) -> Result<f64, ModelError> {
        let items = self.cost.delete_ps(&c.deletes)? + self.cost.insert_ps(&c.inserts)? + self.cost.refs_ps(&c.refs)?;
        let blocks = (c.writeback.len() + c.written.len()) as f64;
        let kib = blocks * f64::from(self.nodesize) / 1024.0;
        Ok(self.blocks_us(&c.writeback)
            + items as f64 / 1e6
            + self.blocks_us(&c.written)
            + self.storage.commit_flush_us(kib)
            + SUPERS * self.storage.write_us)
    }
}

/// Puts the metrics a `[storage]` table prices into `m`: each phase's
/// flushes ([`super::phases::put_flushes`]) and [`WALL_US`]
/// ([`put_walls`]); `fs` after the script, the rest as those take them.
pub fn put_priced(
    m: &mut BTreeMap<String, f64>,
    prices: &CommitPrices<'_>,
    fs: &crate::kernel::btrfs::fs::Fs,
    calls_us: [f64; 2],
    rmdir_wait_us: f64,
    marks: [u64; 4],
    btree_folios: u64,
) -> Result<(), ModelError> {
    super::phases::put_flushes(m, prices.storage, prices.nodesize, &fs.commit_blocks(), marks);
    put_walls(m, prices, calls_us, rmdir_wait_us, &fs.commit_work, marks, btree_folios)
}

/// Puts each phase's [`WALL_US`] into `m`, and with `[sched]` `rm -fr`'s
/// [`UMOUNT_US`], [`TEARDOWN_US`] and [`TEARDOWN_OFFCPU_US`]: `calls_us`
/// are the unlink phase's and `rm -fr`'s calls summed (with their waits),
/// `rmdir_wait_us` the rmdir's wait for a flush, `commits` and `marks` as
/// `phase_commits` takes them, `btree_folios` the folios the unmount
/// invalidates ([`unmount::btree_folios`]; priced where the profile's
/// `[storage]` has `drop_folio_us`).
pub fn put_walls(
    m: &mut BTreeMap<String, f64>,
    prices: &CommitPrices<'_>,
    calls_us: [f64; 2],
    rmdir_wait_us: f64,
    commits: &[CommitWork],
    marks: [u64; 4],
    btree_folios: u64,
) -> Result<(), ModelError> {
    let axis = axis();
    let own = [calls_us[0], 0.0, calls_us[1] + rmdir_wait_us];
    let waits = prices.machine.sched.as_ref().map(unmount::teardown_waits_us);
    // The btree inode's folios invalidated by close_ctree, where the
    // profile prices a folio's drop.
    let folios_us = prices.storage.drop_folio_us.map_or(0.0, |us| btree_folios as f64 * us);
    let mut script = 0.0;
    for (i, (key, phase)) in phase_commits(commits, marks).into_iter().enumerate().take(3) {
        let costs = phase.iter().map(|c| prices.commit_us(c)).collect::<Result<Vec<f64>, _>>()?;
        let mut us = costs.iter().fold(own[i], |us, c| us + c);
        // `rm -fr` ends in the unmount: its commit, then its teardown (the
        // folios' drop where priced, the waits where [sched] is).
        if i == 2 {
            us += folios_us;
            if let Some(waits) = waits {
                let teardown = waits + folios_us;
                let commit = costs.iter().fold(0.0, |us, c| us + c);
                m.insert(axis.metric(key, UMOUNT_US), commit + teardown);
                m.insert(axis.metric(key, TEARDOWN_US), teardown);
                m.insert(axis.metric(key, TEARDOWN_OFFCPU_US), waits);
                us += waits;
            }
        }
        script += us;
        m.insert(axis.metric(key, WALL_US), us);
    }
    m.insert(axis.metric("script", WALL_US), script);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::btrfs_dir::{BtrfsDirParams, delayed_cost};

    #[test]
    fn a_commit_is_its_steps_in_turn() {
        let machine = crate::machine::find_builtin("icelake-2s").expect("built-in profile");
        let cost = delayed_cost(&BtrfsDirParams::default(), &machine);
        let storage = StoragePrices {
            flush_kib: vec![16.0, 1024.0],
            flush_us: vec![100.0, 1108.0],
            block_flush_us: None,
            super_flush_us: 50.0,
            write_us: 10.0,
            drop_folio_us: None,
        };
        let prices = CommitPrices {
            cost: &cost,
            machine: &machine,
            work_scale: 1.0,
            event_ps: 0,
            nodesize: 16384,
            storage: &storage,
        };
        let leaf = BlockShape::leaf(&[], 16000);
        let empty = CommitWork::default();
        // No block, no item: the two flushes (at 0 KiB, along the first
        // segment: 100 - 16) and the two superblocks.
        assert!((prices.commit_us(&empty).unwrap() - (84.0 + 50.0 + 20.0)).abs() < 1e-9);
        // Three blocks written back and one by the commit: 64 KiB a stripe
        // flushed (100 + 48), each block written out on the CPU and twice
        // through the loop device.
        let c = CommitWork {
            writeback: vec![leaf; 3],
            written: vec![leaf],
            ..CommitWork::default()
        };
        let cpu = crate::machine::ns_to_ps(writeout::writeout(&leaf, 16384, 4).ns(&machine, 1.0)) as f64 / 1e6;
        let want = 4.0 * (cpu + 20.0) + 148.0 + 50.0 + 20.0;
        assert!(
            (prices.commit_us(&c).unwrap() - want).abs() < 1e-6,
            "{} vs {want}",
            prices.commit_us(&c).unwrap()
        );
        // The lab's lock event once a block, and the delayed items' price.
        let traced = CommitPrices {
            event_ps: 500_000,
            ..prices
        };
        assert!((traced.commit_us(&c).unwrap() - (want + 4.0 * 0.5)).abs() < 1e-6);
        let deletes = crate::kernel::btrfs::delayed::DeleteRunStats {
            runs: 1,
            batches: 3,
            items_released: 3,
            ..Default::default()
        };
        let busy = CommitWork { deletes, ..c.clone() };
        let items = cost.delete_ps(&deletes).unwrap() as f64 / 1e6;
        assert!(items > 0.0);
        assert!((prices.commit_us(&busy).unwrap() - (want + items)).abs() < 1e-6);
        // The phases: the calls and the rmdir's wait are the script thread's
        // own; the sync's commit and the unmount's follow.
        let mut m = BTreeMap::new();
        put_walls(&mut m, &prices, [1000.0, 2000.0], 30.0, &[c.clone(), empty], [0, 0, 1, 2], 300).unwrap();
        let g = |k: &str| m[&axis().metric(k, WALL_US)];
        assert!((g("unlink") - 1000.0).abs() < 1e-9);
        assert!((g("sync") - want).abs() < 1e-6);
        assert!((g("rm_fr") - (2030.0 + 154.0)).abs() < 1e-6);
        assert!((g("script") - (g("unlink") + g("sync") + g("rm_fr"))).abs() < 1e-9);
        assert!(!m.contains_key(&axis().metric("rm_fr", UMOUNT_US)), "no [sched]: no umount_us");
        assert!(!m.contains_key(&axis().metric("rm_fr", TEARDOWN_US)), "no [sched]: no teardown_us");
        // Without [sched], a priced folio's drop still joins rm -fr's wall.
        let dropping_only = StoragePrices {
            drop_folio_us: Some(0.25),
            ..storage.clone()
        };
        let only = CommitPrices {
            storage: &dropping_only,
            ..prices
        };
        let mut m = BTreeMap::new();
        put_walls(
            &mut m,
            &only,
            [1000.0, 2000.0],
            30.0,
            &[c.clone(), CommitWork::default()],
            [0, 0, 1, 2],
            300,
        )
        .unwrap();
        assert!((m[&axis().metric("rm_fr", WALL_US)] - (2030.0 + 154.0 + 75.0)).abs() < 1e-6);
        assert!(!m.contains_key(&axis().metric("rm_fr", UMOUNT_US)));
        // With [sched]: the unmount's teardown joins rm -fr's wall, and
        // umount_us is its commit and the teardown.
        let sched = crate::machine::SchedPrices {
            wake_us: 2.0,
            thread_stop_us: 10.0,
            placed_stop_us: None,
        };
        let machine = MachineProfile {
            sched: Some(sched),
            ..machine.clone()
        };
        let with = CommitPrices {
            machine: &machine,
            ..prices
        };
        let mut m = BTreeMap::new();
        let commits = [c, CommitWork::default()];
        put_walls(&mut m, &with, [1000.0, 2000.0], 30.0, &commits, [0, 0, 1, 2], 300).unwrap();
        let teardown = 15.0 * 10.0 + 5.0 * 2.0;
        assert!((m[&axis().metric("rm_fr", WALL_US)] - (2030.0 + 154.0 + teardown)).abs() < 1e-6);
        assert!((m[&axis().metric("rm_fr", UMOUNT_US)] - (154.0 + teardown)).abs() < 1e-6);
        assert!((m[&axis().metric("rm_fr", TEARDOWN_US)] - teardown).abs() < 1e-6);
        assert!((m[&axis().metric("rm_fr", TEARDOWN_OFFCPU_US)] - teardown).abs() < 1e-6);
        // With a folio's drop priced: the btree inode's 300 folios join the
        // teardown on the unmounting thread's CPU, not its waits.
        let dropping = StoragePrices {
            drop_folio_us: Some(0.25),
            ..storage.clone()
        };
        let with = CommitPrices {
            storage: &dropping,
            ..with
        };
        let mut m = BTreeMap::new();
        put_walls(&mut m, &with, [1000.0, 2000.0], 30.0, &commits, [0, 0, 1, 2], 300).unwrap();
        let cpu = 300.0 * 0.25;
        assert!((m[&axis().metric("rm_fr", WALL_US)] - (2030.0 + 154.0 + teardown + cpu)).abs() < 1e-6);
        assert!((m[&axis().metric("rm_fr", UMOUNT_US)] - (154.0 + teardown + cpu)).abs() < 1e-6);
        assert!((m[&axis().metric("rm_fr", TEARDOWN_US)] - (teardown + cpu)).abs() < 1e-6);
        assert!((m[&axis().metric("rm_fr", TEARDOWN_OFFCPU_US)] - teardown).abs() < 1e-6);
    }

    #[test]
    fn umount_and_teardown_us_are_declared_only_with_sched() {
        // (wall_metrics itself is declared only with [storage]: metrics_on.)
        let machine = crate::machine::find_builtin("icelake-2s").expect("built-in profile");
        let names = [UMOUNT_US, TEARDOWN_US, TEARDOWN_OFFCPU_US].map(|n| axis().metric("rm_fr", n));
        let has = |p: &MachineProfile| names.iter().all(|n| wall_metrics(p).iter().any(|s| &s.name == n));
        let none = |p: &MachineProfile| names.iter().all(|n| wall_metrics(p).iter().all(|s| &s.name != n));
        assert!(none(&machine));
        let sched = MachineProfile {
            sched: Some(crate::machine::SchedPrices {
                wake_us: 2.0,
                thread_stop_us: 10.0,
                placed_stop_us: None,
            }),
            ..machine
        };
        assert!(has(&sched));
    }
}
