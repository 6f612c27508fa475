//! A btrfs-like B+tree: keys `(objectid, type, offset)`, leaves of `nodesize`
//! bytes that fill by bytes (101-byte header, 25-byte item headers, item data
//! sized by item type) and internal nodes of 33-byte key pointers.
//!
//! The algorithms follow `fs/btrfs/ctree.c`: `btrfs_search_slot` with its
//! balancing hooks (`split_node` on the way down for inserts, `balance_level`
//! for deletes), `split_leaf` with `push_leaf_right`/`push_leaf_left`, the
//! append special cases and the mid split, and `btrfs_del_items` with the
//! "under a third full" push/merge and the freeing of empty leaves.
//!
//! Every operation counts what it touches in [`TreeStats`]: node and leaf
//! visits and key comparisons in searches, copy-on-write of a block the first
//! time a transaction touches it, `del_items` calls and the bytes they move.

mod block;
mod check;
mod delete;
mod lines;
mod node;
mod refs;
mod search;
mod split;
mod stats;

use block::Block;
pub use block::Item;
pub use lines::Task;
pub use refs::{DelayedRefs, RefExtent};
pub use stats::TreeStats;

use super::writeout::BlockShape;

/// `sizeof(struct btrfs_header)`: bytes at the start of every tree block.
pub const HEADER_SIZE: u32 = 101;
/// `sizeof(struct btrfs_item)`: a leaf item header (key, offset, size).
pub const ITEM_HEADER_SIZE: u32 = 25;
/// `sizeof(struct btrfs_key_ptr)`: one entry of an internal node.
pub const KEY_PTR_SIZE: u32 = 33;
/// `sizeof(struct btrfs_inode_item)`: data of an `INODE_ITEM`.
pub const INODE_ITEM_SIZE: u32 = 160;
/// `sizeof(struct btrfs_inode_ref)` without the name.
pub const INODE_REF_SIZE: u32 = 10;
/// `sizeof(struct btrfs_dir_item)` without the name.
pub const DIR_ITEM_SIZE: u32 = 30;

/// Key type `BTRFS_INODE_ITEM_KEY`.
pub const INODE_ITEM_KEY: u8 = 1;
/// Key type `BTRFS_INODE_REF_KEY`.
pub const INODE_REF_KEY: u8 = 12;
/// Key type `BTRFS_DIR_ITEM_KEY` (offset = name hash).
pub const DIR_ITEM_KEY: u8 = 84;
/// Key type `BTRFS_DIR_INDEX_KEY` (offset = directory sequence number).
pub const DIR_INDEX_KEY: u8 = 96;
/// `BTRFS_ORPHAN_ITEM_KEY`: an orphan item (key `(BTRFS_ORPHAN_OBJECTID,
/// ORPHAN_ITEM, inode)`, no data), kept while an unlinked inode is evicted.
pub const ORPHAN_ITEM_KEY: u8 = 48;
/// `BTRFS_ORPHAN_OBJECTID` (-5 as a u64): the orphan items sort after
/// every inode's items, in the tree's last leaf.
pub const ORPHAN_OBJECTID: u64 = (-5i64) as u64;

/// A btrfs key. Field order gives the btrfs order: objectid, then type,
/// then offset (`btrfs_comp_cpu_keys`). Packed, as `struct btrfs_disk_key`
/// is on disk: 17 bytes instead of 24, and a leaf [`Item`] 21 instead of
/// 32, for the items are most of the directory model's memory. Read fields
/// by value (a reference to a packed field is not allowed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(C, packed)]
pub struct Key {
    /// Object id (inode number for fs-tree items).
    pub objectid: u64,
    /// Item type (`INODE_ITEM_KEY`, `DIR_INDEX_KEY`, ...).
    pub item_type: u8,
    /// Type-specific offset (parent inode, name hash, dir index).
    pub offset: u64,
}

impl Key {
    /// Builds a key from its three parts.
    pub fn new(objectid: u64, item_type: u8, offset: u64) -> Self {
        Key {
            objectid,
            item_type,
            offset,
        }
    }
}

/// Block geometry derived from `nodesize` as `ctree.h` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Tree block size in bytes.
    pub nodesize: u32,
}

impl Geometry {
    /// `BTRFS_LEAF_DATA_SIZE`: bytes after the header (16,283 at 16 KiB).
    pub fn leaf_data_size(&self) -> u32 {
        self.nodesize - HEADER_SIZE
    }
    /// `BTRFS_NODEPTRS_PER_BLOCK`: key pointers per node (493 at 16 KiB).
    pub fn nodeptrs(&self) -> usize {
        (self.leaf_data_size() / KEY_PTR_SIZE) as usize
    }
}

/// A root-to-leaf path as `struct btrfs_path` holds it: `nodes[level]` and
/// `slots[level]`, level 0 being the leaf.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path {
    /// Block id at each level (0 = leaf).
    pub nodes: Vec<usize>,
    /// Slot at each level.
    pub slots: Vec<usize>,
}

/// Whether a search is for an insertion, a deletion or a plain lookup; it
/// selects the balancing hook `setup_nodes_for_search` applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    /// `ins_len > 0`: bytes (data + item headers) about to be inserted.
    Insert(u32),
    /// `ins_len > 0` on an exact match: bytes an existing item will grow.
    Extend(u32),
    /// `ins_len < 0`: items will be deleted.
    Delete,
    /// `ins_len == 0, cow == 1`: an in-place update (e.g. the delayed
    /// inode item write-back).
    Update,
    /// `ins_len == 0, cow == 0`: a read-only lookup.
    Lookup,
}

/// The tree: an arena of blocks, a root, the running transaction id used
/// to decide copy-on-write, and the task whose operations run now.
#[derive(Debug, Clone)]
pub struct Tree {
    geo: Geometry,
    blocks: Vec<Block>,
    free_ids: Vec<usize>,
    root: usize,
    transid: u64,
    stats: TreeStats,
    task: Task,
    /// Set while a search only finds a path for [`Tree::next_leaf_path`]:
    /// nothing is counted or marked as read.
    quiet: bool,
    /// The next new block's logical address, bytes ([`refs`]).
    next_bytenr: u64,
    /// Blocks of earlier transactions this one copied or freed: their
    /// extents' DROP refs ([`Tree::take_delayed_refs`]).
    dropped: Vec<RefExtent>,
}

impl Tree {
    /// An empty tree (one empty root leaf) with blocks of `nodesize` bytes.
    /// `nodesize` must be at least 1024 bytes; the workload validates the
    /// user-facing range.
    pub fn new(nodesize: u32) -> Self {
        Self::new_at(nodesize, 0)
    }

    /// [`Tree::new`] with its root leaf at logical address `bytenr` and
    /// the blocks it allocates after it, one node size apart.
    pub fn new_at(nodesize: u32, bytenr: u64) -> Self {
        let geo = Geometry {
            nodesize: nodesize.max(1024),
        };
        let mut leaf = Block::new_leaf(1);
        leaf.bytenr = bytenr;
        Tree {
            geo,
            blocks: vec![leaf],
            free_ids: Vec::new(),
            root: 0,
            transid: 1,
            stats: TreeStats::default(),
            task: Task::Syscall,
            quiet: false,
            next_bytenr: bytenr.saturating_add(u64::from(geo.nodesize)),
            dropped: Vec::new(),
        }
    }

    /// A tree built from hand-made leaves (for tests and what-ifs): one
    /// root node over `leaves`, or a root leaf if there is one. Items must
    /// be sorted across leaves, and no leaf may be empty unless it is the
    /// only one. The new blocks belong to an already committed transaction.
    pub fn from_leaves(nodesize: u32, leaves: Vec<Vec<Item>>) -> Self {
        let mut tree = Tree::new(nodesize);
        let mut ptrs = Vec::new();
        for items in leaves {
            let key = items.first().map(|i| i.key).unwrap_or(Key::new(0, 0, 0));
            let mut leaf = Block::leaf_with(items);
            leaf.bytenr = tree.take_bytenr();
            tree.blocks.push(leaf);
            ptrs.push(block::KeyPtr {
                key,
                child: tree.blocks.len() - 1,
            });
        }
        match ptrs.len() {
            0 => {}
            1 => tree.root = ptrs[0].child,
            _ => {
                let mut node = Block::new_node(1, ptrs);
                node.bytenr = tree.take_bytenr();
                tree.blocks.push(node);
                tree.root = tree.blocks.len() - 1;
            }
        }
        if tree.root != 0 {
            tree.free_block(0);
        }
        tree.transid = 2;
        tree
    }

    /// The block geometry.
    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    /// Cumulative counters.
    pub fn stats(&self) -> TreeStats {
        self.stats
    }

    /// Ends the running transaction (`btrfs_commit_transaction`): blocks
    /// touched from now on are copied on write again.
    pub fn commit_transaction(&mut self) {
        self.transid += 1;
    }

    /// Writes back every block dirtied in the running transaction, as a
    /// writeback of the btree inode does (`btree_writepages`;
    /// `lock_extent_buffer_for_io` sets `BTRFS_HEADER_FLAG_WRITTEN` on
    /// each). Each is copied again at its next change in this transaction.
    /// Returns the blocks written.
    ///
    /// The writeback runs as [`Task::Flusher`]: it takes each block's lock
    /// and writes the flag into its header, so the next task to lock the
    /// block takes both lines from the flusher's CPU.
    pub fn write_back_dirty(&mut self) -> u64 {
        let mut written = 0;
        let flusher = Task::Flusher.bit();
        let transid = self.transid;
        for b in &mut self.blocks {
            if b.dirty_in(transid) {
                b.written = true;
                b.holders = flusher;
                b.locker = flusher;
                written += 1;
            }
        }
        written
    }

    /// The shapes of the blocks [`Tree::dirty_unwritten`] counts (what a
    /// write-back or the commit writes out now), in block order, for the
    /// write-out's price ([`super::writeout`]).
    pub fn dirty_shapes(&self) -> Vec<BlockShape> {
        let nodesize = self.geo.nodesize;
        self.blocks
            .iter()
            .filter(|b| b.dirty_in(self.transid))
            .map(|b| {
                if b.is_leaf() {
                    let used = HEADER_SIZE + block::space_used(b.items());
                    BlockShape::leaf(b.items(), nodesize.saturating_sub(used))
                } else {
                    let slots = b.ptrs().len() as u32;
                    BlockShape {
                        level: b.level() as u8,
                        slots,
                        free_bytes: nodesize.saturating_sub(HEADER_SIZE + KEY_PTR_SIZE * slots),
                        ..BlockShape::default()
                    }
                }
            })
            .collect()
    }

    /// Blocks dirtied in the running transaction and not written back
    /// since their last change: what the commit writes
    /// (`btrfs_write_and_wait_transaction` of the transaction's dirty
    /// pages; a block freed in it is not written).
    pub fn dirty_unwritten(&self) -> u64 {
        self.blocks.iter().filter(|b| b.dirty_in(self.transid)).count() as u64
    }

    /// Tree height in levels (1 = the root is a leaf).
    pub fn height(&self) -> usize {
        self.blocks[self.root].level() + 1
    }

    /// Number of live leaves.
    pub fn leaf_count(&self) -> usize {
        self.blocks.iter().filter(|b| b.is_leaf()).count()
    }

    /// The items of leaf block `leaf` (e.g. `path.nodes[0]`).
    pub fn leaf_items(&self, leaf: usize) -> &[Item] {
        self.blocks[leaf].items()
    }

    /// Looks `key` up (a counted `Lookup` search); returns the item size.
    pub fn lookup(&mut self, key: &Key) -> Option<u32> {
        let (found, path) = self.search_slot(key, SearchMode::Lookup);
        found.then(|| self.blocks[path.nodes[0]].items()[path.slots[0]].data_size)
    }

    /// `btrfs_insert_empty_items`: inserts a batch of items whose keys are
    /// sorted, absent from the tree and with no existing key between them,
    /// with one search. Returns false (and changes nothing) if the batch is
    /// empty, unsorted, too large for one leaf or collides with a key.
    pub fn insert_items(&mut self, batch: &[Item]) -> bool {
        let Some(first) = batch.first() else {
            return false;
        };
        let total: u32 = batch.iter().map(|i| i.data_size + ITEM_HEADER_SIZE).sum();
        let sorted = batch.windows(2).all(|w| w[0].key < w[1].key);
        if !sorted || total > self.geo.leaf_data_size() {
            return false;
        }
        let (found, path) = self.search_slot(&first.key, SearchMode::Insert(total));
        if found {
            return false;
        }
        let (leaf, slot) = (path.nodes[0], path.slots[0]);
        if let Some(next) = self.blocks[leaf].items().get(slot)
            && batch.last().is_some_and(|l| l.key >= next.key)
        {
            return false;
        }
        self.leaf_insert_at(&path, slot, batch);
        true
    }

    /// Grows an existing item by `extra` bytes (`btrfs_extend_item`, as a
    /// dir item does when a second name hashes to the same key). Returns
    /// false if the key is absent or the item would exceed a leaf.
    pub fn extend_item(&mut self, key: &Key, extra: u32) -> bool {
        let (found, path) = self.search_slot(key, SearchMode::Extend(extra));
        if !found {
            return false;
        }
        let (leaf, slot) = (path.nodes[0], path.slots[0]);
        if self.leaf_free_space(leaf) < extra {
            return false;
        }
        self.leaf_mut(leaf)[slot].data_size += extra;
        self.count_move_after(leaf, slot);
        true
    }

    /// Removes `by` bytes of an item, or the whole item when that is all
    /// of it, after one delete search: `btrfs_lookup_dir_item(.., -1)` then
    /// `btrfs_delete_one_dir_name` (`btrfs_truncate_item` of one name out
    /// of a dir item holding several, else `btrfs_del_item`). Returns
    /// false if the key is absent.
    pub fn delete_or_truncate_item(&mut self, key: &Key, by: u32) -> bool {
        let (found, mut path) = self.search_slot(key, SearchMode::Delete);
        if !found {
            return false;
        }
        let (leaf, slot) = (path.nodes[0], path.slots[0]);
        let item = &mut self.leaf_mut(leaf)[slot];
        if item.data_size <= by {
            self.del_items(&mut path, slot, 1);
            return true;
        }
        item.data_size -= by;
        self.count_move_after(leaf, slot);
        true
    }

    /// A sideways step to the next leaf under the same parent, as a batch
    /// that ran to the end of its leaf would continue (`leaf-walk`
    /// strategy). If `key` is the first item of the leaf right of the one at
    /// `leaf_slot` under `parent` (or now at that slot, if it was freed), returns the path to it, charged as one node visit
    /// (the parent slot already in the path), one leaf visit, one key
    /// comparison and a copy-on-write of the leaf if it is its first touch;
    /// no root-to-leaf search is counted. Otherwise `None`, nothing counted.
    pub fn next_leaf_path(&mut self, parent: usize, leaf_slot: usize, key: &Key) -> Option<Path> {
        let before = self.stats;
        self.quiet = true;
        let (found, path) = self.search_slot(key, SearchMode::Lookup);
        self.quiet = false;
        self.stats = before;
        let pslot = path.slots.get(1).copied();
        let same_parent = path.nodes.get(1) == Some(&parent) && (pslot == Some(leaf_slot) || pslot == Some(leaf_slot + 1));
        if !found || path.slots[0] != 0 || !same_parent {
            return None;
        }
        self.stats.node_visits += 1;
        self.stats.leaf_visits += 1;
        self.stats.key_compares += 1;
        self.visit(parent);
        let foreign = self.visit(path.nodes[0]);
        if !self.cow(path.nodes[0], Some(parent)) && foreign {
            self.stats.foreign_compares += 1;
        }
        Some(path)
    }

    /// Deletes the single item `key` with one delete search and one
    /// `btrfs_del_items`; returns whether it existed.
    pub fn delete_item(&mut self, key: &Key) -> bool {
        self.delete_run(key, 1) > 0
    }

    /// Deletes up to `nr` items starting at `key` that sit in the same leaf
    /// (one search, one `btrfs_del_items`), as `btrfs_truncate_inode_items`
    /// removes an inode's items. Returns how many were deleted.
    pub fn delete_run(&mut self, key: &Key, nr: usize) -> usize {
        let (found, mut path) = self.search_slot(key, SearchMode::Delete);
        if !found || nr == 0 {
            return 0;
        }
        let slot = path.slots[0];
        let n = nr.min(self.blocks[path.nodes[0]].items().len() - slot);
        self.del_items(&mut path, slot, n);
        n
    }

    /// One step of `btrfs_truncate_inode_items`: a delete search for the
    /// first item of `objectid` and one `btrfs_del_items` for the run of its
    /// items in that leaf. Returns how many were deleted (0 = none left)
    /// and whether the run reached the end of its leaf (so more of the
    /// inode's items may sit in the next one).
    pub fn delete_objectid_run(&mut self, objectid: u64) -> (usize, bool) {
        let (_, mut path) = self.search_slot(&Key::new(objectid, 0, 0), SearchMode::Delete);
        if path.slots[0] >= self.blocks[path.nodes[0]].nritems() {
            let Some(next) = self.next_leaf_key(&path) else {
                return (0, false);
            };
            path = self.search_slot(&next, SearchMode::Delete).1;
        }
        let slot = path.slots[0];
        let items = self.blocks[path.nodes[0]].items();
        let n = items
            .get(slot..)
            .unwrap_or(&[])
            .iter()
            .take_while(|i| i.key.objectid == objectid)
            .count();
        let to_end = slot + n == items.len();
        if n > 0 {
            self.del_items(&mut path, slot, n);
        }
        (n, to_end)
    }

    /// Deletes the first item of `objectid` with type `item_type` (one
    /// delete search, stepping to the next leaf as `btrfs_next_leaf` would,
    /// and one `btrfs_del_items`), as `__btrfs_update_delayed_inode` does
    /// for an INODE_REF that is not next to its inode item. Returns whether
    /// one was deleted.
    pub fn delete_first_of_type(&mut self, objectid: u64, item_type: u8) -> bool {
        let (_, mut path) = self.search_slot(&Key::new(objectid, item_type, 0), SearchMode::Delete);
        if path.slots[0] >= self.blocks[path.nodes[0]].nritems() {
            let Some(next) = self.next_leaf_key(&path) else {
                return false;
            };
            path = self.search_slot(&next, SearchMode::Delete).1;
        }
        let slot = path.slots[0];
        let hit = self.blocks[path.nodes[0]]
            .items()
            .get(slot)
            .is_some_and(|i| i.key.objectid == objectid && i.key.item_type == item_type);
        if hit {
            self.del_items(&mut path, slot, 1);
        }
        hit
    }

    /// The first key of the leaf after the path's leaf (what
    /// `btrfs_next_leaf` searches for), if there is one.
    fn next_leaf_key(&self, path: &Path) -> Option<Key> {
        (1..path.nodes.len()).find_map(|l| self.blocks[path.nodes[l]].ptrs().get(path.slots[l] + 1).map(|p| p.key))
    }

    /// Counts the memmove of the data of items after `slot` (item resize).
    fn count_move_after(&mut self, leaf: usize, slot: usize) {
        let moved: u32 = self.blocks[leaf].items()[slot + 1..].iter().map(|i| i.data_size).sum();
        self.stats.bytes_moved += u64::from(moved);
    }

    /// Bytes used in a leaf (`leaf_space_used` over all items).
    fn leaf_used(&self, leaf: usize) -> u32 {
        block::space_used(self.blocks[leaf].items())
    }

    /// `btrfs_leaf_free_space`.
    fn leaf_free_space(&self, leaf: usize) -> u32 {
        self.geo.leaf_data_size().saturating_sub(self.leaf_used(leaf))
    }

    /// Allocates a block (`btrfs_alloc_tree_block`); a new block is dirty in
    /// this transaction and counts as one copy-on-write.
    fn alloc_block(&mut self, block: Block) -> usize {
        self.stats.cow_blocks += 1;
        let mut block = block;
        block.generation = self.transid;
        block.bytenr = self.take_bytenr();
        let id = match self.free_ids.pop() {
            Some(id) => {
                self.blocks[id] = block;
                id
            }
            None => {
                self.blocks.push(block);
                self.blocks.len() - 1
            }
        };
        self.mark_written(id);
        id
    }

    /// Frees a block (`btrfs_free_tree_block`): a block of an earlier
    /// transaction, or one whose ADD already ran in this one, leaves its
    /// extent's DROP ref; another of this transaction cancels its own ADD
    /// (`check_ref_cleanup`).
    fn free_block(&mut self, id: usize) {
        self.drop_if_old(id);
        self.blocks[id] = Block::free();
        self.free_ids.push(id);
    }

    /// `btrfs_cow_block` as seen by the counts: the first touch of a block in
    /// a transaction copies it, and so does the first touch after the block
    /// was written back in this transaction (`should_cow_block` in
    /// fs/btrfs/ctree.c: `BTRFS_HEADER_FLAG_WRITTEN`). The copy is dirty,
    /// not yet written, and in the running task's cache only, and so is
    /// `parent`, whose block pointer now names the copy
    /// (`btrfs_force_cow_block`). Returns whether it copied.
    fn cow(&mut self, id: usize, parent: Option<usize>) -> bool {
        let b = &self.blocks[id];
        let copy = b.generation != self.transid || b.written;
        if copy {
            self.drop_if_old(id);
            let bytenr = self.take_bytenr();
            let b = &mut self.blocks[id];
            b.bytenr = bytenr;
            b.ref_run = false;
            b.generation = self.transid;
            b.written = false;
            self.stats.cow_blocks += 1;
            self.mark_written(id);
            if let Some(p) = parent {
                self.mark_written(p);
            }
        }
        copy
    }

    /// Inserts `batch` at `slot` of the path's leaf (room already made) and
    /// fixes the low keys if it went to slot 0.
    fn leaf_insert_at(&mut self, path: &Path, slot: usize, batch: &[Item]) {
        let leaf = path.nodes[0];
        let moved: u32 = self.blocks[leaf].items()[slot..].iter().map(|i| i.data_size).sum();
        let headers = (self.blocks[leaf].items().len() - slot) as u32 * ITEM_HEADER_SIZE;
        self.stats.bytes_moved += u64::from(moved + headers);
        self.blocks[leaf].reserve_items(batch.len());
        self.leaf_mut(leaf).splice(slot..slot, batch.iter().copied());
        if slot == 0 {
            self.fixup_low_keys(path, batch[0].key, 1);
        }
    }
}

#[cfg(test)]
mod tests;
