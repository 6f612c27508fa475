//! Internal-node operations: `insert_ptr`, `del_ptr`, `fixup_low_keys`,
//! `insert_new_root`, `split_node` with `push_nodes_for_insert`, and the
//! delete-side `balance_level` with `push_node_left`/`balance_node_right`.

use super::block::{Block, KeyPtr};
use super::{Key, Path, Tree};

impl Tree {
    /// `fixup_low_keys`: sets the key of the path slot at `level` and goes
    /// up while that slot is the first of its node.
    pub(crate) fn fixup_low_keys(&mut self, path: &Path, key: Key, level: usize) {
        for l in level..path.nodes.len() {
            let (node, slot) = (path.nodes[l], path.slots[l]);
            if let Some(p) = self.node_mut(node).get_mut(slot) {
                p.key = key;
            }
            if slot != 0 {
                break;
            }
        }
    }

    /// `insert_ptr`: a key pointer into the node at `level` of the path.
    pub(crate) fn insert_ptr(&mut self, path: &Path, level: usize, key: Key, child: usize, slot: usize) {
        let node = path.nodes[level];
        let ptrs = self.node_mut(node);
        let slot = slot.min(ptrs.len());
        ptrs.insert(slot, KeyPtr { key, child });
    }

    /// `del_ptr`: removes a key pointer; an emptied root becomes an empty
    /// leaf, an emptied non-root node is removed from its parent in turn.
    pub(crate) fn del_ptr(&mut self, path: &Path, level: usize, slot: usize) {
        let node = path.nodes[level];
        let ptrs = self.node_mut(node);
        if slot < ptrs.len() {
            ptrs.remove(slot);
        }
        let first = self.blocks[node].first_key();
        match first {
            None if node == self.root => {
                let (bytenr, ref_run) = (self.blocks[node].bytenr, self.blocks[node].ref_run);
                self.blocks[node] = Block::new_leaf(self.transid);
                self.blocks[node].bytenr = bytenr;
                self.blocks[node].ref_run = ref_run;
                self.mark_written(node);
            }
            None => {
                self.del_ptr(path, level + 1, path.slots[level + 1]);
                self.free_block(node);
            }
            Some(k) if slot == 0 => self.fixup_low_keys(path, k, level + 1),
            Some(_) => {}
        }
    }

    /// `insert_new_root`: a new root node above the current root.
    pub(crate) fn insert_new_root(&mut self, path: &mut Path, level: usize) {
        let old = self.root;
        let key = self.blocks[old].first_key().unwrap_or(Key::new(0, 0, 0));
        let root = self.alloc_block(Block::new_node(level, vec![KeyPtr { key, child: old }]));
        self.root = root;
        path.nodes.push(root);
        path.slots.push(0);
    }

    /// `split_node`: a new root if this is the root; else try to push
    /// pointers to a sibling, and split at `(n + 1) / 2` if the node the
    /// path now holds is still too full. The path follows the key.
    pub(crate) fn split_node(&mut self, path: &mut Path, level: usize) {
        if path.nodes[level] == self.root {
            self.insert_new_root(path, level + 1);
        } else if self.push_nodes_for_insert(path, level) {
            let c = path.nodes[level];
            if self.blocks[c].nritems() + 3 < self.geo.nodeptrs() {
                return;
            }
        }
        let c = path.nodes[level];
        let n = self.blocks[c].nritems();
        let mid = n.div_ceil(2).min(n);
        let moved: Vec<KeyPtr> = self.node_mut(c).split_off(mid);
        let Some(key) = moved.first().map(|p| p.key) else {
            return;
        };
        let split = self.alloc_block(Block::new_node(level, moved));
        self.stats.node_splits += 1;
        self.insert_ptr(path, level + 1, key, split, path.slots[level + 1] + 1);
        if path.slots[level] >= mid {
            path.slots[level] -= mid;
            path.nodes[level] = split;
            path.slots[level + 1] += 1;
        }
    }

    /// `push_nodes_for_insert`: push pointers into the left sibling, else
    /// into the right one, moving the path with its slot. True if
    /// something moved.
    fn push_nodes_for_insert(&mut self, path: &mut Path, level: usize) -> bool {
        let (mid, parent, pslot) = (path.nodes[level], path.nodes[level + 1], path.slots[level + 1]);
        let full = self.geo.nodeptrs() - 1;
        let orig_slot = path.slots[level];
        if pslot > 0 {
            let left = self.blocks[parent].ptrs()[pslot - 1].child;
            let left_nr = self.blocks[left].nritems();
            if left_nr < full {
                self.cow(left, Some(parent));
                if self.push_node_left(left, mid, false) {
                    self.set_parent_key(parent, pslot, mid);
                    let slot = orig_slot + left_nr;
                    let left_now = self.blocks[left].nritems();
                    if left_now > slot {
                        path.nodes[level] = left;
                        path.slots[level + 1] -= 1;
                        path.slots[level] = slot;
                    } else {
                        path.slots[level] = slot - left_now;
                    }
                    return true;
                }
            }
        }
        if pslot + 1 < self.blocks[parent].nritems() {
            let right = self.blocks[parent].ptrs()[pslot + 1].child;
            if self.blocks[right].nritems() < full {
                self.cow(right, Some(parent));
                if self.balance_node_right(right, mid) {
                    self.set_parent_key(parent, pslot + 1, right);
                    let mid_now = self.blocks[mid].nritems();
                    if mid_now <= orig_slot {
                        path.nodes[level] = right;
                        path.slots[level + 1] += 1;
                        path.slots[level] = orig_slot - mid_now;
                    }
                    return true;
                }
            }
        }
        false
    }

    /// Sets the parent's key at `slot` to the first key of `child`.
    fn set_parent_key(&mut self, parent: usize, slot: usize, child: usize) {
        if let Some(k) = self.blocks[child].first_key()
            && let Some(p) = self.node_mut(parent).get_mut(slot)
        {
            p.key = k;
        }
    }

    /// `push_node_left(dst, src, empty)`: move pointers from the front of
    /// `src` to the end of `dst`; keeps 8 in `src` unless emptying it.
    fn push_node_left(&mut self, dst: usize, src: usize, empty: bool) -> bool {
        let src_n = self.blocks[src].nritems();
        let dst_n = self.blocks[dst].nritems();
        let room = self.geo.nodeptrs().saturating_sub(dst_n);
        if (!empty && src_n <= 8) || room == 0 {
            return false;
        }
        let mut push = if empty { src_n.min(room) } else { (src_n - 8).min(room) };
        if empty && push < src_n && src_n - push < 8 {
            if push <= 8 {
                return false;
            }
            push -= 8;
        }
        let moved: Vec<KeyPtr> = self.node_mut(src).drain(..push).collect();
        self.node_mut(dst).extend(moved);
        true
    }

    /// `balance_node_right(dst, src)`: move up to half of `src`'s pointers
    /// (from its end) to the front of `dst`.
    fn balance_node_right(&mut self, dst: usize, src: usize) -> bool {
        let src_n = self.blocks[src].nritems();
        let dst_n = self.blocks[dst].nritems();
        let room = self.geo.nodeptrs().saturating_sub(dst_n);
        let max_push = src_n / 2 + 1;
        if room == 0 || src_n < 4 || max_push >= src_n {
            return false;
        }
        let push = room.min(max_push);
        let moved: Vec<KeyPtr> = self.node_mut(src).split_off(src_n - push);
        self.node_mut(dst).splice(0..0, moved);
        true
    }

    /// `balance_level` for a delete search: promote the only child of the
    /// root; for a node at most a quarter full, empty it into its left
    /// sibling, pull its right sibling in, and free emptied nodes. True if
    /// the tree changed.
    pub(crate) fn balance_level(&mut self, path: &Path, level: usize) -> bool {
        let mid = path.nodes[level];
        if mid == self.root {
            if self.blocks[mid].nritems() != 1 {
                return false;
            }
            self.root = self.blocks[mid].ptrs()[0].child;
            self.free_block(mid);
            return true;
        }
        if self.blocks[mid].nritems() > self.geo.nodeptrs() / 4 {
            return false;
        }
        let (parent, pslot) = (path.nodes[level + 1], path.slots[level + 1]);
        let pn = self.blocks[parent].nritems();
        let left = (pslot > 0).then(|| self.blocks[parent].ptrs()[pslot - 1].child);
        let right = (pslot + 1 < pn).then(|| self.blocks[parent].ptrs()[pslot + 1].child);
        let mut changed = false;
        if let Some(l) = left {
            self.cow(l, Some(parent));
            changed |= self.push_node_left(l, mid, true);
        }
        if let Some(r) = right {
            self.cow(r, Some(parent));
            changed |= self.push_node_left(mid, r, true);
            if self.blocks[r].nritems() == 0 {
                self.del_ptr(path, level + 1, pslot + 1);
                self.free_block(r);
            } else {
                self.set_parent_key(parent, pslot + 1, r);
            }
        }
        if let Some(l) = left
            && self.blocks[mid].nritems() == 1
        {
            changed |= self.balance_node_right(mid, l);
        }
        if self.blocks[mid].nritems() == 0 {
            self.del_ptr(path, level + 1, pslot);
            self.free_block(mid);
        } else {
            self.set_parent_key(parent, pslot, mid);
        }
        self.stats.node_balances += u64::from(changed);
        changed
    }
}
