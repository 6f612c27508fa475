//! [`TreeStats`]: what the tree's operations touched, by kind.

/// What the tree touched, cumulative since it was built. Take a copy before
/// and after an operation and subtract to attribute counts to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct TreeStats {
    /// `btrfs_search_slot` calls (root-to-leaf descents).
    pub searches: u64,
    /// Internal nodes visited by searches.
    pub node_visits: u64,
    /// Leaves visited by searches (and by sideways leaf walks).
    pub leaf_visits: u64,
    /// Key comparisons made by binary searches in nodes and leaves.
    pub key_compares: u64,
    /// Blocks copied on write (first touch of a block in a transaction,
    /// including newly allocated blocks).
    pub cow_blocks: u64,
    /// `btrfs_del_items` calls.
    pub del_items_calls: u64,
    /// Items removed by `btrfs_del_items`.
    pub items_deleted: u64,
    /// Items after a deleted range whose data offset `btrfs_del_items`
    /// rewrote (its `btrfs_set_token_item_offset` loop, one per item
    /// between the range's end and `nritems`).
    pub items_shifted: u64,
    /// Bytes moved by memmove/copies inside leaves (del_items shifts, pushes
    /// to siblings, splits).
    pub bytes_moved: u64,
    /// Of `bytes_moved`, the item data `btrfs_del_items` moved up over the
    /// deleted items' data (`memmove_leaf_data`: destination above the
    /// source, `__memmove`'s backward copy).
    pub del_data_moved: u64,
    /// Of `bytes_moved`, the item headers `btrfs_del_items` moved down
    /// over fewer than 64 bytes of deleted headers (one or two items:
    /// `memmove_leaf_items`, a forward copy whose destination is that
    /// close below its source; see [`crate::calibrate::memmove`]).
    pub del_headers_near: u64,
    /// Of `bytes_moved`, the item headers `btrfs_del_items` moved down
    /// over 64 bytes or more of deleted headers.
    pub del_headers_far: u64,
    /// Leaf splits (`split_leaf` that allocated a new leaf).
    pub leaf_splits: u64,
    /// Successful `push_leaf_left`/`push_leaf_right` calls.
    pub leaf_pushes: u64,
    /// Siblings `push_leaf_left`/`push_leaf_right` read and locked
    /// (`btrfs_read_node_slot`, `__btrfs_tree_lock`), whether or not
    /// items then moved.
    pub sibling_reads: u64,
    /// Items moved to a sibling by `__push_leaf_left`/`__push_leaf_right`.
    pub items_pushed: u64,
    /// Items whose data offset a push rewrote: `__push_leaf_right` sets
    /// every item of the right leaf after the move, `__push_leaf_left`
    /// the pushed items in the left leaf and every item left in the right
    /// (`btrfs_set_token_item_offset` loops).
    pub push_offsets: u64,
    /// Leaves freed (`btrfs_del_leaf`).
    pub leaves_freed: u64,
    /// Node splits (`split_node`).
    pub node_splits: u64,
    /// Node merges/pushes done by `balance_level`.
    pub node_balances: u64,
    /// Tree locks (`btrfs_tree_lock` / `btrfs_tree_read_lock` of a block
    /// visited or a sibling read) whose lock word another task took last:
    /// the line moves from that task's CPU.
    pub lock_transfers: u64,
    /// Blocks visited or siblings read whose lines another task wrote
    /// since this task last read them: the header (`nritems`, `level`,
    /// `generation`) moves from the writer's CPU.
    pub foreign_visits: u64,
    /// Key comparisons in such blocks: the probed key's line moves too.
    pub foreign_compares: u64,
}

impl TreeStats {
    /// Field-wise sum `self + more`.
    pub fn plus(&self, more: &TreeStats) -> TreeStats {
        let mut sum = *self;
        for (a, b) in sum.fields_mut().into_iter().zip(more.fields()) {
            *a += b;
        }
        sum
    }

    /// Cache lines the counted steps moved from another task's CPU: the
    /// lock words, headers and probed keys of [`Self::lock_transfers`],
    /// [`Self::foreign_visits`] and [`Self::foreign_compares`].
    pub fn transfers(&self) -> u64 {
        self.lock_transfers + self.foreign_visits + self.foreign_compares
    }

    fn fields(&self) -> [u64; 23] {
        let mut s = *self;
        s.fields_mut().map(|f| *f)
    }

    fn fields_mut(&mut self) -> [&mut u64; 23] {
        [
            &mut self.searches,
            &mut self.node_visits,
            &mut self.leaf_visits,
            &mut self.key_compares,
            &mut self.cow_blocks,
            &mut self.del_items_calls,
            &mut self.items_deleted,
            &mut self.items_shifted,
            &mut self.bytes_moved,
            &mut self.del_data_moved,
            &mut self.del_headers_near,
            &mut self.del_headers_far,
            &mut self.leaf_splits,
            &mut self.leaf_pushes,
            &mut self.sibling_reads,
            &mut self.items_pushed,
            &mut self.push_offsets,
            &mut self.leaves_freed,
            &mut self.node_splits,
            &mut self.node_balances,
            &mut self.lock_transfers,
            &mut self.foreign_visits,
            &mut self.foreign_compares,
        ]
    }

    /// Field-wise difference `self - earlier`.
    pub fn since(&self, earlier: &TreeStats) -> TreeStats {
        TreeStats {
            searches: self.searches - earlier.searches,
            node_visits: self.node_visits - earlier.node_visits,
            leaf_visits: self.leaf_visits - earlier.leaf_visits,
            key_compares: self.key_compares - earlier.key_compares,
            cow_blocks: self.cow_blocks - earlier.cow_blocks,
            del_items_calls: self.del_items_calls - earlier.del_items_calls,
            items_deleted: self.items_deleted - earlier.items_deleted,
            items_shifted: self.items_shifted - earlier.items_shifted,
            bytes_moved: self.bytes_moved - earlier.bytes_moved,
            del_data_moved: self.del_data_moved - earlier.del_data_moved,
            del_headers_near: self.del_headers_near - earlier.del_headers_near,
            del_headers_far: self.del_headers_far - earlier.del_headers_far,
            leaf_splits: self.leaf_splits - earlier.leaf_splits,
            leaf_pushes: self.leaf_pushes - earlier.leaf_pushes,
            sibling_reads: self.sibling_reads - earlier.sibling_reads,
            items_pushed: self.items_pushed - earlier.items_pushed,
            push_offsets: self.push_offsets - earlier.push_offsets,
            leaves_freed: self.leaves_freed - earlier.leaves_freed,
            node_splits: self.node_splits - earlier.node_splits,
            node_balances: self.node_balances - earlier.node_balances,
            lock_transfers: self.lock_transfers - earlier.lock_transfers,
            foreign_visits: self.foreign_visits - earlier.foreign_visits,
            foreign_compares: self.foreign_compares - earlier.foreign_compares,
        }
    }
}
