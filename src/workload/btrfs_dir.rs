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
pub mod syscalls;
pub mod walls;
mod worker;

use std::collections::BTreeMap;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::engine::Metrics;
use crate::engine::histogram::LatencyHistogram;
use crate::engine::rng::RunKey;
use crate::kernel::ModelError;
use crate::kernel::btrfs::fs::{Fs, ROOT_DIR_INO, dir_index_leaf_count, rm_rf};
use crate::kernel::btrfs::unmount;
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
    let release_event_ps = if p.reservation_tracepoints {
        let stack = crate::kernel::tracing::stack_trace().ns(machine, work_scale);
        prices.trace_event_ps + ns_to_ps(stack)
    } else {
        0
    };
    DelayedCost {
        prices,
        nodesize: p.nodesize,
        batch_overhead_ps: ns_to_ps(p.batch_overhead_ns),
        lock_tracepoints: p.lock_tracepoints,
        release_event_ps,
    }
}

/// Runs the script and returns its metrics ([`METRICS`]); times are the
/// counts priced by `machine` ([`cost`]).
pub fn run_btrfs_dir(p: &BtrfsDirParams, machine: &MachineProfile, rng: &mut ChaCha8Rng) -> Result<BTreeMap<String, f64>, ModelError> {
    p.validate()?;
    p.work_scale.resolve(machine).map_err(|m| ParamError::new("work_scale", m))?;
    let cost = delayed_cost(p, machine);
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
    let (mut unlink_calls, mut rm_calls, mut all_calls) = (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new());
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
        let wait = clock.before_call(&mut fs)?;
        if fs.unlink(testdir, &p.file_name(i)) {
            deleted += 1;
            let ps = unlink_cost.call_ps(&fs.last_unlink)?;
            unlink_calls.record(ps + wait);
            all_calls.record(ps + wait);
            clock.after_call(&fs, ps)?;
        }
    }
    let (start_commits, before_sync_commits) = (0, fs.commits());
    let before_sync = fs.delayed.insert_stats();
    let deletes_before_sync = fs.delayed.delete_stats();
    let unlink_shapes = fs.delayed.take_batch_shapes();
    fs.sync();
    let sync_shapes = fs.delayed.take_batch_shapes();
    let after_sync = fs.delayed.insert_stats();
    let leaves = fs.tree.leaf_count();
    let height = fs.tree.height();
    let dir_index_leaves = dir_index_leaf_count(&fs, testdir);
    let before_rm = fs.delayed.delete_stats();
    let before_rm_commits = fs.commits();
    let mut rmdir_wait_ps = 0;
    if p.rm_rf {
        let mut priced = Ok(());
        // Each call waits for a flush still running when it starts (the
        // rmdir too, whose eviction of the directory would otherwise drop
        // the flush's items; a flush the rmdir's own check queues is
        // dropped by that eviction): the wait is found at the previous
        // call's end (before rm_rf starts for the first unlink).
        let mut wait = clock.before_call(&mut fs)?;
        // After the loop, the last call's `wait` is the rmdir's.
        rm_rf(&mut fs, testdir, &mut |fs| {
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
        rmdir_wait_ps = wait;
    }
    let s = fs.delayed.delete_stats();
    let ins = fs.delayed.insert_stats();
    let sync_ins = after_sync.since(&before_sync);
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: f64| {
        m.insert(k.to_string(), v);
    };
    put("batches", s.batches as f64);
    put("searches", s.searches as f64);
    put("leaves_touched", s.leaf_visits as f64);
    put("bytes_moved", s.bytes_moved as f64);
    put("delete_delayed_us", cost.delete_ps(&s)? as f64 / 1e6);
    put("leaves", leaves as f64);
    put("tree_height", height as f64);
    put("cow_blocks", s.cow_blocks as f64);
    put("leaf_pushes", s.leaf_pushes as f64);
    put("key_compares", s.key_compares as f64);
    put("leaf_walks", s.leaf_walks as f64);
    put("items_released", s.items_released as f64);
    put("delete_runs", s.runs as f64);
    put("batches_rm", (s.batches - before_rm.batches) as f64);
    put("dir_index_leaves", dir_index_leaves as f64);
    put("files_deleted", deleted as f64);
    put("killed_at_evict", fs.killed_at_evict as f64);
    let btree_folios = unmount::btree_folios(fs.blocks_allocated(), cost.folios());
    put("btree_folios", btree_folios as f64);
    put("btree_folios_added", (fs.blocks_allocated() * u64::from(cost.folios())) as f64);
    put("worker_runs", fs.delayed.worker_runs() as f64);
    put("insert_batches", ins.batches as f64);
    put("insert_searches", ins.searches as f64);
    put("insert_delayed_us", cost.insert_ps(&ins)? as f64 / 1e6);
    put("items_per_insert_batch", ratio(ins.items, ins.batches));
    put("insert_batches_sync", sync_ins.batches as f64);
    put("insert_items_sync", sync_ins.items as f64);
    put("insert_sync_us", cost.insert_ps(&sync_ins)? as f64 / 1e6);
    let start = Default::default();
    let rm_shapes = fs.delayed.take_batch_shapes();
    phases::put(&mut m, &cost, [&start, &deletes_before_sync, &before_rm, &s])?;
    phases::put_medians(&mut m, &cost, [&unlink_shapes, &sync_shapes, &rm_shapes])?;
    phases::put_calls(&mut m, [&unlink_calls, &LatencyHistogram::new(), &rm_calls, &all_calls]);
    let marks = [start_commits, before_sync_commits, before_rm_commits, fs.commits()];
    phases::put_writes(&mut m, &fs.commit_blocks(), marks);
    let lock_event_ps = if p.lock_tracepoints { cost.prices.trace_event_ps } else { 0 };
    let scale = p.work_scale.on(machine);
    phases::put_writeout(&mut m, machine, scale, lock_event_ps, p.nodesize, &fs.commit_work, marks);
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
        walls::put_priced(&mut m, &prices, &fs, calls, rmdir_wait_ps as f64 / 1e6, marks, btree_folios)?;
    }
    Ok(m)
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
        "btree_folios",
        "count",
        "folios of the btree inode the unmount invalidates: every tree block instantiated since the mount (read at it, the lab's preparation, and every block the run allocated), nodesize / 4 KiB folios each (src/kernel/btrfs/unmount.rs)",
    ),
    (
        "btree_folios_added",
        "count",
        "of btree_folios, those of the blocks the run allocated (the lab counts them live: mm_filemap_add_to_page_cache of the btree inode after its preparation)",
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
