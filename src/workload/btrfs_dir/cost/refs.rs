//! Time of a commit's delayed refs from their counts
//! ([`RefRunStats`], src/kernel/btrfs/extent.rs): each ref head's run, the
//! extent items inserted and deleted, the free space tree's calls, the
//! block group's accounting, the items written in place, and the three
//! trees' searches, item edits and copies as the fs tree's are priced
//! ([`DelayedCost::tree_work_ps`]). The counts per event are estimates from
//! the Linux 6.18.2 functions named on each constant, in the style of
//! [`super::events`]; none is an inner loop, none a transfer (the
//! committing thread's own lines).
//!
//! With the lab's tracepoints on, each head fires `run_delayed_tree_ref`
//! (kept: no filter) and its reservation release a `btrfs_space_reservation`
//! (`delayed_refs_rsv`, which the lab's filter on `delayed_item` rejects);
//! the three trees' lock and `btrfs_cow_block` events are the other trees'
//! (rejected by the lab's `owner` and `root_objectid` filters), and each of
//! their copies' folios fires a kept `mm_filemap_add_to_page_cache` (the
//! btree inode's, the filter's `i_ino`).

use super::{DelayedCost, Lines, TreeEvents, total};
use crate::kernel::ModelError;
use crate::kernel::btrfs::extent::RefRunStats;

/// One ref head run (fs/btrfs/extent-tree.c, delayed-ref.c):
/// `btrfs_select_ref_head` (`delayed_refs->lock`, `xa_find` of
/// `head_refs` from `run_delayed_start`, `mutex_trylock` of the head, the
/// ready count: about 35 loads, 2 atomics); `head->lock` and
/// `btrfs_merge_delayed_refs` of a one-ref tree (about 10, 1 atomic);
/// `btrfs_run_delayed_refs_for_head`: `btrfs_select_delayed_ref`,
/// `rb_erase_cached`, the add list, `ref_mod`, `must_insert_reserved` and
/// the extent op taken (about 40), `run_one_delayed_ref` ->
/// `run_delayed_tree_ref`'s tests (about 15), `btrfs_delayed_refs_rsv_release`
/// (`btrfs_block_rsv_release`: the rsv's lock, the global rsv's refill
/// test, `btrfs_space_info_free_bytes_may_use` under `space_info->lock`:
/// about 50, 3 atomics), `btrfs_put_delayed_ref` (`refcount_dec_and_test`
/// and `kmem_cache_free`: about 30, 2 atomics), `cond_resched`, the head
/// relocked and merged again, the next select finding none (about 15, 1
/// atomic); `cleanup_ref_head` (`delayed_refs->lock` and `head->lock`
/// again, `btrfs_delete_ref_head`'s `xa_erase` and counts,
/// `btrfs_cleanup_ref_head_accounting`, `btrfs_delayed_ref_unlock`,
/// `btrfs_put_delayed_ref_head`'s free: about 90, 5 atomics); the loop's
/// own (about 10): about 295 loads, 14 atomics.
pub const REF_HEAD: Lines = Lines {
    hits: 35 + 10 + 40 + 15 + 50 + 30 + 15 + 90 + 10,
    atomics: 2 + 1 + 3 + 2 + 1 + 5,
    ..Lines::NONE
};

/// `alloc_reserved_tree_block` besides its insertion (the search and the
/// item counted as the tree's and [`INSERT_ITEM`]): `btrfs_alloc_path`
/// and `btrfs_free_path` (two slab calls, the path's release: about 65
/// loads, 2 atomics), the key and extent op (about 15), the new item's
/// refs, generation and flags and its inline ref's type and offset
/// (`btrfs_set_*` accessors, about 16 loads each: 80),
/// `btrfs_mark_buffer_dirty` of the dirty leaf (about 10), then
/// `btrfs_record_squota_delta` (off: about 5): about 175 loads, 2 atomics.
/// Its `alloc_reserved_extent` is [`FREE_SPACE_CALL`] and
/// [`GROUP_UPDATE`].
pub const EXTENT_ALLOC: Lines = Lines {
    hits: 65 + 15 + 80 + 10 + 5,
    atomics: 2,
    ..Lines::NONE
};

/// `__btrfs_free_extent` besides its delete search and `btrfs_del_items`
/// (the tree's): its path (about 65 loads, 2 atomics),
/// `lookup_inline_extent_backref` after the search (the item's size, refs
/// and flags, the one inline ref's type and root read and matched: about
/// 100), the refs' drop to none and the deletion's set-up (about 10),
/// `do_free_extent_accounting`'s `btrfs_record_squota_delta` (about 5):
/// about 180 loads, 2 atomics. Its accounting is [`FREE_SPACE_CALL`],
/// [`GROUP_UPDATE`] and [`PIN_EXTENT`].
pub const EXTENT_FREE: Lines = Lines {
    hits: 65 + 100 + 10 + 5,
    atomics: 2,
    ..Lines::NONE
};

/// `btrfs_insert_empty_item` of one item besides its search:
/// `setup_items_for_insert` (`leaf_data_end`, the data and header
/// memmoves' set-up, the key, offset and size written, `nritems`,
/// `btrfs_mark_buffer_dirty` of the dirty leaf, the free space test: about
/// 75 loads). The bytes moved are the tree's.
pub const INSERT_ITEM: Lines = Lines { hits: 75, ..Lines::NONE };

/// One `btrfs_add_to_free_space_tree` / `btrfs_remove_from_free_space_tree`
/// call (fs/btrfs/free-space-tree.c) besides its searches and item edits
/// (the tree's, [`INSERT_ITEM`], [`INFO_UPDATE`]): the compat test, its
/// path (about 65 loads, 2 atomics), `btrfs_lookup_block_group` (the
/// read lock and rb walk: about 15, 2 atomics), the group's
/// `free_space_lock` mutex (about 6, 2 atomics), the cached tests of
/// `__add_block_group_free_space` and `using_bitmaps` (about 6), each
/// search's found key read (`btrfs_item_key_to_cpu`) and the path's
/// releases between them (about 45), `btrfs_put_block_group` (1 atomic):
/// about 140 loads, 7 atomics.
pub const FREE_SPACE_CALL: Lines = Lines {
    hits: 65 + 15 + 6 + 6 + 45 + 3,
    atomics: 2 + 2 + 2 + 1,
    ..Lines::NONE
};

/// `btrfs_update_block_group` (fs/btrfs/block-group.c): the superblock's
/// bytes used under `delalloc_root_lock`, `btrfs_lookup_block_group`, the
/// group's and its space info's locks and counters, the dirty list's lock
/// (the group already on it after the first), `btrfs_put_block_group`:
/// about 50 loads, 7 atomics.
pub const GROUP_UPDATE: Lines = Lines {
    hits: 50,
    atomics: 7,
    ..Lines::NONE
};

/// A freed extent's extra in `btrfs_update_block_group`:
/// `btrfs_space_info_update_bytes_pinned`, `should_reclaim_block_group`
/// and `btrfs_set_extent_bit` on the transaction's `pinned_extents` (a
/// preallocated state, the tree's lock, search, insertion and merge with
/// the previous range: about 100 loads, 3 atomics).
pub const PIN_EXTENT: Lines = Lines {
    hits: 100,
    atomics: 3,
    ..Lines::NONE
};

/// A root item or a block group item written after its update search
/// (`btrfs_update_root`, `update_block_group_item`): its path (about 65
/// loads, 2 atomics), the item's size check and `write_extent_buffer` of
/// the item (a root item's 439 bytes: about 7 lines, 15 loads),
/// `btrfs_mark_buffer_dirty` (about 10), the root's node, level and
/// generation set first (about 20): about 110 loads, 2 atomics.
pub const ITEM_WRITE: Lines = Lines {
    hits: 65 + 15 + 10 + 20,
    atomics: 2,
    ..Lines::NONE
};

/// A free space info's extent count changed after its update search, on
/// the caller's path (`update_free_space_extent_count`: the flags and
/// count read and the count set through the accessors, the path's
/// release, the bitmap thresholds' tests): about 60 loads.
pub const INFO_UPDATE: Lines = Lines { hits: 60, ..Lines::NONE };

impl DelayedCost {
    /// Time of a commit's delayed refs that counted `r`, on the
    /// committing thread, ps (module header).
    pub fn refs_ps(&self, r: &RefRunStats) -> Result<u128, ModelError> {
        let p = &self.prices;
        let traced = self.lock_tracepoints;
        let (kept, unfiltered, rejected) = match traced {
            true => (p.trace_event_ps, p.trace_unfiltered_ps, p.trace_discard_ps),
            false => (0, 0, 0),
        };
        let events = TreeEvents {
            lock_ps: rejected,
            cow_ps: rejected + kept * u64::from(self.folios()),
            freed_ps: unfiltered,
        };
        let tree = self.tree_work_ps(&r.tree, &events)?;
        let terms = [
            (r.heads, REF_HEAD.price(p) + unfiltered + rejected),
            (r.adds, EXTENT_ALLOC.price(p) + GROUP_UPDATE.price(p)),
            (r.drops, EXTENT_FREE.price(p) + GROUP_UPDATE.price(p) + PIN_EXTENT.price(p)),
            (r.free_space_calls, FREE_SPACE_CALL.price(p)),
            (r.inserts, INSERT_ITEM.price(p)),
            (r.item_writes, ITEM_WRITE.price(p)),
            (r.info_updates, INFO_UPDATE.price(p)),
            (1, tree),
        ];
        total(&terms, "btrfs_dir: time of a commit's delayed refs in ps")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::btrfs::ctree::TreeStats;
    use crate::workload::btrfs_dir::{BtrfsDirParams, delayed_cost};

    #[test]
    fn a_commits_refs_are_priced_per_head_kind_and_tree_work() {
        let machine = crate::machine::find_builtin("icelake-2s").expect("built-in profile");
        let cost = delayed_cost(&BtrfsDirParams::default(), &machine);
        let p = &cost.prices;
        assert_eq!(cost.refs_ps(&RefRunStats::default()).unwrap(), 0, "nothing run, nothing priced");
        // One ADD and one DROP: two heads, each kind's own work, two free
        // space calls, the ADD's insertion and the DROP's pin.
        let r = RefRunStats {
            heads: 2,
            adds: 1,
            drops: 1,
            free_space_calls: 2,
            inserts: 1,
            ..RefRunStats::default()
        };
        let want = 2 * REF_HEAD.price(p)
            + EXTENT_ALLOC.price(p)
            + EXTENT_FREE.price(p)
            + 2 * GROUP_UPDATE.price(p)
            + PIN_EXTENT.price(p)
            + 2 * FREE_SPACE_CALL.price(p)
            + INSERT_ITEM.price(p);
        assert_eq!(cost.refs_ps(&r).unwrap(), u128::from(want));
        // The trees' work as the fs tree's: a search of one leaf.
        let tree = TreeStats {
            searches: 1,
            leaf_visits: 1,
            key_compares: 4,
            ..TreeStats::default()
        };
        let searched = RefRunStats { tree, ..r };
        let search = cost.tree_work_ps(&tree, &TreeEvents::default()).unwrap();
        assert!(search > 0);
        assert_eq!(cost.refs_ps(&searched).unwrap(), u128::from(want + search));
        // Traced, each head fires its kept event and its rejected
        // reservation event, each lock of the other trees a rejected one.
        let traced = DelayedCost {
            lock_tracepoints: true,
            ..cost
        };
        let events = 2 * (p.trace_unfiltered_ps + p.trace_discard_ps) + 2 * p.trace_discard_ps;
        assert!(events > 0);
        assert_eq!(traced.refs_ps(&searched).unwrap(), u128::from(want + search + events));
    }
}
