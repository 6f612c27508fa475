//! The `fsmark` workload: fs_mark's zero-size creates on one btrfs
//! subvolume, T threads x F files per loop x L loops, with the subvolume
//! root's open-inode index (rb-tree or xarray) on the modelled machine and
//! its set-associative caches. Case 2 (docs/reference/cases.md): the time
//! of the function that adds an inode to the index.

mod index;
mod keys;
pub mod params;
pub mod report;
pub mod sim;

use std::sync::Arc;

pub use params::{FsmarkParams, IndexKind};

use crate::engine::Metrics;
use crate::engine::rng::RunKey;
use crate::machine::Machine;
use crate::machine::cache::MachineCaches;
use crate::param::ParamError;
use crate::workload::{Input, MetricSpec, Prepared, RunFailure, Sections, StepAxis, StepScale, Workload};

/// Metrics every run reports: (name, unit, meaning).
pub const METRICS: &[(&str, &str, &str)] = &[
    ("insert_mean_ns", "ns", "mean time of the insert function (lock wait included)"),
    ("insert_p50_ns", "ns", "median insert time"),
    ("insert_p90_ns", "ns", "90th percentile insert time"),
    ("insert_p95_ns", "ns", "95th percentile insert time"),
    ("insert_p99_ns", "ns", "99th percentile insert time"),
    ("insert_max_ns", "ns", "longest insert"),
    ("insert_min_ns", "ns", "shortest insert"),
    ("insert_stddev_ns", "ns", "standard deviation of the insert time"),
    ("inserts", "count", "inserts timed (one per create)"),
    ("files_per_sec", "files/s", "creates per second over the whole run"),
    (
        "index_depth_mean",
        "levels",
        "index levels an insert walked (rb-tree nodes compared, xarray levels), mean",
    ),
    (
        "index_height",
        "levels",
        "height of the index at the end (rb-tree longest path, xarray levels)",
    ),
    (
        "index_node_depth_mean",
        "levels",
        "mean depth of the index's nodes at the end (rb-tree), its levels (xarray)",
    ),
    (
        "cache_misses_per_insert",
        "count",
        "index lines an insert touched that missed its L1d",
    ),
    (
        "peer_transfers_per_insert",
        "count",
        "index lines an insert fetched from another core's modified copy",
    ),
    ("memory_misses_per_insert", "count", "index lines an insert fetched from DRAM"),
    ("lines_per_insert", "count", "index line accesses per insert"),
    ("inode_lock.wait_mean_ns", "ns", "mean wait for inode_lock per acquisition"),
    ("inode_lock.utilisation", "fraction", "share of the run inode_lock was held"),
    ("lock_wait_share", "fraction", "share of insert time spent waiting for a lock"),
    ("failed_inserts", "count", "inserts that failed with ENOMEM (create abandoned)"),
    ("open_inodes", "count", "inodes in the index at the end"),
];

/// The log2 histogram buckets reported as metrics: `[2^k, 2^(k+1))` ns.
pub const HIST_BUCKETS: usize = 32;

/// Name of histogram bucket `k`: the count of inserts taking
/// `[2^k, 2^(k+1))` ns, on the step axis [`hist_axis`].
pub fn hist_metric(k: usize) -> String {
    format!("insert_hist.log2_{k:02}.inserts")
}

/// The insert-latency histogram as a step axis of the contract: log2
/// buckets of ns, the count of inserts in each.
pub fn hist_axis() -> StepAxis {
    StepAxis {
        name: "insert_hist",
        label: "insert latency (ns)",
        scale: StepScale::Log2 { unit: "ns" },
        steps: (0..HIST_BUCKETS)
            .map(|k| (format!("log2_{k:02}"), report::bucket_label(k)))
            .collect(),
        values: vec![MetricSpec::new("inserts", "count", "inserts whose insert function took this long")],
    }
}

/// Names of the per-loop metrics of loop `l` (1-based): count, rate.
pub fn loop_metrics(l: u32) -> (String, String) {
    (format!("loop{l:02}.count"), format!("loop{l:02}.files_per_sec"))
}

/// The `fsmark` workload.
#[derive(Debug, Clone, Copy)]
pub struct Fsmark;

impl Workload for Fsmark {
    fn kind(&self) -> &'static str {
        "fsmark"
    }

    fn about(&self) -> &'static str {
        "fs_mark zero-size creates on btrfs: the open-inode index (rb-tree or xarray) under inode_lock, on the cache model"
    }

    fn sections(&self) -> &'static [&'static str] {
        &["fsmark"]
    }

    /// The profile (prices, caches), topology and placement (where the
    /// threads run), and the thread count. Not `machine.wakeup_ns`: the
    /// only lock, `inode_lock`, is a spinlock, whose waiters spin rather
    /// than sleep; nor `machine.online_cpus`: no path reads
    /// `num_online_cpus()`.
    fn reads_shared(&self) -> &'static [&'static str] {
        &["machine.profile", "machine.topology", "machine.placement", "workload.threads"]
    }

    fn params(&self) -> Vec<crate::workload::ParamSpec> {
        keys::PARAMS.to_vec()
    }

    fn metric_docs(&self) -> Vec<MetricSpec> {
        let mut m: Vec<MetricSpec> = METRICS.iter().map(|&(n, u, d)| MetricSpec::new(n, u, d)).collect();
        m.extend(hist_axis().metric_docs("log2_KK"));
        m.push(MetricSpec::new("loopLL.count", "count", "files created in loop LL"));
        m.push(MetricSpec::new("loopLL.files_per_sec", "files/s", "creates per second in loop LL"));
        m
    }

    fn resolved_toml(&self, sections: &Sections<'_>) -> Result<String, ParamError> {
        let text = sections.resolved_selected::<FsmarkParams>("fsmark", &params::INDEX_KEYS)?;
        sections.check_selected(&params::INDEX_KEYS)?;
        Ok(text)
    }

    fn prepare(&self, input: &Input<'_>) -> Result<Box<dyn Prepared>, ParamError> {
        let params: FsmarkParams = input.sections.get("fsmark")?;
        let machine = input.machines.get(input.machine, input.threads, input.dir).map_err(|e| match e {
            crate::machine::MachineError::Param(p) => p,
            other => ParamError::new("machine.profile", other.to_string()),
        })?;
        params.validate(machine.cpus.len() as u64).map_err(|e| e.under("fsmark"))?;
        // Validated here, built per run: a point's caches are megabytes,
        // and neither `check` nor a plan of many points may hold them.
        MachineCaches::check(&machine)?;
        Ok(Box::new(PreparedFsmark { params, machine }))
    }
}

/// An `fsmark` study ready to run.
#[derive(Debug)]
struct PreparedFsmark {
    params: FsmarkParams,
    machine: Arc<Machine>,
}

impl Prepared for PreparedFsmark {
    fn metrics(&self) -> Vec<MetricSpec> {
        let mut m: Vec<MetricSpec> = METRICS.iter().map(|&(n, u, d)| MetricSpec::new(n, u, d)).collect();
        m.extend(hist_axis().metric_specs());
        for l in 1..=self.params.loops {
            let (c, r) = loop_metrics(l);
            m.push(MetricSpec {
                name: c,
                unit: "count",
                meaning: format!("files created in loop {l}"),
            });
            m.push(MetricSpec {
                name: r,
                unit: "files/s",
                meaning: format!("creates per second in loop {l}"),
            });
        }
        m
    }

    fn key_metrics(&self) -> &'static [&'static str] {
        &[
            "insert_mean_ns",
            "insert_p50_ns",
            "insert_p99_ns",
            "index_depth_mean",
            "cache_misses_per_insert",
        ]
    }

    /// Per open inode: an rb node (32 B) and its queue entry (4 B), or a
    /// share of an xarray node (about 1 KiB per 64 inodes) and its queue
    /// entry (16 B), reserved up front for a prefill; the slab bitmaps;
    /// plus the caches' tags (a few MiB per core). The coherence states of
    /// the lines written (each new inode's 17, in 2, 4 or 10 bytes by the
    /// core count) are not counted apart: case 2's rb-tree run (6M inodes,
    /// 12 cores, 4-byte states) measured 475 MB against 401 MB estimated.
    /// Measured (`/usr/bin/time -v`, 10^7 prefilled, 12 threads): 404 MB
    /// rb-tree, 370 MB xarray (session 49; 452 and 419 MB before a slab
    /// kept no count apart from its bitmap), against 624 MB estimated; at
    /// 64 threads (ten-byte line states) 477 and 442 MB.
    fn memory_bytes(&self) -> u64 {
        let files = self.params.total_files(self.machine.cpus.len() as u64);
        let open = if self.params.open_inodes == 0 {
            files
        } else if self.params.prefill {
            // All of them open before the first create, and kept open.
            self.params.open_inodes.saturating_add(self.machine.cpus.len() as u64)
        } else {
            files.min(self.params.open_inodes)
        };
        let caches = 64 << 20;
        caches + open.saturating_mul(56) + files / 8
    }

    /// Host CPU ns of a run, roughly: building the caches, 100 ns per
    /// prefilled inode, and per create 3 us (rb-tree) or 2 us (xarray)
    /// times (1 + cores / 64), the invalidations' scan growing with the
    /// cores. Measured on the AMD lab host (session 44, each run of
    /// `index-scaling.toml` alone): within a factor of 1.5 of every run's
    /// time, which is all the order of the runs needs.
    fn work_estimate(&self) -> f64 {
        let cores = self.machine.cpus.len() as f64;
        let creates = self.params.total_files(self.machine.cpus.len() as u64) as f64;
        let prefilled = if self.params.prefill { self.params.open_inodes as f64 } else { 0.0 };
        let per_create = match self.params.index {
            IndexKind::Rbtree => 3000.0,
            IndexKind::Xarray => 2000.0,
        };
        70e6 + 100.0 * prefilled + per_create * (1.0 + cores / 64.0) * creates
    }

    fn step_axes(&self) -> Vec<StepAxis> {
        vec![hist_axis()]
    }

    fn run(&self, key: RunKey) -> Result<Metrics, RunFailure> {
        let n = self.machine.cpus.len();
        let caches = MachineCaches::for_machine(&self.machine).map_err(crate::kernel::ModelError::from)?;
        let rngs = (0..n).map(|t| key.stream(&format!("thread{t}.create"))).collect();
        let sim = sim::Sim::new(&self.params, &self.machine.pricing, &self.machine.slowdown_permille, caches, rngs);
        let out = sim.run()?;
        Ok(report::metrics(&out, self.params.loops))
    }

    fn text_outputs(&self, metrics: &Metrics) -> Option<String> {
        Some(report::text(metrics, self.params.loops))
    }
}

#[cfg(test)]
mod tests;
