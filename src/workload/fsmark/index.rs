//! The subvolume root's open-inode index, either kind, as btrfs calls it:
//! the operations return the lines they touched, which the caller prices.

use std::collections::VecDeque;

use super::params::IndexKind;
use crate::kernel::index::rbtree::{NodeId, RbLayout, RbTree};
use crate::kernel::index::xarray::{FailPlan, XArray, XaError};
use crate::kernel::mm::touch::Touch;

/// Byte address of `struct btrfs_root`'s index fields (`inode_tree` /
/// `inodes`); the lock word lives on its own line in the coherence model.
pub const ROOT_ADDR: u64 = 0x1000;
/// Base address of the `radix_tree_node` slab: below the inode slabs
/// (from 2^40 up, one 2^36-byte span per thread), so no thread count
/// reaches it, and low enough that every line's tag fits the cache
/// model's 32-bit fast path (line addresses below 2^38). Nodes for the
/// largest run (10^8 inodes, about 1.6M nodes of 584 B) take under 2^30
/// bytes of its 2^39.
pub const XA_NODE_BASE: u64 = 1 << 39;

/// One open inode as the eviction queue remembers it, in 16 bytes (10^7
/// open inodes hold 160 MB of queue): how the index finds it (its
/// rb-tree node, as `inode_tree_del` is given the inode; its inode number
/// in the xarray) and the address of its `btrfs_inode` object, which
/// also says which per-CPU slab it came from.
#[derive(Clone, Copy, Debug)]
pub struct Open {
    /// rb-tree: the node's arena index ([`NO_NODE`] if the insert found
    /// the key, which unique inode numbers rule out); xarray: the inode
    /// number.
    handle: u64,
    /// Address of the `btrfs_inode` object.
    pub obj: u64,
}

/// [`Open::handle`] of an rb-tree inode without a node.
const NO_NODE: u64 = u64::MAX;

/// The eviction queue, oldest first, as compact as the index allows: an
/// rb-tree inode is its node's arena index (4 bytes; the node holds the
/// key and the object's address), an xarray inode its [`Open`] (16
/// bytes). 10^7 open inodes hold 40 MB or 160 MB.
#[derive(Debug)]
pub enum OpenQueue {
    /// Nodes of `inode_tree`.
    Rb(VecDeque<u32>),
    /// Entries of `inodes`.
    Xa(VecDeque<Open>),
}

impl OpenQueue {
    /// An empty queue for `kind`.
    pub fn new(kind: IndexKind) -> Self {
        match kind {
            IndexKind::Rbtree => OpenQueue::Rb(VecDeque::new()),
            IndexKind::Xarray => OpenQueue::Xa(VecDeque::new()),
        }
    }

    /// Room for `n` more entries.
    pub fn reserve_exact(&mut self, n: usize) {
        match self {
            OpenQueue::Rb(q) => q.reserve_exact(n),
            OpenQueue::Xa(q) => q.reserve_exact(n),
        }
    }

    /// Appends the newest open inode. An rb-tree inode without a node
    /// (an insert that found its key, which unique inode numbers rule
    /// out) is not queued.
    pub fn push_back(&mut self, o: Open) {
        match self {
            OpenQueue::Rb(q) => {
                if let Ok(i) = u32::try_from(o.handle) {
                    q.push_back(i);
                }
            }
            OpenQueue::Xa(q) => q.push_back(o),
        }
    }

    /// Takes the oldest open inode, with its object's address read from
    /// `index` (rb-tree) while its node is still there.
    pub fn pop_front(&mut self, index: &InodeIndex) -> Option<Open> {
        match (self, index) {
            (OpenQueue::Rb(q), InodeIndex::Rb(r)) => q.pop_front().map(|i| Open {
                handle: u64::from(i),
                obj: r.object(NodeId::from_index(i)),
            }),
            (OpenQueue::Xa(q), _) => q.pop_front(),
            (OpenQueue::Rb(_), InodeIndex::Xa(_)) => None,
        }
    }
}

/// The index.
#[derive(Debug)]
pub enum InodeIndex {
    /// `inode_tree`.
    Rb(RbTree),
    /// `inodes`.
    Xa(XArray),
}

impl InodeIndex {
    /// An empty index of `kind`; `enomem_every` > 0 fails every n-th xarray
    /// node allocation.
    pub fn new(kind: IndexKind, rb_node_offset: u64, key_offset: u64, enomem_every: u64) -> Self {
        match kind {
            IndexKind::Rbtree => InodeIndex::Rb(RbTree::new(
                RbLayout {
                    node_offset: rb_node_offset,
                    key_offset,
                },
                ROOT_ADDR,
            )),
            IndexKind::Xarray => {
                let mut x = XArray::new(ROOT_ADDR, XA_NODE_BASE);
                if enomem_every > 0 {
                    x.set_fail_plan(FailPlan::EveryNth(enomem_every));
                }
                InodeIndex::Xa(x)
            }
        }
    }

    /// `inode_tree_add()`'s walk and link (rb-tree); returns the node and
    /// the levels walked.
    pub fn rb_insert(&mut self, ino: u64, obj: u64, t: &mut Vec<Touch>) -> (Option<NodeId>, u32) {
        match self {
            InodeIndex::Rb(r) => {
                let id = r.insert(ino, obj, t).ok();
                (id, r.last_walk_depth())
            }
            InodeIndex::Xa(_) => (None, 0),
        }
    }

    /// [`InodeIndex::rb_insert`] for an untimed prefill of rising inode
    /// numbers: no descent is recorded, and none is made when the last
    /// one appended is still the largest ([`RbTree::append_unrecorded`]).
    ///
    /// [`RbTree::append_unrecorded`]: crate::kernel::index::rbtree::RbTree::append_unrecorded
    pub fn rb_append_unrecorded(&mut self, ino: u64, obj: u64, t: &mut Vec<Touch>) -> Option<NodeId> {
        match self {
            InodeIndex::Rb(r) => r.append_unrecorded(ino, obj, t).ok(),
            InodeIndex::Xa(_) => None,
        }
    }

    /// `xa_reserve()` then `xa_store()` (xarray) for an untimed prefill of
    /// rising inode numbers: the same index, nothing recorded
    /// ([`XArray::append_unrecorded`]).
    pub fn xa_append_unrecorded(&mut self, ino: u64, obj: u64, scratch: &mut Vec<Touch>) -> Result<(), XaError> {
        match self {
            InodeIndex::Xa(x) => x.append_unrecorded(ino, obj, scratch),
            InodeIndex::Rb(_) => Ok(()),
        }
    }

    /// `xa_reserve()` (xarray).
    pub fn xa_reserve(&mut self, ino: u64, t: &mut Vec<Touch>) -> Result<(), XaError> {
        match self {
            InodeIndex::Xa(x) => x.reserve(ino, t),
            InodeIndex::Rb(_) => Ok(()),
        }
    }

    /// `xa_store()` after a reserve (never allocates); returns the levels.
    pub fn xa_store(&mut self, ino: u64, obj: u64, t: &mut Vec<Touch>) -> u32 {
        match self {
            InodeIndex::Xa(x) => {
                // After xa_reserve the slot exists, so no allocation can fail.
                let _ = x.store(ino, obj, t);
                x.height()
            }
            InodeIndex::Rb(_) => 0,
        }
    }

    /// The eviction queue's entry for inode `ino` at `obj`, just added
    /// (`node`: its rb-tree node).
    pub fn open_entry(&self, ino: u64, obj: u64, node: Option<NodeId>) -> Open {
        let handle = match self {
            InodeIndex::Rb(_) => node.map_or(NO_NODE, |n| u64::from(n.index())),
            InodeIndex::Xa(_) => ino,
        };
        Open { handle, obj }
    }

    /// Reserves room for `n` more inodes where the index keeps one node
    /// each (the rb-tree), so a prefill of known size does not reallocate.
    pub fn reserve(&mut self, n: usize) {
        if let InodeIndex::Rb(r) = self {
            r.reserve(n);
        }
    }

    /// Removes an open inode (`inode_tree_del` / `xa_erase`).
    pub fn erase(&mut self, o: &Open, t: &mut Vec<Touch>) {
        match self {
            InodeIndex::Rb(r) => {
                if let Ok(i) = u32::try_from(o.handle) {
                    r.erase_node(NodeId::from_index(i), t);
                }
            }
            InodeIndex::Xa(x) => {
                x.erase(o.handle, t);
            }
        }
    }

    /// Drops a reservation left by a create that failed after `xa_reserve`.
    pub fn release(&mut self, ino: u64, t: &mut Vec<Touch>) {
        if let InodeIndex::Xa(x) = self {
            x.erase(ino, t);
        }
    }

    /// Height now (rb-tree longest path, xarray levels) and the mean node
    /// depth (rb-tree), or the levels (xarray): the rb-tree's two figures
    /// from one walk of every node ([`RbTree::depth_stats`]; at 10^7
    /// prefilled inodes a walk was 8% of a run).
    pub fn shape(&self) -> (u32, f64) {
        match self {
            InodeIndex::Rb(r) => {
                let (height, sum) = r.depth_stats();
                let mean = if r.is_empty() { 0.0 } else { sum as f64 / r.len() as f64 };
                (height, mean)
            }
            InodeIndex::Xa(x) => (x.height(), f64::from(x.height())),
        }
    }

    /// Node allocations that failed (ENOMEM).
    pub fn alloc_failures(&self) -> u64 {
        match self {
            InodeIndex::Xa(x) => x.alloc_failures(),
            InodeIndex::Rb(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_gives_back_the_oldest_inode_with_its_object() {
        for kind in [IndexKind::Rbtree, IndexKind::Xarray] {
            let mut index = InodeIndex::new(kind, 0, 8, 0);
            let mut q = OpenQueue::new(kind);
            let mut t = Vec::new();
            for ino in 256..260u64 {
                let obj = 0x10_0000 + ino * 1024;
                let node = match kind {
                    IndexKind::Rbtree => index.rb_insert(ino, obj, &mut t).0,
                    IndexKind::Xarray => {
                        assert!(index.xa_reserve(ino, &mut t).is_ok());
                        index.xa_store(ino, obj, &mut t);
                        None
                    }
                };
                q.push_back(index.open_entry(ino, obj, node));
            }
            let first = q.pop_front(&index).expect("four queued");
            assert_eq!(first.obj, 0x10_0000 + 256 * 1024, "{kind:?}");
            index.erase(&first, &mut t);
            let second = q.pop_front(&index).expect("three left");
            assert_eq!(second.obj, 0x10_0000 + 257 * 1024, "{kind:?}");
            // The erased inode is gone from the index: three remain.
            if let InodeIndex::Rb(r) = &index {
                assert_eq!(r.len(), 3);
            }
        }
    }
}
