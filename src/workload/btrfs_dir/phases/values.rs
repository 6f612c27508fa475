//! What each of the phase axis's values is (the reference's lines).

/// The values reported per phase: (name, unit, meaning).
pub(super) const VALUES: [(&str, &str, &str); 21] = [
    ("batches", "count", "btrfs_del_items calls of the delayed deletions"),
    ("flushes", "count", "calls of btrfs_delete_delayed_items that found deletions"),
    ("batches_per_flush", "count", "batches per flush (0 without flushes)"),
    ("delete_us", "us", "time in btrfs_delete_delayed_items"),
    (
        "us_per_flush",
        "us",
        "time in btrfs_delete_delayed_items per flush (0 without flushes)",
    ),
    (
        "us_per_batch",
        "us",
        "the median deletion batch (the upper one of an even count, as the lab takes it), from the search's root lock to the release tracepoint (0 without batches)",
    ),
    (
        "us_per_item",
        "us",
        "that window summed over the batches, per item they deleted (0 without batches)",
    ),
    (
        "batch_gap_us",
        "us",
        "the median deletion batch's whole time in btrfs_delete_delayed_items (the upper one of an even count): its window, the loop turn, the release tracepoint and its stack, the items' release, and the fitted batch_overhead_ns; in a flush of like batches, the time from one batch's release to the next one's. Every batch counts, the first of a flush and a flush's only one too, where the lab has no gap (0 without batches)",
    ),
    (
        "shift_ns_per_item",
        "ns",
        "the one-item deletion window's growth per item after the deleted one in its leaf (btrfs_del_items: each item's data offset rewritten, its header and data memmoved): the Theil-Sen slope of the windows against the items after the slot, over the phase's one-item batches (0 with fewer than 8); live, over runs of at least 8 consecutive one-item windows on one leaf without a copy on write, the items after the slot falling by delete_every from one to the next (1 in rm -fr; 0 without such a run)",
    ),
    ("cow_blocks", "count", "tree blocks the deletion batches copied on write"),
    (
        "leaf_pushes",
        "count",
        "pushes of items into a sibling leaf by the batches' thin-leaf merges",
    ),
    (
        "unlink_us",
        "us",
        "the median unlink(2) of a file, the syscall thread's own time (0 without unlinks)",
    ),
    ("unlinks_us", "us", "the unlink(2) calls' own time summed"),
    (
        "eb_folios",
        "count",
        "folios of the blocks the batches copied on write (nodesize / 4096 each) added to the btree inode's page cache",
    ),
    ("leaves_freed", "count", "leaves the batches emptied and freed (btrfs_del_leaf)"),
    ("commits", "count", "transactions committed (the sync's, the unmount's)"),
    (
        "tree_blocks_written",
        "count",
        "tree blocks the commits wrote, each once (the device's metadata copies not counted): the write-back before each commit, the blocks the commit dirtied after it, and the root, extent and free space trees' dirty blocks (their leaves, one each a commit at the lab's scale; more where they have split: src/kernel/btrfs/extent.rs)",
    ),
    (
        "delayed_refs",
        "count",
        "delayed ref heads the phase's commits ran (btrfs_run_delayed_refs; run_delayed_tree_ref once each): a DROP of each fs-tree block of an earlier transaction the phase copied or freed, an ADD of each fs-tree block it allocated that is still live, then the extent, free space and root trees' own copies, a DROP and an ADD each (src/kernel/btrfs/extent.rs)",
    ),
    (
        "writeout_blocks",
        "count",
        "tree blocks the writeback flusher wrote out before the phase's commits (syncfs's and the unmount's writeback_inodes_sb: btree_writepages)",
    ),
    (
        "writeout_us",
        "us",
        "the median of those blocks' write-out on the flusher's CPU (the upper one of an even count; one block of each write-back left out, as the lab measures a block from its lock to the next one's and has no figure for the last), from its lock in lock_extent_buffer_for_io to the next block's: the buffer's writeback set-up, the tree checker's reads of every item, the checksum, the free space zeroed, the DUP stripes' bios submitted (src/kernel/btrfs/writeout.rs), and the lab's lock event (0 with fewer than two blocks in a write-back)",
    ),
    (
        "transfers",
        "count",
        "tree-block lines the batches' searches moved from another task's CPU: lock words another task took last, and headers and probed keys of blocks another task wrote since (the syscall thread and the commit of a syncfs it calls itself, a sync process, the flush worker, the writeback flusher and the umount process, each on a CPU of its own)",
    ),
];
