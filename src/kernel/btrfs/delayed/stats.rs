//! What the delayed-item batch loops touched
//! (`btrfs_delete_delayed_items`, `btrfs_insert_delayed_items`), summed
//! over their calls: the counts the cost model prices.

/// What `btrfs_delete_delayed_items` touched, summed over all its calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct DeleteRunStats {
    /// Calls of the function that found at least one pending deletion.
    pub runs: u64,
    /// `btrfs_del_items` calls (batches).
    pub batches: u64,
    /// Root-to-leaf `btrfs_search_slot` calls.
    pub searches: u64,
    /// Sideways steps to the next leaf (`leaf-walk` only).
    pub leaf_walks: u64,
    /// Internal nodes visited.
    pub node_visits: u64,
    /// Leaves visited.
    pub leaf_visits: u64,
    /// Key comparisons in binary searches.
    pub key_compares: u64,
    /// Lines of tree blocks (lock words, headers, probed keys) moved from
    /// another task's CPU ([`TreeStats::transfers`](crate::kernel::btrfs::ctree::TreeStats::transfers)).
    pub transfers: u64,
    /// Blocks copied on write.
    pub cow_blocks: u64,
    /// Bytes memmoved in leaves (del_items shifts and merge pushes).
    pub bytes_moved: u64,
    /// Of `bytes_moved`, `btrfs_del_items`' item data moved up
    /// ([`TreeStats::del_data_moved`](crate::kernel::btrfs::ctree::TreeStats::del_data_moved)).
    pub del_data_moved: u64,
    /// Of `bytes_moved`, its item headers moved down by under 64 bytes
    /// ([`TreeStats::del_headers_near`](crate::kernel::btrfs::ctree::TreeStats::del_headers_near)).
    pub del_headers_near: u64,
    /// Of `bytes_moved`, its item headers moved down by 64 bytes or more.
    pub del_headers_far: u64,
    /// Delayed items released (deleted from the tree or not found).
    pub items_released: u64,
    /// `btrfs_block_rsv_release` calls giving back the items' reserved
    /// metadata ([`super::RsvRelease`]).
    pub rsv_releases: u64,
    /// Of `batches`, those the syscall thread ran itself (the commit of
    /// its `syncfs`): every delayed item here is queued by that thread, so
    /// such a batch finds the node's mutex, the items, their rb nodes and
    /// slab, and the reservation's locks in its own cache.
    pub own_batches: u64,
    /// Of the items collected into batches, those the syscall thread
    /// collected itself.
    pub own_collected: u64,
    /// Of `items_released`, those the syscall thread released itself.
    pub own_released: u64,
    /// Of `rsv_releases`, those the syscall thread made itself.
    pub own_rsv_releases: u64,
    /// Pending deletions whose key was no longer in the tree.
    pub not_found: u64,
    /// Leaves freed by the deletions.
    pub leaves_freed: u64,
    /// Items whose offset `btrfs_del_items` rewrote (after each batch's
    /// range in its leaf).
    pub items_shifted: u64,
    /// Siblings read and locked by the thin-leaf merges' push attempts.
    pub sibling_reads: u64,
    /// Pushes that moved items (`push_leaf_left` / `push_leaf_right`).
    pub leaf_pushes: u64,
    /// Items those pushes moved.
    pub items_pushed: u64,
    /// Items whose offsets those pushes rewrote.
    pub push_offsets: u64,
}

/// What `btrfs_insert_delayed_items` touched, summed over all its calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InsertRunStats {
    /// Calls of the function that found at least one pending insertion.
    pub runs: u64,
    /// `btrfs_insert_empty_items` calls (batches).
    pub batches: u64,
    /// Root-to-leaf `btrfs_search_slot` calls.
    pub searches: u64,
    /// Internal nodes visited.
    pub node_visits: u64,
    /// Leaves visited.
    pub leaf_visits: u64,
    /// Key comparisons in binary searches.
    pub key_compares: u64,
    /// Lines of tree blocks moved from another task's CPU
    /// ([`TreeStats::transfers`](crate::kernel::btrfs::ctree::TreeStats::transfers)).
    pub transfers: u64,
    /// Blocks copied on write (including new leaves from splits).
    pub cow_blocks: u64,
    /// Bytes memmoved in leaves (room made for the batch, pushes, splits).
    pub bytes_moved: u64,
    /// Leaves split (`split_leaf` that allocated a leaf).
    pub leaf_splits: u64,
    /// Items inserted (delayed items released).
    pub items: u64,
    /// `btrfs_block_rsv_release` calls giving back the items' reserved
    /// metadata ([`super::RsvRelease`]).
    pub rsv_releases: u64,
    /// Of `batches`, those the syscall thread ran itself (see
    /// [`DeleteRunStats::own_batches`]).
    pub own_batches: u64,
    /// Of `items`, those the syscall thread inserted itself.
    pub own_items: u64,
    /// Of `rsv_releases`, those the syscall thread made itself.
    pub own_rsv_releases: u64,
    /// Bytes written for the inserted items: data plus 25-byte headers
    /// (`setup_items_for_insert` and the copy of each `btrfs_dir_item`).
    pub bytes_inserted: u64,
}

/// `plus` and `since` (field-wise sum and difference) for a struct of
/// `u64` counters.
macro_rules! fieldwise {
    ($t:ident { $($f:ident),* $(,)? }) => {
        impl $t {
            /// Field-wise sum `self + more`.
            pub fn plus(&self, more: &$t) -> $t {
                $t { $($f: self.$f + more.$f),* }
            }

            /// Field-wise difference `self - earlier`.
            pub fn since(&self, earlier: &$t) -> $t {
                $t { $($f: self.$f - earlier.$f),* }
            }
        }
    };
}

fieldwise!(InsertRunStats {
    runs,
    batches,
    searches,
    node_visits,
    leaf_visits,
    key_compares,
    transfers,
    cow_blocks,
    bytes_moved,
    leaf_splits,
    items,
    rsv_releases,
    own_batches,
    own_items,
    own_rsv_releases,
    bytes_inserted,
});

fieldwise!(DeleteRunStats {
    runs,
    batches,
    searches,
    leaf_walks,
    node_visits,
    leaf_visits,
    key_compares,
    transfers,
    cow_blocks,
    bytes_moved,
    del_data_moved,
    del_headers_near,
    del_headers_far,
    items_released,
    rsv_releases,
    own_batches,
    own_collected,
    own_released,
    own_rsv_releases,
    not_found,
    leaves_freed,
    items_shifted,
    sibling_reads,
    leaf_pushes,
    items_pushed,
    push_offsets,
});
