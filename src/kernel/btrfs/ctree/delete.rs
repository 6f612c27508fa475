//! `btrfs_del_items` and `btrfs_del_leaf`: remove a run of slots from a
//! leaf, memmove what follows, and push/merge a leaf that falls under a
//! third of its data size into its neighbours (left first, then all or
//! nothing to the right), freeing leaves that become empty.

use super::block::space_used;
use super::{ITEM_HEADER_SIZE, Path, Tree};
use crate::machine::profile::FAST_STRING_DISTANCE;

impl Tree {
    /// `btrfs_del_items(trans, root, path, slot, nr)`: deletes items
    /// `[slot, slot + nr)` of the path's leaf. Counts one call, the items,
    /// and the bytes memmoved (data and item headers after the range).
    pub fn del_items(&mut self, path: &mut Path, slot: usize, nr: usize) {
        let leaf = path.nodes[0];
        let n = self.blocks[leaf].nritems();
        let (slot, nr) = (slot.min(n), nr.min(n - slot.min(n)));
        self.stats.del_items_calls += 1;
        self.stats.items_deleted += nr as u64;
        let after = &self.blocks[leaf].items()[slot + nr..];
        let moved = space_used(after);
        self.stats.bytes_moved += u64::from(moved);
        // The two memmoves (6.18): the data after the range up by the
        // deleted data (`memmove_leaf_data`), the headers after it down by
        // the deleted headers (`memmove_leaf_items`).
        let headers = after.len() as u64 * u64::from(ITEM_HEADER_SIZE);
        self.stats.del_data_moved += u64::from(moved) - headers;
        if nr as u64 * u64::from(ITEM_HEADER_SIZE) < FAST_STRING_DISTANCE {
            self.stats.del_headers_near += headers;
        } else {
            self.stats.del_headers_far += headers;
        }
        self.stats.items_shifted += after.len() as u64;
        self.leaf_mut(leaf).drain(slot..slot + nr);
        let Some(first) = self.blocks[leaf].first_key() else {
            if leaf != self.root {
                self.del_leaf(path);
            }
            return;
        };
        if slot == 0 {
            self.fixup_low_keys(path, first, 1);
        }
        if self.leaf_used(leaf) < self.geo.leaf_data_size() / 3 {
            self.merge_thin_leaf(path);
        }
    }

    /// The "delete the leaf if it is mostly empty" step of `btrfs_del_items`
    /// (2022 form: only push when at least the first item / everything
    /// fits, so neighbours are not copied for nothing).
    fn merge_thin_leaf(&mut self, path: &mut Path) {
        if path.nodes.len() < 2 {
            return;
        }
        let (leaf, pslot) = (path.nodes[0], path.slots[1]);
        let first = self.blocks[leaf].items().first().map_or(0, |i| i.data_size);
        self.push_leaf_left(path, 0, ITEM_HEADER_SIZE + first, true, usize::MAX);
        if path.nodes[0] == leaf && self.blocks[leaf].nritems() > 0 {
            let used = self.leaf_used(leaf);
            self.push_leaf_right(path, 0, used, true, 0);
        }
        if self.blocks[leaf].nritems() == 0 {
            path.nodes[0] = leaf;
            path.slots[1] = pslot;
            self.del_leaf(path);
        }
    }

    /// `btrfs_del_leaf`: drop the leaf's pointer from its parent and free it.
    fn del_leaf(&mut self, path: &Path) {
        let leaf = path.nodes[0];
        self.del_ptr(path, 1, path.slots[1]);
        self.free_block(leaf);
        self.stats.leaves_freed += 1;
    }
}
