//! Storing: `xa_reserve()` and `xa_store()`, which build the path to a slot
//! (`xas_create()`, `xas_expand()`, `xas_alloc()`).
//!
//! The model counts the nodes an operation needs and allocates them all
//! before touching the tree (like `xas->xa_alloc` preallocation), so a
//! failed allocation returns ENOMEM with the tree unchanged. One difference
//! from the kernel, where `xas_create()` links nodes as it allocates them:
//! a failure part-way there can leave an empty intermediate node linked.

use super::{
    ARRAY_OFF, FailPlan, MASK, NIL, PARENT_OFF, Pos, Slot, XA_CHUNK_SHIFT, XA_CHUNK_SIZE, XArray, XaError, XaNode, levels_for, max_index,
};
use crate::kernel::mm::touch::{Access, Touch, record};

impl XArray {
    /// `xa_reserve()` (= `xa_cmpxchg(xa, index, NULL, XA_ZERO_ENTRY)`):
    /// if `index` is empty, create its slot (allocating nodes) and mark it
    /// reserved, so a later [`XArray::store`] needs no allocation. A present
    /// or reserved index is left alone. On ENOMEM nothing changes.
    pub fn reserve(&mut self, index: u64, t: &mut Vec<Touch>) -> Result<(), XaError> {
        let pos = self.walk(index, t);
        if pos.entry != Slot::Empty {
            return Ok(());
        }
        self.preload(self.nodes_needed(index, false))?;
        let slot = self.create(index, false, Some(pos), t);
        self.put(slot, Slot::Zero, t);
        Ok(())
    }

    /// `xa_store()`: store `value` at `index`, creating the path if needed.
    /// Returns the previous entry (`None` if empty or reserved). On ENOMEM
    /// nothing changes (the walk's reads are still recorded).
    pub fn store(&mut self, index: u64, value: u64, t: &mut Vec<Touch>) -> Result<Option<u64>, XaError> {
        if let Err(e) = self.preload(self.nodes_needed(index, true)) {
            self.walk(index, t);
            return Err(e);
        }
        let slot = self.create(index, true, None, t);
        let old = match slot.entry {
            Slot::Value(v) if v == value => return Ok(Some(v)), // first == entry: no write
            Slot::Value(v) => Some(v),
            _ => None,
        };
        self.put(slot, Slot::Value(value), t);
        Ok(old)
    }

    /// [`XArray::reserve`] then [`XArray::store`] of `value` at `index`,
    /// for an untimed prefill: the same tree, node allocations, slab and
    /// counts, with no touch recorded (`scratch` is left empty). When the
    /// last append's leaf holds `index` and its slot is empty (rising
    /// indices, 63 appends in 64), the two calls' net effect is written
    /// directly: the slot takes `value`, the leaf's `count` and the entry
    /// count go up by one; reserve's `nodes_needed` is 0 there, so no
    /// allocation is attempted and the fail plan does not move. Otherwise
    /// the two calls run (their touches discarded) and, when they
    /// succeed, the leaf is remembered (a failed call changes nothing,
    /// the remembered leaf included). (At 10^7 prefilled inodes the two
    /// calls were about half of a one-thread run of `index-scaling.toml`.)
    pub fn append_unrecorded(&mut self, index: u64, value: u64, scratch: &mut Vec<Touch>) -> Result<(), XaError> {
        let offset = (index & MASK) as usize;
        if let Some((base, n)) = self.append_leaf
            && base == index >> XA_CHUNK_SHIFT
        {
            let leaf = &mut self.nodes[n as usize];
            if leaf.slots[offset] == Slot::Empty {
                leaf.slots[offset] = Slot::Value(value);
                leaf.count += 1;
                self.values += 1;
                return Ok(());
            }
        }
        let reserved = self.reserve(index, scratch);
        scratch.clear();
        reserved?;
        let stored = self.store(index, value, scratch);
        scratch.clear();
        stored?;
        let pos = self.walk(index, scratch);
        scratch.clear();
        self.append_leaf = (pos.node != NIL && self.nodes[pos.node as usize].shift == 0).then_some((index >> XA_CHUNK_SHIFT, pos.node));
        Ok(())
    }

    /// The write at the end of `xas_store()`: slot, then `update_node()`.
    fn put(&mut self, slot: Pos, entry: Slot, t: &mut Vec<Touch>) {
        self.write_slot(slot.node, slot.offset, entry, t);
        if slot.node != NIL && slot.entry == Slot::Empty {
            self.add_count(slot.node, 1, t);
        }
        if matches!(entry, Slot::Value(_)) && !matches!(slot.entry, Slot::Value(_)) {
            self.values += 1;
        }
    }

    /// How many nodes `xas_create(index, allow_root)` will allocate.
    fn nodes_needed(&self, index: u64, allow_root: bool) -> usize {
        let levels = levels_for(index) as usize;
        match self.head {
            Slot::Empty if index == 0 && allow_root => 0,
            Slot::Empty => levels,
            // Only index 0 lives in xa_head; expanding pushes it into a leaf.
            Slot::Zero | Slot::Value(_) if index == 0 => 0,
            Slot::Zero | Slot::Value(_) => 2 * levels - 1,
            Slot::Node(root) => {
                let have = (self.nodes[root as usize].shift / XA_CHUNK_SHIFT + 1) as usize;
                if levels > have {
                    // New top levels, and the path diverges from slot 0 at the top.
                    return (levels - have) + (levels - 1);
                }
                let mut n = root;
                loop {
                    let node = &self.nodes[n as usize];
                    match node.slots[((index >> node.shift) & MASK) as usize] {
                        Slot::Node(c) => n = c,
                        Slot::Empty => return (node.shift / XA_CHUNK_SHIFT) as usize,
                        _ => return 0,
                    }
                }
            }
        }
    }

    /// Takes `n` node allocations from the fail plan and the slab, all or none.
    fn preload(&mut self, n: usize) -> Result<(), XaError> {
        debug_assert!(self.preloaded.is_empty());
        for _ in 0..n {
            self.attempts += 1;
            let fail = match &mut self.fail {
                FailPlan::Never => false,
                FailPlan::NextN(0) => false,
                FailPlan::NextN(k) => {
                    *k -= 1;
                    true
                }
                FailPlan::EveryNth(k) => *k > 0 && self.attempts.is_multiple_of(*k),
            };
            if fail {
                self.failures += 1;
                return Err(XaError::NoMemory);
            }
        }
        self.preloaded = (0..n).map(|_| self.slab.alloc()).collect();
        Ok(())
    }

    /// `xas_create()`: from the top (`from = None`, or a walk that ended in
    /// `xa_head` or out of bounds) after `xas_expand()`, or continuing from
    /// the node a walk stopped at; allocates missing nodes on the way down.
    /// Returns the target slot and what it holds.
    fn create(&mut self, index: u64, allow_root: bool, from: Option<Pos>, t: &mut Vec<Touch>) -> Pos {
        let (mut slot, mut shift) = match from {
            Some(p) if p.node != NIL && !p.bounds => {
                record(t, self.slot_addr(p.node, p.offset), Access::Read);
                (p, self.nodes[p.node as usize].shift)
            }
            _ => {
                record(t, self.head_addr(), Access::Read);
                let top = self.expand(index, t);
                let shift = if top == 0 && !allow_root { XA_CHUNK_SHIFT } else { top };
                (
                    Pos {
                        node: NIL,
                        offset: 0,
                        entry: self.head,
                        bounds: false,
                    },
                    shift,
                )
            }
        };
        while shift > 0 {
            shift -= XA_CHUNK_SHIFT;
            if slot.entry == Slot::Empty {
                let n = self.alloc_node(shift, slot.node, slot.offset, t);
                self.write_slot(slot.node, slot.offset, Slot::Node(n), t);
                slot.entry = Slot::Node(n);
            }
            match slot.entry {
                Slot::Node(n) => slot = self.descend(n, index, t),
                _ => break,
            }
        }
        assert!(self.preloaded.is_empty(), "nodes_needed overcounted");
        slot
    }

    /// `xas_expand()`: add levels at the top until `index` fits. With an
    /// empty head nothing is allocated; returns the shift the create loop
    /// starts from (top node's shift + 6).
    fn expand(&mut self, index: u64, t: &mut Vec<Touch>) -> u32 {
        let mut head = self.head;
        let mut shift = match head {
            Slot::Empty if index == 0 => return 0,
            Slot::Empty => return (levels_for(index) - 1) * XA_CHUNK_SHIFT + XA_CHUNK_SHIFT,
            Slot::Node(r) => {
                record(t, self.nodes[r as usize].addr, Access::Read);
                self.nodes[r as usize].shift + XA_CHUNK_SHIFT
            }
            Slot::Zero | Slot::Value(_) => 0,
        };
        let covered = |h: Slot, xa: &XArray| match h {
            Slot::Node(r) => max_index(xa.nodes[r as usize].shift),
            _ => 0,
        };
        while index > covered(head, self) {
            let n = self.alloc_node(shift, NIL, 0, t);
            self.nodes[n as usize].count = 1;
            self.nodes[n as usize].slots[0] = head;
            record(t, self.slot_addr(n, 0), Access::Write);
            if let Slot::Node(old) = head {
                let old_node = &mut self.nodes[old as usize];
                (old_node.offset, old_node.parent) = (0, n);
                let addr = old_node.addr;
                record(t, addr, Access::Write);
                record(t, addr + PARENT_OFF, Access::Write);
            }
            head = Slot::Node(n);
            self.write_slot(NIL, 0, head, t);
            shift += XA_CHUNK_SHIFT;
        }
        shift
    }

    /// `xas_alloc()`: take a preloaded node, set its header, and count it in
    /// the parent. The slots are already NULL (the slab constructor zeroes
    /// them once; freed nodes are empty), so only the header is written.
    fn alloc_node(&mut self, shift: u32, parent: u32, offset: u32, t: &mut Vec<Touch>) -> u32 {
        let addr = self.preloaded.pop().expect("nodes_needed undercounted");
        if parent != NIL {
            self.add_count(parent, 1, t);
        }
        let node = XaNode {
            addr,
            shift,
            offset,
            count: 0,
            parent,
            slots: [Slot::Empty; XA_CHUNK_SIZE],
        };
        for off in [0, PARENT_OFF, ARRAY_OFF] {
            record(t, addr + off, Access::Write);
        }
        match self.free_ids.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                u32::try_from(self.nodes.len() - 1).expect("fewer than 2^32 - 1 nodes")
            }
        }
    }
}
