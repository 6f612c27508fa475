//! The extent tree, the free space tree and the root tree of the lab's
//! filesystem, and what a commit does to them: it runs the delayed refs
//! the fs tree's copies on write, allocations and frees left
//! ([`crate::kernel::btrfs::ctree::DelayedRefs`]), writes the changed
//! roots' items, then runs the refs those three trees' own copies left,
//! until none is left. Counted from Linux 6.18.2:
//!
//! - `__btrfs_run_delayed_refs` (fs/btrfs/extent-tree.c) takes the heads
//!   in rising address order (`btrfs_select_ref_head`), one ref each here;
//! - an ADD of a new block, `alloc_reserved_tree_block`: the block's
//!   `METADATA_ITEM` inserted into the extent tree
//!   (`btrfs_insert_empty_item`, [`METADATA_ITEM_SIZE`] bytes: skinny
//!   metadata, one inline `TREE_BLOCK_REF`), then `alloc_reserved_extent`:
//!   `btrfs_remove_from_free_space_tree` and `btrfs_update_block_group`;
//! - a DROP of an old block, `__btrfs_free_extent`: a delete search for
//!   its item (`lookup_extent_backref`), `btrfs_del_items` of it, then
//!   `do_free_extent_accounting`: `btrfs_add_to_free_space_tree` and
//!   `btrfs_update_block_group` (which pins the extent);
//! - the free space tree (fs/btrfs/free-space-tree.c), in extents (no
//!   bitmaps: [`RefRunStats::bitmap_crossings`] counts where the kernel
//!   would convert): `remove_free_space_extent` is a delete search for the
//!   extent holding the range, its deletion and an insertion for each
//!   leftover end; `add_free_space_extent` a delete search on each side
//!   (`btrfs_search_prev_slot`) whose adjoining extent is deleted and
//!   merged, then the insertion; both then `update_free_space_extent_count`
//!   (a search for the group's `FREE_SPACE_INFO`, changed in place) unless
//!   the count is unchanged;
//! - `commit_fs_roots` writes the fs tree's root item when its root moved,
//!   `commit_cowonly_roots` (fs/btrfs/transaction.c) the dirty block
//!   group's item (`btrfs_write_dirty_block_groups`) and the extent and
//!   free space trees' root items (`update_cowonly_root`), each an update
//!   search in its tree ([`Tree::update_item`]); the three trees' own
//!   copies leave refs that run in the same loop.
//!
//! The trees start as `mkfs.btrfs` (btrfs-progs v6.2) left the lab's
//! 1 GiB image after the lab's preparation (`mkdir testdir`, `syncfs`), on
//! 6.18.44 at 16 KiB nodes (`btrfs inspect-internal dump-tree`, session
//! 72): [`Layout`]. Other node sizes keep the same blocks in the same
//! order, one node size apart (not checked live). Every tree is a single
//! leaf there; the trees here split as the fs tree does. Past the
//! metadata block group the allocator reaches a new one
//! (`ExtentTrees::group_of`).
//!
//! Not counted: the unpinning of the freed extents at the commit's end
//! (`btrfs_finish_extent_commit`: the free-space cache, not these trees),
//! the block group's free-space cache in memory, squota and qgroups (off).

use crate::kernel::btrfs::ctree::{DelayedRefs, Item, Key, RefExtent, Task, Tree, TreeStats};
use crate::kernel::btrfs::writeout::BlockShape;

/// `BTRFS_METADATA_ITEM_KEY`: a tree block's extent item (skinny metadata).
pub const METADATA_ITEM_KEY: u8 = 169;
/// `BTRFS_BLOCK_GROUP_ITEM_KEY`.
pub const BLOCK_GROUP_ITEM_KEY: u8 = 192;
/// `BTRFS_FREE_SPACE_INFO_KEY`: a block group's free-space header.
pub const FREE_SPACE_INFO_KEY: u8 = 198;
/// `BTRFS_FREE_SPACE_EXTENT_KEY`: one free extent (offset = its length).
pub const FREE_SPACE_EXTENT_KEY: u8 = 199;
/// `BTRFS_ROOT_ITEM_KEY`.
pub const ROOT_ITEM_KEY: u8 = 132;
/// `BTRFS_DIR_ITEM_KEY`.
const DIR_ITEM_KEY: u8 = 84;

/// A tree block's extent item: `struct btrfs_extent_item` (24 bytes) and
/// one inline `btrfs_extent_inline_ref` of type `TREE_BLOCK_REF` (its
/// type and root, 9 bytes).
pub const METADATA_ITEM_SIZE: u32 = 24 + 9;
/// `sizeof(struct btrfs_block_group_item)`.
pub const BLOCK_GROUP_ITEM_SIZE: u32 = 24;
/// `sizeof(struct btrfs_free_space_info)`.
pub const FREE_SPACE_INFO_SIZE: u32 = 8;
/// `sizeof(struct btrfs_root_item)`.
pub const ROOT_ITEM_SIZE: u32 = 439;

/// `BTRFS_EXTENT_TREE_OBJECTID`.
const EXTENT_TREE: u64 = 2;
/// `BTRFS_FS_TREE_OBJECTID`.
const FS_TREE: u64 = 5;
/// `BTRFS_FREE_SPACE_TREE_OBJECTID`.
const FREE_SPACE_TREE: u64 = 10;

/// What running a commit's delayed refs did (module header).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefRunStats {
    /// Ref heads run (`run_delayed_tree_ref` once each).
    pub heads: u64,
    /// Of them, ADDs of new blocks (`alloc_reserved_tree_block`).
    pub adds: u64,
    /// DROPs of old ones (`__btrfs_free_extent`).
    pub drops: u64,
    /// `btrfs_add_to_free_space_tree` / `btrfs_remove_from_free_space_tree`
    /// calls.
    pub free_space_calls: u64,
    /// Items inserted by `btrfs_insert_empty_item` (extent items and free
    /// extents).
    pub inserts: u64,
    /// Root items and block group items written after an update search
    /// (`btrfs_update_root`, `update_block_group_item`: each with a path
    /// of its own).
    pub item_writes: u64,
    /// Free space infos' extent counts changed after an update search
    /// (`update_free_space_extent_count`, on the caller's path).
    pub info_updates: u64,
    /// Changes of a group's free extents that left them above its bitmap
    /// threshold, where the kernel would convert the group to bitmaps
    /// (`update_free_space_extent_count`; not modelled: the twin reports
    /// them, `free_space_bitmaps`).
    pub bitmap_crossings: u64,
    /// Metadata block groups the allocator reached past the last one
    /// (`ExtentTrees::group_of`).
    pub groups_added: u64,
    /// Ranges the free space tree did not hold as it should (a freed
    /// extent already free, an allocated one not free): 0 unless the
    /// model is inconsistent.
    pub unmatched: u64,
    /// The three trees' searches, item edits and copies.
    pub tree: TreeStats,
}

impl RefRunStats {
    /// Field-wise difference `self - earlier`.
    pub fn since(&self, earlier: &RefRunStats) -> RefRunStats {
        RefRunStats {
            heads: self.heads - earlier.heads,
            adds: self.adds - earlier.adds,
            drops: self.drops - earlier.drops,
            free_space_calls: self.free_space_calls - earlier.free_space_calls,
            inserts: self.inserts - earlier.inserts,
            item_writes: self.item_writes - earlier.item_writes,
            info_updates: self.info_updates - earlier.info_updates,
            bitmap_crossings: self.bitmap_crossings - earlier.bitmap_crossings,
            groups_added: self.groups_added - earlier.groups_added,
            unmatched: self.unmatched - earlier.unmatched,
            tree: self.tree.since(&earlier.tree),
        }
    }
}

/// The three trees and the counts so far.
#[derive(Debug, Clone)]
pub struct ExtentTrees {
    /// The extent tree: block groups' and tree blocks' items.
    pub extent: Tree,
    /// The free space tree: per block group its info and free extents.
    pub free_space: Tree,
    /// The root tree: the other trees' root items.
    pub root: Tree,
    layout: Layout,
    /// The metadata block groups: the layout's, then each one the
    /// allocator has reached since (`ExtentTrees::group_of`).
    groups: Vec<BlockGroup>,
    /// Each metadata group's free extents now (its info's count).
    free_extents: Vec<u64>,
    /// Groups whose used bytes changed since their item was written
    /// (`btrfs_update_block_group` put them on the dirty list).
    dirty_groups: std::collections::BTreeSet<usize>,
    /// The extent and free space trees' roots as their root items hold
    /// them (written by `update_cowonly_root` when they move).
    root_items: [u64; 2],
    /// The allocator's next address while a commit runs (the fs tree's,
    /// handed on to each tree as it allocates).
    cursor: u64,
    counts: RefRunStats,
}

impl ExtentTrees {
    /// The trees as the lab's preparation leaves them ([`Layout::lab`]),
    /// at node size `nodesize`; `fs_tree` is the fs tree, whose blocks
    /// have their extent items (its leaf at [`Layout::fs_leaf`]).
    pub fn new(nodesize: u32, fs_tree: &Tree) -> Self {
        let layout = Layout::lab(nodesize);
        let [extent, free_space, root] = layout.mkfs_trees(nodesize, fs_tree);
        ExtentTrees {
            root_items: [extent.root_bytenr(), free_space.root_bytenr()],
            extent,
            free_space,
            root,
            free_extents: vec![layout.free.len() as u64],
            groups: vec![layout.metadata],
            dirty_groups: std::collections::BTreeSet::new(),
            cursor: layout.cursor(),
            layout,
            counts: RefRunStats::default(),
        }
    }

    /// The layout the trees started from.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The counts so far.
    pub fn counts(&self) -> RefRunStats {
        let mut c = self.counts;
        c.tree = self.extent.stats().plus(&self.free_space.stats()).plus(&self.root.stats());
        c
    }

    /// The metadata groups' free extents now, by group.
    pub fn free_extents(&self) -> &[u64] {
        &self.free_extents
    }

    /// The metadata block groups so far.
    pub fn groups(&self) -> &[BlockGroup] {
        &self.groups
    }

    /// `btrfs_run_delayed_refs(trans, 0)` at a commit's start, as `task`:
    /// the heads `fs` queued so far; then `btrfs_start_dirty_block_groups`:
    /// the dirty groups' items written and the heads ready then run (the
    /// three trees' own, from the first pass), once more if that dirtied a
    /// group again. The trees share `fs`'s allocator.
    pub fn run_queued(&mut self, fs: &mut Tree, task: Task) {
        self.as_task(task, |t| {
            t.cursor = fs.next_bytenr();
            t.run(&fs.take_delayed_refs());
            for _ in 0..2 {
                if t.dirty_groups.is_empty() {
                    break;
                }
                t.write_group_items();
                let own = t.take_own_refs();
                t.run(&own);
            }
            fs.set_next_bytenr(t.cursor);
        });
    }

    /// The rest of the commit's delayed refs (module header), after its
    /// delayed items, as `task`: `btrfs_run_delayed_refs(trans, U64_MAX)`
    /// of what `fs` queued since [`ExtentTrees::run_queued`], the fs
    /// tree's root item when its root moved (`commit_fs_roots`), then
    /// `commit_cowonly_roots` until nothing is left: the extent and free
    /// space trees' root items where their roots moved since the items
    /// were written, the three trees' own heads, the dirty groups' items
    /// and the heads those leave. The caller then ends the transaction of
    /// the three ([`ExtentTrees::end_transaction`]) and of `fs`.
    pub fn commit(&mut self, fs: &mut Tree, task: Task) {
        self.as_task(task, |t| {
            t.cursor = fs.next_bytenr();
            t.run(&fs.take_delayed_refs());
            if fs.root_changed() {
                t.update_root_item(FS_TREE);
            }
            loop {
                let roots = [t.extent.root_bytenr(), t.free_space.root_bytenr()];
                for (i, id) in [EXTENT_TREE, FREE_SPACE_TREE].into_iter().enumerate() {
                    if roots[i] != t.root_items[i] {
                        t.root_items[i] = roots[i];
                        t.update_root_item(id);
                    }
                }
                let own = t.take_own_refs();
                t.run(&own);
                while !t.dirty_groups.is_empty() {
                    t.write_group_items();
                    let own = t.take_own_refs();
                    t.run(&own);
                }
                if [t.extent.root_bytenr(), t.free_space.root_bytenr()] == t.root_items {
                    break;
                }
            }
            fs.set_next_bytenr(t.cursor);
        });
    }

    /// Runs `f` with the three trees' lines counted as `task`'s.
    fn as_task(&mut self, task: Task, f: impl FnOnce(&mut Self)) {
        let was = [self.extent.set_task(task), self.free_space.set_task(task), self.root.set_task(task)];
        f(self);
        for (t, was) in [&mut self.extent, &mut self.free_space, &mut self.root].into_iter().zip(was) {
            t.set_task(was);
        }
    }

    /// `update_block_group_item` of each dirty group (its used bytes),
    /// which leaves the dirty list.
    fn write_group_items(&mut self) {
        for i in std::mem::take(&mut self.dirty_groups) {
            let g = self.groups[i];
            let found = self.on(Which::Extent, |t| t.update_item(&Key::new(g.start, BLOCK_GROUP_ITEM_KEY, g.length)));
            self.counts.item_writes += u64::from(found);
        }
    }

    /// The metadata group holding `bytenr`; past the last group, the
    /// groups the allocator reached first, each a new chunk right after
    /// the last (`find_next_chunk`) of the first group's length, its items
    /// added as `btrfs_create_pending_block_groups` adds them: the block
    /// group item in the extent tree (`insert_block_group_item`), the free
    /// space info and one free extent of the whole group in the free space
    /// tree (`add_block_group_free_space`). `None` below the first group.
    fn group_of(&mut self, bytenr: u64) -> Option<usize> {
        while self.groups.last().is_some_and(|g| bytenr >= g.end()) {
            let last = self.groups[self.groups.len() - 1];
            let g = BlockGroup {
                start: last.end(),
                length: self.groups[0].length,
            };
            self.groups.push(g);
            self.free_extents.push(1);
            self.counts.groups_added += 1;
            let group_item = Item::new(Key::new(g.start, BLOCK_GROUP_ITEM_KEY, g.length), BLOCK_GROUP_ITEM_SIZE);
            let ok = self.on(Which::Extent, |t| t.insert_items(&[group_item]));
            self.counts.inserts += u64::from(ok);
            let info = Item::new(Key::new(g.start, FREE_SPACE_INFO_KEY, g.length), FREE_SPACE_INFO_SIZE);
            let ok = self.on(Which::FreeSpace, |t| t.insert_items(&[info, extent_item(g.start, g.length)]));
            self.counts.inserts += 2 * u64::from(ok);
        }
        self.groups.iter().position(|g| (g.start..g.end()).contains(&bytenr))
    }

    /// Ends the three trees' transaction, with the fs tree's (after the
    /// commit has taken their [`ExtentTrees::dirty_shapes`]).
    pub fn end_transaction(&mut self) {
        for t in [&mut self.extent, &mut self.free_space, &mut self.root] {
            t.commit_transaction();
        }
    }

    /// The three trees' dirty blocks' shapes (what the commit writes of
    /// them), extent, free space, root.
    pub fn dirty_shapes(&self) -> Vec<BlockShape> {
        [&self.extent, &self.free_space, &self.root]
            .iter()
            .flat_map(|t| t.dirty_shapes())
            .collect()
    }

    /// Blocks the three trees allocated so far (copies and splits).
    pub fn blocks_allocated(&self) -> u64 {
        [&self.extent, &self.free_space, &self.root]
            .iter()
            .map(|t| t.stats().cow_blocks)
            .sum()
    }

    /// The three trees' own heads, in address order across them (one
    /// queue in the kernel).
    fn take_own_refs(&mut self) -> DelayedRefs {
        let mut all = DelayedRefs::default();
        for t in [&mut self.extent, &mut self.free_space, &mut self.root] {
            let r = t.take_delayed_refs();
            all.adds.extend(r.adds);
            all.drops.extend(r.drops);
        }
        all.adds.sort_unstable();
        all.drops.sort_unstable();
        all
    }

    /// Runs `refs`' heads in address order.
    fn run(&mut self, refs: &DelayedRefs) {
        let adds = refs.adds.iter().map(|e| (*e, true));
        let mut heads: Vec<(RefExtent, bool)> = adds.chain(refs.drops.iter().map(|e| (*e, false))).collect();
        heads.sort_unstable();
        for (e, add) in heads {
            self.counts.heads += 1;
            let key = Key::new(e.bytenr, METADATA_ITEM_KEY, u64::from(e.level));
            if add {
                self.counts.adds += 1;
                let ok = self.on(Which::Extent, |t| t.insert_items(&[Item::new(key, METADATA_ITEM_SIZE)]));
                self.counts.inserts += u64::from(ok);
                self.counts.unmatched += u64::from(!ok);
                self.remove_free(e.bytenr);
            } else {
                self.counts.drops += 1;
                let ok = self.on(Which::Extent, |t| t.delete_item(&key));
                self.counts.unmatched += u64::from(!ok);
                self.add_free(e.bytenr);
            }
        }
    }

    /// `btrfs_update_root` of tree `id`'s root item in the root tree.
    fn update_root_item(&mut self, id: u64) {
        let found = self.on(Which::Root, |t| t.update_item(&Key::new(id, ROOT_ITEM_KEY, 0)));
        self.counts.item_writes += u64::from(found);
    }

    /// Runs `f` on one of the three trees, its allocator at the shared
    /// cursor, which then moves past what it took.
    fn on<R>(&mut self, which: Which, f: impl FnOnce(&mut Tree) -> R) -> R {
        let t = match which {
            Which::Extent => &mut self.extent,
            Which::FreeSpace => &mut self.free_space,
            Which::Root => &mut self.root,
        };
        t.set_next_bytenr(self.cursor);
        let r = f(t);
        self.cursor = t.next_bytenr();
        r
    }

    /// `remove_free_space_extent` of the block at `start` (module header),
    /// and its group's used bytes (`btrfs_update_block_group`).
    fn remove_free(&mut self, start: u64) {
        self.counts.free_space_calls += 1;
        let Some(gi) = self.group_of(start) else {
            self.counts.unmatched += 1;
            return;
        };
        self.dirty_groups.insert(gi);
        let end = start + self.node_bytes();
        let holds = |k: &Key| k.item_type == FREE_SPACE_EXTENT_KEY && k.objectid <= start && end <= k.objectid + k.offset;
        let prev = self.on(Which::FreeSpace, |t| t.take_prev(&Key::new(start, u8::MAX, u64::MAX), holds));
        let Some(found) = prev.filter(holds) else {
            self.counts.unmatched += 1;
            return;
        };
        let mut new_extents: i64 = -1;
        for (s, l) in [(found.objectid, start - found.objectid), (end, found.objectid + found.offset - end)] {
            if l > 0 {
                self.insert_free(s, l);
                new_extents += 1;
            }
        }
        self.count_extents(gi, new_extents);
    }

    /// `add_free_space_extent` of the block at `start` (module header),
    /// and its group's used bytes.
    fn add_free(&mut self, start: u64) {
        self.counts.free_space_calls += 1;
        let Some(gi) = self.group_of(start) else {
            self.counts.unmatched += 1;
            return;
        };
        self.dirty_groups.insert(gi);
        let g = self.groups[gi];
        let end = start + self.node_bytes();
        let (mut new_start, mut len, mut new_extents) = (start, end - start, 1i64);
        if start != g.start {
            let left = |k: &Key| k.item_type == FREE_SPACE_EXTENT_KEY && k.objectid + k.offset == start;
            let prev = self.on(Which::FreeSpace, |t| t.take_prev(&Key::new(start - 1, u8::MAX, u64::MAX), left));
            if let Some(k) = prev.filter(left) {
                (new_start, len, new_extents) = (k.objectid, len + k.offset, new_extents - 1);
            }
        }
        if end != g.end() {
            let right = |k: &Key| k.item_type == FREE_SPACE_EXTENT_KEY && k.objectid == end;
            let prev = self.on(Which::FreeSpace, |t| t.take_prev(&Key::new(end, u8::MAX, u64::MAX), right));
            if let Some(k) = prev.filter(right) {
                (len, new_extents) = (len + k.offset, new_extents - 1);
            }
        }
        if !self.insert_free(new_start, len) {
            self.counts.unmatched += 1;
        }
        self.count_extents(gi, new_extents);
    }

    /// `btrfs_insert_empty_item` of a free extent; false if it was there.
    fn insert_free(&mut self, start: u64, len: u64) -> bool {
        let ok = self.on(Which::FreeSpace, |t| t.insert_items(&[extent_item(start, len)]));
        self.counts.inserts += u64::from(ok);
        ok
    }

    /// `update_free_space_extent_count` of group `gi`: nothing for no
    /// change, else the info's update search and the bitmap threshold's
    /// test (each change that leaves the count above it is one the kernel
    /// would convert at).
    fn count_extents(&mut self, gi: usize, new_extents: i64) {
        if new_extents == 0 {
            return;
        }
        let g = self.groups[gi];
        let found = self.on(Which::FreeSpace, |t| {
            t.update_item(&Key::new(g.start, FREE_SPACE_INFO_KEY, g.length))
        });
        self.counts.info_updates += u64::from(found);
        let n = self.free_extents[gi].saturating_add_signed(new_extents);
        self.free_extents[gi] = n;
        if n > g.bitmap_high_thresh() {
            self.counts.bitmap_crossings += 1;
        }
    }

    fn node_bytes(&self) -> u64 {
        u64::from(self.extent.geometry().nodesize)
    }
}

/// One of the three trees.
#[derive(Debug, Clone, Copy)]
enum Which {
    Extent,
    FreeSpace,
    Root,
}

/// A tree block's extent item.
fn metadata_item(e: RefExtent) -> Item {
    Item::new(Key::new(e.bytenr, METADATA_ITEM_KEY, u64::from(e.level)), METADATA_ITEM_SIZE)
}

/// A free extent's item (no data: its length is the key's offset).
fn extent_item(start: u64, len: u64) -> Item {
    Item::new(Key::new(start, FREE_SPACE_EXTENT_KEY, len), 0)
}

mod layout;
pub use layout::{BlockGroup, Layout};

#[cfg(test)]
mod tests;
