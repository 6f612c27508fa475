//! The parameters of the `fsmark` workload, for the reference.

use crate::workload::ParamSpec;
use crate::workload::contract::param as p;

/// Every key of `[fsmark]`.
pub const PARAMS: &[ParamSpec] = &[
    p("fsmark.index", "a word", "rbtree, xarray", "the subvolume root's open-inode index"),
    p(
        "fsmark.files_per_thread",
        "a whole number",
        "1 to 10,000,000",
        "files each thread creates per loop (fs_mark -n)",
    ),
    p(
        "fsmark.loops",
        "a whole number",
        "1 to 100",
        "loops (fs_mark -L); threads meet at the end of each",
    ),
    p("fsmark.inode_bytes", "bytes", "64 to 4096", "sizeof(struct btrfs_inode)"),
    p(
        "fsmark.rb_node_offset",
        "bytes",
        "0 to inode_bytes - 24",
        "offset of rb_node in the inode (rb-tree)",
    ),
    p(
        "fsmark.key_offset",
        "bytes",
        "0 to inode_bytes - 8",
        "offset of location.objectid, the key btrfs_ino() reads",
    ),
    p(
        "fsmark.open_inodes",
        "a whole number",
        "0 (never evict) or more",
        "inodes kept open; the oldest are evicted beyond it",
    ),
    p(
        "fsmark.prefill",
        "true or false",
        "true needs open_inodes > 0",
        "start with open_inodes inodes in the index (cold caches)",
    ),
    p(
        "fsmark.create_work_ns",
        "a time in ns",
        "0 to 1e9",
        "mean CPU time of the rest of a create (exponential)",
    ),
    p(
        "fsmark.create_touch_bytes",
        "bytes",
        "0 to 1 GiB",
        "memory the rest of a create streams through the caches",
    ),
    p(
        "fsmark.enomem_every",
        "a whole number",
        "0 (never) or more",
        "fail every n-th xarray node allocation with ENOMEM",
    ),
];
