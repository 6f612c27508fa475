//! The counted events of the delayed-item functions and the tree work
//! around them: each a number of cache-line accesses of the four kinds
//! of [`super::Lines`], estimated from the kernel function named on it
//! (6.x unless it says otherwise).

use super::Lines;

/// One tree block visited by `btrfs_search_slot`: `btrfs_tree_lock` and
/// the unlock at `btrfs_release_path` (rwsem: 2 atomics);
/// `find_extent_buffer` (xarray walk, 3 hits, `atomic_inc_not_zero` on
/// the refs and `free_extent_buffer` at release: 2 atomics); the header
/// (`nritems`, `level`, `generation` for `should_cow_block`). The lock
/// word and the header are a transfer each only where another task took
/// the lock or wrote the block last: counted by the tree
/// ([`TreeStats::transfers`](crate::kernel::btrfs::ctree::TreeStats::transfers), priced at [`LinePrices::xfer_ps`](super::LinePrices::xfer_ps)), not here.
/// The instruction path of the level (6.x fs/btrfs/ctree.c): the loop
/// body of `btrfs_search_slot` (`btrfs_header_level`, the `cow` and
/// `should_cow_block` tests on the transaction, generation and root
/// flags, about 15 loads), `search_for_key_slot` and the set-up of
/// `btrfs_bin_search` (about 8), for a node `setup_nodes_for_search`
/// (the `nritems` thresholds, about 6) and `read_block_for_search`
/// (`btrfs_node_blockptr` / `btrfs_node_ptr_generation`, the xarray
/// descent of `find_extent_buffer`, `btrfs_buffer_uptodate`,
/// `btrfs_verify_level_key`: about 16), `unlock_up` over the path's
/// levels (about 10): about 55 loads more.
pub const BLOCK_VISIT: Lines = Lines {
    hits: 3 + 55,
    atomics: 2,
    ..Lines::NONE
};

/// One key comparison of `btrfs_bin_search`: the key at the probed slot
/// (a different line per probe; a transfer where another task wrote the
/// block since this one read it, counted by the tree as
/// `foreign_compares`) and the extent-buffer page lookup and key copy
/// (`read_extent_buffer` into a stack key: 2 hits); the probe's own
/// instructions (6.x: the slot's offset, `get_eb_folio_index` and
/// `get_eb_offset_in_folio`, the folio address, the boundary test,
/// `btrfs_comp_keys` over objectid, type and offset, the halving: about
/// 10 loads).
///
/// Returns: none in the common case (`btrfs_comp_keys` and the key read
/// are inlined into `btrfs_bin_search`; a key that straddles a folio
/// edge, about 0.4% of probes, adds `read_extent_buffer` and `memcpy`).
pub const KEY_COMPARE: Lines = Lines {
    hits: 2 + 10,
    iterated: true,
    ..Lines::NONE
};

/// 64 bytes memmoved inside a leaf (`memmove_extent_buffer`, a prefetched
/// stream): one load and one store.
///
/// Returns: none per line (`memmove` is called once per copy or folio
/// chunk, which the per-call work counts).
pub const MOVE_LINE: Lines = Lines {
    hits: 2,
    iterated: true,
    ..Lines::NONE
};

/// `PAGE_SIZE` on x86-64: an extent buffer of `nodesize` bytes holds
/// `nodesize / 4096` order-0 folios of the btree inode's page cache
/// (`num_extent_folios`; the lab's trace shows four
/// `mm_filemap_add_to_page_cache` events of order 0 per new 16 KiB block).
pub const PAGE_BYTES: u32 = 4096;

/// A new tree block, besides its folios ([`EB_FOLIO_ADD`] each) and its
/// delayed ref ([`DELAYED_TREE_REF`]), 6.x fs/btrfs/extent-tree.c and
/// extent_io.c:
/// - `btrfs_alloc_tree_block`: `btrfs_use_block_rsv` (the rsv's spinlock,
///   about 20 loads, 1 atomic), `btrfs_alloc_delayed_extent_op` (a slab
///   object, about 20 loads);
/// - `btrfs_reserve_extent` -> `find_free_extent` (the control block's
///   set-up, the hinted block group from `block_group_cache_tree` and its
///   refcount, `find_free_extent_clustered` -> `btrfs_alloc_from_cluster`
///   under `refill_lock` and `cluster->lock`, the entry's offset and bytes
///   or a bitmap's bits), `btrfs_add_reserved_bytes` (`space_info->lock`
///   and the group's lock, `bytes_may_use` moved to `bytes_reserved`),
///   `btrfs_inc_block_group_reservations`, the group released: about 150
///   loads, 7 atomics;
/// - `btrfs_init_new_buffer` -> `btrfs_find_create_tree_block` ->
///   `alloc_extent_buffer`: `check_eb_alignment`, the `buffer_tree` xarray
///   lookup that misses, `__alloc_extent_buffer` (a 240-byte slab object
///   zeroed, its rwsem, spinlock and refs set up), `alloc_eb_folio_array`'s
///   set-up, the insertion into `fs_info->buffer_tree` under its
///   `xa_lock_irq` (`__xa_cmpxchg`), `check_buffer_tree_ref` (`refs_lock`,
///   the refs and TREE_REF bit) and the IN_TREE bit: about 100 loads, 5
///   atomics;
/// - the rest of `btrfs_init_new_buffer`: `btrfs_tree_lock_nested`
///   (`down_write`), `btrfs_clear_buffer_dirty` of a clean buffer, the
///   STALE and ZONED bits cleared and UPTODATE set, `memzero_extent_buffer`
///   of the header, the header's level, bytenr, generation, backref and
///   owner, `write_extent_buffer_fsid` and the chunk-tree uuid, and
///   `btrfs_set_extent_bit` on the transaction's `dirty_pages`
///   (`alloc_extent_state`, `tree->lock`, `tree_search_for_insert`,
///   `insert_state` and `merge_state` with the previous block's state, which
///   frees one): about 140 loads, 5 atomics.
///
/// None of it is an inner loop; the lines are this CPU's own (the flush
/// worker's earlier allocations), no transfer and no DRAM line.
pub const TREE_BLOCK_ALLOC: Lines = Lines {
    hits: 20 + 20 + 150 + 100 + 140,
    atomics: 1 + 7 + 5 + 5,
    ..Lines::NONE
};

/// One folio of a new extent buffer (`alloc_extent_buffer`'s loop over
/// `num_extent_folios`, 6.x fs/btrfs/extent_io.c, mm/filemap.c,
/// mm/page_alloc.c, mm/memcontrol.c, mm/swap.c):
/// - the page from the per-CPU free list (`alloc_pages_bulk` ->
///   `rmqueue_pcplist`, `prep_new_page` / `post_alloc_hook`): about 60
///   loads, and the page's `struct page` line, last written when the page
///   was freed, from DRAM (1 miss);
/// - `attach_eb_folio_to_filemap` -> `filemap_add_folio`, charged to the
///   root memcg (`set_active_memcg(root_mem_cgroup)` around it):
///   `mem_cgroup_charge` (the active memcg and its css reference, no page
///   counter to charge at the root, `commit_charge` and the memcg's event
///   and stat updates: about 40 loads), `__filemap_add_folio` (the folio's
///   refs, `xas_lock_irq` of the btree inode's `i_pages`, `xas_store` three
///   levels down, `__lruvec_stat_mod_folio(NR_FILE_PAGES)`, `nrpages`:
///   about 60 loads, 2 atomics), `folio_add_lru` (`folio_get`, the per-CPU
///   `folio_batch`, whose drain into the LRU under `lruvec->lru_lock` comes
///   once per 31 folios: about 25 loads, 1 atomic);
/// - the folio's private pointer to the buffer (`i_private_lock`,
///   `folio_attach_private`: about 15 loads, 2 atomics), its uptodate bit
///   (`set_extent_buffer_uptodate`), `folio_unlock` and the allocation's
///   `folio_put` at the end of `alloc_extent_buffer` (about 10 loads, 3
///   atomics).
///
/// A fixed number of turns per block (not an inner loop over data).
/// Two indirect calls: `xas_store` -> `xas_update` calls
/// `xas->xa_update` (`workingset_update_node`, set by
/// `mapping_set_update` for a page-cache mapping), and the LRU batch's
/// drain calls its `move_fn` (`lru_add`) once per folio.
pub const EB_FOLIO_ADD: Lines = Lines {
    hits: 60 + 40 + 60 + 25 + 15 + 10,
    misses: 1,
    atomics: 2 + 1 + 2 + 3,
    indirect_calls: 2,
    ..Lines::NONE
};

/// `btrfs_mark_buffer_dirty` of a buffer not yet dirty, per buffer
/// (6.x fs/btrfs/disk-io.c, extent_io.c): the transid and lock checks,
/// `set_extent_buffer_dirty`'s `check_buffer_tree_ref` and
/// `test_and_set_bit(EXTENT_BUFFER_DIRTY)`, and
/// `percpu_counter_add_batch(dirty_metadata_bytes)`: about 25 loads, 1
/// atomic. Its folios are [`EB_FOLIO_DIRTY`] each.
pub const EB_DIRTY: Lines = Lines {
    hits: 25,
    atomics: 1,
    ..Lines::NONE
};

/// One folio of a buffer made dirty (`set_extent_buffer_dirty` ->
/// `btrfs_meta_folio_set_dirty` -> `filemap_dirty_folio`, 6.x
/// mm/page-writeback.c): `folio_test_set_dirty`, `__folio_mark_dirty`
/// under `xa_lock_irqsave` of `i_pages` (`folio_account_dirtied`:
/// `inode_to_wb`, `__lruvec_stat_mod_folio(NR_FILE_DIRTY)`,
/// `__zone_stat_mod_folio(NR_ZONE_WRITE_PENDING)`,
/// `__node_stat_mod_folio(NR_DIRTIED)`, `wb_stat_mod` of WB_RECLAIMABLE
/// and WB_DIRTIED, `task_io_account_write`, `nr_dirtied`,
/// `mem_cgroup_track_foreign_dirty`; `__xa_set_mark` of
/// PAGECACHE_TAG_DIRTY three levels up), `__mark_inode_dirty` of the
/// already dirty btree inode: about 90 loads, 2 atomics. One indirect
/// call: `btrfs_meta_folio_set_dirty` is `folio_mark_dirty`, which calls
/// `mapping->a_ops->dirty_folio` (`filemap_dirty_folio` in `btree_aops`).
pub const EB_FOLIO_DIRTY: Lines = Lines {
    hits: 90,
    atomics: 2,
    indirect_calls: 1,
    ..Lines::NONE
};

/// One folio of a dirty buffer cleaned before its leaf is freed
/// (`btrfs_clear_buffer_dirty`, 6.x fs/btrfs/extent_io.c, called by
/// `btrfs_del_items` for a leaf its deletions emptied and by
/// `__push_leaf_left` / `__push_leaf_right` for a leaf a push emptied):
/// `folio_lock`, `btrfs_meta_folio_clear_and_test_dirty` ->
/// `folio_clear_dirty_for_io` (`folio_mkclean` of an unmapped folio, the
/// dirty bit, the NR_FILE_DIRTY / NR_ZONE_WRITE_PENDING / WB_RECLAIMABLE
/// decrements), `btree_clear_folio_dirty_tag` (`xa_lock_irq` and
/// `__xa_clear_mark(PAGECACHE_TAG_DIRTY)`), `folio_unlock`: about 80
/// loads, 4 atomics.
pub const EB_FOLIO_CLEAN: Lines = Lines {
    hits: 80,
    atomics: 4,
    ..Lines::NONE
};

/// `btrfs_add_delayed_tree_ref` (6.x fs/btrfs/delayed-ref.c), once for the
/// new block of a copy on write (ADD, with its extent op) and once for each
/// block freed (DROP): `add_delayed_ref` allocates the ref node and the
/// head (two slab objects, about 30 loads), initialises both (about 40),
/// reserves the head's slot (`xa_reserve` of `head_refs` under its lock:
/// about 25 loads, 1 atomic), takes `delayed_refs->lock` (1 atomic),
/// `add_delayed_ref_head` (`xa_load` of an existing head, `xa_store` or
/// `update_existing_head_ref`, the heads' counts: about 35 loads),
/// `insert_delayed_ref` under `head->lock` (the head's ref tree, one node,
/// or a merge that frees the ref: about 15 loads, 1 atomic),
/// `btrfs_update_delayed_refs_rsv` (`delayed_rsv->lock`: about 15 loads, 1
/// atomic), and the `btrfs_ref` set-up and calls around it (about 20):
/// about 180 loads, 4 atomics.
pub const DELAYED_TREE_REF: Lines = Lines {
    hits: 30 + 40 + 25 + 35 + 15 + 15 + 20,
    atomics: 4,
    ..Lines::NONE
};

/// The old block's side of a copy on write (`btrfs_force_cow_block`, 6.x
/// fs/btrfs/ctree.c), besides the copy (`copy_extent_buffer_full`, priced
/// as `nodesize / 64` [`MOVE_LINE`]s), the new block and the old block's
/// DROP ref: the new header's bytenr, generation, backref, flags and owner
/// and `write_extent_buffer_fsid` (about 30 loads); `update_ref_for_cow`
/// (`btrfs_block_can_be_shared`, `btrfs_clear_buffer_dirty` of the old,
/// clean buffer: about 15); `btrfs_reloc_cow_block` and the tree-mod-log
/// test (about 10); the parent's block pointer and generation and
/// `btrfs_mark_buffer_dirty` of the already dirty parent (about 25);
/// `btrfs_free_tree_block`'s entry for a block of an earlier transaction
/// (`btrfs_init_tree_ref`, the generation test: about 15); the old
/// buffer's `btrfs_tree_unlock` (`up_write`, 1 atomic) and
/// `free_extent_buffer_stale` (`refs_lock`, the STALE bit, the refs: about
/// 20 loads, 3 atomics); the path's node swapped (about 10): about 125
/// loads, 4 atomics.
pub const COW_SWAP: Lines = Lines {
    hits: 30 + 15 + 10 + 25 + 15 + 20 + 10,
    atomics: 4,
    ..Lines::NONE
};

/// `btrfs_del_leaf` of a leaf copied in this transaction, besides its
/// folios ([`EB_FOLIO_CLEAN`] each, cleaned before it) and its DROP ref
/// ([`DELAYED_TREE_REF`]) (6.x fs/btrfs/ctree.c): the per-buffer part of
/// `btrfs_clear_buffer_dirty` (the DIRTY bit, the `dirty_metadata_bytes`
/// counter: about 15 loads, 1 atomic), `btrfs_del_ptr` in the parent (the
/// tree-mod-log test, the memmove's set-up, `nritems`,
/// `btrfs_mark_buffer_dirty` of the dirty parent: about 30 loads),
/// `btrfs_unlock_up_safe` (about 10 loads and the parent's and the
/// sibling's unlocks, 2 atomics), `root_sub_used_bytes`
/// (`root->accounting_lock`: about 10 loads, 1 atomic) and the leaf's
/// extra ref (1 atomic): about 65 loads, 5 atomics.
pub const LEAF_FREE: Lines = Lines {
    hits: 15 + 30 + 10 + 10,
    atomics: 1 + 2 + 1 + 1,
    ..Lines::NONE
};

/// What `btrfs_free_tree_block` (6.x fs/btrfs/extent-tree.c) does for the
/// last ref of a block allocated in this transaction and never written,
/// after its DROP ref: `check_ref_cleanup` finds the head whose ADD the
/// DROP cancelled and removes it (`delayed_refs->lock`, `head->lock`,
/// `btrfs_delete_ref_head`'s `xa_erase`, the heads' counts,
/// `btrfs_cleanup_ref_head_accounting` under `delayed_rsv->lock`,
/// `btrfs_put_delayed_ref_head` freeing the head: about 90 loads, 4
/// atomics); `btrfs_lookup_block_group` (the read lock and rb walk: about
/// 15 loads, 2 atomics); `btrfs_add_free_space` ->
/// `__btrfs_add_free_space` (a slab object, `ctl->tree_lock`,
/// `try_merge_free_space`'s two `tree_search_offset` walks and the merged
/// neighbour unlinked and freed, `steal_from_bitmap`'s tests,
/// `link_free_space` into the offset and bytes trees: about 140 loads, 2
/// atomics); `btrfs_free_reserved_bytes` (`space_info->lock` and the
/// group's lock, `bytes_reserved` and the tickets' test: about 30 loads, 2
/// atomics) and `btrfs_put_block_group` (1 atomic); then the buffer's
/// release by `free_extent_buffer_stale` / `free_extent_buffer`
/// (`refs_lock`, the refs, `xa_erase` from `buffer_tree` under its lock,
/// `btrfs_release_extent_buffer_folios`: per folio the private pointer
/// under `i_private_lock` and `folio_put`, and `call_rcu`: about 110
/// loads, 12 atomics): about 385 loads, 23 atomics.
pub const TREE_BLOCK_UNALLOC: Lines = Lines {
    hits: 90 + 15 + 140 + 30 + 110,
    atomics: 4 + 2 + 2 + 2 + 1 + 12,
    ..Lines::NONE
};

/// Per batch, the lines of the delayed-item loop outside the lab's
/// window: `node->mutex` lock and unlock (2 atomics; the mutex line last
/// taken by the syscall thread queueing items: 1 transfer); the first
/// pending item (`rb_first_cached`, the item written by the syscall
/// thread: 1 transfer); `btrfs_mark_buffer_dirty` (2 atomics) and the
/// path's slots (4 hits); the instructions of the loop turn, the key set
/// up for the search, `btrfs_search_slot`'s entry before the root lock
/// and `btrfs_release_path` over the levels (about 36 loads).
pub const BATCH_FIXED: Lines = Lines {
    hits: 4 + 36,
    xfers: 2,
    atomics: 4,
    ..Lines::NONE
};

/// Per batch, inside the lab's window: `btrfs_batch_delete_items`' set-up
/// (`btrfs_header_nritems`, the list head, the first reservation) and
/// `btrfs_del_items` without its per-item loops (`leaf_data_end`, the
/// last item's offset, two `memmove_extent_buffer` calls' set-up,
/// `btrfs_set_header_nritems`, `leaf_space_used`, the one-third test),
/// then the tracepoint's argument set-up: about 50 loads.
pub const DEL_ITEMS: Lines = Lines { hits: 50, ..Lines::NONE };

/// Per item of a batch, inside the lab's window: `__btrfs_next_delayed_item`
/// (`rb_next`) and the item's key (1 transfer: the item was written by the
/// syscall thread's CPU), `btrfs_item_key_to_cpu` of the leaf's next slot,
/// `btrfs_comp_cpu_keys`, `list_add_tail`, the reservation sum, and the
/// item's share of `btrfs_del_items`' size sum (`btrfs_item_size`): about
/// 22 loads.
///
/// Returns (out of line in 6.18's `/proc/kallsyms`): `rb_next`,
/// `read_extent_buffer` and `memcpy` (the slot's key), the
/// `__list_add_valid_or_report` of `list_add_tail` (`CONFIG_DEBUG_LIST`),
/// `btrfs_get_32` (the item size): 5.
pub const ITEM_COLLECT: Lines = Lines {
    hits: 22,
    xfers: 1,
    iterated: true,
    returns: 5,
    ..Lines::NONE
};

/// Per item of a delayed-insertion batch: [`ITEM_COLLECT`]'s loads, with
/// the insert path's returns: `rb_next` and `__list_add_valid_or_report`
/// in the collect loop; in `setup_items_for_insert`,
/// `btrfs_cpu_key_to_disk`, `btrfs_set_32` twice and a
/// `write_extent_buffer` (`__write_extent_buffer`,
/// `assert_eb_folio_uptodate`, `memcpy`: 3); the data's
/// `btrfs_get_32` and its `write_extent_buffer` (3): 12.
pub const ITEM_INSERT: Lines = Lines {
    returns: 12,
    ..ITEM_COLLECT
};

/// One item after the deleted range, whose data offset `btrfs_del_items`
/// rewrites (6.18: `btrfs_item_offset` and `btrfs_set_item_offset`,
/// inline wrappers of the out-of-line `btrfs_get_32` and `btrfs_set_32`,
/// fs/btrfs/accessors.c): 16 memory reads a call, 32 a turn. The count
/// is the common path of a replica of the two functions with the helpers
/// they inline (`get_eb_folio_index`, `get_eb_offset_in_folio`,
/// `folio_address`), built with the kernel's flags (docs/lab-hosts.md,
/// session 65): the stack canary twice and its copy, the frame's two
/// reloads and the return address, `eb->folios[0]`, `eb->start`,
/// `eb->folio_shift`, `eb->folio_size`, `eb->len`, `eb->folios[idx]`,
/// the folio's flags, `vmemmap_base` and `page_offset_base`, the member.
/// Each turn takes its addresses from the loop's index, not from the turn
/// before, so the turns overlap ([`Lines::overlapped`]).
///
/// Returns: `btrfs_get_32` and `btrfs_set_32`: 2.
///
/// Priced so only on a profile whose `[memmove]` prices the moves beside
/// it ([`super::LinePrices::item_shift_ps`]); on the others,
/// [`ITEM_SHIFT_ESTIMATE`].
pub const ITEM_SHIFT: Lines = Lines {
    hits: 32,
    iterated: true,
    overlapped: true,
    returns: 2,
    ..Lines::NONE
};

/// [`ITEM_SHIFT`] as sessions 41 to 70 estimated it: about 12 loads and
/// stores, one after another (at `hit_ns`), with its 2 returns. Kept for
/// the profiles measured before session 71, which have no `[memmove]`:
/// there an item after the deleted one is this turn and its bytes moved
/// at [`MOVE_LINE`] (a load and a store a line), the price their hosts'
/// checks were made with. The kernel's samples on two hosts (sessions 58
/// and 66, docs/lab-hosts.md) put the two errors of that pair on
/// opposite sides: the turn 1.7-2.9x too high, the moved line 1.4-2.35x
/// too low; pricing the turn from its count without the moves' measured
/// prices would keep only one of them.
pub const ITEM_SHIFT_ESTIMATE: Lines = Lines {
    hits: 12,
    iterated: true,
    returns: 2,
    ..Lines::NONE
};

/// Per delayed item released, outside the lab's window
/// (`btrfs_release_delayed_item`, 6.x fs/btrfs/delayed-inode.c):
/// `rb_erase_cached` (the node, parent and sibling lines: 3 transfers);
/// `finish_one_item` (`atomic_inc_return(items_seq)` and
/// `atomic_dec_return(items)` on a line the syscall thread increments: 2
/// atomics, 1 transfer, and the waitqueue check: 1 hit);
/// `refcount_dec_and_test` (1 atomic); `kfree` of a 112-byte item
/// allocated on the other CPU (SLUB `__slab_free`: the slab's struct and
/// freelist, 2 transfers, 1 `cmpxchg`); the instructions of those calls
/// and of `list_del` (about 36 loads). The reservation's release is
/// [`RSV_RELEASE`], per item or per batch.
///
/// Returns: `__list_del_entry_valid_or_report`, `rb_next` and
/// `rb_erase` (`rb_erase_cached` of the leftmost node), `finish_one_item`,
/// `kfree`, `__slab_free`, `slab_update_freelist` (a free to the other
/// CPU's slab; `btrfs_release_delayed_item.part.0` tail-jumps to `kfree`
/// and returns no time of its own): 7.
pub const ITEM_RELEASE: Lines = Lines {
    hits: 1 + 36,
    xfers: 6,
    atomics: 4,
    iterated: true,
    returns: 7,
    ..Lines::NONE
};

/// One `btrfs_block_rsv_release` of `delayed_block_rsv` giving back
/// reserved metadata (per item before 6.0 through
/// `btrfs_delayed_item_release_metadata`; per batch since, from
/// `btrfs_batch_delete_items` and `btrfs_delayed_item_release_leaves`;
/// [`crate::kernel::btrfs::delayed::RsvRelease`]): the delayed and the
/// global block-rsv spinlocks, both also taken by the syscall thread's
/// reservations (2 atomics, 2 transfers), and the bytes' arithmetic
/// around them (about 12 loads). Not iterated: per batch it is per-call
/// code; per item (before 6.0, the published cases) it ran in the item
/// loop, where it is priced the same as long as `work_scale` is 1, as it
/// is in those cases. Its return is not counted.
pub const RSV_RELEASE: Lines = Lines {
    hits: 12,
    xfers: 2,
    atomics: 2,
    ..Lines::NONE
};

/// A sibling leaf read and locked by `push_leaf_left` / `push_leaf_right`
/// (the thin-leaf merge of `btrfs_del_items`, 6.x fs/btrfs/ctree.c),
/// whether or not items then move: `btrfs_read_node_slot` (the parent's
/// block pointer and generation, `read_tree_block` ->
/// `find_extent_buffer`: the buffer xarray walk and
/// `atomic_inc_not_zero` of its refs, `btrfs_buffer_uptodate`, the
/// level and first-key checks: about 40 loads, 1 atomic),
/// `__btrfs_tree_lock` (`down_write` on the buffer's rwsem: 1 atomic,
/// about 8 loads), `btrfs_leaf_free_space` (`leaf_space_used`: nritems
/// and two item offsets, about 10 loads), and on the way out
/// `btrfs_tree_unlock` (`up_write`: 1 atomic) and `free_extent_buffer`
/// (the refs `cmpxchg` loop: 1 atomic), about 12 loads. Its lock word
/// and header move only where another task took or wrote them last
/// (counted by the tree, [`TreeStats::transfers`](crate::kernel::btrfs::ctree::TreeStats::transfers)). Its copy on write is
/// counted apart (`cow_blocks`). With the lab's
/// lock tracepoints, the lock fires one more event.
pub const SIBLING_LOCK: Lines = Lines {
    hits: 40 + 8 + 10 + 12,
    atomics: 4,
    ..Lines::NONE
};

/// A push that moves items, besides its sibling ([`SIBLING_LOCK`]), the
/// bytes it copies (priced as moved lines) and the offsets it rewrites
/// ([`ITEM_SHIFT`] each): `check_sibling_keys` (the last key of the left
/// and the first of the right leaf, a compare: about 20 loads), the set-up
/// of the two copies and two memmoves (`leaf_data_end`, item offsets and
/// sizes, `copy_leaf_items`/`copy_leaf_data`/`memmove_leaf_*` entries:
/// about 30 loads), `btrfs_set_header_nritems` twice,
/// `btrfs_mark_buffer_dirty` of both leaves (already dirty after their
/// copy on write: a flag test each) and the parent
/// (`btrfs_set_node_key`, or `fixup_low_keys` one level up for a left
/// push: about 25 loads), the path's slot updates: about 85 loads.
pub const PUSH_FIXED: Lines = Lines {
    hits: 20 + 30 + 6 + 25 + 4,
    ..Lines::NONE
};

/// One item a push moves, in the loop that counts what fits
/// (`btrfs_item_size` through the buffer's folio, the free-space compare,
/// the slot tests): about 8 loads.
///
/// Returns: `btrfs_get_32` (the item size): 1.
pub const PUSH_ITEM: Lines = Lines {
    hits: 8,
    iterated: true,
    returns: 1,
    ..Lines::NONE
};

/// One enabled tracepoint firing ([`crate::kernel::tracing::TRACE_EVENT_LOADS`]).
pub const TRACE_EVENT: Lines = Lines {
    hits: crate::kernel::tracing::TRACE_EVENT_LOADS as u64,
    ..Lines::NONE
};

/// The root's lock traded at the start of a search that copies on write
/// (`btrfs_search_slot_get_root`: the root read-locked to learn its level,
/// `btrfs_tree_read_unlock` and `free_extent_buffer` when the level is at
/// or below `write_lock_level`, then `btrfs_lock_root_node`): the read
/// lock and unlock (2 atomics), the reference (1), the level test: about
/// 20 loads. With the lab's lock tracepoints the read lock fires one
/// event more than the blocks visited.
pub const ROOT_TRADE: Lines = Lines {
    hits: 20,
    atomics: 3,
    ..Lines::NONE
};
