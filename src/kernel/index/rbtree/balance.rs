//! Rebalancing and field access for [`RbTree`]: `__rb_insert()`,
//! `__rb_erase_augmented()` (non-augmented) and `____rb_erase_color()` of
//! `lib/rbtree.c`, with every field read and write recorded as a touch.

use super::{BLACK, NIL, Node, PC_OFF, RED, RbTree, Side};
use crate::kernel::mm::touch::{Access, Touch, record};

impl RbTree {
    // ----- rebalancing (lib/rbtree.c) -----

    /// `__rb_insert()`: case 1 recolours and climbs; case 2 rotates at the
    /// parent into case 3, which rotates at the grandparent and stops.
    pub(super) fn insert_color(&mut self, mut node: u32, t: &mut Vec<Touch>) {
        let (mut parent, _) = self.read_pc(node, t);
        loop {
            if parent == NIL {
                self.set_pc(node, NIL, BLACK, t);
                return;
            }
            if !self.is_red(parent, t) {
                return;
            }
            let (gparent, _) = self.read_pc(parent, t);
            let gp_right = self.read_child(gparent, Side::Right, t);
            let s = if parent != gp_right { Side::Left } else { Side::Right };
            let uncle = if s == Side::Left {
                gp_right
            } else {
                self.read_child(gparent, Side::Left, t)
            };
            if uncle != NIL && self.is_red(uncle, t) {
                // Case 1: colour flips, continue at the grandparent.
                self.set_pc(uncle, gparent, BLACK, t);
                self.set_pc(parent, gparent, BLACK, t);
                node = gparent;
                parent = self.read_pc(node, t).0;
                self.set_pc(node, parent, RED, t);
                continue;
            }
            let mut tmp = self.read_child(parent, s.flip(), t);
            if node == tmp {
                // Case 2: rotate at parent (node is the inner child).
                tmp = self.read_child(node, s, t);
                self.write_child(parent, s.flip(), tmp, t);
                self.write_child(node, s, parent, t);
                if tmp != NIL {
                    self.set_pc(tmp, parent, BLACK, t);
                }
                self.set_pc(parent, node, RED, t);
                parent = node;
                tmp = self.read_child(node, s.flip(), t);
            }
            // Case 3: rotate at grandparent.
            self.write_child(gparent, s, tmp, t);
            self.write_child(parent, s.flip(), gparent, t);
            if tmp != NIL {
                self.set_pc(tmp, gparent, BLACK, t);
            }
            self.rotate_set_parents(gparent, parent, RED, t);
            return;
        }
    }

    /// The two-children case of `__rb_erase_augmented()`: splice in the
    /// successor (cases 2 and 3 there). Returns the node to rebalance at.
    pub(super) fn erase_with_successor(&mut self, node: u32, child: u32, t: &mut Vec<Touch>) -> u32 {
        let (mut successor, mut parent) = (child, child);
        let mut tmp = self.read_child(child, Side::Left, t);
        let child2 = if tmp == NIL {
            self.read_child(successor, Side::Right, t)
        } else {
            while tmp != NIL {
                parent = successor;
                successor = tmp;
                tmp = self.read_child(tmp, Side::Left, t);
            }
            let child2 = self.read_child(successor, Side::Right, t);
            self.write_child(parent, Side::Left, child2, t);
            self.write_child(successor, Side::Right, child, t);
            self.set_parent(child, successor, t);
            child2
        };
        let left = self.read_child(node, Side::Left, t);
        self.write_child(successor, Side::Left, left, t);
        self.set_parent(left, successor, t);
        let (gp, black) = self.read_pc(node, t);
        self.change_child(node, successor, gp, t);
        if child2 != NIL {
            self.set_pc(successor, gp, black, t);
            self.set_pc(child2, parent, BLACK, t);
            return NIL;
        }
        let successor_black = !self.is_red(successor, t);
        self.set_pc(successor, gp, black, t);
        if successor_black { parent } else { NIL }
    }

    /// `____rb_erase_color()`: cases 1-4, case 2 may climb.
    pub(super) fn erase_color(&mut self, mut parent: u32, t: &mut Vec<Touch>) {
        let mut node = NIL;
        loop {
            let right = self.read_child(parent, Side::Right, t);
            let s = if node != right { Side::Left } else { Side::Right };
            let mut sibling = if s == Side::Left {
                right
            } else {
                self.read_child(parent, Side::Left, t)
            };
            if self.is_red(sibling, t) {
                // Case 1: rotate at parent towards node.
                let tmp1 = self.read_child(sibling, s, t);
                self.write_child(parent, s.flip(), tmp1, t);
                self.write_child(sibling, s, parent, t);
                self.set_pc(tmp1, parent, BLACK, t);
                self.rotate_set_parents(parent, sibling, RED, t);
                sibling = tmp1;
            }
            let mut tmp1 = self.read_child(sibling, s.flip(), t);
            if tmp1 == NIL || !self.is_red(tmp1, t) {
                let tmp2 = self.read_child(sibling, s, t);
                if tmp2 == NIL || !self.is_red(tmp2, t) {
                    // Case 2: sibling colour flip; climb if parent was black.
                    self.set_pc(sibling, parent, RED, t);
                    if self.is_red(parent, t) {
                        self.set_black(parent, t);
                    } else {
                        node = parent;
                        parent = self.read_pc(node, t).0;
                        if parent != NIL {
                            continue;
                        }
                    }
                    return;
                }
                // Case 3: rotate at sibling.
                tmp1 = self.read_child(tmp2, s.flip(), t);
                self.write_child(sibling, s, tmp1, t);
                self.write_child(tmp2, s.flip(), sibling, t);
                self.write_child(parent, s.flip(), tmp2, t);
                if tmp1 != NIL {
                    self.set_pc(tmp1, sibling, BLACK, t);
                }
                tmp1 = sibling;
                sibling = tmp2;
            }
            // Case 4: rotate at parent and recolour.
            let tmp2 = self.read_child(sibling, s, t);
            self.write_child(parent, s.flip(), tmp2, t);
            self.write_child(sibling, s, parent, t);
            self.set_pc(tmp1, sibling, BLACK, t);
            if tmp2 != NIL {
                self.set_parent(tmp2, parent, t);
            }
            self.rotate_set_parents(parent, sibling, BLACK, t);
            return;
        }
    }

    /// `__rb_rotate_set_parents()`: `new` takes `old`'s parent and colour,
    /// `old` gets `new` as parent and `color`, the link to `old` moves to `new`.
    pub(super) fn rotate_set_parents(&mut self, old: u32, new: u32, color: bool, t: &mut Vec<Touch>) {
        let (parent, old_black) = self.read_pc(old, t);
        self.set_pc(new, parent, old_black, t);
        self.set_pc(old, new, color, t);
        self.change_child(old, new, parent, t);
    }

    /// `__rb_change_child()`.
    pub(super) fn change_child(&mut self, old: u32, new: u32, parent: u32, t: &mut Vec<Touch>) {
        if parent == NIL {
            self.set_root(new, t);
        } else if self.read_child(parent, Side::Left, t) == old {
            self.write_child(parent, Side::Left, new, t);
        } else {
            self.write_child(parent, Side::Right, new, t);
        }
    }

    // ----- field access with touch recording -----

    pub(super) fn alloc_node(&mut self, key: u64, obj: u64, parent: u32) -> u32 {
        let node = Node {
            key,
            obj,
            parent,
            left: NIL,
            right: NIL,
            black: RED,
        };
        match self.free.pop() {
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

    pub(super) fn field(&self, n: u32, off: u64) -> u64 {
        self.nodes[n as usize].obj + self.layout.node_offset + off
    }

    pub(super) fn key_addr(&self, n: u32) -> u64 {
        self.nodes[n as usize].obj + self.layout.key_offset
    }

    pub(super) fn set_root(&mut self, n: u32, t: &mut Vec<Touch>) {
        record(t, self.root_addr, Access::Write);
        self.root = n;
    }

    pub(super) fn read_child(&self, n: u32, s: Side, t: &mut Vec<Touch>) -> u32 {
        record(t, self.field(n, s.offset()), Access::Read);
        self.child(n, s)
    }

    /// The child on side `s`, without recording a touch.
    pub(super) fn child(&self, n: u32, s: Side) -> u32 {
        match s {
            Side::Left => self.nodes[n as usize].left,
            Side::Right => self.nodes[n as usize].right,
        }
    }

    pub(super) fn write_child(&mut self, n: u32, s: Side, v: u32, t: &mut Vec<Touch>) {
        record(t, self.field(n, s.offset()), Access::Write);
        match s {
            Side::Left => self.nodes[n as usize].left = v,
            Side::Right => self.nodes[n as usize].right = v,
        }
    }

    /// Reads `__rb_parent_color`: (parent, is black).
    pub(super) fn read_pc(&self, n: u32, t: &mut Vec<Touch>) -> (u32, bool) {
        record(t, self.field(n, PC_OFF), Access::Read);
        (self.nodes[n as usize].parent, self.nodes[n as usize].black)
    }

    pub(super) fn is_red(&self, n: u32, t: &mut Vec<Touch>) -> bool {
        n != NIL && !self.read_pc(n, t).1
    }

    /// `rb_set_parent_color()`.
    pub(super) fn set_pc(&mut self, n: u32, parent: u32, black: bool, t: &mut Vec<Touch>) {
        record(t, self.field(n, PC_OFF), Access::Write);
        self.nodes[n as usize].parent = parent;
        self.nodes[n as usize].black = black;
    }

    /// `rb_set_parent()`: keeps the colour.
    pub(super) fn set_parent(&mut self, n: u32, parent: u32, t: &mut Vec<Touch>) {
        record(t, self.field(n, PC_OFF), Access::Write);
        self.nodes[n as usize].parent = parent;
    }

    /// `rb_set_black()`.
    pub(super) fn set_black(&mut self, n: u32, t: &mut Vec<Touch>) {
        record(t, self.field(n, PC_OFF), Access::Write);
        self.nodes[n as usize].black = BLACK;
    }
}
