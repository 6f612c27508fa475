//! Erasing: `xa_erase()` = `xas_store(NULL)`, which frees emptied nodes
//! upward (`xas_delete_node()`) and collapses the root (`xas_shrink()`).

use super::{ARRAY_OFF, MARKS_OFF, NIL, OFFSET_OFF, PARENT_OFF, RCU_OFF, Slot, XA_CHUNK_SIZE, XArray};
use crate::kernel::mm::touch::{Access, Touch, record};

impl XArray {
    /// `xa_erase()`: remove the entry or reservation at `index`. Returns the
    /// removed entry (`None` if it was empty or only reserved).
    pub fn erase(&mut self, index: u64, t: &mut Vec<Touch>) -> Option<u64> {
        self.append_leaf = None;
        let pos = self.walk(index, t);
        if pos.bounds || pos.entry == Slot::Empty {
            return None; // first == entry: nothing to do
        }
        self.clear_marks(pos.node, pos.offset, t);
        self.write_slot(pos.node, pos.offset, Slot::Empty, t);
        if pos.node != NIL {
            if pos.offset + 1 < XA_CHUNK_SIZE as u32 {
                // xas_store() looks at the next slot for a sibling entry.
                record(t, self.slot_addr(pos.node, pos.offset + 1), Access::Read);
            }
            self.add_count(pos.node, -1, t);
            self.delete_node(pos.node, t);
        }
        match pos.entry {
            Slot::Value(v) => {
                self.values -= 1;
                Some(v)
            }
            _ => None,
        }
    }

    /// `xas_init_marks()` on erase: `xas_clear_mark()` for each of the three
    /// marks does a test-and-clear of the entry's bit in the node (stopping
    /// there, as no marks are ever set here); at the head it reads `xa_flags`.
    fn clear_marks(&mut self, n: u32, offset: u32, t: &mut Vec<Touch>) {
        if n == NIL {
            record(t, self.xa_addr, Access::Read);
            return;
        }
        let word = u64::from(offset / 64) * 8;
        for mark in 0..3u64 {
            record(t, self.nodes[n as usize].addr + MARKS_OFF + mark * 8 + word, Access::Write);
        }
    }

    /// `xas_delete_node()`: free empty nodes from `n` upward; if the walk
    /// stops at a non-empty root, try `xas_shrink()`.
    fn delete_node(&mut self, mut n: u32, t: &mut Vec<Touch>) {
        loop {
            let node = &self.nodes[n as usize];
            record(t, node.addr, Access::Read);
            if node.count > 0 {
                break;
            }
            let (parent, offset, addr) = (node.parent, node.offset, node.addr);
            record(t, addr + PARENT_OFF, Access::Read);
            record(t, addr + OFFSET_OFF, Access::Read);
            self.free_node(n, t);
            if parent == NIL {
                self.write_slot(NIL, 0, Slot::Empty, t);
                return;
            }
            self.write_slot(parent, offset, Slot::Empty, t);
            self.add_count(parent, -1, t);
            n = parent;
        }
        if self.nodes[n as usize].parent == NIL {
            self.shrink(n, t);
        }
    }

    /// `xas_shrink()`: while the root has one entry, in slot 0, and that
    /// entry is a node (or the root is a leaf), make it the head.
    fn shrink(&mut self, mut n: u32, t: &mut Vec<Touch>) {
        loop {
            let node = &self.nodes[n as usize];
            record(t, node.addr, Access::Read);
            if node.count != 1 {
                return;
            }
            let entry = node.slots[0];
            record(t, self.slot_addr(n, 0), Access::Read);
            let is_node = matches!(entry, Slot::Node(_));
            if entry == Slot::Empty || (!is_node && node.shift != 0) {
                return;
            }
            self.write_slot(NIL, 0, entry, t);
            self.nodes[n as usize].count = 0;
            record(t, self.nodes[n as usize].addr, Access::Write);
            if !is_node {
                // A leaf's slot 0 gets XA_RETRY_ENTRY (free_node empties it).
                record(t, self.slot_addr(n, 0), Access::Write);
            }
            self.free_node(n, t);
            let Slot::Node(child) = entry else { return };
            self.nodes[child as usize].parent = NIL;
            record(t, self.nodes[child as usize].addr + PARENT_OFF, Access::Write);
            n = child;
        }
    }

    /// `xa_node_free()`: mark the node (`array = XA_RCU_FREE`, `call_rcu`)
    /// and return it to the slab (at once: RCU deferral is not modelled).
    fn free_node(&mut self, n: u32, t: &mut Vec<Touch>) {
        let addr = self.nodes[n as usize].addr;
        record(t, addr + ARRAY_OFF, Access::Write);
        record(t, addr + RCU_OFF, Access::Write);
        self.slab.free(addr).expect("xa node addresses come from this slab");
        self.nodes[n as usize].slots = [Slot::Empty; XA_CHUNK_SIZE];
        self.free_ids.push(n);
    }
}
