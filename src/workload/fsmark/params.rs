//! The parameters of the `fsmark` workload (`[fsmark]`), their defaults
//! and their ranges.

use crate::param::ParamError;

/// Which open-inode index the subvolume root keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexKind {
    /// Before 2024: `btrfs_root::inode_tree`, an rb-tree whose nodes are
    /// embedded in `struct btrfs_inode` (`inode_tree_add()`).
    Rbtree,
    /// Since 2024: `btrfs_root::inodes`, an xarray indexed by inode number
    /// (`btrfs_add_inode_to_root()`: `xa_reserve` outside `inode_lock`,
    /// `xa_store` inside).
    Xarray,
}

/// The keys only one index reads: `rb_node_offset` (the rb-tree's node
/// in the inode) and `enomem_every` (xarray node allocations); written
/// where no run has that index, they are refused.
pub const INDEX_KEYS: crate::workload::selected::Selected = crate::workload::selected::Selected {
    section: "fsmark",
    selector: "index",
    default: "rbtree",
    owned: &[("rb_node_offset", "rbtree"), ("enomem_every", "xarray")],
};

/// `[fsmark]`: an fs_mark run of zero-size creates on one btrfs subvolume.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FsmarkParams {
    /// The open-inode index. Default `rbtree`.
    pub index: IndexKind,
    /// Files each thread creates per loop (fs_mark `-n`). Default 100,000.
    pub files_per_thread: u64,
    /// Loops (fs_mark `-L`); threads meet at the end of each loop, as
    /// fs_mark's parent waits for every child. Default 5.
    pub loops: u32,
    /// `sizeof(struct btrfs_inode)`, bytes: 1064 with the embedded rb_node
    /// (Debian release config), 1040 without it, 1024 after follow-ups
    /// (docs/reference/kernel.md 2.2). Default 1064.
    pub inode_bytes: u64,
    /// Byte offset of `rb_node` in `struct btrfs_inode` (rb-tree only).
    /// Default 192 (line 3; `location` is on line 0): the sum of the field
    /// sizes before it in fs/btrfs/btrfs_inode.h as the xarray patch
    /// (commit 310b2f5d5a94, v6.11) found it, x86-64 without lock
    /// debugging: root 8, location 17 (packed) + 2 compress bytes + a hole,
    /// lock 4, extent_tree 40, io_tree 24, file_extent_tree 24, log_mutex
    /// 32, outstanding_extents 4, ordered_tree_lock 4, ordered_tree 8,
    /// ordered_tree_last 8, delalloc_inodes 16. DERIVED, not a pahole dump.
    pub rb_node_offset: u64,
    /// Byte offset of `location.objectid`, the key `btrfs_ino()` reads:
    /// right after the `root` pointer, the first field. Default 8.
    pub key_offset: u64,
    /// Inodes kept open: once the index holds more, the creating thread
    /// evicts the oldest (`btrfs_destroy_inode` -> `inode_tree_del` /
    /// `btrfs_del_inode_from_root`, under `inode_lock`). 0 = never evict
    /// (fs_mark `-k` keeps every file and nothing applies memory
    /// pressure). Default 0.
    pub open_inodes: u64,
    /// Start with `open_inodes` inodes already in the index (inode numbers
    /// below the first one created, objects spread over the CPUs' slabs,
    /// caches cold), so a short run measures the steady state of a large
    /// index. Default false.
    pub prefill: bool,
    /// Mean CPU time of the rest of one create (VFS, btrfs tree items,
    /// transaction, fs_mark's own loop) on an unshared core, ns; drawn
    /// exponentially per create. Default 40,000: ASSUMED order of
    /// magnitude of a btrfs create path (no published figure is used; the
    /// case's fs_mark rates are kept back as a check).
    pub create_work_ns: f64,
    /// Bytes of memory the rest of one create streams through the creating
    /// core's caches (btree leaves and nodes searched, the transaction,
    /// the dentry, fs_mark's buffers), modelled as fresh lines filling L1d,
    /// L2 and the LLC between two inserts. Default 16,384: ASSUMED, about
    /// one 16 KiB btree leaf (not fitted; see
    /// scenarios/btrfs-inode-index.toml).
    pub create_touch_bytes: u64,
    /// Make every n-th xarray node allocation fail with ENOMEM (0 =
    /// never). The create whose `xa_reserve` fails is abandoned and its
    /// inode freed, as `btrfs_create_new_inode`'s error path does.
    /// Default 0.
    pub enomem_every: u64,
}

/// Default of [`FsmarkParams::create_touch_bytes`]: one 16 KiB btree leaf
/// (btrfs's default node size), an assumed order of magnitude.
pub const DEFAULT_CREATE_TOUCH_BYTES: u64 = 16_384;

impl Default for FsmarkParams {
    fn default() -> Self {
        Self {
            index: IndexKind::Rbtree,
            files_per_thread: 100_000,
            loops: 5,
            inode_bytes: 1064,
            rb_node_offset: 192,
            key_offset: 8,
            open_inodes: 0,
            prefill: false,
            create_work_ns: 40_000.0,
            create_touch_bytes: DEFAULT_CREATE_TOUCH_BYTES,
            enomem_every: 0,
        }
    }
}

/// Largest number of creates one run may make (threads x files x loops).
pub const MAX_FILES: u64 = 100_000_000;

impl FsmarkParams {
    /// Checks ranges for `threads` threads; errors name the key.
    pub fn validate(&self, threads: u64) -> Result<(), ParamError> {
        if !(1..=10_000_000).contains(&self.files_per_thread) {
            return Err(ParamError::new("files_per_thread", "expected 1 to 10,000,000 files"));
        }
        if !(1..=100).contains(&self.loops) {
            return Err(ParamError::new("loops", "expected 1 to 100 loops"));
        }
        if self.total_files(threads) > MAX_FILES {
            return Err(ParamError::new(
                "files_per_thread",
                format!("threads x files_per_thread x loops is over {MAX_FILES} creates"),
            ));
        }
        if !(64..=4096).contains(&self.inode_bytes) {
            return Err(ParamError::new("inode_bytes", "expected 64 to 4096 bytes"));
        }
        if self.index == IndexKind::Rbtree && self.rb_node_offset + 24 > self.inode_bytes {
            return Err(ParamError::new(
                "rb_node_offset",
                format!("the 24-byte rb_node must fit in the {}-byte inode", self.inode_bytes),
            ));
        }
        if self.key_offset + 8 > self.inode_bytes {
            return Err(ParamError::new("key_offset", "the 8-byte key must fit in the inode"));
        }
        if self.prefill && self.open_inodes == 0 {
            return Err(ParamError::new(
                "prefill",
                "prefill needs open_inodes > 0 (the number of inodes to start with)",
            ));
        }
        if self.open_inodes > 20_000_000 {
            return Err(ParamError::new("open_inodes", "expected at most 20,000,000 open inodes"));
        }
        if self.create_touch_bytes > 1 << 30 {
            return Err(ParamError::new("create_touch_bytes", "expected 0 to 1 GiB"));
        }
        if !(0.0..=1e9).contains(&self.create_work_ns) {
            return Err(ParamError::new("create_work_ns", "expected 0 to 1e9 ns"));
        }
        Ok(())
    }

    /// Creates in the whole run.
    pub fn total_files(&self, threads: u64) -> u64 {
        threads.saturating_mul(self.files_per_thread).saturating_mul(u64::from(self.loops))
    }
}
