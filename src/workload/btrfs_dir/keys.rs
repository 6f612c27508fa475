//! The parameters of the `btrfs-dir` workload, for the reference.

use crate::workload::ParamSpec;
use crate::workload::contract::param as p;

/// Every key of `[btrfs_dir]`.
pub const PARAMS: &[ParamSpec] = &[
    p(
        "btrfs_dir.files",
        "a whole number",
        "1 to 50,000,000 (and within the memory budget)",
        "files created in testdir",
    ),
    p(
        "btrfs_dir.delete_every",
        "a whole number",
        "1 or more; not with delete_fraction",
        "delete every k-th file from file_1 (default: every 2nd)",
    ),
    p(
        "btrfs_dir.delete_fraction",
        "a probability",
        "0 to 1; not with delete_every",
        "delete each file with this probability instead",
    ),
    p(
        "btrfs_dir.name_len",
        "a whole number of bytes",
        "digits of files + 1 to 255",
        "fixed name length (default: the names file_1, file_2, ...)",
    ),
    p(
        "btrfs_dir.nodesize",
        "bytes",
        "a power of two, 4096 to 65536",
        "tree block (leaf) size",
    ),
    p(
        "btrfs_dir.strategy",
        "a word",
        "sequential, leaf-match, leaf-walk",
        "batch rule for delayed dir-index deletions",
    ),
    p(
        "btrfs_dir.insert_strategy",
        "a word",
        "contiguous, leaf-fit",
        "batch rule for delayed dir-index insertions",
    ),
    p(
        "btrfs_dir.rsv_release",
        "a word",
        "per-item, per-batch",
        "how often a flush gives back its items' reserved metadata (btrfs_block_rsv_release): per item before 6.0 (case 3's kernel), per batch since",
    ),
    p(
        "btrfs_dir.evict_kills_pending",
        "true or false",
        "true, false",
        "evicting an inode drops its pending dir-index items (kernel since 5.17)",
    ),
    p(
        "btrfs_dir.writeback_on_sync",
        "true or false",
        "true, false",
        "sync and unmount write dirty tree blocks back before the commit (every kernel; false is a what-if)",
    ),
    p(
        "btrfs_dir.sync_by",
        "a word",
        "process, script",
        "who runs the script's sync and its unmount: processes of their own (case 3's shell script: sync, umount), or the thread that made the unlinks (the lab's syncfs and, since session 68, umount2)",
    ),
    p(
        "btrfs_dir.rm_rf",
        "true or false",
        "true, false",
        "end the script with rm -fr testdir and unmount after the sync",
    ),
    p(
        "btrfs_dir.worker",
        "a word",
        "inline, concurrent",
        "when the async flush worker runs: inside the balance check that queues it, or on another CPU beside the unlink calls, the next call waiting on the node mutex for the flush (the calls' times hold the waits)",
    ),
    p(
        "btrfs_dir.delayed_background",
        "a whole number of items",
        "2 or more, below delayed_writeback",
        "BTRFS_DELAYED_BACKGROUND",
    ),
    p(
        "btrfs_dir.delayed_writeback",
        "a whole number of items",
        "above delayed_background",
        "BTRFS_DELAYED_WRITEBACK",
    ),
    p(
        "btrfs_dir.delayed_batch",
        "a whole number of nodes",
        "1 or more",
        "BTRFS_DELAYED_BATCH: delayed nodes per worker run",
    ),
    p(
        "btrfs_dir.batch_overhead_ns",
        "a time in ns",
        "0 to 1e9",
        "per-batch cost beyond the counted cache lines (fitted once, case 3 old rule)",
    ),
    p(
        "btrfs_dir.work_scale",
        "a multiple of hit_ns",
        "above 0, at most 1000, or \"host\"",
        "ns per counted L1 load over hit_ns: a host's one fitted knob, else 1; \"host\" takes the profile's [knob] work_scale",
    ),
    p(
        "btrfs_dir.lock_tracepoints",
        "true or false",
        "true, false",
        "the lab's tracepoints are on: one trace event per block visited, 1 + folios per copy on write (btrfs_cow_block, mm_filemap_add_to_page_cache), one per leaf freed (btrfs_reserved_extent_free)",
    ),
    p(
        "btrfs_dir.reservation_tracepoints",
        "true or false",
        "true, false",
        "the lab's btrfs_space_reservation tracepoint is on (delayed_item with stacks): prices the unlink syscalls' events",
    ),
];
