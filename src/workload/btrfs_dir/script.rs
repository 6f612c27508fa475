//! The script's steps on the model filesystem, in order: `mkdir
//! testdir`, the creates, the unlinks of the delete pattern, `sync`, and
//! (unless `rm_rf = false`) `rm -fr testdir` with its unmount; each
//! syscall priced as it is made ([`syscalls::UnlinkCost`]) and the
//! delayed-item worker's flushes run between the calls
//! ([`worker::WorkerClock`]). What the metrics need is kept in [`Script`].

use std::collections::BTreeMap;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::cost::DelayedCost;
use super::{BtrfsDirParams, DeletePattern, syscalls, worker};
use crate::engine::histogram::LatencyHistogram;
use crate::kernel::ModelError;
use crate::kernel::btrfs::delayed::{DeleteRunStats, InsertRunStats};
use crate::kernel::btrfs::fs::{Fs, ROOT_DIR_INO, dir_index_leaf_count, rm_rf};
use crate::machine::MachineProfile;
use crate::param::ParamError;

/// The filesystem after the script and what was recorded between its
/// phases.
pub(super) struct Script {
    /// The model filesystem after the script.
    pub fs: Fs,
    /// Files unlinked before the sync.
    pub deleted: u64,
    /// Unlink calls' times (ps, each with its wait for a running flush):
    /// the unlink phase's, `rm -fr`'s, and both.
    pub calls: [LatencyHistogram; 3],
    /// Delayed insertions' counts before the sync.
    pub before_sync: InsertRunStats,
    /// Delayed insertions' counts after the sync.
    pub after_sync: InsertRunStats,
    /// Delayed deletions' counts before the sync.
    pub deletes_before_sync: DeleteRunStats,
    /// Delayed deletions' counts before `rm -fr`.
    pub before_rm: DeleteRunStats,
    /// The unlink phase's deletion batches by shape (`rm -fr`'s are
    /// left in `fs`).
    pub unlink_shapes: BTreeMap<DeleteRunStats, u64>,
    /// The sync's deletion batches by shape.
    pub sync_shapes: BTreeMap<DeleteRunStats, u64>,
    /// Leaves of the fs tree after the sync.
    pub leaves: usize,
    /// Height of the fs tree after the sync.
    pub height: usize,
    /// Leaves holding testdir's dir index items after the sync.
    pub dir_index_leaves: usize,
    /// Commits made before each phase (unlink, sync, rm -fr) and at the
    /// end.
    pub commit_marks: [u64; 4],
    /// The rmdir's wait for a flush still running when it was called, ps.
    pub rmdir_wait_ps: u64,
}

/// Runs the script of `p` priced on `machine` at `cost`, drawing the
/// random delete pattern from `rng`.
pub(super) fn run(p: &BtrfsDirParams, machine: &MachineProfile, cost: DelayedCost, rng: &mut ChaCha8Rng) -> Result<Script, ModelError> {
    let mut fs = Fs::new(p.nodesize, p.thresholds(), p.rules());
    fs.evict_kills_pending = p.evict_kills_pending;
    fs.writeback_on_sync = p.writeback_on_sync;
    fs.sync_task = p.sync_by.task();
    fs.unmount_task = p.sync_by.unmount_task();
    let testdir = fs
        .mkdir(ROOT_DIR_INO, b"testdir")
        .ok_or_else(|| ParamError::new("files", "mkdir failed"))?;
    for i in 1..=p.files {
        fs.create(testdir, &p.file_name(i));
    }
    let unlink_cost = syscalls::UnlinkCost::new(p, machine, cost);
    fs.delayed.set_worker_mode(p.worker);
    let mut clock = worker::WorkerClock::new(machine, p.work_scale.on(machine), cost, unlink_cost);
    let mut calls = [LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new()];
    let deleted = unlinks(p, &mut fs, testdir, &mut clock, &unlink_cost, &mut calls, rng)?;
    let before_sync_commits = fs.commits();
    let before_sync = fs.delayed.insert_stats();
    let deletes_before_sync = fs.delayed.delete_stats();
    let unlink_shapes = fs.delayed.take_batch_shapes();
    fs.sync();
    let sync_shapes = fs.delayed.take_batch_shapes();
    let after_sync = fs.delayed.insert_stats();
    let (leaves, height) = (fs.tree.leaf_count(), fs.tree.height());
    let dir_index_leaves = dir_index_leaf_count(&fs, testdir);
    let before_rm = fs.delayed.delete_stats();
    let before_rm_commits = fs.commits();
    let rmdir_wait_ps = if p.rm_rf {
        remove_tree(&mut fs, testdir, &mut clock, &unlink_cost, &mut calls)?
    } else {
        0
    };
    let commit_marks = [0, before_sync_commits, before_rm_commits, fs.commits()];
    Ok(Script {
        fs,
        deleted,
        calls,
        before_sync,
        after_sync,
        deletes_before_sync,
        before_rm,
        unlink_shapes,
        sync_shapes,
        leaves,
        height,
        dir_index_leaves,
        commit_marks,
        rmdir_wait_ps,
    })
}

/// The unlink phase: each file the delete pattern picks, unlinked and
/// priced, after the worker's flushes due before it. Returns the files
/// unlinked.
fn unlinks(
    p: &BtrfsDirParams,
    fs: &mut Fs,
    testdir: u64,
    clock: &mut worker::WorkerClock,
    unlink_cost: &syscalls::UnlinkCost,
    [unlink_calls, _, all_calls]: &mut [LatencyHistogram; 3],
    rng: &mut ChaCha8Rng,
) -> Result<u64, ModelError> {
    let mut deleted = 0u64;
    let pattern = p.delete_pattern();
    for i in 1..=p.files {
        let hit = match pattern {
            DeletePattern::Fraction(f) => rng.random_bool(f),
            DeletePattern::Every(k) => (i - 1) % k == 0,
        };
        if !hit {
            continue;
        }
        let wait = clock.before_call(fs)?;
        if fs.unlink(testdir, &p.file_name(i)) {
            deleted += 1;
            let ps = unlink_cost.call_ps(&fs.last_unlink)?;
            unlink_calls.record(ps + wait);
            all_calls.record(ps + wait);
            clock.after_call(fs, ps)?;
        }
    }
    Ok(deleted)
}

/// `rm -fr testdir` and the unmount, each call priced. Returns the
/// rmdir's wait for a running flush, ps.
fn remove_tree(
    fs: &mut Fs,
    testdir: u64,
    clock: &mut worker::WorkerClock,
    unlink_cost: &syscalls::UnlinkCost,
    [_, rm_calls, all_calls]: &mut [LatencyHistogram; 3],
) -> Result<u64, ModelError> {
    let mut priced = Ok(());
    // Each call waits for a flush still running when it starts (the
    // rmdir too, whose eviction of the directory would otherwise drop
    // the flush's items; a flush the rmdir's own check queues is
    // dropped by that eviction): the wait is found at the previous
    // call's end (before rm_rf starts for the first unlink).
    let mut wait = clock.before_call(fs)?;
    // After the loop, the last call's `wait` is the rmdir's.
    rm_rf(fs, testdir, &mut |fs| {
        let call = unlink_cost.call_ps(&fs.last_unlink).and_then(|ps| {
            rm_calls.record(ps + wait);
            all_calls.record(ps + wait);
            clock.after_call(fs, ps)?;
            clock.before_call(fs).map(|w| wait = w)
        });
        if let (Err(e), Ok(())) = (call, &priced) {
            priced = Err(e);
        }
    });
    priced?;
    Ok(wait)
}
