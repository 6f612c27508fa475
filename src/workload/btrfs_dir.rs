//! The btrfs directory script of cases 3 and issue 16: a new filesystem,
//! `mkdir testdir`, create `file_1 .. file_N`, delete a pattern of them,
//! `sync`, then (unless `rm_rf = false`) `rm -fr testdir` and unmount.
//! Everything is counted over the whole script, as the published bpftrace
//! measurement did; the time of the delayed-item functions comes from
//! their counts priced by the machine profile ([`cost`]) plus one fitted
//! per-batch cost.

pub mod cost;
mod keys;
mod params;
pub mod phases;
mod script;
pub mod syscalls;
pub mod walls;
mod worker;

use std::collections::BTreeMap;

use rand_chacha::ChaCha8Rng;

use crate::engine::Metrics;
use crate::engine::histogram::LatencyHistogram;
use crate::engine::rng::RunKey;
use crate::kernel::ModelError;
use crate::kernel::btrfs::delayed::DeleteRunStats;
use crate::kernel::btrfs::unmount;
use crate::kernel::tracing;
use crate::machine::{MachineError, MachineProfile};
use crate::param::ParamError;
use crate::workload::{Input, MetricSpec, Prepared, RunFailure, Sections, Workload};
use cost::{DelayedCost, LinePrices};

pub use params::{
    BtrfsDirParams, DEFAULT_DELETE_EVERY, DeletePattern, FILE_BYTES, FIT_NOTE, MAX_COST_NS, NAME_BYTE_BYTES, RUN_BASE_BYTES, SyncBy,
};

/// Converts a cost in ns (validated finite and non-negative) to integer
/// picoseconds, rounding to the nearest picosecond.
pub fn ns_to_ps(ns: f64) -> u64 {
    crate::machine::ns_to_ps(ns)
}

/// The price list of a run: the machine's line prices, the fitted
/// per-batch cost and the lab's events.
pub fn delayed_cost(p: &BtrfsDirParams, machine: &MachineProfile) -> DelayedCost {
    let work_scale = p.work_scale.on(machine);
    let prices = LinePrices::from_profile(machine, work_scale);
    let release_events = if p.reservation_tracepoints {
        cost::ReleaseEvents::priced(machine, &prices, work_scale)
    } else {
        cost::ReleaseEvents::default()
    };
    DelayedCost {
        prices,
        nodesize: p.nodesize,
        batch_overhead_ps: ns_to_ps(p.batch_overhead_ns),
        lock_tracepoints: p.lock_tracepoints,
        release_events,
    }
}

/// Runs the script and returns its metrics ([`METRICS`]); times are the
/// counts priced by `machine` ([`cost`]).
pub fn run_btrfs_dir(p: &BtrfsDirParams, machine: &MachineProfile, rng: &mut ChaCha8Rng) -> Result<BTreeMap<String, f64>, ModelError> {
    p.validate()?;
    p.work_scale.resolve(machine).map_err(|m| ParamError::new("work_scale", m))?;
    let cost = delayed_cost(p, machine);
    let mut run = script::run(p, machine, cost, rng)?;
    let mut m = BTreeMap::new();
    put_counts(&mut m, &run, &cost);
    let fs = &mut run.fs;
    let s = fs.delayed.delete_stats();
    let ins = fs.delayed.insert_stats();
    let sync_ins = run.after_sync.since(&run.before_sync);
    m.insert("delete_delayed_us".into(), cost.delete_ps(&s)? as f64 / 1e6);
    m.insert("insert_delayed_us".into(), cost.insert_ps(&ins)? as f64 / 1e6);
    m.insert("insert_sync_us".into(), cost.insert_ps(&sync_ins)? as f64 / 1e6);
    let start = Default::default();
    let rm_shapes = fs.delayed.take_batch_shapes();
    phases::put(&mut m, &cost, [&start, &run.deletes_before_sync, &run.before_rm, &s])?;
    phases::put_medians(&mut m, &cost, [&run.unlink_shapes, &run.sync_shapes, &rm_shapes])?;
    let [unlink_calls, rm_calls, all_calls] = &run.calls;
    phases::put_calls(&mut m, [unlink_calls, &LatencyHistogram::new(), rm_calls, all_calls]);
    let marks = run.commit_marks;
    phases::put_writes(&mut m, &fs.commit_blocks(), marks);
    phases::put_refs(&mut m, &fs.commit_work, marks);
    let lock_event_ps = if p.lock_tracepoints { cost.prices.trace_event_ps } else { 0 };
    let scale = p.work_scale.on(machine);
    phases::put_writeout(&mut m, machine, scale, lock_event_ps, p.nodesize, &fs.commit_work, marks);
    put_stacks(&mut m, p, machine, &s);
    if let Some(storage) = &machine.storage {
        let prices = walls::CommitPrices {
            cost: &cost,
            machine,
            work_scale: scale,
            event_ps: lock_event_ps,
            nodesize: p.nodesize,
            storage,
        };
        let calls = [unlink_calls.sum() as f64 / 1e6, rm_calls.sum() as f64 / 1e6];
        let btree_folios = unmount::btree_folios(fs.blocks_allocated(), cost.folios());
        walls::put_priced(&mut m, &prices, fs, calls, run.rmdir_wait_ps as f64 / 1e6, marks, btree_folios)?;
    }
    Ok(m)
}

/// The script's counts (no prices): the delayed items' work over the
/// whole script, the tree's shape after the sync, the btree inode's
/// folios.
fn put_counts(m: &mut BTreeMap<String, f64>, run: &script::Script, cost: &DelayedCost) {
    let fs = &run.fs;
    let s = fs.delayed.delete_stats();
    let ins = fs.delayed.insert_stats();
    let sync_ins = run.after_sync.since(&run.before_sync);
    let mut put = |k: &str, v: f64| {
        m.insert(k.to_string(), v);
    };
    put("batches", s.batches as f64);
    put("searches", s.searches as f64);
    put("leaves_touched", s.leaf_visits as f64);
    put("bytes_moved", s.bytes_moved as f64);
    put("leaves", run.leaves as f64);
    put("tree_height", run.height as f64);
    put("cow_blocks", s.cow_blocks as f64);
    put("leaf_pushes", s.leaf_pushes as f64);
    put("key_compares", s.key_compares as f64);
    put("leaf_walks", s.leaf_walks as f64);
    put("items_released", s.items_released as f64);
    put("delete_runs", s.runs as f64);
    put("batches_rm", (s.batches - run.before_rm.batches) as f64);
    put("dir_index_leaves", run.dir_index_leaves as f64);
    put("files_deleted", run.deleted as f64);
    put("killed_at_evict", fs.killed_at_evict as f64);
    let btree_folios = unmount::btree_folios(fs.blocks_allocated(), cost.folios());
    put("btree_folios", btree_folios as f64);
    put("btree_folios_added", (fs.blocks_allocated() * u64::from(cost.folios())) as f64);
    let refs = fs.extents.counts();
    put("free_space_bitmap_updates", refs.bitmap_crossings as f64);
    put("metadata_groups_added", refs.groups_added as f64);
    put("worker_runs", fs.delayed.worker_runs() as f64);
    put("insert_batches", ins.batches as f64);
    put("insert_searches", ins.searches as f64);
    put("items_per_insert_batch", ratio(ins.items, ins.batches));
    put("insert_batches_sync", sync_ins.batches as f64);
    put("insert_items_sync", sync_ins.items as f64);
}

/// The stacks recorded with the lab's kept reservation events as the
/// twin prices them ([`tracing::stack_ps`]: the profile's measured
/// `tracepoint.stack_ns` in proportion to the frames walked, else the
/// unwinder's counted loads), ns, next to the lab's figures of the same
/// names: `release_stack_ns`, the upper median over the script's deletion
/// batches of their release's stack (the flush worker's,
/// [`WORKER_DELETE_RELEASE_FRAMES`], or a commit's on the syscall's
/// thread, [`COMMIT_DELETE_RELEASE_FRAMES`]: with `sync_by = "script"`
/// the sync's and the unmount's, whose unmount stack is not the syncfs
/// chain those frames count; with `"process"` a commit's batches are
/// priced as the worker's, as [`DelayedCost::delete_ps`] prices them),
/// and `reserve_stack_ns`, an
/// unlink's dir-index reserve ([`UNLINK_STACK_FRAMES`]); both 0 when the
/// reservation events are off (`reservation_tracepoints = false`) and
/// the release's with no batch. The lab's figure also holds the event's
/// own fields and commit (its record is stamped at its reserve): the
/// twin prices those in the kept event, not here.
///
/// [`WORKER_DELETE_RELEASE_FRAMES`]: crate::kernel::btrfs::delayed::WORKER_DELETE_RELEASE_FRAMES
/// [`COMMIT_DELETE_RELEASE_FRAMES`]: crate::kernel::btrfs::delayed::COMMIT_DELETE_RELEASE_FRAMES
/// [`UNLINK_STACK_FRAMES`]: crate::kernel::btrfs::syscall::UNLINK_STACK_FRAMES
fn put_stacks(m: &mut BTreeMap<String, f64>, p: &BtrfsDirParams, machine: &MachineProfile, s: &DeleteRunStats) {
    use crate::kernel::btrfs::delayed::{COMMIT_DELETE_RELEASE_FRAMES, WORKER_DELETE_RELEASE_FRAMES};
    let (mut release, mut reserve) = (0.0, 0.0);
    if p.reservation_tracepoints {
        let scale = p.work_scale.on(machine);
        let ps = |frames| tracing::stack_ps(machine, frames, scale);
        let worker = (ps(WORKER_DELETE_RELEASE_FRAMES), s.batches.saturating_sub(s.own_batches));
        let mut counted = [worker, (ps(COMMIT_DELETE_RELEASE_FRAMES), s.own_batches)];
        release = phases::upper_median(&mut counted).map_or(0.0, |ps| ps as f64 / 1e3);
        reserve = ps(crate::kernel::btrfs::syscall::UNLINK_STACK_FRAMES) as f64 / 1e3;
    }
    m.insert("release_stack_ns".into(), release);
    m.insert("reserve_stack_ns".into(), reserve);
}

/// `a / b`, 0 when `b` is 0.
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// The metrics [`run_btrfs_dir`] reports: (name, unit, meaning).
pub const METRICS: &[(&str, &str, &str)] = &[
    (
        "batches",
        "count",
        "btrfs_del_items calls made while running delayed deletions (whole script)",
    ),
    ("searches", "count", "root-to-leaf searches made while running delayed deletions"),
    ("leaves_touched", "count", "leaves visited by those searches and walks"),
    ("bytes_moved", "bytes", "bytes memmoved inside leaves by the deletions"),
    ("delete_delayed_us", "us", "time in the delayed-deletion function, whole script"),
    ("leaves", "count", "leaves of the fs tree after the sync, before rm -fr"),
    ("tree_height", "levels", "height of the fs tree after the sync"),
    ("cow_blocks", "count", "tree blocks copied on write by the deletions"),
    (
        "leaf_pushes",
        "count",
        "pushes of items into a sibling leaf by the deletions' thin-leaf merges (push_leaf_left / push_leaf_right)",
    ),
    ("key_compares", "count", "key comparisons in binary searches"),
    (
        "leaf_walks",
        "count",
        "moves to the next leaf without a new search (leaf-walk rule)",
    ),
    ("items_released", "count", "delayed items released after their deletion ran"),
    ("delete_runs", "count", "runs of the delayed-deletion function (flushes)"),
    ("batches_rm", "count", "batches made during rm -fr and unmount"),
    (
        "dir_index_leaves",
        "count",
        "leaves holding testdir's dir index items after the sync",
    ),
    ("files_deleted", "count", "files unlinked before the sync"),
    (
        "killed_at_evict",
        "count",
        "pending dir-index items dropped by evictions (never run)",
    ),
    (
        "release_stack_ns",
        "ns",
        "the stack recorded with a deletion batch's reservation release, as priced (tracepoint.stack_ns in proportion to the frames walked: the flush worker's 9 shown, a commit's 8), the upper median over the script's batches; the lab's figure is the median from the event's record to its stack record. 0 when reservation_tracepoints is off",
    ),
    (
        "reserve_stack_ns",
        "ns",
        "the stack recorded with an unlink's dir-index reservation (10 frames shown), as priced (tracepoint.stack_ns in proportion to the frames walked); the lab's figure is the median from the event's record to its stack record. 0 when reservation_tracepoints is off",
    ),
    (
        "btree_folios",
        "count",
        "folios of the btree inode the unmount invalidates: every tree block instantiated since the mount (read at it, the lab's preparation, and every block the run allocated), nodesize / 4 KiB folios each (src/kernel/btrfs/unmount.rs)",
    ),
    (
        "btree_folios_added",
        "count",
        "of btree_folios, those of the blocks the run allocated (the lab counts them live: mm_filemap_add_to_page_cache of the btree inode after its preparation)",
    ),
    (
        "free_space_bitmap_updates",
        "count",
        "free space tree updates that left a metadata block group's free extents above its bitmap threshold, where the kernel converts the group to bitmaps (btrfs_convert_free_space_to_bitmaps): not modelled, the twin keeps extents (src/kernel/btrfs/extent.rs); 0 at the lab's scale",
    ),
    (
        "metadata_groups_added",
        "count",
        "metadata block groups the tree blocks' allocator reached past the mkfs one, each a new chunk after the last, of the first one's length (src/kernel/btrfs/extent.rs)",
    ),
    ("worker_runs", "count", "async worker runs queued by balance checks"),
    (
        "insert_batches",
        "count",
        "btrfs_insert_empty_items calls made while running delayed insertions (whole script)",
    ),
    (
        "insert_searches",
        "count",
        "root-to-leaf searches made while running delayed insertions",
    ),
    ("insert_delayed_us", "us", "time in the delayed-insertion function, whole script"),
    ("items_per_insert_batch", "items", "delayed insertions per batch, whole script"),
    ("insert_batches_sync", "count", "insertion batches of the sync's flush alone"),
    ("insert_items_sync", "count", "delayed insertions still pending at the sync"),
    ("insert_sync_us", "us", "time in the delayed-insertion function during the sync"),
];

/// The `btrfs-dir` workload (case 3's script).
#[derive(Debug, Clone, Copy)]
pub struct BtrfsDir;

impl Workload for BtrfsDir {
    fn kind(&self) -> &'static str {
        "btrfs-dir"
    }

    fn about(&self) -> &'static str {
        "btrfs: create files in one directory, delete a pattern, sync, rm -fr; delayed dir-index insertion and deletion batches"
    }

    fn sections(&self) -> &'static [&'static str] {
        &["btrfs_dir"]
    }

    /// `machine.profile`: it prices the cache lines the delayed-item
    /// functions touch; one task runs, so the topology, placement,
    /// wake-up latency and online CPUs do not apply.
    fn reads_shared(&self) -> &'static [&'static str] {
        &["machine.profile"]
    }

    fn params(&self) -> Vec<crate::workload::ParamSpec> {
        keys::PARAMS.to_vec()
    }

    fn metric_docs(&self) -> Vec<MetricSpec> {
        let mut m: Vec<MetricSpec> = METRICS.iter().map(|&(n, u, m)| MetricSpec::new(n, u, m)).collect();
        m.extend(phases::axis().metric_docs("PHASE"));
        m.push(MetricSpec::new(
            &format!("phase.PHASE.{}", phases::FLUSH_US),
            "us",
            &format!("{}; PHASE is one of unlink, sync, rm_fr, script", phases::FLUSH_MEANING),
        ));
        m.push(MetricSpec::new(
            &format!("phase.PHASE.{}", walls::WALL_US),
            "us",
            &format!("{}; PHASE is one of unlink, sync, rm_fr, script", walls::WALL_MEANING),
        ));
        m.push(MetricSpec::new(
            &phases::axis().metric("rm_fr", walls::UMOUNT_US),
            "us",
            walls::UMOUNT_MEANING,
        ));
        m.push(MetricSpec::new(
            &phases::axis().metric("rm_fr", walls::TEARDOWN_US),
            "us",
            walls::TEARDOWN_MEANING,
        ));
        m.push(MetricSpec::new(
            &phases::axis().metric("rm_fr", walls::TEARDOWN_OFFCPU_US),
            "us",
            walls::TEARDOWN_OFFCPU_MEANING,
        ));
        m
    }

    /// `[btrfs_dir]` with every default filled; the deletion pattern is
    /// shown as the one that applies (`delete_every = 2` when neither key
    /// is set).
    fn resolved_toml(&self, sections: &Sections<'_>) -> Result<String, ParamError> {
        let Some(mut p) = sections.get_opt::<BtrfsDirParams>("btrfs_dir")? else {
            return Ok(String::new());
        };
        if let DeletePattern::Every(k) = p.delete_pattern() {
            p.delete_every = Some(k);
        }
        let table = BTreeMap::from([("btrfs_dir", p)]);
        toml::to_string_pretty(&table).map_err(|e| ParamError::new("btrfs_dir", e.to_string()))
    }

    fn prepare(&self, input: &Input<'_>) -> Result<Box<dyn Prepared>, ParamError> {
        let params: BtrfsDirParams = input.sections.get("btrfs_dir")?;
        params.validate().map_err(|e| e.under("btrfs_dir"))?;
        let profile = crate::machine::build::resolve_profile(input.machine, input.dir).map_err(|e| match e {
            MachineError::Param(p) => p,
            other => ParamError::new("machine.profile", other.to_string()),
        })?;
        params
            .work_scale
            .resolve(&profile)
            .map_err(|m| ParamError::new("btrfs_dir.work_scale", m))?;
        Ok(Box::new(PreparedBtrfsDir { params, profile }))
    }
}

/// A `btrfs-dir` study ready to run.
#[derive(Debug)]
struct PreparedBtrfsDir {
    params: BtrfsDirParams,
    profile: MachineProfile,
}

impl Prepared for PreparedBtrfsDir {
    fn metrics(&self) -> Vec<MetricSpec> {
        self.metrics_on(&self.profile)
    }

    /// The flush and wall times only on a profile with `[storage]`.
    fn metrics_on(&self, profile: &MachineProfile) -> Vec<MetricSpec> {
        let mut m: Vec<MetricSpec> = METRICS.iter().map(|&(n, u, m)| MetricSpec::new(n, u, m)).collect();
        m.extend(phases::axis().metric_specs());
        if profile.storage.is_some() {
            m.extend(phases::flush_metrics());
            m.extend(walls::wall_metrics(profile));
        }
        m
    }

    fn step_axes(&self) -> Vec<crate::workload::StepAxis> {
        vec![phases::axis()]
    }

    fn key_metrics(&self) -> &'static [&'static str] {
        if self.params.rm_rf {
            &["batches", "searches", "delete_delayed_us", "leaves", "tree_height"]
        } else {
            &[
                "insert_batches_sync",
                "insert_searches",
                "insert_sync_us",
                "items_per_insert_batch",
                "leaves",
            ]
        }
    }

    /// See [`BtrfsDirParams::memory_bytes`].
    fn memory_bytes(&self) -> u64 {
        self.params.memory_bytes()
    }

    fn run(&self, key: RunKey) -> Result<Metrics, RunFailure> {
        Ok(run_btrfs_dir(&self.params, &self.profile, &mut key.stream("btrfs_dir"))?)
    }
}

#[cfg(test)]
mod tests {
    use super::phases::upper_median;

    #[test]
    fn the_upper_median_of_two_kinds_follows_their_counts() {
        // 3 of 1 and 2 of 5: index 2 of [1, 1, 1, 5, 5].
        assert_eq!(upper_median(&mut [(5, 2), (1, 3)]), Some(1));
        // 2 and 2: index 2 of [1, 1, 5, 5], the upper of the middle two.
        assert_eq!(upper_median(&mut [(1, 2), (5, 2)]), Some(5));
        assert_eq!(upper_median(&mut [(1, 0), (5, 1)]), Some(5));
        assert_eq!(upper_median(&mut [(1, 0), (5, 0)]), None);
    }
}
