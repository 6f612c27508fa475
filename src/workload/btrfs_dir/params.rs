//! The parameters of the `btrfs-dir` workload (`[btrfs_dir]`), their
//! defaults, validation and the memory estimate.

use crate::kernel::btrfs::ctree::Task;
use crate::kernel::btrfs::delayed::{BatchStrategy, InsertStrategy, RsvRelease, Rules, Thresholds, WorkerMode};
use crate::param::ParamError;
use crate::workload::work_scale::WorkScale;

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
    /// Batch rule for delayed deletions. Default `leaf-match` (6.0 on).
    pub strategy: BatchStrategy,
    /// Batch rule for delayed insertions. Default `leaf-fit` (6.0 on).
    pub insert_strategy: InsertStrategy,
    /// How often a flush gives back its items' reserved metadata:
    /// `per-item` (before 6.0, what case 3 measured) or `per-batch` (6.0
    /// on). Default `per-batch`.
    pub rsv_release: RsvRelease,
    /// Whether evicting an unlinked inode drops its still-pending delayed
    /// dir-index items (`btrfs_kill_delayed_inode_items` in
    /// `btrfs_evict_inode`, kernels from 5.17) instead of running them at
    /// the next commit. Default true, as the kernel does; false is a
    /// what-if.
    pub evict_kills_pending: bool,
    /// Whether `sync` and the unmount write the dirty tree blocks back
    /// before they commit, so the commit's delayed items copy the blocks
    /// they change once more ([`crate::kernel::btrfs::fs::Fs::writeback_on_sync`]:
    /// `sync_filesystem` and `sync(2)` write the inodes back, the btree
    /// inode among them, before `sync_fs(sb, 1)` commits). Default true,
    /// as every kernel does; false is a what-if.
    pub writeback_on_sync: bool,
    /// Who runs the script's `sync`: `process`, a `sync` process of its
    /// own (a shell script's, as case 3's), or `script`, the thread that
    /// made the unlinks (`fsmeta lab` calls `syncfs` from its script
    /// thread), whose commit then finds the delayed items and their locks
    /// in its own cache. Default `process`. Under `worker = "concurrent"`
    /// a flush still queued when the sync comes is run by the sync (and
    /// under `script` priced as the script thread's own), where the kernel's
    /// kworker would run it on its own CPU; the lab's script queues none.
    pub sync_by: SyncBy,
    /// Whether the script ends with `rm -fr testdir` and unmount after the
    /// `sync` (case 3). Default true; false stops after the `sync`, as
    /// the insertion-batching script does.
    pub rm_rf: bool,
    /// When the async flush worker a balance check queues runs. `inline`:
    /// to completion inside the check, before the syscall goes on.
    /// `concurrent`: beside the unlink calls, as the kernel's worker runs
    /// on another CPU: from the first unlink on, the worker's batches and
    /// the calls each take their priced time on their own clock, and the
    /// next call, which needs the directory's node mutex, waits for the
    /// flush (6.18's `btrfs_delete_delayed_items` takes the mutex back
    /// after each batch before a waiter gets it); the calls' times
    /// (`unlink_us`, `unlinks_us`) hold the waits. The batches are nearly
    /// those of `inline`: a flush runs after the queuing call's eviction,
    /// not inside its first check; one queued by a phase's last unlink runs
    /// in the sync (where the lab, splitting phases by time, counts it
    /// too); one queued by the rmdir's own check loses the race to the
    /// directory's eviction, which drops its items. The creates, which the
    /// twin does not time, flush inline under both. Default `inline`.
    pub worker: WorkerMode,
    /// `BTRFS_DELAYED_BACKGROUND` (items). Default 128.
    pub delayed_background: usize,
    /// `BTRFS_DELAYED_WRITEBACK` (items). Default 512.
    pub delayed_writeback: usize,
    /// `BTRFS_DELAYED_BATCH` (delayed nodes per worker run). Default 16.
    pub delayed_batch: usize,
    /// ns charged per batch (per `btrfs_del_items` / `btrfs_insert_empty_items`
    /// call) on top of the cache lines the model counts: probe overhead,
    /// tree-lock waits behind the syscall thread, search instruction work.
    /// FITTED once, on case 3's old-rule time (9563 us) with the
    /// `icelake-2s` profile; see [`FIT_NOTE`]. Default 6540.
    pub batch_overhead_ns: f64,
    /// ns per counted L1 load as a multiple of the profile's `hit_ns`: the
    /// host's one knob where it is fitted (the lab host's, on an XFS
    /// allocation time), else 1. Default 1; `"host"` takes the profile's
    /// knob ([`WorkScale`]).
    pub work_scale: WorkScale,
    /// Whether the lab's tracepoints are enabled: `btrfs_tree_lock` and
    /// `btrfs_tree_read_lock`, each firing once per tree block a search
    /// visits (`fsmeta lab btrfs-delayed` enables them to time batches),
    /// and those that fire per copy on write (`btrfs_cow_block`, one
    /// `mm_filemap_add_to_page_cache` per folio) and per leaf freed
    /// (`btrfs_reserved_extent_free`). Default false.
    pub lock_tracepoints: bool,
    /// Whether the lab's `btrfs_space_reservation` tracepoint is enabled
    /// (filtered to `delayed_item` reservations, which record their
    /// stack): every reservation event costs the syscalls a trace event,
    /// and the dir-index deletion's reserve a stack
    /// ([`crate::kernel::btrfs::syscall`]). It prices the syscalls only;
    /// the batches' windows end at their release event. Default false.
    pub reservation_tracepoints: bool,
}

/// Who runs the script's `sync` and its unmount
/// ([`BtrfsDirParams::sync_by`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncBy {
    /// Processes of their own: `sync(1)` and `umount(8)`.
    #[default]
    Process,
    /// The thread that made the syscalls: its own `syncfs(2)` and
    /// `umount2(2)` (whose superblock shutdown runs as its task work).
    Script,
}

impl SyncBy {
    /// The task the sync's commit runs as.
    pub fn task(self) -> Task {
        match self {
            SyncBy::Process => Task::Sync,
            SyncBy::Script => Task::Syscall,
        }
    }

    /// The task the unmount's commit runs as.
    pub fn unmount_task(self) -> Task {
        match self {
            SyncBy::Process => Task::Unmount,
            SyncBy::Script => Task::Syscall,
        }
    }
}

/// How `batch_overhead_ns` was fitted: with it set to 0, the case-3
/// script under the old rule (`sequential`, `contiguous`, the kernel's
/// eviction) on the `icelake-2s` profile costs the physical part of the
/// delayed-deletion time; the knob is the rest of the published old-rule
/// time divided by the model's old-rule batch count, rounded to two
/// significant figures. The new-rule time is then a prediction.
pub const FIT_NOTE: &str = "batch_overhead_ns fitted on case 3's old-rule time (9563 us), icelake-2s";

/// The deletion pattern when neither `delete_every` nor `delete_fraction`
/// is set: every 2nd file (`file_1`, `file_3`, ...), as in case 3.
pub const DEFAULT_DELETE_EVERY: u64 = 2;

/// Largest accepted `batch_overhead_ns`, ns (1 s). With counts below
/// 2^64, a cost of at most 1e12 ps times a count stays below 2^104, so the
/// time computed in `u128` cannot overflow.
pub const MAX_COST_NS: f64 = 1e9;

/// Upper bound on the bytes one file costs a run, before its name: tree
/// items (inode item, inode ref, dir item, dir index; 21 bytes each, packed)
/// in leaf vectors, the directory entry map (names of up to 22 bytes held
/// in place), pending delayed items. Measured with `/usr/bin/time -v`
/// (maximum RSS of the whole process at 1,000,000 files): 195 bytes per
/// file with the defaults (12-byte names; 197 at 5,000,000 files); 202
/// with 4 KiB nodes and no deletions (the worst layout measured); 514 with
/// 255-byte names on that layout and every delayed item pending
/// (`delayed_writeback = 2e9`). See [`BtrfsDirParams::memory_bytes`].
pub const FILE_BYTES: u64 = 256;

/// Upper bound on the bytes per byte of file name (a name over 22 bytes
/// is a heap block of the directory map; `rm -fr` copies a sixteenth of
/// the names at a time); measured 1.3.
pub const NAME_BYTE_BYTES: u64 = 2;

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
            insert_strategy: InsertStrategy::LeafFit,
            rsv_release: RsvRelease::PerBatch,
            evict_kills_pending: true,
            writeback_on_sync: true,
            sync_by: SyncBy::Process,
            rm_rf: true,
            delayed_background: 128,
            delayed_writeback: 512,
            delayed_batch: 16,
            batch_overhead_ns: 6540.0,
            work_scale: WorkScale::default(),
            lock_tracepoints: false,
            reservation_tracepoints: false,
            worker: WorkerMode::Inline,
        }
    }
}

fn invalid(field: &str, message: impl Into<String>) -> ParamError {
    ParamError::new(field, message)
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
        let v = self.batch_overhead_ns;
        if !(0.0..=MAX_COST_NS).contains(&v) {
            return Err(invalid(
                "batch_overhead_ns",
                format!("expected a cost in 0..=1e9 ns (1 s), found {v}"),
            ));
        }
        self.work_scale.check().map_err(|m| invalid("work_scale", m))?;
        Ok(())
    }

    /// The thresholds of `btrfs_balance_delayed_items`.
    pub fn thresholds(&self) -> Thresholds {
        Thresholds {
            background: self.delayed_background,
            writeback: self.delayed_writeback,
            batch: self.delayed_batch,
        }
    }

    /// The batch rules and the release rule.
    pub fn rules(&self) -> Rules {
        Rules {
            delete: self.strategy,
            insert: self.insert_strategy,
            rsv_release: self.rsv_release,
        }
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
    /// length)`, e.g. 280 bytes per file with the default names, 766 with
    /// 255-byte names (measured at most 202 and 514).
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
}
