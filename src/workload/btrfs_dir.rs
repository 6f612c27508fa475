//! The btrfs directory script of case 3: a new filesystem, `mkdir testdir`,
//! create `file_1 .. file_N`, delete a pattern of them, `sync`, then
//! `rm -fr testdir` and unmount. Everything is counted over the whole
//! script, as the published bpftrace measurement did; the time of the
//! delayed-deletion function comes from its counts priced by ns costs.

mod keys;

use std::collections::BTreeMap;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::kernel::btrfs::fs::{Fs, ROOT_DIR_INO, dir_index_leaf_count, rm_rf};

use crate::engine::Metrics;
use crate::engine::rng::RunKey;
use crate::kernel::ModelError;
use crate::kernel::btrfs::delayed::{BatchStrategy, DeleteRunStats, Thresholds};
use crate::param::ParamError;
use crate::workload::{Input, MetricSpec, Prepared, RunFailure, Sections, Workload};

/// Parameters of the `btrfs-dir` workload (scenario section keys).
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct BtrfsDirParams {
    /// Files created in `testdir` (count). Default 1000.
    pub files: u64,
    /// Delete every k-th file starting with `file_1` (k = 2 deletes
    /// `file_1`, `file_3`, ...). Count, at least 1. Default unset, which
    /// means every 2nd ([`DEFAULT_DELETE_EVERY`]) when `delete_fraction`
    /// is unset too; setting both is an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete_every: Option<u64>,
    /// Delete each file independently with this probability (0..=1), drawn
    /// from the run's random stream, instead of every k-th. Default unset;
    /// setting it together with `delete_every` is an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete_fraction: Option<f64>,
    /// Name length in bytes for every file (`f` then the zero-padded file
    /// number). Default unset: the real names `file_1`, `file_2`, ...
    pub name_len: Option<u32>,
    /// Tree block size in bytes, a power of two in 4096..=65536. Default
    /// 16384 (mkfs.btrfs default).
    pub nodesize: u32,
    /// Batch rule for delayed deletions. Default `leaf-match`.
    pub strategy: BatchStrategy,
    /// Whether evicting the removed directory drops its still-pending
    /// delayed deletions (`btrfs_kill_delayed_inode_items`, as current
    /// kernel source reads) instead of running them at the next commit.
    /// Default false: the published old-rule count shows every deletion of
    /// the script reached `btrfs_del_items`, which only happens if they ran.
    pub evict_kills_pending: bool,
    /// `BTRFS_DELAYED_BACKGROUND` (items). Default 128.
    pub delayed_background: usize,
    /// `BTRFS_DELAYED_WRITEBACK` (items). Default 512.
    pub delayed_writeback: usize,
    /// `BTRFS_DELAYED_BATCH` (delayed nodes per worker run). Default 16.
    pub delayed_batch: usize,
    /// ns per tree block (node or leaf) visited by a search: lock, buffer
    /// lookup, header read. Default 150 (a few cache misses and a lock
    /// round trip; an estimate, not calibrated).
    pub node_visit_ns: f64,
    /// ns per key comparison in a binary search (`btrfs_comp_keys` on a
    /// mapped extent buffer). Default 4 (estimate).
    pub key_compare_ns: f64,
    /// ns per block copied on write: 16 KiB copy plus tree-block allocation.
    /// Default 2500 (estimate: ~1 us copy + extent reservation).
    pub cow_block_ns: f64,
    /// ns per byte memmoved inside a leaf. Default 0.1 (~10 GB/s).
    pub byte_moved_ns: f64,
    /// ns per leaf freed (`btrfs_del_leaf`: parent pointer removal and
    /// `btrfs_free_tree_block`). Default 2000 (estimate).
    pub leaf_free_ns: f64,
    /// ns of fixed work per `btrfs_del_items` call in the delayed-deletion
    /// loop (path setup and release, mutex round trip, batch list, item
    /// offset fix-ups). Default 3800: CALIBRATED, see [`CALIBRATION_NOTE`].
    pub del_items_ns: f64,
    /// ns per delayed item released (`btrfs_delayed_item_release_metadata`,
    /// rb-tree erase, atomic dec, `kfree`, waking waiters). Default 4800:
    /// CALIBRATED, see [`CALIBRATION_NOTE`].
    pub item_release_ns: f64,
}

/// How the two calibrated costs were chosen: with the estimated costs
/// above fixed, the model's own counts for case 3 under `sequential` and
/// `leaf-match` give two linear equations in `del_items_ns` and
/// `item_release_ns` (the item count is the same under both rules, so the
/// difference of the two published times fixes the per-batch cost and the
/// rest fixes the per-item cost). The solution was rounded to two
/// significant figures. With the defaults the uncalibrated part of the
/// function's time is about 0.91 ms (old rule) and 0.54 ms (new rule) for
/// the model's own batch counts on the case-3 script; the helper that
/// built this printed these parts. The published figures live only in the
/// tests and the scenario's `[[expect]]` checks.
pub const CALIBRATION_NOTE: &str = "del_items_ns and item_release_ns solved from case 3 (two rules, two times)";

/// The deletion pattern when neither `delete_every` nor `delete_fraction`
/// is set: every 2nd file (`file_1`, `file_3`, ...), as in case 3.
pub const DEFAULT_DELETE_EVERY: u64 = 2;

/// Largest accepted value of every `*_ns` cost, ns (1 s). With counts
/// below 2^64, a cost of at most 1e12 ps times a count stays below 2^104,
/// so the time computed in `u128` cannot overflow.
pub const MAX_COST_NS: f64 = 1e9;

/// Upper bound on the bytes one file costs a run, before its name: tree
/// items (inode item, inode ref, dir item, dir index) in leaf vectors,
/// the directory entry map, pending delayed items. Measured with
/// `/usr/bin/time -v` (maximum RSS, 200,000 against 1,000,000 files): 292
/// bytes per file with the defaults (12-byte names); 408 with 4 KiB nodes
/// and no deletions (the worst layout measured); 886 with 255-byte names
/// on that layout, and 905 at 1M files (absolute, whole process) with
/// every delayed item pending (`delayed_writeback = 2e9`). See
/// [`BtrfsDirParams::memory_bytes`].
pub const FILE_BYTES: u64 = 512;

/// Upper bound on the bytes per byte of file name (each name is kept
/// about twice: the directory map and the delayed item or the `rm -fr`
/// list); measured 2.0.
pub const NAME_BYTE_BYTES: u64 = 3;

/// Fixed bytes of one run besides the files (the empty tree, thresholds).
pub const RUN_BASE_BYTES: u64 = 256 * 1024;

/// Which files the script deletes before the `sync`, resolved from
/// `delete_every` / `delete_fraction`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DeletePattern {
    /// Every k-th file, starting with `file_1`.
    Every(u64),
    /// Each file independently with this probability.
    Fraction(f64),
}
impl Default for BtrfsDirParams {
    fn default() -> Self {
        BtrfsDirParams {
            files: 1000,
            delete_every: None,
            delete_fraction: None,
            name_len: None,
            nodesize: 16384,
            strategy: BatchStrategy::LeafMatch,
            evict_kills_pending: false,
            delayed_background: 128,
            delayed_writeback: 512,
            delayed_batch: 16,
            node_visit_ns: 150.0,
            key_compare_ns: 4.0,
            cow_block_ns: 2500.0,
            byte_moved_ns: 0.1,
            leaf_free_ns: 2000.0,
            del_items_ns: 3800.0,
            item_release_ns: 4800.0,
        }
    }
}

fn invalid(field: &str, message: impl Into<String>) -> ParamError {
    ParamError::new(field, message)
}

/// Converts a cost in ns (validated finite and non-negative) to integer
/// picoseconds, rounding to the nearest picosecond.
pub fn ns_to_ps(ns: f64) -> u64 {
    crate::machine::ns_to_ps(ns)
}

impl BtrfsDirParams {
    /// Checks ranges; the error names the offending key.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.files == 0 || self.files > 50_000_000 {
            return Err(invalid("files", "expected 1..=50000000 files"));
        }
        if self.delete_every.is_some() && self.delete_fraction.is_some() {
            return Err(invalid(
                "delete_every",
                "`delete_every` and `delete_fraction` are both set; set one of them \
                 (every k-th file, or each file with a probability)",
            ));
        }
        if self.delete_every == Some(0) {
            return Err(invalid("delete_every", "expected at least 1"));
        }
        if let Some(f) = self.delete_fraction
            && !(0.0..=1.0).contains(&f)
        {
            return Err(invalid("delete_fraction", "expected a probability in 0..=1"));
        }
        if let Some(len) = self.name_len {
            let digits = self.files.to_string().len() as u32;
            if len > 255 || len < digits + 1 {
                return Err(invalid(
                    "name_len",
                    format!("expected {}..=255 bytes for {} files", digits + 1, self.files),
                ));
            }
        }
        if !self.nodesize.is_power_of_two() || !(4096..=65536).contains(&self.nodesize) {
            return Err(invalid("nodesize", "expected a power of two in 4096..=65536"));
        }
        if self.delayed_background < 2 || self.delayed_writeback <= self.delayed_background || self.delayed_batch == 0 {
            return Err(invalid("delayed_background", "expected 2 <= background < writeback and batch >= 1"));
        }
        for (field, v) in self.costs() {
            if !(0.0..=MAX_COST_NS).contains(&v) {
                return Err(invalid(field, format!("expected a cost in 0..=1e9 ns (1 s), found {v}")));
            }
        }
        Ok(())
    }

    fn costs(&self) -> [(&'static str, f64); 7] {
        [
            ("node_visit_ns", self.node_visit_ns),
            ("key_compare_ns", self.key_compare_ns),
            ("cow_block_ns", self.cow_block_ns),
            ("byte_moved_ns", self.byte_moved_ns),
            ("leaf_free_ns", self.leaf_free_ns),
            ("del_items_ns", self.del_items_ns),
            ("item_release_ns", self.item_release_ns),
        ]
    }

    /// The deletion pattern these parameters ask for (every 2nd file when
    /// neither key is set).
    pub fn delete_pattern(&self) -> DeletePattern {
        match (self.delete_fraction, self.delete_every) {
            (Some(f), _) => DeletePattern::Fraction(f),
            (None, k) => DeletePattern::Every(k.unwrap_or(DEFAULT_DELETE_EVERY)),
        }
    }

    /// Length of the longest file name, bytes: `name_len`, or `file_`
    /// plus the digits of `files`.
    pub fn longest_name(&self) -> u64 {
        self.name_len.map_or(5 + self.files.to_string().len() as u64, u64::from)
    }

    /// Upper bound on one run's peak memory, bytes:
    /// `RUN_BASE_BYTES + files x (FILE_BYTES + NAME_BYTE_BYTES x name
    /// length)`, e.g. 548 bytes per file with the default names, 1,277 with
    /// 255-byte names (measured at most 408 and 905).
    pub fn memory_bytes(&self) -> u64 {
        let per_file = FILE_BYTES.saturating_add(NAME_BYTE_BYTES.saturating_mul(self.longest_name()));
        RUN_BASE_BYTES.saturating_add(self.files.saturating_mul(per_file))
    }

    /// The name of file number `i` (1-based).
    pub fn file_name(&self, i: u64) -> Vec<u8> {
        match self.name_len {
            Some(len) => format!("f{:0>w$}", i, w = len as usize - 1).into_bytes(),
            None => format!("file_{i}").into_bytes(),
        }
    }

    /// Time of the delayed-deletion function for these counts, in ps:
    /// each count times its cost, summed in `u128`. With costs validated
    /// to at most [`MAX_COST_NS`] this cannot overflow; the checked
    /// arithmetic is a backstop that fails with [`ModelError::Overflow`].
    pub fn delete_delayed_ps(&self, s: &DeleteRunStats) -> Result<u128, ModelError> {
        let visits = u128::from(s.node_visits) + u128::from(s.leaf_visits);
        let terms = [
            (visits, self.node_visit_ns),
            (u128::from(s.key_compares), self.key_compare_ns),
            (u128::from(s.cow_blocks), self.cow_block_ns),
            (u128::from(s.bytes_moved), self.byte_moved_ns),
            (u128::from(s.leaves_freed), self.leaf_free_ns),
            (u128::from(s.batches), self.del_items_ns),
            (u128::from(s.items_released), self.item_release_ns),
        ];
        terms.iter().try_fold(0u128, |sum, &(count, ns)| {
            count
                .checked_mul(u128::from(ns_to_ps(ns)))
                .and_then(|t| sum.checked_add(t))
                .ok_or(ModelError::Overflow("btrfs_dir: time of the delayed-deletion function in ps"))
        })
    }
}

/// Runs the case-3 script and returns its metrics:
/// `batches`, `searches`, `leaves_touched`, `bytes_moved`,
/// `delete_delayed_us` (all inside the delayed-deletion function, whole
/// script), `leaves` and `tree_height` (the fs tree after the `sync`,
/// before `rm -fr`), plus `cow_blocks`, `key_compares`, `leaf_walks`,
/// `items_released`, `delete_runs`, `batches_rm` (batches during `rm -fr`
/// and unmount), `dir_index_leaves` (leaves holding testdir's dir index
/// items after the `sync`) and `files_deleted`.
pub fn run_btrfs_dir(p: &BtrfsDirParams, rng: &mut ChaCha8Rng) -> Result<BTreeMap<String, f64>, ModelError> {
    p.validate()?;
    let thresholds = Thresholds {
        background: p.delayed_background,
        writeback: p.delayed_writeback,
        batch: p.delayed_batch,
    };
    let mut fs = Fs::new(p.nodesize, thresholds, p.strategy);
    fs.evict_kills_pending = p.evict_kills_pending;
    let testdir = fs.mkdir(ROOT_DIR_INO, b"testdir").ok_or_else(|| invalid("files", "mkdir failed"))?;
    for i in 1..=p.files {
        fs.create(testdir, &p.file_name(i));
    }
    let mut deleted = 0u64;
    let pattern = p.delete_pattern();
    for i in 1..=p.files {
        let hit = match pattern {
            DeletePattern::Fraction(f) => rng.random_bool(f),
            DeletePattern::Every(k) => (i - 1) % k == 0,
        };
        if hit && fs.unlink(testdir, &p.file_name(i)) {
            deleted += 1;
        }
    }
    fs.sync();
    let leaves = fs.tree.leaf_count();
    let height = fs.tree.height();
    let dir_index_leaves = dir_index_leaf_count(&fs, testdir);
    let before_rm = fs.delayed.delete_stats();
    rm_rf(&mut fs, testdir);
    let s = fs.delayed.delete_stats();
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: f64| {
        m.insert(k.to_string(), v);
    };
    put("batches", s.batches as f64);
    put("searches", s.searches as f64);
    put("leaves_touched", s.leaf_visits as f64);
    put("bytes_moved", s.bytes_moved as f64);
    put("delete_delayed_us", p.delete_delayed_ps(&s)? as f64 / 1e6);
    put("leaves", leaves as f64);
    put("tree_height", height as f64);
    put("cow_blocks", s.cow_blocks as f64);
    put("key_compares", s.key_compares as f64);
    put("leaf_walks", s.leaf_walks as f64);
    put("items_released", s.items_released as f64);
    put("delete_runs", s.runs as f64);
    put("batches_rm", (s.batches - before_rm.batches) as f64);
    put("dir_index_leaves", dir_index_leaves as f64);
    put("files_deleted", deleted as f64);
    Ok(m)
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
];

/// The `btrfs-dir` workload (case 3's script).
#[derive(Debug, Clone, Copy)]
pub struct BtrfsDir;

impl Workload for BtrfsDir {
    fn kind(&self) -> &'static str {
        "btrfs-dir"
    }

    fn about(&self) -> &'static str {
        "btrfs: create files in one directory, delete a pattern, sync, rm -fr; delayed dir-index deletion batches"
    }

    fn sections(&self) -> &'static [&'static str] {
        &["btrfs_dir"]
    }

    fn params(&self) -> Vec<crate::workload::ParamSpec> {
        keys::PARAMS.to_vec()
    }

    fn metric_docs(&self) -> Vec<MetricSpec> {
        METRICS.iter().map(|&(n, u, m)| MetricSpec::new(n, u, m)).collect()
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
        Ok(Box::new(PreparedBtrfsDir { params }))
    }
}

/// A `btrfs-dir` study ready to run.
#[derive(Debug)]
struct PreparedBtrfsDir {
    params: BtrfsDirParams,
}

impl Prepared for PreparedBtrfsDir {
    fn metrics(&self) -> Vec<MetricSpec> {
        METRICS.iter().map(|&(n, u, m)| MetricSpec::new(n, u, m)).collect()
    }

    fn key_metrics(&self) -> &'static [&'static str] {
        &["batches", "searches", "delete_delayed_us", "leaves", "tree_height"]
    }

    /// See [`BtrfsDirParams::memory_bytes`].
    fn memory_bytes(&self) -> u64 {
        self.params.memory_bytes()
    }

    fn run(&self, key: RunKey) -> Result<Metrics, RunFailure> {
        Ok(run_btrfs_dir(&self.params, &mut key.stream("btrfs_dir"))?)
    }
}
