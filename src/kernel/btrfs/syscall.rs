//! The syscall thread's own work in btrfs's `unlink(2)` of an empty file
//! and its eviction (6.x `fs/btrfs/inode.c`, `transaction.c`,
//! `delayed-inode.c`, `block-rsv.c`), counted in [`Work`] (see
//! [`crate::kernel::work`] for how), apart from the tree searches and item
//! edits, which the tree model runs and counts ([`super::fs::Fs`] keeps
//! each unlink's tree counts) and the flush worker's batches, which run on
//! another CPU.
//!
//! One unlink (`do_unlinkat` -> `btrfs_unlink`, then the final `iput` ->
//! `evict` -> `btrfs_evict_inode`) opens four transaction handles and
//! makes five tree searches:
//!
//! | step | handle | search |
//! | --- | --- | --- |
//! | `btrfs_unlink`: `__unlink_start_trans` (5 items) | start, reserving | |
//! | `__btrfs_unlink_inode`: `btrfs_lookup_dir_item(.., -1)`, `btrfs_delete_one_dir_name` | | DIR_ITEM, delete |
//! | `btrfs_orphan_add` -> `btrfs_insert_orphan_item` | | ORPHAN, insert |
//! | `btrfs_end_transaction`, `btrfs_btree_balance_dirty` | end | |
//! | `btrfs_commit_inode_delayed_inode` (`btrfs_join_transaction`) | join, end | INODE_ITEM (and its INODE_REF), delete |
//! | `evict_refill_and_join`, `btrfs_truncate_inode_items` | refill, end | the inode's items, delete |
//! | `evict_refill_and_join`, `btrfs_orphan_del` | refill, end | ORPHAN, delete |
//!
//! The `btrfs_space_reservation` tracepoint fires 18 times on that way
//! (start: `space_info`, `transaction`, `local_delayed_refs_rsv`
//! reserves; `btrfs_delete_delayed_dir_index` and the file's
//! `btrfs_delayed_update_inode`: a `delayed_item` and a `delayed_inode`
//! reserve; the first end: four releases; the delayed inode's commit: two
//! releases; each refill a `space_info` reserve and each of its ends two
//! releases; `btrfs_free_block_rsv`: one), two more per leaf copied on
//! write (`btrfs_alloc_tree_block`'s reserve and release). Checked against
//! a trace of single unlinks on 6.18 (an unfiltered private instance).

use crate::kernel::work::{Tally, Work};

/// `btrfs_space_reservation` firings of one unlink and its eviction
/// without a copy on write (see the module header).
pub const UNLINK_RESERVATION_EVENTS: f64 = 18.0;

/// Of those, the `delayed_item` reserve of the dir-index deletion
/// (`btrfs_delayed_item_reserve_metadata`): the one event the lab's filter
/// (`type == "delayed_item"`) keeps, with its stack; the other 17 are
/// built in the temp buffer and discarded
/// ([`crate::kernel::tracing::TRACE_DISCARD_LOADS`]).
pub const UNLINK_STACKED_EVENTS: f64 = 1.0;

/// Frames of that event's stack, as 6.18's compiled call chain shows
/// them: `trace_event_raw_event_btrfs_space_reservation`,
/// `btrfs_delayed_item_reserve_metadata`, `btrfs_delete_delayed_dir_index`,
/// `__btrfs_unlink_inode`, `btrfs_unlink`, `vfs_unlink`, `do_unlinkat`,
/// `__x64_sys_unlink`, `do_syscall_64`, `entry_SYSCALL_64_after_hwframe`:
/// 10.
pub const UNLINK_STACK_FRAMES: u32 = 10;

/// `btrfs_space_reservation` firings per tree block copied on write
/// (`btrfs_alloc_tree_block` -> `btrfs_use_block_rsv`: a `space_info`
/// reserve and release of one block); the lab's filter discards both.
pub const COW_RESERVATION_EVENTS: f64 = 2.0;

/// `start_transaction` with a reservation (`btrfs_unlink`'s 5 items,
/// `evict_refill_and_join`'s refill): `btrfs_block_rsv_add` ->
/// `btrfs_reserve_metadata_bytes` (`space_info->lock`,
/// `btrfs_can_overcommit` -> `calc_available_free_space`, the
/// `bytes_may_use` update) and `btrfs_block_rsv_add_bytes` (`rsv->lock`);
/// the delayed-refs reservation; a `btrfs_trans_handle` from its slab,
/// zeroed (3 lines); `sb_start_intwrite` (`percpu_down_read`);
/// `join_transaction` (`trans_lock`, `use_count`, `num_writers`, the
/// external writer count); the handle's fields, `current->journal_info`,
/// `btrfs_record_root_in_trans`: about 260 loads, 9 locked operations.
pub const TRANS_START: Work = Work::straight(260.0, 9.0);

/// `btrfs_join_transaction` (no reservation; `btrfs_commit_inode_delayed_inode`):
/// the handle from its slab, `join_transaction`, the handle's fields:
/// about 150 loads, 6 locked operations.
pub const TRANS_JOIN: Work = Work::straight(150.0, 6.0);

/// `__btrfs_end_transaction`: `btrfs_trans_release_metadata` ->
/// `btrfs_block_rsv_release` (`rsv->lock`, the excess back to the space
/// info under its lock), the chunk and delayed-refs reservations,
/// `btrfs_create_pending_block_groups` (an empty list),
/// `sb_end_intwrite`, `num_writers` decremented and `cond_wake_up`,
/// `btrfs_put_transaction`, the handle freed: about 180 loads, 7 locked
/// operations.
pub const TRANS_END: Work = Work::straight(180.0, 7.0);

/// `btrfs_btree_balance_dirty` without the flush it may queue:
/// `btrfs_balance_delayed_items`' item count and
/// `btrfs_workqueue_normal_congested`, the `dirty_metadata_bytes`
/// percpu compare, `balance_dirty_pages_ratelimited` of the btree inode
/// (per-CPU ratelimit counters): about 50 loads.
pub const BALANCE_DIRTY: Work = Work::straight(50.0, 0.0);

/// `btrfs_unlink` and `__btrfs_unlink_inode` besides the handle and the
/// searches: `fscrypt_setup_filename` (plain name), `btrfs_record_unlink_dir`,
/// `btrfs_alloc_path` / `btrfs_free_path` (slab, a zeroed line),
/// `btrfs_name_hash` of the name, `btrfs_match_dir_item_name`
/// (`memcmp_extent_buffer`), `btrfs_delete_one_dir_name`'s size checks;
/// `btrfs_delayed_delete_inode_ref` (the inode's delayed node,
/// `node->mutex`, the flag, `delayed_root->items`, the node put on the
/// prepare list under `delayed_root->lock`); `btrfs_delete_delayed_dir_index`
/// (a 112-byte delayed item from kmalloc, `btrfs_delayed_item_reserve_metadata`
/// -> `btrfs_block_rsv_migrate` under two `rsv->lock`s, `node->mutex`,
/// `__btrfs_add_delayed_item`'s rb-tree insert among the pending
/// deletions, the item count); `btrfs_del_inode_ref_in_log` /
/// `btrfs_del_dir_entries_in_log` (`inode_logged`: no); `btrfs_i_size_write`,
/// `inode_inc_iversion` (cmpxchg) and `inode_set_ctime_current` of both
/// inodes; `btrfs_update_inode` of the directory and of the file
/// (`btrfs_delayed_update_inode`: the delayed node, `node->mutex`,
/// `fill_stack_inode_item`'s ~35 fields, the file's first dirtying since
/// its flush reserving through `btrfs_block_rsv_migrate`, the node queued
/// under `delayed_root->lock`); `drop_nlink`: about 560 loads, 30 locked
/// operations. Two indirect calls: each `btrfs_update_inode` runs
/// `btrfs_update_root_times` -> `ktime_get_real_ts64`, whose clocksource
/// read is `clock->read` (kernel/time/timekeeping.c `tk_clock_read`).
pub const UNLINK_INODE: Work = Work::straight(560.0, 30.0).indirect(2.0);

/// `btrfs_orphan_add` -> `btrfs_insert_orphan_item` besides its search:
/// the key, `btrfs_alloc_path` / `btrfs_free_path` (slab), and
/// `btrfs_insert_empty_item`'s `setup_items_for_insert` of the one item
/// (the slot's header, `leaf_data_end`, `btrfs_set_header_nritems`,
/// `btrfs_mark_buffer_dirty`; the orphan sorts last, so nothing moves):
/// about 100 loads, 2 locked operations.
pub const ORPHAN_ADD: Work = Work::straight(100.0, 2.0);

/// `btrfs_orphan_del` -> `btrfs_del_orphan_item` besides its search and
/// its `btrfs_del_items` (counted with the tree's): the key, the path from
/// its slab and back: about 60 loads, 2 locked operations.
pub const ORPHAN_DEL: Work = Work::straight(60.0, 2.0);

/// `btrfs_evict_inode` besides its handles and searches:
/// `evict_inode_truncate_pages` (the empty page cache and io tree,
/// `btrfs_drop_extent_map_range` under the extent-map lock),
/// `btrfs_alloc_block_rsv` (kmalloc) / `btrfs_free_block_rsv`,
/// `btrfs_i_size_write`, `btrfs_kill_delayed_inode_items` (the node,
/// `node->mutex`), `btrfs_commit_inode_delayed_inode`'s own work (the
/// node, `node->mutex`, `__btrfs_update_delayed_inode`'s 160-byte
/// `write_extent_buffer` of the inode item, `btrfs_delayed_inode_release_metadata`,
/// `btrfs_release_delayed_iref` and `finish_one_item`), the truncate's
/// control and item checks, `btrfs_remove_delayed_node` (the delayed node
/// out of the root's xarray, freed), `clear_inode`; then the VFS side of
/// `evict` (`inode_sb_list_del`, `inode_wait_for_writeback`,
/// `truncate_inode_pages_final`) and `btrfs_destroy_inode` (the ordered
/// and extent-map trees checked, `btrfs_del_inode_from_root`: the inode
/// out of the root's xarray): about 520 loads, 26 locked operations.
/// Three indirect calls through `sb->s_op` (fs/inode.c): `drop_inode`
/// (`iput_final`), `evict_inode` (`evict`) and `destroy_inode`
/// (`btrfs_destroy_inode`); `free_inode` runs later from RCU.
pub const EVICT_INODE: Work = Work::straight(520.0, 26.0).indirect(3.0);

/// The counted work of one `unlink(2)` of an empty file and its eviction
/// besides the VFS walk and the tree work: four handles (two reserving
/// starts, a join, two refills and four ends), the unlink's own work, the
/// orphan item's two calls, the eviction's own work, and three
/// `btrfs_btree_balance_dirty` checks.
pub fn unlink_own() -> Tally {
    let mut t = Tally::default();
    t.add(TRANS_START, 3.0)
        .add(TRANS_JOIN, 1.0)
        .add(TRANS_END, 4.0)
        .add(UNLINK_INODE, 1.0)
        .add(ORPHAN_ADD, 1.0)
        .add(ORPHAN_DEL, 1.0)
        .add(EVICT_INODE, 1.0)
        .add(BALANCE_DIRTY, 3.0);
    t
}
