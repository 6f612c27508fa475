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
        "btrfs_dir.evict_kills_pending",
        "true or false",
        "true, false",
        "evicting the removed directory drops its pending deletions",
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
        "btrfs_dir.node_visit_ns",
        "a time in ns",
        "0 to 1e9",
        "cost of one tree block visited by a search",
    ),
    p("btrfs_dir.key_compare_ns", "a time in ns", "0 to 1e9", "cost of one key comparison"),
    p(
        "btrfs_dir.cow_block_ns",
        "a time in ns",
        "0 to 1e9",
        "cost of copying one block on write",
    ),
    p(
        "btrfs_dir.byte_moved_ns",
        "a time in ns",
        "0 to 1e9",
        "cost per byte memmoved inside a leaf",
    ),
    p("btrfs_dir.leaf_free_ns", "a time in ns", "0 to 1e9", "cost of freeing one leaf"),
    p(
        "btrfs_dir.del_items_ns",
        "a time in ns",
        "0 to 1e9",
        "fixed cost of one btrfs_del_items call (calibrated, case 3)",
    ),
    p(
        "btrfs_dir.item_release_ns",
        "a time in ns",
        "0 to 1e9",
        "cost of releasing one delayed item (calibrated, case 3)",
    ),
];
