//! The work of XFS inode allocation and freeing (6.18,
//! `fs/xfs/libxfs/xfs_ialloc.c`, `xfs_icache.c`, `xfs_inode.c`), in
//! [`Work`] (see [`crate::kernel::work`]), with the inode btrees' depth
//! computed from the records an AG holds.
//!
//! Inode btree geometry (v5, `xfs_btree.h`, `xfs_format.h`): a 4 KiB
//! block with the 56-byte short-form header holds (4096 - 56) / 16 = 252
//! records (`xfs_inobt_rec`: startino, holemask/count/freecount, free
//! mask) in a leaf and (4096 - 56) / 8 = 505 key/pointer pairs in a node;
//! one record is one 64-inode chunk.

use crate::kernel::work::{Tally, Work};

/// Inodes per chunk (`XFS_INODES_PER_CHUNK`).
pub const INODES_PER_CHUNK: u64 = 64;
/// Records per inobt/finobt leaf.
pub const INOBT_LEAF_RECS: u64 = (4096 - 56) / 16;
/// Key/pointer pairs per inobt/finobt node.
pub const INOBT_NODE_KEYS: u64 = (4096 - 56) / 8;

/// Cluster buffers per 64-inode chunk of 512-byte inodes (16 KiB
/// clusters: `xfs_inodes_per_cluster`).
pub const CLUSTERS_PER_CHUNK: u64 = 2;

/// Levels of an inode btree holding `records` records.
pub fn inobt_levels(records: u64) -> u32 {
    let mut levels = 1;
    let mut cap = INOBT_LEAF_RECS;
    while cap < records {
        cap = cap.saturating_mul(INOBT_NODE_KEYS);
        levels += 1;
    }
    levels
}

/// A cached AG or btree buffer read in a transaction and released
/// (`xfs_trans_read_buf_map` of a cached buffer, `xfs_buf_item_init`,
/// `xfs_trans_brelse` or the release at commit): `xfs_alloc`'s
/// `BUFFER_READ` (80 loads, 9 locked operations; its lines warm here:
/// the AGI and the inode btrees are touched by every create).
pub const AG_BUF: Work = Work::straight(80.0, 9.0);

/// A btree cursor made and deleted (`xfs_inobt_init_cursor`,
/// `xfs_btree_del_cursor`): as `xfs_alloc`'s `CURSOR`.
pub const CURSOR: Work = Work::straight(30.0, 4.0);

/// One level of `xfs_btree_lookup` (`xfs_btree_lookup_get_block`, the
/// level's bookkeeping) beyond its buffer read: about 20 loads; one
/// indirect call through `bc_ops` per level (`init_ptr_from_cur` once per
/// lookup, `get_maxrecs` in `xfs_btree_ptr_addr` per node level).
pub const BTREE_LEVEL: Work = Work::straight(20.0, 0.0).indirect(1.0);

/// One binary-search probe in a node of an inode btree
/// (`bc_ops->cmp_key_with_cur`, `key_diff` before 6.15): about 4 loads,
/// one indirect call. Returns: `xfs_lookup_get_search_key` and the
/// compare (`xfs_inobt_cmp_key_with_cur`), both out of line in 6.18
/// (`perf` call chains of the lab's lookups on the same code in the free
/// space btrees show both as frames): 2.
pub const BTREE_PROBE: Work = Work::looped(4.0).indirect(1.0).returning(2.0);

/// One probe in a leaf: [`BTREE_PROBE`] plus the search key built from
/// the record through `bc_ops->init_key_from_rec`
/// (`xfs_lookup_get_search_key`): two indirect calls. Returns: those of
/// [`BTREE_PROBE`] and `xfs_inobt_init_key_from_rec`'s: 3.
pub const BTREE_LEAF_PROBE: Work = Work::looped(4.0).indirect(2.0).returning(3.0);

/// A record rewritten, inserted or deleted in a btree leaf
/// (`xfs_btree_update` / `insrec` / `delrec` with their logging): as
/// `xfs_alloc`'s `UPDATE` (94 loads, 2 locked operations).
pub const RECORD_UPDATE: Work = Work::straight(94.0, 2.0);

/// `xfs_iget(XFS_IGET_CREATE)` -> `xfs_iget_cache_miss` and
/// `xfs_init_new_inode` (from `xfs_icreate`): `xfs_perag_get`, the RCU
/// radix-tree lookup in `pag_ici_root` (miss), `xfs_inode_alloc`
/// (`alloc_inode_sb`: slab object; `inode_init_always`: ~40 fields of the
/// VFS inode; the XFS fields), `xfs_imap` (the cluster's location), the
/// v5 create path that skips the cluster read (a fresh `i_generation`),
/// `radix_tree_preload`, `spin_lock(&pag->pag_ici_lock)`,
/// `radix_tree_insert`, `xfs_setup_inode` (lockdep classes off,
/// `i_mapping` set-up), then `xfs_init_new_inode`: `inode_init_owner`,
/// the four timestamps, mode, nlink, forks, `xfs_trans_ijoin`: about 430
/// loads, 12 locked operations, 11 here: `xfs_setup_inode`'s
/// `inode_sb_list_add` (`s_inode_list_lock`, shared by every thread's
/// inodes) is a step of the scenario's path (`s_inode_list`). The new `xfs_inode` (about 1 KiB with
/// its VFS inode: 15 lines) comes from a slab no CPU has used in a
/// create-only run, so each object's constructor runs once, when SLUB
/// makes its slab (`allocate_slab` -> `setup_object`):
/// `xfs_fs_inode_init_once` (fs/xfs/xfs_super.c) `memset`s the whole
/// object and initialises its locks, 15 lines written in no cache
/// ([`Work::new_lines`]); the object is handed out a few dozen allocations
/// later, its lines still in the cache hierarchy, so the fields above are
/// not cold loads. One indirect call: the constructor itself.
pub const IGET_CREATE: Work = Work {
    atomics: 11.0,
    hits: 430.0,
    indirect_calls: 1.0,
    new_lines: 15.0,
    ..Work::ZERO
};

/// `xfs_dialloc`'s AG choice and `xfs_dialloc_ag` logic around its
/// btree walks: `xfs_ialloc_ag_select`-free 6.x path
/// (`xfs_dialloc_good_ag` on the parent's AG: `pagi_freecount`,
/// `xfs_perag_grab`), `xfs_ialloc_read_agi` (its buffer is an [`AG_BUF`]
/// counted apart), `xfs_dialloc_ag_finobt_near` (the record's
/// `xfs_inobt_get_rec`, `xfs_inobt_first_free_inode`: ffs of the free
/// mask), the record's free mask and count updated, the AGI's
/// `agi_freecount` and `pagi_freecount` (`xfs_ialloc_log_agi`),
/// `xfs_trans_mod_sb(XFS_TRANS_SB_IFREE)`, `xfs_perag_rele`: about 170
/// loads, 4 locked operations.
pub const DIALLOC_LOGIC: Work = Work::straight(170.0, 4.0);

/// `xfs_ialloc_ag_alloc`'s extent allocation for a 64-inode chunk
/// (`xfs_alloc_vextent_near_bno` on a nearly empty AG): AGF and AGFL
/// reads, `xfs_alloc_fix_freelist`, the by-block and by-size lookups and
/// record trims with `xfs_alloc_log_agf`, as `xfs_alloc`'s costs count
/// them: about 720 loads, 44 locked operations.
/// Indirect calls: about 22 (the by-size and by-block lookups, inserts
/// and deletes through `bc_ops`, the buffer items; an estimate).
pub const CHUNK_EXTENT_ALLOC: Work = Work::straight(720.0, 44.0).indirect(22.0);

/// Per cluster buffer of a new chunk (`xfs_ialloc_inode_init`: 32 KiB of
/// 512-byte inodes in [`CLUSTERS_PER_CHUNK`] clusters of 16 KiB,
/// `XFS_INODE_BIG_CLUSTER_SIZE` scaled by the inode size on v5): `xfs_trans_get_buf` of an uncached buffer
/// (`xfs_buf_alloc`, its backing folio from the page allocator, the
/// rhashtable insert), `xfs_trans_inode_alloc_buf`,
/// `xfs_trans_ordered_buf`: about 260 loads, 14 locked operations.
pub const CLUSTER_BUF_NEW: Work = Work::straight(260.0, 14.0);

/// Per inode of a new chunk (`xfs_ialloc_inode_init`'s loop): its 512
/// bytes zeroed by `xfs_buf_zero` (a streaming store loop: one load-slot
/// per 16 bytes, 32), the v3 fields (`di_magic`, version, generation,
/// `di_next_unlinked`, `di_ino`, the uuid copy: about 20), and
/// `xfs_dinode_calc_crc` (crc32c over 512 bytes, 8 bytes per step: 64):
/// about 116 loads, an inner loop over the chunk's inodes. The zeroed
/// lines are written, not waited for: no cold line is counted.
/// Returns: `xfs_dinode_calc_crc`, `crc32c`, and for 512 bytes the
/// PCLMUL path's `irq_fpu_usable`, `kernel_fpu_begin_mask`,
/// `crc32c_x86_3way` and `kernel_fpu_end` (which tail-jumps to
/// `__local_bh_enable_ip`): 6 (lib/crc/x86/crc32.h; all out of line in
/// 6.18's `/proc/kallsyms`).
pub const CHUNK_INODE_INIT: Work = Work::looped(116.0).returning(6.0);

/// `xfs_ialloc_ag_alloc`'s bookkeeping: `xfs_icreate_log` (an icreate
/// log item), the new record inserted in the inobt and the finobt (two
/// cursors, lookups and inserts: counted apart as [`CURSOR`],
/// [`RECORD_UPDATE`]), `xfs_ialloc_log_agi` (`agi_count`,
/// `agi_freecount`, `agi_newino`), the perag counts,
/// `xfs_trans_mod_sb(ICOUNT, IFREE)`, then `xfs_dialloc_roll`
/// (`xfs_trans_roll`: the ticket regranted): about 250 loads, 6 locked
/// operations.
/// Indirect calls: 2 through the log items of the rolled handle beyond
/// those counted per item (its commit sort is [`super::trans::commit_sort`]).
pub const CHUNK_LOGIC: Work = Work::straight(250.0, 6.0).indirect(2.0);

/// `xfs_iunlink` (from `xfs_droplink`) or `xfs_iunlink_remove` (from
/// `xfs_ifree`): the bucket (`agino % 64`) of the AGI, the in-core
/// unlinked list's neighbours (`xfs_iunlink_lookup`: RCU radix lookup),
/// `i_prev_unlinked` / `i_next_unlinked`, `xfs_iunlink_update_bucket`
/// (logs the AGI: an [`AG_BUF`] and a buffer item counted apart),
/// `xfs_iunlink_log_inode` (the inode's `XFS_ILOG_IUNLINK`, written into
/// its cluster buffer at precommit by `xfs_iunlink_log_precommit`: that
/// buffer's item counted apart): about 120 loads, 2 locked operations.
/// One indirect call: the iunlink log item's `iop_precommit`
/// (`xfs_iunlink_log_precommit`).
pub const IUNLINK: Work = Work::straight(120.0, 2.0).indirect(1.0);

/// `xfs_ifree`'s own logic: `xfs_difree` -> `xfs_difree_inobt` (the
/// record's free mask and counts, `agi_freecount`,
/// `xfs_trans_mod_sb(IFREE)`), `xfs_difree_finobt` (update, or insert
/// when the chunk had no free inode), the inode's fields cleared
/// (`i_mode`, flags, forks, `i_generation`++), `xfs_trans_log_inode`:
/// about 200 loads, 3 locked operations.
pub const IFREE_LOGIC: Work = Work::straight(200.0, 3.0);

/// A whole chunk freed (`xfs_difree_inode_chunk`, every 64th free in a
/// chunk, ikeep off): the inobt and finobt records deleted, the chunk's
/// extent freed by a deferred EFI finished in a rolled transaction
/// (`xfs_free_extent_later`, `xfs_defer_finish` -> `xfs_trans_roll`,
/// `xfs_free_extent` on both free-space trees), `xfs_ifree_cluster`
/// getting and staling the chunk's cluster buffers: about 1,900 loads, 90
/// locked operations; the 64 inodes marked stale are
/// [`CHUNK_INODE_STALE`] each.
/// Indirect calls: about 90 (btree updates through `bc_ops`, the
/// deferred extent free's ops, the items; an estimate, 60 to 120).
pub const CHUNK_FREE: Work = Work::straight(1900.0, 90.0).indirect(90.0);

/// `xfs_ifree_mark_inode_stale` per inode of a freed chunk: the RCU
/// radix lookup in `pag_ici_root`, `i_flags_lock`, the flags: about 30
/// loads, an inner loop over the chunk. Returns, for an inode in the
/// cache and not attached to its buffer: `__rcu_read_lock`,
/// `radix_tree_lookup` (a tail jump to `__radix_tree_lookup`: one),
/// `_raw_spin_lock`, `xfs_ilock_nowait`, `down_write_trylock`,
/// `xfs_iunlock`, `up_write`, `_raw_spin_unlock`, `__rcu_read_unlock`: 9.
pub const CHUNK_INODE_STALE: Work = Work::looped(30.0).returning(9.0);

/// `xfs_inodegc_worker`'s share per queued inode: `llist_del_all`'s walk,
/// `xfs_inodegc_inactivate` (flags, `trace`-free path), `xfs_inactive`'s
/// checks (`i_nlink`, the mode, `xfs_can_free_eofblocks` for a regular
/// file, size and extents both 0: no truncate), `xfs_qm_dqattach` with
/// quota off, then `xfs_inodegc_set_reclaimable` (`pag_ici_lock`, the
/// radix tree's reclaim tag set, `i_flags_lock`), `xfs_qm_dqdetach`:
/// about 190 loads, 6 locked operations.
pub const INODEGC_ITEM: Work = Work::straight(190.0, 6.0);

/// `xfs_attr_inactive`'s own logic: `xfs_ilock`, the attribute fork's
/// format and extent count (a local or empty fork: nothing to walk),
/// `xfs_attr_fork_remove` (the fork destroyed, `i_forkoff` 0),
/// `xfs_trans_log_inode`: about 60 loads, 1 locked operation.
pub const ATTR_INACTIVE_LOGIC: Work = Work::straight(60.0, 1.0);

/// Adds an inode btree lookup on a tree of `records` records: per level
/// its buffer and bookkeeping, and the binary-search probes over the
/// leaf's records (`records` over the leaves, at most 252) or a node's
/// keys (one per child).
pub fn btree_lookup(t: &mut Tally, records: u64) {
    let levels = inobt_levels(records);
    let leaves = records.max(1).div_ceil(INOBT_LEAF_RECS);
    let per_leaf = records.max(1) as f64 / leaves as f64;
    let probes = |n: f64| (n + 1.0).log2().ceil().max(1.0);
    t.add(AG_BUF, f64::from(levels)).add(BTREE_LEVEL, f64::from(levels));
    t.add(BTREE_LEAF_PROBE, probes(per_leaf));
    if levels > 1 {
        let children = (leaves as f64).min(INOBT_NODE_KEYS as f64);
        t.add(BTREE_PROBE, f64::from(levels - 1) * probes(children));
    }
}
