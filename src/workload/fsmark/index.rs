//! The subvolume root's open-inode index, either kind, as btrfs calls it:
//! the operations return the lines they touched, which the caller prices.

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

/// One open inode as the eviction queue remembers it.
#[derive(Clone, Copy, Debug)]
pub struct Open {
    /// Inode number.
    pub ino: u64,
    /// Address of the `btrfs_inode` object.
    pub obj: u64,
    /// The per-CPU slab it came from.
    pub slab: u32,
    /// Its rb-tree node (rb-tree only).
    pub node: Option<NodeId>,
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

    /// Removes an open inode (`inode_tree_del` / `xa_erase`).
    pub fn erase(&mut self, o: &Open, t: &mut Vec<Touch>) {
        match (self, o.node) {
            (InodeIndex::Rb(r), Some(n)) => {
                r.erase_node(n, t);
            }
            (InodeIndex::Xa(x), _) => {
                x.erase(o.ino, t);
            }
            _ => {}
        }
    }

    /// Drops a reservation left by a create that failed after `xa_reserve`.
    pub fn release(&mut self, ino: u64, t: &mut Vec<Touch>) {
        if let InodeIndex::Xa(x) = self {
            x.erase(ino, t);
        }
    }

    /// Height now: rb-tree longest path, xarray levels.
    pub fn height(&self) -> u32 {
        match self {
            InodeIndex::Rb(r) => r.height(),
            InodeIndex::Xa(x) => x.height(),
        }
    }

    /// Mean node depth (rb-tree), or the levels (xarray).
    pub fn mean_depth(&self) -> f64 {
        match self {
            InodeIndex::Rb(r) if !r.is_empty() => r.depth_sum() as f64 / r.len() as f64,
            InodeIndex::Rb(_) => 0.0,
            InodeIndex::Xa(x) => f64::from(x.height()),
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
