//! The work of an XFS transaction handle that no shared line counts
//! (6.18, `fs/xfs/xfs_trans.c`, `xfs_log.c`, `xfs_log_cil.c`,
//! `xfs_inode_item.c`, `xfs_buf_item.c`), in [`Work`] (see
//! [`crate::kernel::work`] for how a stretch is counted). The shared
//! lines a handle touches (the grant heads, `xc_ctx_lock`, the CIL
//! context's `order_id`, the superblock counters) are steps of the
//! scenario's path, not counted here.

use crate::kernel::work::Work;

/// `xfs_trans_alloc` and its reservation, less the shared steps:
/// `kmem_cache_zalloc(xfs_trans_cache)` (~200 bytes zeroed),
/// `sb_start_intwrite` (the percpu rwsem's read fast path),
/// `xfs_trans_reserve` (the block reservation's bookkeeping around the
/// `m_fdblocks` compare), `xfs_log_reserve` -> `xlog_ticket_alloc` (a
/// ticket slab object, ~20 fields, `xlog_calc_unit_res`),
/// `xlog_grant_head_check` (the two heads' free space from
/// `atomic64_read`s, the waiter lists' `list_empty_careful`),
/// `memalloc_nofs_save`, the quota reservation of
/// `xfs_trans_alloc_icreate` / `xfs_trans_alloc_dir` with quota off (flag
/// tests): about 160 loads, 3 locked operations (two slab objects, the
/// ticket refcount).
pub const TRANS_ALLOC: Work = Work::straight(160.0, 3.0);

/// `xfs_trans_commit` -> `__xfs_trans_commit` less its items and the
/// shared steps: `xfs_defer_finish_noroll` with nothing deferred (list
/// checks), `xfs_trans_run_precommits` (sort and walk of the items),
/// `xlog_cil_commit`: `xlog_cil_alloc_shadow_bufs` and
/// `xlog_cil_insert_items`' per-CPU CIL accounting (space used, the
/// ticket's regrant math, the per-CPU list splice under
/// `get_cpu_ptr`), `xfs_trans_unreserve_and_mod_sb` (the deltas),
/// `xlog_cil_push_background`'s space test, `xfs_log_ticket_ungrant`
/// (ticket math, `xfs_log_ticket_put`: refcount, slab free),
/// `xfs_trans_free` (`sb_end_intwrite`, slab free): about 260 loads, 4
/// locked operations. No indirect call of its own: the items' ops are
/// counted per item ([`INODE_ITEM`], [`BUF_ITEM`]) and the precommit
/// sort's comparator calls by [`commit_sort`].
pub const TRANS_COMMIT: Work = Work::straight(260.0, 4.0);

/// `xfs_trans_run_precommits` -> `list_sort(NULL, &tp->t_items,
/// xfs_trans_precommit_sort)`: the comparator is called through the
/// pointer `list_sort` is given, once per comparison of its bottom-up
/// merge sort, about `n log2 n - 1.25 n` for `n` items (at least `n -
/// 1`; lib/list_sort.c). Each comparison of two items that both have
/// `iop_sort` (inode items) makes two more calls through `li_ops`; the
/// paths log at most two inodes per handle, so at most one such
/// comparison, made when the handle logs two inodes (`two_inodes`).
pub fn commit_sort(items: f64, two_inodes: bool) -> Work {
    let n = items.max(1.0);
    let compares = (n * n.log2() - 1.25 * n).max(n - 1.0);
    let sorted_pairs = if two_inodes { 1.0 } else { 0.0 };
    Work::straight(0.0, 0.0).indirect(compares + 2.0 * sorted_pairs)
}

/// An inode logged in a transaction and committed: `xfs_trans_ijoin`
/// (`xfs_trans_add_item`), `xfs_trans_log_inode` (`ili_lock`, the
/// flags, the `i_version` check, timestamps), at commit
/// `xfs_inode_item_precommit` (flags folded), `xfs_inode_item_size`,
/// `xfs_inode_item_format` -> `xfs_inode_to_log_dinode` (the 176-byte
/// log dinode, ~45 fields converted one by one) and the fork's format
/// for a local/empty fork, the shadow log vector's reuse check,
/// `xfs_inode_item_pin` (`atomic_inc(&ip->i_pincount)`),
/// `xfs_inode_item_committing` -> `xfs_inode_item_release` (the ILOCK
/// release is counted with the lock's owner): about 230 loads, 4 locked
/// operations. Indirect calls through `lip->li_ops` (xfs_trans.c,
/// xfs_log_cil.c): `iop_precommit`, `iop_size`, `iop_format`,
/// `iop_committing`, and `iop_pin` only on the item's first commit into
/// the current CIL checkpoint (`xlog_cil_insert_format_items`,
/// `xfs_cil_prepare_item`): 5 for an inode new to the checkpoint, 4 for
/// one relogged in it. The paths log two inodes per handle, one of each
/// (the parent, relogged by every operation on it; the new or victim
/// inode, logged first): 4.5 on average.
pub const INODE_ITEM: Work = Work::straight(230.0, 4.0).indirect(4.5);

/// `xfs_inode_item_precommit` of an inode whose log item has no cluster
/// buffer attached (new to the log, or cleaned by a flush since):
/// `xfs_imap_to_bp` (a cached `xfs_trans_read_buf` of the 8 KiB cluster,
/// as `xfs_alloc`'s `BUFFER_READ`: 80 loads, 9 locked operations),
/// `xfs_buf_hold`, the item put on the buffer's `b_li_list`
/// (`spin_lock(&iip->ili_lock)`), `xfs_trans_brelse`: about 110 loads, 12
/// locked operations. For a new inode also `xfs_inode_item_init`: the log
/// item from `xfs_ili_cache` (zeroed ~200 bytes, `xfs_log_item_init`).
pub const INODE_ITEM_ATTACH: Work = Work::straight(110.0, 12.0);

/// `xfs_inode_item_init` for a new inode: a zeroed `xfs_ili_cache` object
/// (~200 bytes) and `xfs_log_item_init`: about 45 loads, 1 locked
/// operation.
pub const INODE_ITEM_INIT: Work = Work::straight(45.0, 1.0);

/// A buffer logged in a transaction and committed, beyond its get and
/// release: `xfs_buf_item_size` (the dirty bitmap's segments),
/// `xfs_buf_item_format` -> `xfs_buf_item_format_segment` (the dirty
/// 128-byte chunks copied with `xlog_copy_iovec`: ~256 bytes for a
/// header and one record or entry, 16 loads at 16 bytes per load),
/// `xfs_buf_item_pin` (`atomic_inc` of `bli_refcount` and
/// `b_pin_count`), `xfs_buf_item_committing` (flags, `b_sema` kept for the
/// release): about 90 loads, 3 locked operations. Larger copies (a leaf's
/// shifted entries) are counted with what dirtied them. Indirect calls
/// through `li_ops`: `iop_size`, `iop_format`, `iop_committing`, and
/// `iop_pin` only on the first commit into the checkpoint; the buffers
/// these paths log (AGI, directory and btree blocks, cluster buffers)
/// are relogged by the next operations of the same checkpoint: 3 (a
/// buffer item has no `iop_precommit` or `iop_sort`).
pub const BUF_ITEM: Work = Work::straight(90.0, 3.0).indirect(3.0);

/// The owner's `xfs_ilock` / `xfs_iunlock` of an inode's ILOCK
/// (`down_write` / `up_write` of `i_lock`: one locked operation each,
/// the lockdep-free fast path): about 10 loads per pair.
pub const ILOCK_PAIR: Work = Work::straight(10.0, 2.0);
