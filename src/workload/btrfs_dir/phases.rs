//! The script's phases as a step axis of the contract: what the
//! delayed-deletion function (`btrfs_delete_delayed_items`) did while the
//! files were unlinked before the sync, during the sync, during `rm -fr`
//! and unmount, and over the whole script. A flush is one call of that
//! function that found pending deletions (one `commit_node` of a
//! directory with queued dir-index deletions); batches are its
//! `btrfs_del_items` calls. Case 3's point shows here: both rules make a
//! batch per deleted file while every other file goes, and only the
//! leaf-match rule joins the survivors' deletions in `rm -fr`.

use std::collections::BTreeMap;

use super::cost::DelayedCost;
use super::syscalls::phase_us;
use crate::engine::histogram::LatencyHistogram;
use crate::kernel::ModelError;
use crate::kernel::btrfs::delayed::DeleteRunStats;
use crate::kernel::btrfs::fs::CommitWork;
use crate::kernel::btrfs::writeout;
use crate::machine::{MachineProfile, StoragePrices};
use crate::workload::{MetricSpec, StepAxis, StepScale};

/// Name of the axis (a plot's `x`).
pub const AXIS: &str = "phase";

/// The phases: (key, axis label).
pub const PHASES: [(&str, &str); 4] = [
    ("unlink", "unlink before sync"),
    ("sync", "sync"),
    ("rm_fr", "rm -fr + unmount"),
    ("script", "whole script"),
];

mod values;
use values::VALUES;

/// The phase axis.
pub fn axis() -> StepAxis {
    StepAxis {
        name: AXIS,
        label: "phase of the script",
        scale: StepScale::Named,
        steps: PHASES.iter().map(|&(k, l)| (k.to_string(), l.to_string())).collect(),
        values: VALUES.iter().map(|&(n, u, m)| MetricSpec::new(n, u, m)).collect(),
    }
}

/// Puts each phase's median deletion-batch window (`us_per_batch`) and
/// median whole batch (`batch_gap_us`) into `m`: `shapes` are the unlink
/// phase's, the sync's and `rm -fr`'s batches by their counts
/// ([`DelayedRoot::take_batch_shapes`]), each shape priced on its own by
/// [`DelayedCost::window_ps`] and [`DelayedCost::delete_ps`]; the whole
/// script's are the medians over all three.
///
/// [`DelayedRoot::take_batch_shapes`]: crate::kernel::btrfs::delayed::DelayedRoot::take_batch_shapes
pub fn put_medians(
    m: &mut BTreeMap<String, f64>,
    cost: &DelayedCost,
    shapes: [&BTreeMap<DeleteRunStats, u64>; 3],
) -> Result<(), ModelError> {
    let axis = axis();
    let (mut all_windows, mut all_batches) = (Vec::new(), Vec::new());
    for ((key, _), phase) in PHASES.iter().zip(shapes) {
        let (mut windows, mut batches) = (Vec::with_capacity(phase.len()), Vec::with_capacity(phase.len()));
        for (s, &n) in phase {
            windows.push((cost.window_ps(s)?, n));
            batches.push((cost.delete_ps(s)?, n));
        }
        all_windows.extend_from_slice(&windows);
        all_batches.extend_from_slice(&batches);
        m.insert(axis.metric(key, "shift_ns_per_item"), shift_ns_per_item(cost, phase)?);
        m.insert(axis.metric(key, "us_per_batch"), upper_median_us(&mut windows));
        m.insert(axis.metric(key, "batch_gap_us"), upper_median_us(&mut batches));
    }
    let mut all = BTreeMap::new();
    for phase in shapes {
        for (s, &n) in phase {
            *all.entry(*s).or_insert(0) += n;
        }
    }
    m.insert(axis.metric("script", "shift_ns_per_item"), shift_ns_per_item(cost, &all)?);
    m.insert(axis.metric("script", "us_per_batch"), upper_median_us(&mut all_windows));
    m.insert(axis.metric("script", "batch_gap_us"), upper_median_us(&mut all_batches));
    Ok(())
}

/// The one-item deletion window's price per item after the deleted one,
/// ns: the Theil-Sen slope ([`crate::slope::theil_sen`]) of the
/// windows ([`DelayedCost::window_ps`]) against the items after the slot
/// (`items_shifted`) over `shapes`' one-item batches, as the lab measures
/// it live (`src/lab/btrfs_delayed/shift.rs`); 0 with fewer than
/// [`crate::slope::MIN_POINTS`] (the lab's shortest run on one leaf; the
/// twin's batches are not grouped by leaf, its `items_shifted` is exact)
/// or no two with different counts.
fn shift_ns_per_item(cost: &DelayedCost, shapes: &BTreeMap<DeleteRunStats, u64>) -> Result<f64, ModelError> {
    let mut points = Vec::new();
    for (s, &n) in shapes {
        if s.batches == 1 && s.items_released == 1 {
            points.push((s.items_shifted as f64, cost.window_ps(s)? as f64, n));
        }
    }
    if points.iter().map(|p| p.2).sum::<u64>() < crate::slope::MIN_POINTS as u64 {
        return Ok(0.0);
    }
    // Slopes in ps per item (whole ps differences), then ns.
    Ok(crate::slope::theil_sen(&[points]).map_or(0.0, |ps| ps / 1e3))
}

/// The time at 0-based rank n / 2 of the n batches in `windows` (ps,
/// count), in us; 0 without batches.
fn upper_median_us(windows: &mut [(u128, u64)]) -> f64 {
    upper_median(windows).map_or(0.0, |ps| ps as f64 / 1e6)
}

/// The value at 0-based rank n / 2 of the n values `counted` holds
/// (value, how many times), as the lab's upper median takes it; `None`
/// when it holds none.
pub fn upper_median<T: Ord + Copy>(counted: &mut [(T, u64)]) -> Option<T> {
    counted.sort_unstable();
    let n: u64 = counted.iter().map(|w| w.1).sum();
    let mut below = 0;
    for &(value, count) in counted.iter() {
        below += count;
        if below > n / 2 {
            return Some(value);
        }
    }
    None
}

/// Puts each phase's `unlink(2)` times into `m`: `calls` are the unlink
/// phase's, the sync's (none), `rm -fr`'s and the whole script's, each
/// call's time in ps.
pub fn put_calls(m: &mut BTreeMap<String, f64>, calls: [&LatencyHistogram; 4]) {
    let axis = axis();
    for ((key, _), c) in PHASES.iter().zip(calls) {
        let (median, sum) = phase_us(c);
        m.insert(axis.metric(key, "unlink_us"), median);
        m.insert(axis.metric(key, "unlinks_us"), sum);
    }
}

/// Each phase of [`PHASES`] with the blocks of its commits:
/// `commit_blocks` are the tree blocks each commit wrote
/// ([`Fs::commit_blocks`]), `marks` the commits made by the start, before
/// the sync, after the sync and at the end.
///
/// [`Fs::commit_blocks`]: crate::kernel::btrfs::fs::Fs::commit_blocks
pub(super) fn phase_commits<T>(commit_blocks: &[T], marks: [u64; 4]) -> [(&'static str, &[T]); 4] {
    let spans = [(0, 1), (1, 2), (2, 3), (0, 3)];
    std::array::from_fn(|i| {
        let (a, b) = spans[i];
        let range = marks[a] as usize..marks[b] as usize;
        debug_assert!(range.start <= range.end && range.end <= commit_blocks.len(), "marks {marks:?}");
        (PHASES[i].0, commit_blocks.get(range).unwrap_or(&[]))
    })
}

/// Puts each phase's commits and tree blocks written into `m`
/// (`commit_blocks` and `marks` as `phase_commits` takes them).
pub fn put_writes(m: &mut BTreeMap<String, f64>, commit_blocks: &[u64], marks: [u64; 4]) {
    let axis = axis();
    for (key, commits) in phase_commits(commit_blocks, marks) {
        m.insert(axis.metric(key, "commits"), commits.len() as f64);
        m.insert(axis.metric(key, "tree_blocks_written"), commits.iter().sum::<u64>() as f64);
    }
}

/// Puts each phase's `delayed_refs` into `m`: the ref heads its commits
/// ran (`commits` and `marks` as `phase_commits` takes them).
pub fn put_refs(m: &mut BTreeMap<String, f64>, commits: &[CommitWork], marks: [u64; 4]) {
    let axis = axis();
    for (key, phase) in phase_commits(commits, marks) {
        m.insert(
            axis.metric(key, "delayed_refs"),
            phase.iter().map(|c| c.refs.heads).sum::<u64>() as f64,
        );
    }
}

/// Puts each phase's `writeout_blocks` and `writeout_us` into `m`:
/// `commits` are what each commit did ([`Fs::commit_work`], `marks` as
/// `phase_commits` takes them): the blocks written back before it,
/// each priced on its own ([`writeout::writeout`], `nodesize` bytes in
/// `nodesize / 4096` folios, on `machine` with the run's `work_scale`)
/// plus `event_ps`, the lab's lock tracepoint that fires in it; the
/// median over every block but one of each write-back (0 without two).
///
/// [`Fs::commit_work`]: crate::kernel::btrfs::fs::Fs::commit_work
pub fn put_writeout(
    m: &mut BTreeMap<String, f64>,
    machine: &MachineProfile,
    work_scale: f64,
    event_ps: u64,
    nodesize: u32,
    commits: &[CommitWork],
    marks: [u64; 4],
) {
    let axis = axis();
    for (key, commits) in phase_commits(commits, marks) {
        // The median leaves out one block of each write-back, as the lab
        // does, which measures a block from its lock to the next one's
        // and so has no figure for the last: here the last in the model's
        // block order, not the disk's (which block hardly moves a median
        // of twenty).
        let mut ps: Vec<u64> = commits
            .iter()
            .flat_map(|c| c.writeback.iter().take(c.writeback.len().saturating_sub(1)))
            .map(|b| writeout::writeout_ps(b, nodesize, machine, work_scale) + event_ps)
            .collect();
        ps.sort_unstable();
        let median = ps.get(ps.len() / 2).map_or(0.0, |&p| p as f64 / 1e6);
        let blocks: usize = commits.iter().map(|c| c.writeback.len()).sum();
        m.insert(axis.metric(key, "writeout_blocks"), blocks as f64);
        m.insert(axis.metric(key, "writeout_us"), median);
    }
}

/// The name of the flush time a phase's commits wait for, reported only on
/// a machine whose profile prices storage ([`put_flushes`]).
pub const FLUSH_US: &str = "io_flush_us";

/// The flush-time metrics ([`FLUSH_US`] per phase), declared only on a
/// machine whose profile has a `[storage]` table.
pub fn flush_metrics() -> Vec<MetricSpec> {
    per_phase_us(FLUSH_US, FLUSH_MEANING)
}

/// One metric in us per phase, `value` of each, that means `meaning`.
pub(super) fn per_phase_us(value: &str, meaning: &str) -> Vec<MetricSpec> {
    PHASES
        .iter()
        .map(|(key, _)| MetricSpec::new(&axis().metric(key, value), "us", meaning))
        .collect()
}

/// What [`FLUSH_US`] is (the reference's line for it).
pub const FLUSH_MEANING: &str = "the loop device's flushes the phase's commits wait for, two a commit (barrier_all_devices; the primary superblock's FUA write, completed by a flush after it on a device without FUA), priced by the profile's [storage] table (fsmeta calibrate: fsync of a sparse image after a commit's shape of writes): each commit's first at its blocks per DUP stripe, each block its own region (block_flush_us; flush_us, contiguous runs, in a profile without it), interpolated in the table's sizes (extrapolated along its last segment beyond them), the second at super_flush_us; reported only with a profile that has [storage]";

/// Puts each phase's [`FLUSH_US`] into `m` (`commit_blocks` and `marks`
/// as `phase_commits` takes them); each block is `nodesize` bytes in
/// each of the DUP chunk's two stripes.
pub fn put_flushes(m: &mut BTreeMap<String, f64>, storage: &StoragePrices, nodesize: u32, commit_blocks: &[u64], marks: [u64; 4]) {
    let axis = axis();
    for (key, commits) in phase_commits(commit_blocks, marks) {
        let kib = |blocks: u64| blocks as f64 * f64::from(nodesize) / 1024.0;
        // A fold from +0 (an empty f64 sum is -0).
        let us = commits.iter().fold(0.0, |us, &b| us + storage.commit_flush_us(kib(b)));
        m.insert(axis.metric(key, FLUSH_US), us);
    }
}

/// Puts the phase metrics into `m`: `marks` are the deletion counts at
/// the start, before the sync, after the sync and at the end. Each
/// phase's time is its own counts priced (so the phases' times can
/// differ from the whole script's by the rounding of moved bytes to
/// lines, under a line each).
pub fn put(m: &mut BTreeMap<String, f64>, cost: &DelayedCost, marks: [&DeleteRunStats; 4]) -> Result<(), ModelError> {
    let axis = axis();
    let spans = [
        marks[1].since(marks[0]),
        marks[2].since(marks[1]),
        marks[3].since(marks[2]),
        marks[3].since(marks[0]),
    ];
    for ((key, _), s) in PHASES.iter().zip(&spans) {
        let us = cost.delete_ps(s)? as f64 / 1e6;
        let window = cost.window_ps(s)? as f64 / 1e6;
        let per = |v: f64| if s.runs == 0 { 0.0 } else { v / s.runs as f64 };
        let deleted = s.items_released - s.not_found.min(s.items_released);
        let per_of = |n: u64| if n == 0 { 0.0 } else { window / n as f64 };
        m.insert(axis.metric(key, "batches"), s.batches as f64);
        m.insert(axis.metric(key, "flushes"), s.runs as f64);
        m.insert(axis.metric(key, "batches_per_flush"), per(s.batches as f64));
        m.insert(axis.metric(key, "delete_us"), us);
        m.insert(axis.metric(key, "us_per_flush"), per(us));
        m.insert(axis.metric(key, "us_per_item"), per_of(deleted));
        m.insert(axis.metric(key, "cow_blocks"), s.cow_blocks as f64);
        m.insert(axis.metric(key, "leaf_pushes"), s.leaf_pushes as f64);
        m.insert(axis.metric(key, "eb_folios"), (s.cow_blocks * u64::from(cost.folios())) as f64);
        m.insert(axis.metric(key, "leaves_freed"), s.leaves_freed as f64);
        m.insert(axis.metric(key, "transfers"), s.transfers as f64);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{BtrfsDirParams, SyncBy, run_btrfs_dir};
    use crate::kernel::btrfs::delayed::{BatchStrategy, InsertStrategy, WorkerMode};
    use rand::SeedableRng;

    fn case3(strategy: BatchStrategy) -> BTreeMap<String, f64> {
        script(BtrfsDirParams {
            strategy,
            insert_strategy: InsertStrategy::Contiguous,
            ..Default::default()
        })
    }

    fn script(p: BtrfsDirParams) -> BTreeMap<String, f64> {
        let machine = crate::machine::find_builtin("icelake-2s").expect("built-in profile");
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        run_btrfs_dir(&p, &machine, &mut rng).expect("case 3 runs")
    }

    use super::*;

    #[test]
    fn each_phases_flushes_are_its_commits_priced_by_their_blocks_per_stripe() {
        let storage = StoragePrices {
            flush_kib: vec![64.0, 1024.0],
            flush_us: vec![400.0, 2320.0],
            block_flush_us: None,
            super_flush_us: 150.0,
            write_us: 10.0,
            drop_folio_us: None,
        };
        let mut m = BTreeMap::new();
        // Two commits: the sync's 30 blocks, the unmount's 5, 16 KiB each
        // in each stripe (480 and 80 KiB).
        put_flushes(&mut m, &storage, 16384, &[30, 5], [0, 0, 1, 2]);
        let g = |k: &str| m[&axis().metric(k, FLUSH_US)];
        assert_eq!(g("sync"), 400.0 + 416.0 * 2.0 + 150.0);
        assert_eq!(g("rm_fr"), 400.0 + 16.0 * 2.0 + 150.0);
        assert_eq!(g("script"), g("sync") + g("rm_fr"));
        assert!(g("unlink") == 0.0 && g("unlink").is_sign_positive(), "no commit: +0, not -0");
        assert_eq!(flush_metrics().len(), PHASES.len());
        // A profile that timed separate blocks prices the commits by them.
        let blocks = StoragePrices {
            block_flush_us: Some(vec![600.0, 4440.0]),
            ..storage
        };
        let mut m = BTreeMap::new();
        put_flushes(&mut m, &blocks, 16384, &[30, 5], [0, 0, 1, 2]);
        let g = |k: &str| m[&axis().metric(k, FLUSH_US)];
        assert_eq!(g("sync"), 600.0 + 416.0 * 4.0 + 150.0);
        assert_eq!(g("rm_fr"), 600.0 + 16.0 * 4.0 + 150.0);
    }

    #[test]
    fn the_writeout_median_leaves_one_block_of_each_write_back_out() {
        use crate::kernel::btrfs::fs::CommitWork;
        use crate::kernel::btrfs::writeout::{BlockShape, writeout_ps};
        let machine = crate::machine::find_builtin("icelake-2s").expect("built-in profile");
        let leaf = |n: u32| BlockShape {
            slots: n,
            inode_items: n,
            free_bytes: 16_000 - 185 * n,
            ..BlockShape::default()
        };
        let c = |shapes: Vec<BlockShape>| CommitWork {
            writeback: shapes,
            ..CommitWork::default()
        };
        // The sync's write-back of three blocks, the unmount's of one.
        let commits = [c(vec![leaf(10), leaf(20), leaf(30)]), c(vec![leaf(40)])];
        let mut m = BTreeMap::new();
        put_writeout(&mut m, &machine, 1.0, 7, 16384, &commits, [0, 0, 1, 2]);
        let us = |n| (writeout_ps(&leaf(n), 16384, &machine, 1.0) + 7) as f64 / 1e6;
        assert!(us(10) < us(20) && us(20) < us(30) && us(30) < us(40), "more items, more work");
        let g = |k: &str, v: &str| m[&axis().metric(k, v)];
        // The sync's first two (its last left out): the upper of two.
        assert_eq!(g("sync", "writeout_blocks"), 3.0);
        assert_eq!(g("sync", "writeout_us"), us(20));
        // One block: no figure, as live.
        assert_eq!((g("rm_fr", "writeout_blocks"), g("rm_fr", "writeout_us")), (1.0, 0.0));
        assert_eq!((g("script", "writeout_blocks"), g("script", "writeout_us")), (4.0, us(20)));
        assert_eq!(g("unlink", "writeout_blocks"), 0.0);
    }

    #[test]
    fn flush_times_are_reported_only_with_a_storage_table() {
        let mut machine = crate::machine::find_builtin("icelake-2s").expect("built-in profile");
        let p = BtrfsDirParams::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let none = run_btrfs_dir(&p, &machine, &mut rng).expect("runs");
        assert!(!none.contains_key(&axis().metric("sync", FLUSH_US)));
        assert_eq!((none["phase.sync.commits"], none["phase.rm_fr.commits"]), (1.0, 1.0));
        machine.storage = Some(StoragePrices {
            flush_kib: vec![16.0],
            flush_us: vec![1000.0],
            block_flush_us: None,
            super_flush_us: 100.0,
            write_us: 10.0,
            drop_folio_us: None,
        });
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let priced = run_btrfs_dir(&p, &machine, &mut rng).expect("runs");
        assert_eq!(priced[&axis().metric("sync", FLUSH_US)], 1100.0, "one commit, one size");
        assert!(!none.contains_key(&axis().metric("sync", super::super::walls::WALL_US)));
        let wall = |k: &str| priced[&axis().metric(k, super::super::walls::WALL_US)];
        assert!(wall("sync") > 1100.0, "the flushes and more: {}", wall("sync"));
        // The unlink phase is its calls; rm -fr its calls, the rmdir's
        // wait and the unmount's commit, which flushes too.
        let calls = |k: &str| priced[&axis().metric(k, "unlinks_us")];
        assert!((wall("unlink") - calls("unlink")).abs() < 1e-6);
        assert!(wall("rm_fr") > calls("rm_fr") + priced[&axis().metric("rm_fr", FLUSH_US)]);
        assert!((wall("script") - wall("unlink") - wall("sync") - wall("rm_fr")).abs() < 1e-6);
        assert_eq!(priced[&axis().metric("script", FLUSH_US)], 2200.0);
        let counts: Vec<_> = none.iter().collect();
        assert!(
            counts.iter().all(|(k, v)| priced[*k] == **v),
            "the storage prices change nothing else"
        );
    }

    #[test]
    fn case3_phases_split_the_batches_by_flush() {
        // Every other file unlinked: the balance check flushes testdir at
        // unlinks 12, 137, 262 and 387 (4 flushes, 387 batches: its
        // deletions are never adjacent in the leaf), the sync the other
        // 113; rm -fr flushes at 125, 250, 375, 500 and the root's entry
        // of testdir at unmount (5 flushes): 500 + 1 batches under the old
        // rule, 8 + 1 under the new one (the survivors are adjacent).
        for (strategy, rm) in [(BatchStrategy::Sequential, 501.0), (BatchStrategy::LeafMatch, 9.0)] {
            let m = case3(strategy);
            let g = |phase: &str, v: &str| m[&axis().metric(phase, v)];
            assert_eq!((g("unlink", "batches"), g("unlink", "flushes")), (387.0, 4.0), "{strategy:?}");
            assert_eq!((g("sync", "batches"), g("sync", "flushes")), (113.0, 1.0), "{strategy:?}");
            assert_eq!((g("rm_fr", "batches"), g("rm_fr", "flushes")), (rm, 5.0), "{strategy:?}");
            assert_eq!(g("script", "batches"), m["batches"]);
            assert_eq!(g("script", "flushes"), m["delete_runs"]);
            assert_eq!(g("rm_fr", "batches_per_flush"), rm / 5.0);
            let parts = g("unlink", "delete_us") + g("sync", "delete_us") + g("rm_fr", "delete_us");
            // Each phase rounds its moved bytes up to lines on its own.
            assert!(
                (parts - m["delete_delayed_us"]).abs() < 1.0,
                "{parts} vs {}",
                m["delete_delayed_us"]
            );
            assert_eq!(g("script", "delete_us"), m["delete_delayed_us"]);
        }
    }

    #[test]
    fn a_batch_gap_is_its_window_and_what_follows_the_release() {
        // The unlink phase's and the sync's median batches both delete one
        // item, so each gap is its window plus the same per-batch and
        // per-item work after the release (the loop turn, the release
        // tracepoint, the item's release); rm -fr's batches release many
        // items (about 60 each), so theirs adds more. Nothing fitted: case
        // 3's per-batch knob would hide the items' share.
        let m = script(BtrfsDirParams {
            insert_strategy: InsertStrategy::Contiguous,
            reservation_tracepoints: true,
            batch_overhead_ns: 0.0,
            ..Default::default()
        });
        let g = |phase: &str, v: &str| m[&axis().metric(phase, v)];
        let after = |phase: &str| g(phase, "batch_gap_us") - g(phase, "us_per_batch");
        assert!(
            after("unlink") > 0.0,
            "unlink gap {} window {}",
            g("unlink", "batch_gap_us"),
            g("unlink", "us_per_batch")
        );
        assert!(
            (after("unlink") - after("sync")).abs() < 1e-6,
            "{} vs {}",
            after("unlink"),
            after("sync")
        );
        assert!(after("rm_fr") > 5.0 * after("sync"), "{} vs {}", after("rm_fr"), after("sync"));
        assert!(g("script", "batch_gap_us") >= g("sync", "batch_gap_us"));
        assert!(g("script", "batch_gap_us") <= g("rm_fr", "batch_gap_us"));
    }

    #[test]
    fn a_flush_moves_a_block_once_not_per_batch() {
        // A flush's one-item batches search the same root and dir-index
        // leaves one after another on one CPU: only the first touch after
        // the other task's writes moves lines. Were every probe and level
        // a transfer, as before session 57, there would be about 20 a
        // batch.
        let m = case3(BatchStrategy::LeafMatch);
        let g = |phase: &str, v: &str| m[&axis().metric(phase, v)];
        for phase in ["unlink", "sync"] {
            assert!(g(phase, "transfers") > 0.0, "{phase}");
            assert!(
                g(phase, "transfers") < g(phase, "batches") / 4.0,
                "{phase}: {}",
                g(phase, "transfers")
            );
        }
    }

    #[test]
    fn a_sync_by_the_script_thread_finds_its_own_items_in_its_cache() {
        // The lab calls syncfs from the thread that queued the items: its
        // batches' fixed work, collection and release move no line. The
        // unlink phase (the worker's) is the same either way.
        let by = |sync_by| {
            script(BtrfsDirParams {
                sync_by,
                insert_strategy: InsertStrategy::Contiguous,
                batch_overhead_ns: 0.0,
                ..Default::default()
            })
        };
        let (process, own) = (by(SyncBy::Process), by(SyncBy::Script));
        let g = |m: &BTreeMap<String, f64>, phase: &str, v: &str| m[&axis().metric(phase, v)];
        assert_eq!(g(&process, "unlink", "batch_gap_us"), g(&own, "unlink", "batch_gap_us"));
        assert_eq!(g(&process, "sync", "batches"), g(&own, "sync", "batches"));
        // The tree's transfers are the same: the flusher wrote every
        // block the sync changes, whoever runs it.
        assert_eq!(g(&process, "sync", "transfers"), g(&own, "sync", "transfers"));
        assert!(
            g(&own, "sync", "batch_gap_us") < g(&process, "sync", "batch_gap_us"),
            "{} vs {}",
            g(&own, "sync", "batch_gap_us"),
            g(&process, "sync", "batch_gap_us")
        );
    }

    #[test]
    fn concurrent_worker_makes_the_next_call_wait_for_the_flush() {
        // The worker on the other CPU holds the directory's node mutex
        // through its flush, so the next unlink waits for it: the counts
        // are the inline worker's (387 / 113 / 9 under leaf-match), the
        // median call is the same, and the calls' sum grows by the four
        // flushes of the unlink phase (each over 100 one-item batches).
        let inline = case3(BatchStrategy::LeafMatch);
        let conc = script(BtrfsDirParams {
            worker: WorkerMode::Concurrent,
            insert_strategy: InsertStrategy::Contiguous,
            ..Default::default()
        });
        let g = |m: &BTreeMap<String, f64>, phase: &str, v: &str| m[&axis().metric(phase, v)];
        for (phase, v) in [
            ("unlink", "batches"),
            ("sync", "batches"),
            ("rm_fr", "batches"),
            ("unlink", "unlink_us"),
        ] {
            assert_eq!(g(&conc, phase, v), g(&inline, phase, v), "{phase}.{v}");
        }
        assert_eq!(
            conc["killed_at_evict"], 0.0,
            "in this script the rmdir waits for rm -fr's last flush"
        );
        let waits = g(&conc, "unlink", "unlinks_us") - g(&inline, "unlink", "unlinks_us");
        let flush = g(&inline, "unlink", "us_per_batch");
        assert!(waits > 4.0 * 100.0 * flush, "waits {waits} us, a batch's window {flush} us");
        assert_eq!(
            conc,
            script(BtrfsDirParams {
                worker: WorkerMode::Concurrent,
                insert_strategy: InsertStrategy::Contiguous,
                ..Default::default()
            }),
            "deterministic"
        );
    }
}
