//! Tree blocks: a leaf is an array of items (key + data size), a node an
//! array of key pointers. Only sizes are kept; the data itself is not.

use super::{ITEM_HEADER_SIZE, Key};

/// One leaf item: its key and the size of its data in bytes (the 25-byte
/// `btrfs_item` header comes on top). Packed (21 bytes), like [`Key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, packed)]
pub struct Item {
    /// The item's key.
    pub key: Key,
    /// Bytes of item data (e.g. 160 for an inode item).
    pub data_size: u32,
}

impl Item {
    /// Builds an item.
    pub fn new(key: Key, data_size: u32) -> Self {
        Item { key, data_size }
    }
}

/// `struct btrfs_key_ptr`: the first key of a child and its block id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyPtr {
    pub(crate) key: Key,
    pub(crate) child: usize,
}

#[derive(Debug, Clone)]
pub(crate) enum Content {
    Free,
    Leaf(Vec<Item>),
    Node(Vec<KeyPtr>),
}

/// A tree block with the generation (transaction) that last wrote it, and
/// which tasks' caches hold it ([`super::Task`] bits).
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub(crate) generation: u64,
    /// The block's logical address, bytes: a new one at each copy on
    /// write ([`super::refs`]).
    pub(crate) bytenr: u64,
    /// Its extent's ADD ref already ran in this transaction (a commit's
    /// first `btrfs_run_delayed_refs` pass): a copy or free of it now
    /// drops a real extent ([`super::refs`]).
    pub(crate) ref_run: bool,
    /// Tasks whose CPU holds the block's current lines: the last writer's
    /// bit, and the bits of tasks that read it since. 0 for a block no
    /// task has written (cold: its lines come from memory, not counted).
    pub(crate) holders: u8,
    /// The bit of the task that last took the block's lock (the rwsem in
    /// `struct extent_buffer`), 0 if none yet.
    pub(crate) locker: u8,
    /// Written back in its own transaction (`BTRFS_HEADER_FLAG_WRITTEN`,
    /// set by `lock_extent_buffer_for_io`): its next change copies it even
    /// though its generation is the running one (`should_cow_block`).
    pub(crate) written: bool,
    pub(crate) level: usize,
    pub(crate) content: Content,
}

/// `leaf_space_used`: data plus item headers of `items`.
pub(crate) fn space_used(items: &[Item]) -> u32 {
    items.iter().map(|i| i.data_size + ITEM_HEADER_SIZE).sum()
}

static NO_ITEMS: [Item; 0] = [];
static NO_PTRS: [KeyPtr; 0] = [];

impl Block {
    /// Dirty in transaction `transid`: changed in it (its generation), not
    /// written back since, and not freed (a freed block is cleaned,
    /// `btrfs_clear_buffer_dirty`, and never written).
    pub(crate) fn dirty_in(&self, transid: u64) -> bool {
        self.generation == transid && !self.written && !matches!(self.content, Content::Free)
    }

    pub(crate) fn new_leaf(generation: u64) -> Self {
        Block {
            generation,
            bytenr: 0,
            ref_run: false,
            written: false,
            holders: 0,
            locker: 0,
            level: 0,
            content: Content::Leaf(Vec::new()),
        }
    }
    pub(crate) fn new_node(level: usize, ptrs: Vec<KeyPtr>) -> Self {
        Block {
            generation: 0,
            bytenr: 0,
            ref_run: false,
            written: false,
            holders: 0,
            locker: 0,
            level,
            content: Content::Node(ptrs),
        }
    }
    pub(crate) fn leaf_with(items: Vec<Item>) -> Self {
        Block {
            generation: 0,
            bytenr: 0,
            ref_run: false,
            written: false,
            holders: 0,
            locker: 0,
            level: 0,
            content: Content::Leaf(items),
        }
    }
    pub(crate) fn free() -> Self {
        Block {
            generation: 0,
            bytenr: 0,
            ref_run: false,
            written: false,
            holders: 0,
            locker: 0,
            level: 0,
            content: Content::Free,
        }
    }
    pub(crate) fn level(&self) -> usize {
        self.level
    }
    pub(crate) fn is_leaf(&self) -> bool {
        matches!(self.content, Content::Leaf(_))
    }
    pub(crate) fn items(&self) -> &[Item] {
        match &self.content {
            Content::Leaf(v) => v,
            _ => &NO_ITEMS,
        }
    }
    pub(crate) fn items_mut(&mut self) -> &mut Vec<Item> {
        if !matches!(self.content, Content::Leaf(_)) {
            self.content = Content::Leaf(Vec::new());
        }
        match &mut self.content {
            Content::Leaf(v) => v,
            _ => unreachable!("content was just made a leaf"),
        }
    }
    pub(crate) fn ptrs(&self) -> &[KeyPtr] {
        match &self.content {
            Content::Node(v) => v,
            _ => &NO_PTRS,
        }
    }
    pub(crate) fn ptrs_mut(&mut self) -> &mut Vec<KeyPtr> {
        if !matches!(self.content, Content::Node(_)) {
            self.content = Content::Node(Vec::new());
        }
        match &mut self.content {
            Content::Node(v) => v,
            _ => unreachable!("content was just made a node"),
        }
    }
    /// Makes room for `extra` more leaf items, growing the vector by an
    /// eighth at a time rather than doubling it: a leaf holds a few hundred
    /// items and stays near full, so doubling would leave up to half of its
    /// memory unused (the model's memory is mostly leaf items).
    pub(crate) fn reserve_items(&mut self, extra: usize) {
        let v = self.items_mut();
        let need = v.len() + extra;
        if need > v.capacity() {
            v.reserve_exact(need.max(v.len() + v.len() / 8 + 4) - v.len());
        }
    }
    /// Returns the unused capacity of a leaf that lost items (a split or a
    /// push) when more than a quarter of it is free.
    pub(crate) fn shrink_items(&mut self) {
        if let Content::Leaf(v) = &mut self.content
            && v.capacity() > v.len() + v.len() / 4 + 8
        {
            v.shrink_to(v.len() + v.len() / 8 + 4);
        }
    }
    /// Number of items or key pointers (`btrfs_header_nritems`).
    pub(crate) fn nritems(&self) -> usize {
        match &self.content {
            Content::Leaf(v) => v.len(),
            Content::Node(v) => v.len(),
            Content::Free => 0,
        }
    }
    /// First key of the block, if any.
    pub(crate) fn first_key(&self) -> Option<Key> {
        match &self.content {
            Content::Leaf(v) => v.first().map(|i| i.key),
            Content::Node(v) => v.first().map(|p| p.key),
            Content::Free => None,
        }
    }
}
