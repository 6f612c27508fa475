//! The tree's blocks as extents, and the delayed refs they leave for the
//! commit (6.18 fs/btrfs/ctree.c `btrfs_force_cow_block`, extent-tree.c
//! `btrfs_alloc_tree_block` and `btrfs_free_tree_block`).
//!
//! Every block has a logical address (`bytenr`). A new block (a split, a
//! new root) and each copy on write take the next address from a bump
//! allocator, one node size on: on the lab's nearly empty filesystem the
//! metadata allocator's cluster hands out addresses in rising order, as
//! the live trace's `btrfs_reserved_extent_alloc` events show (session 72,
//! docs/lab-hosts.md). Freed extents are not handed out again here: in
//! the kernel a block of an earlier transaction returns to the free-space
//! cache only when the commit unpins it, one of this transaction never
//! written at once (`btrfs_free_tree_block`), and either way the cluster
//! moves on.
//!
//! Each allocation queues an ADD ref head for its new extent, each copy or
//! free of a block an earlier transaction wrote a DROP head for the old
//! one. A block this transaction allocated and then copied again (after
//! a write-back) or freed cancels its own ADD (`btrfs_free_tree_block` ->
//! `check_ref_cleanup` deletes the head, whose refs net to none), unless
//! its ADD already ran: a commit runs the refs queued so far before its
//! delayed items (6.18 fs/btrfs/transaction.c `btrfs_commit_transaction`:
//! `btrfs_run_delayed_refs(trans, 0)` first), whose copies then drop
//! those blocks' real extents. So each [`Tree::take_delayed_refs`] gives
//! a DROP for each extent dropped that an earlier transaction or pass
//! wrote, and an ADD for each live block of this transaction whose ADD has
//! not run; `btrfs_run_delayed_refs` runs them into the extent and free
//! space trees ([`crate::kernel::btrfs::extent`]).

use super::block::Content;
use super::{Key, SearchMode, Tree};

/// One tree block's extent: where it is and its level (the key of its
/// `METADATA_ITEM` in the extent tree is `(bytenr, METADATA_ITEM, level)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct RefExtent {
    /// Logical address, bytes.
    pub bytenr: u64,
    /// The block's level (0 for a leaf).
    pub level: u8,
}

/// The delayed ref heads one transaction leaves for its commit, each in
/// rising address order (the order `btrfs_select_ref_head` takes them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DelayedRefs {
    /// Live blocks this transaction allocated: `alloc_reserved_tree_block`.
    pub adds: Vec<RefExtent>,
    /// Extents of earlier transactions it dropped: `__btrfs_free_extent`.
    pub drops: Vec<RefExtent>,
}

impl DelayedRefs {
    /// Heads in all.
    pub fn len(&self) -> usize {
        self.adds.len() + self.drops.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Tree {
    /// The next new block's logical address, bytes.
    pub fn next_bytenr(&self) -> u64 {
        self.next_bytenr
    }

    /// Sets the next new block's logical address (trees that share one
    /// allocator hand its cursor on).
    pub fn set_next_bytenr(&mut self, bytenr: u64) {
        self.next_bytenr = bytenr;
    }

    /// Takes the next address for a new block.
    pub(crate) fn take_bytenr(&mut self) -> u64 {
        let b = self.next_bytenr;
        self.next_bytenr = b.saturating_add(u64::from(self.geo.nodesize));
        b
    }

    /// Records block `id`'s extent as dropped when an earlier transaction
    /// wrote it (a copy on write or a free of it).
    pub(crate) fn drop_if_old(&mut self, id: usize) {
        let b = &self.blocks[id];
        if (b.generation != self.transid || b.ref_run) && !matches!(b.content, Content::Free) {
            self.dropped.push(RefExtent {
                bytenr: b.bytenr,
                level: b.level as u8,
            });
        }
    }

    /// The running transaction's delayed ref heads not yet run (the
    /// module header), taken to be run: the dropped list starts again
    /// empty, and each live block's ADD counts as run. Called before
    /// [`Tree::commit_transaction`].
    pub fn take_delayed_refs(&mut self) -> DelayedRefs {
        let transid = self.transid;
        let mut adds = Vec::new();
        for b in &mut self.blocks {
            if b.generation == transid && !b.ref_run && !matches!(b.content, Content::Free) {
                b.ref_run = true;
                adds.push(RefExtent {
                    bytenr: b.bytenr,
                    level: b.level as u8,
                });
            }
        }
        adds.sort_unstable();
        let mut drops = std::mem::take(&mut self.dropped);
        drops.sort_unstable();
        DelayedRefs { adds, drops }
    }

    /// Every live block's extent, in address order.
    pub fn extents(&self) -> Vec<RefExtent> {
        let mut v: Vec<RefExtent> = self
            .blocks
            .iter()
            .filter(|b| !matches!(b.content, Content::Free))
            .map(|b| RefExtent {
                bytenr: b.bytenr,
                level: b.level as u8,
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// Moves the root block to logical address `bytenr` (a tree built at
    /// its place on disk).
    pub fn relocate_root(&mut self, bytenr: u64) {
        self.blocks[self.root].bytenr = bytenr;
    }

    /// The root block's logical address.
    pub fn root_bytenr(&self) -> u64 {
        self.blocks[self.root].bytenr
    }

    /// Whether the running transaction changed the root (its copy, a new
    /// root): then `commit_fs_roots` / `update_cowonly_root` write the
    /// tree's root item.
    pub fn root_changed(&self) -> bool {
        self.blocks[self.root].generation == self.transid
    }

    /// `btrfs_search_prev_slot(trans, root, key, path, -1, 1)` (the
    /// helper of 6.18 fs/btrfs/free-space-tree.c), then `btrfs_del_item`
    /// of the item it found when `take` says so: one delete search (a copy
    /// on write of its path) for `key`, and the item before the slot it
    /// lands on. `None` when `key` is there or nothing in its leaf sorts
    /// before it (the kernel's -EIO: the search lands in the leaf whose
    /// first key is at or below `key`, so only a key below the whole tree
    /// does).
    pub fn take_prev(&mut self, key: &Key, take: impl FnOnce(&Key) -> bool) -> Option<Key> {
        let (found, mut path) = self.search_slot(key, SearchMode::Delete);
        let slot = path.slots[0].checked_sub(1).filter(|_| !found)?;
        let k = self.blocks[path.nodes[0]].items().get(slot)?.key;
        if take(&k) {
            self.del_items(&mut path, slot, 1);
        }
        Some(k)
    }

    /// `btrfs_search_slot(trans, root, key, path, 0, 1)` for an item then
    /// changed in place (a root item, a free space info's count, a block
    /// group item): the search copies its path, the leaf is this task's.
    /// Returns whether the item is there.
    pub fn update_item(&mut self, key: &Key) -> bool {
        let (found, path) = self.search_slot(key, SearchMode::Update);
        if found {
            self.mark_written(path.nodes[0]);
        }
        found
    }
}
