//! XArray of `lib/xarray.c`: a 64-way radix tree of 576-byte nodes.
//!
//! This is the 2024 btrfs open-inode index (`btrfs_root::inodes`): indexed by
//! inode number, `xa_reserve()` outside `inode_lock` (may allocate nodes,
//! may fail with ENOMEM), `xa_store()` inside it. Nodes come from their own
//! slab cache (`radix_tree_node`), so they sit at simulated addresses, and
//! every operation records the lines it touches: for each node visited, the
//! header line (`shift`, `offset`, `count`, `nr_values` at bytes 0-3,
//! `parent` at 8) and the line of the slot it indexes (`slots[i]` at
//! 40 + 8 i); the `xa_head` pointer at byte 8 of `struct xarray`.
//!
//! Semantics follow the kernel: index 0 alone lives in `xa_head` with no
//! node (`xas_store()` with `allow_root`); a reserved slot holds
//! `XA_ZERO_ENTRY`, which loads and finds skip; the tree grows at the top
//! (`xas_expand()`), frees empty nodes upward on erase
//! (`xas_delete_node()`) and collapses a root with only slot 0 in use
//! (`xas_shrink()`). Not modelled: multi-index entries, marks (beyond the
//! clear that an erase writes), value entries' `nr_values`, RCU deferral of
//! node frees (a freed node returns to the slab at once).

mod create;
mod delete;

use crate::kernel::mm::slab::{SlabCache, SlabConfig, SlabError};
use crate::kernel::mm::touch::{Access, Touch, record};

/// `XA_CHUNK_SHIFT`: 6 index bits per level (include/linux/xarray.h).
pub const XA_CHUNK_SHIFT: u32 = 6;
/// `XA_CHUNK_SIZE`: slots per node.
pub const XA_CHUNK_SIZE: usize = 64;
/// `sizeof(struct xa_node)` on 64-bit: "576 bytes, 7 per 4 KiB page".
pub const XA_NODE_BYTES: u64 = 576;
/// Byte offset of `xa_head` in `struct xarray` (after `xa_lock`, `xa_flags`).
pub const XA_HEAD_OFFSET: u64 = 8;

const OFFSET_OFF: u64 = 1; // node->offset; shift at 0, count at 2, nr_values at 3
const PARENT_OFF: u64 = 8;
const ARRAY_OFF: u64 = 16;
const RCU_OFF: u64 = 24; // union of private_list and rcu_head
const SLOTS_OFF: u64 = 40;
const MARKS_OFF: u64 = 552; // marks[3][1]
const NIL: u32 = u32::MAX;
const MASK: u64 = XA_CHUNK_SIZE as u64 - 1;

/// What a slot (or `xa_head`) holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Empty,
    /// `XA_ZERO_ENTRY`: reserved.
    Zero,
    /// A stored entry (an object address, for btrfs an inode pointer).
    Value(u64),
    /// A child node (arena index).
    Node(u32),
}

#[derive(Clone, Debug)]
struct XaNode {
    addr: u64,
    shift: u32,
    offset: u32,
    count: u32,
    parent: u32,
    slots: [Slot; XA_CHUNK_SIZE],
}

/// When node allocations fail, so a caller can model ENOMEM. One attempt is
/// one node allocation (`kmem_cache_alloc(radix_tree_node_cachep)`); the
/// kernel's retry after dropping the lock (`__xas_nomem()`) is the caller's
/// to model by calling again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailPlan {
    /// Allocations always succeed.
    Never,
    /// The next `n` attempts fail, then allocations succeed.
    NextN(u64),
    /// Every attempt whose 1-based sequence number is a multiple of `n` fails.
    EveryNth(u64),
}

/// Errors returned by the XArray model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum XaError {
    /// A node allocation failed (`-ENOMEM`); the tree is unchanged.
    NoMemory,
}

impl std::fmt::Display for XaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "xarray node allocation failed (ENOMEM)")
    }
}

impl std::error::Error for XaError {}

/// A structural fault found by [`XArray::check_invariants`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XaViolation(pub String);

/// Where a walk ended (an `xa_state` after `xas_load()`).
#[derive(Clone, Copy, Debug)]
struct Pos {
    /// Node holding the slot, or NIL for `xa_head`.
    node: u32,
    offset: u32,
    entry: Slot,
    /// Index beyond what the tree covers (`XAS_BOUNDS`).
    bounds: bool,
}

/// The XArray (`struct xarray`) with its node arena and node slab cache.
#[derive(Clone, Debug)]
pub struct XArray {
    head: Slot,
    nodes: Vec<XaNode>,
    free_ids: Vec<u32>,
    slab: SlabCache,
    xa_addr: u64,
    fail: FailPlan,
    attempts: u64,
    failures: u64,
    preloaded: Vec<u64>,
    values: usize,
    /// The leaf the last [`XArray::append_unrecorded`] wrote into, as
    /// (`index >> 6`, node): `None` once an erase ran (which may free
    /// that node and hand its arena slot to another).
    append_leaf: Option<(u64, u32)>,
}

impl XArray {
    /// An empty XArray whose `struct xarray` sits at byte address `xa_addr`,
    /// with nodes from a `radix_tree_node` slab cache laid out from
    /// `node_base` (576-byte objects, 8-byte aligned, free pointer outside
    /// the object because the cache has a constructor: 584-byte stride).
    pub fn new(xa_addr: u64, node_base: u64) -> Self {
        let config = SlabConfig::new(XA_NODE_BYTES).with_freeptr_outside(true);
        Self::with_slab_config(xa_addr, config, node_base).expect("the xa_node slab config is valid")
    }

    /// As [`XArray::new`] with another node slab layout.
    pub fn with_slab_config(xa_addr: u64, config: SlabConfig, node_base: u64) -> Result<Self, SlabError> {
        Ok(Self {
            head: Slot::Empty,
            nodes: Vec::new(),
            free_ids: Vec::new(),
            slab: SlabCache::new(config, node_base)?,
            xa_addr,
            fail: FailPlan::Never,
            attempts: 0,
            failures: 0,
            preloaded: Vec::new(),
            values: 0,
            append_leaf: None,
        })
    }

    /// Sets when node allocations fail from now on.
    pub fn set_fail_plan(&mut self, plan: FailPlan) {
        self.fail = plan;
    }

    /// Node allocation attempts so far.
    pub fn alloc_attempts(&self) -> u64 {
        self.attempts
    }

    /// Node allocations that failed so far (each one an ENOMEM returned).
    pub fn alloc_failures(&self) -> u64 {
        self.failures
    }

    /// The node slab cache (slabs in use, live nodes).
    pub fn slab(&self) -> &SlabCache {
        &self.slab
    }

    /// Entries present (reserved slots not counted).
    pub fn len(&self) -> usize {
        self.values
    }

    /// True if no entry is present (reserved slots may exist).
    pub fn is_empty(&self) -> bool {
        self.values == 0
    }

    /// Node levels: 0 with no node (empty, or only index 0 in `xa_head`),
    /// else the root's `shift / 6 + 1`.
    pub fn height(&self) -> u32 {
        match self.head {
            Slot::Node(r) => self.nodes[r as usize].shift / XA_CHUNK_SHIFT + 1,
            _ => 0,
        }
    }

    /// Nodes in the tree.
    pub fn node_count(&self) -> usize {
        self.nodes.len() - self.free_ids.len()
    }

    /// `xa_load()`: the entry at `index`, `None` if empty or reserved.
    pub fn load(&self, index: u64, t: &mut Vec<Touch>) -> Option<u64> {
        match self.walk(index, t).entry {
            Slot::Value(v) => Some(v),
            _ => None,
        }
    }

    /// `xa_find(xa, &index, ULONG_MAX, XA_PRESENT)`: the first present entry
    /// at or after `from`, as `(index, value)`; reserved slots are skipped.
    pub fn find(&self, from: u64, t: &mut Vec<Touch>) -> Option<(u64, u64)> {
        let pos = self.walk(from, t);
        match pos.entry {
            Slot::Value(v) => return Some((from, v)),
            _ if pos.node == NIL || pos.bounds => return None,
            _ => {}
        }
        self.scan_forward(pos.node, pos.offset, from, t)
    }

    /// `(index, value)` of every present entry in index order, untracked.
    pub fn entries(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(self.values);
        self.collect(self.head, 0, &mut out);
        out
    }

    /// Checks counts, parent/offset/shift links, that non-root nodes are
    /// non-empty, and that the node arena, the slab and the tree agree.
    pub fn check_invariants(&self) -> Result<(), XaViolation> {
        let bad = |m: String| Err(XaViolation(m));
        let Slot::Node(root) = self.head else {
            return if self.node_count() == 0 {
                Ok(())
            } else {
                bad(format!("{} nodes but no root", self.node_count()))
            };
        };
        if self.nodes[root as usize].parent != NIL {
            return bad("root has a parent".into());
        }
        let (mut seen, mut values, mut stack) = (0usize, 0usize, vec![root]);
        while let Some(n) = stack.pop() {
            seen += 1;
            let node = &self.nodes[n as usize];
            let used = node.slots.iter().filter(|s| **s != Slot::Empty).count() as u32;
            if used != node.count || (n != root && used == 0) {
                return bad(format!("node at {:#x}: count {} but {} slots used", node.addr, node.count, used));
            }
            for (i, s) in node.slots.iter().enumerate() {
                match *s {
                    Slot::Node(c) => {
                        let child = &self.nodes[c as usize];
                        if node.shift == 0 || child.parent != n || child.offset != i as u32 || child.shift + 6 != node.shift {
                            return bad(format!("bad link from node at {:#x} slot {i}", node.addr));
                        }
                        stack.push(c);
                    }
                    Slot::Value(_) if node.shift == 0 => values += 1,
                    Slot::Value(_) => return bad(format!("entry above the leaves at {:#x}", node.addr)),
                    _ => {}
                }
            }
        }
        if seen != self.node_count() || seen as u64 != self.slab.objects_live() || values != self.values {
            return bad(format!(
                "{seen} nodes reachable, {} in arena, {} in slab",
                self.node_count(),
                self.slab.objects_live()
            ));
        }
        Ok(())
    }

    // ----- walks -----

    /// `xas_load()`: descend from `xa_head` to the slot for `index`.
    fn walk(&self, index: u64, t: &mut Vec<Touch>) -> Pos {
        record(t, self.xa_addr + XA_HEAD_OFFSET, Access::Read);
        let bounds = Pos {
            node: NIL,
            offset: 0,
            entry: Slot::Empty,
            bounds: true,
        };
        let mut pos = Pos {
            node: NIL,
            offset: 0,
            entry: self.head,
            bounds: false,
        };
        match self.head {
            Slot::Node(r) if (index >> self.nodes[r as usize].shift) > MASK => {
                record(t, self.nodes[r as usize].addr, Access::Read);
                return bounds;
            }
            Slot::Node(_) => {}
            _ if index != 0 => return bounds,
            _ => return pos,
        }
        while let Slot::Node(n) = pos.entry {
            pos = self.descend(n, index, t);
        }
        pos
    }

    /// `xas_descend()`: read `node->shift`, then the slot it selects.
    fn descend(&self, n: u32, index: u64, t: &mut Vec<Touch>) -> Pos {
        let node = &self.nodes[n as usize];
        record(t, node.addr, Access::Read);
        let offset = ((index >> node.shift) & MASK) as u32;
        record(t, self.slot_addr(n, offset), Access::Read);
        Pos {
            node: n,
            offset,
            entry: node.slots[offset as usize],
            bounds: false,
        }
    }

    /// The scanning loop of `xas_find()` (after `xas_advance()`), with
    /// `xa_find()`'s retry past reserved entries.
    fn scan_forward(&self, mut node: u32, mut offset: u32, mut index: u64, t: &mut Vec<Touch>) -> Option<(u64, u64)> {
        let advance = |node: u32, offset: &mut u32, index: &mut u64| {
            *offset += 1;
            let shift = self.nodes[node as usize].shift;
            *index = (*index & (!MASK << shift)).wrapping_add(u64::from(*offset) << shift);
        };
        advance(node, &mut offset, &mut index);
        while node != NIL {
            if offset == XA_CHUNK_SIZE as u32 {
                let n = &self.nodes[node as usize];
                record(t, n.addr + OFFSET_OFF, Access::Read);
                record(t, n.addr + PARENT_OFF, Access::Read);
                (offset, node) = (n.offset + 1, n.parent);
                continue;
            }
            record(t, self.slot_addr(node, offset), Access::Read);
            match self.nodes[node as usize].slots[offset as usize] {
                Slot::Node(c) => (node, offset) = (c, 0),
                Slot::Value(v) => return Some((index, v)),
                Slot::Zero | Slot::Empty => advance(node, &mut offset, &mut index),
            }
        }
        None
    }

    fn collect(&self, s: Slot, base: u64, out: &mut Vec<(u64, u64)>) {
        match s {
            Slot::Value(v) => out.push((base, v)),
            Slot::Node(n) => {
                let node = &self.nodes[n as usize];
                for (i, &c) in node.slots.iter().enumerate() {
                    self.collect(c, base + ((i as u64) << node.shift), out);
                }
            }
            Slot::Empty | Slot::Zero => {}
        }
    }

    // ----- shared helpers -----

    fn slot_addr(&self, n: u32, offset: u32) -> u64 {
        self.nodes[n as usize].addr + SLOTS_OFF + 8 * u64::from(offset)
    }

    fn head_addr(&self) -> u64 {
        self.xa_addr + XA_HEAD_OFFSET
    }

    /// Writes `s` into slot `offset` of node `n`, or `xa_head` if `n` is NIL.
    fn write_slot(&mut self, n: u32, offset: u32, s: Slot, t: &mut Vec<Touch>) {
        if n == NIL {
            record(t, self.head_addr(), Access::Write);
            self.head = s;
        } else {
            record(t, self.slot_addr(n, offset), Access::Write);
            self.nodes[n as usize].slots[offset as usize] = s;
        }
    }

    /// Adjusts `node->count` (a header write).
    fn add_count(&mut self, n: u32, delta: i32, t: &mut Vec<Touch>) {
        record(t, self.nodes[n as usize].addr, Access::Write);
        let c = &mut self.nodes[n as usize].count;
        *c = c.checked_add_signed(delta).expect("count stays within 0..=64");
    }
}

/// Largest index a tree whose top node has `shift` covers (`max_index()`).
fn max_index(shift: u32) -> u64 {
    if shift + XA_CHUNK_SHIFT >= 64 {
        u64::MAX
    } else {
        (64u64 << shift) - 1
    }
}

/// Levels needed to hold `index` (index 0 needs one node when not in `xa_head`).
pub fn levels_for(index: u64) -> u32 {
    (64 - index.leading_zeros()).div_ceil(XA_CHUNK_SHIFT).max(1)
}

#[cfg(test)]
mod tests;
