//! Record insertion, deletion and in-place update, with block splits,
//! shifts and joins.
//!
//! Follows `xfs_btree_insert` (insert at the looked-up slot; a full block
//! splits in half, `xfs_btree_split`, and the new block's key goes into the
//! parent; a full root grows a new root, `xfs_btree_new_root`),
//! `xfs_btree_delete` / `xfs_btree_delrec` (a block falling under the
//! minimum first borrows one entry from a sibling with spare entries,
//! `xfs_btree_lshift`/`rshift`, else joins with it; a root node left with
//! one child is removed, `xfs_btree_kill_root`) and `xfs_btree_update`
//! (keys in the parents follow a changed first record, `xfs_btree_updkeys`).
//! Siblings are taken under the same parent.

use super::btree::{AllocBtree, AllocRec, Block, Leaf, NULLBLOCK, Node};
use super::cursor::{BtreeCursor, LookupDir};

impl AllocBtree {
    /// `lookup_eq` + `xfs_btree_insert`: inserts `rec`; false if a record
    /// with the same key is already there.
    pub fn insert(&mut self, rec: AllocRec) -> bool {
        self.insert_from(None, rec)
    }

    /// [`AllocBtree::insert`] through a cursor that already holds the
    /// blocks of `held` (the kernel's `lookup_eq` + `xfs_btree_insert` on
    /// the caller's cursor): blocks it holds are not read again.
    pub fn insert_from(&mut self, held: Option<&BtreeCursor>, rec: AllocRec) -> bool {
        let key = self.kind.key(rec);
        let mut cur = held.cloned().unwrap_or_default();
        self.descend(&mut cur, key);
        let (leaf, slot) = cur.path[0];
        let kind = self.kind;
        let l = self.leaf_mut(leaf);
        if l.recs.get(slot as usize).is_some_and(|r| kind.key(*r) == key) {
            return false;
        }
        l.recs.insert(slot as usize, rec);
        self.nrecs += 1;
        self.stats.updates += 1;
        // xfs_btree_insrec: bc_ops->init_rec_from_cur, init_key_from_rec,
        // get_maxrecs.
        self.stats.indirect_calls += 3;
        if slot == 0 {
            self.fix_keys(&cur, 0);
        }
        if self.numrecs(leaf) > self.geo.leaf_maxrecs {
            self.split(&cur, 0);
        }
        true
    }

    /// `lookup_eq` + `xfs_btree_delete`: removes `rec`; false if absent.
    pub fn delete(&mut self, rec: AllocRec) -> bool {
        let mut cur = self.cursor();
        if !self.lookup(&mut cur, LookupDir::Eq, rec) {
            return false;
        }
        self.delete_at(&cur);
        true
    }

    /// `xfs_btree_delete` at a positioned cursor (no new lookup). The
    /// cursor is invalid afterwards.
    pub fn delete_at(&mut self, cur: &BtreeCursor) -> bool {
        let Some(&(leaf, slot)) = cur.path.first() else {
            return false;
        };
        if slot < 0 || slot as usize >= self.numrecs(leaf) {
            return false;
        }
        self.leaf_mut(leaf).recs.remove(slot as usize);
        self.nrecs -= 1;
        self.stats.updates += 1;
        // xfs_btree_delrec: bc_ops->get_minrecs, past the root-leaf return.
        self.stats.indirect_calls += u64::from(self.height > 1);
        if slot == 0 && self.numrecs(leaf) > 0 {
            self.fix_keys(cur, 0);
        }
        if self.height > 1 && self.numrecs(leaf) < self.geo.leaf_minrecs {
            self.rebalance(cur, 0);
        }
        true
    }

    /// `xfs_btree_update` at a positioned cursor: replaces the record with
    /// `rec`, which must keep its place in the key order (true for the
    /// bnobt when a free extent shrinks or grows in place). Returns false
    /// if the cursor is off a record or the order would break.
    pub fn update_at(&mut self, cur: &BtreeCursor, rec: AllocRec) -> bool {
        let Some(&(leaf, slot)) = cur.path.first() else {
            return false;
        };
        let kind = self.kind;
        let l = self.leaf(leaf);
        let s = slot as usize;
        if slot < 0 || s >= l.recs.len() {
            return false;
        }
        let k = kind.key(rec);
        let before_ok = s == 0 || kind.key(l.recs[s - 1]) < k;
        let after_ok = s + 1 >= l.recs.len() || kind.key(l.recs[s + 1]) > k;
        if !before_ok || !after_ok {
            return false;
        }
        self.leaf_mut(leaf).recs[s] = rec;
        self.stats.updates += 1;
        if s == 0 {
            self.fix_keys(cur, 0);
        }
        true
    }

    /// After the first entry of the block at `level` changed, rewrites the
    /// parents' keys up to the first ancestor where it is not the first.
    pub(crate) fn fix_keys(&mut self, cur: &BtreeCursor, level: usize) {
        if level == 0 && self.height > 1 {
            // xfs_btree_update_keys: the leaf's new low key through
            // bc_ops->init_key_from_rec.
            self.stats.indirect_calls += 1;
        }
        for lev in level + 1..self.height {
            let (child, _) = cur.path[lev - 1];
            let (b, s) = cur.path[lev];
            let Some(k) = self.first_key(child) else {
                return;
            };
            self.node_mut(b).keys[s as usize] = k;
            if s != 0 {
                return;
            }
        }
    }

    /// Splits the over-full block at `level` in half and inserts the new
    /// right half into the parent, recursing (or growing a root).
    fn split(&mut self, cur: &BtreeCursor, level: usize) {
        let (b, _) = cur.path[level];
        self.stats.splits += 1;
        self.stats.blocks_visited += 1;
        self.stats.buffer_reads += 1;
        let right = match &mut self.blocks[b as usize] {
            Block::Leaf(l) => {
                let half = l.recs.len() / 2;
                let recs = l.recs.split_off(half);
                Block::Leaf(Leaf {
                    recs,
                    left: b,
                    right: l.right,
                })
            }
            Block::Node(n) => {
                let half = n.ptrs.len() / 2;
                Block::Node(Node {
                    keys: n.keys.split_off(half),
                    ptrs: n.ptrs.split_off(half),
                })
            }
            Block::Free => return,
        };
        let nb = self.alloc_block(right);
        if level == 0 {
            let old_right = self.leaf(nb).right;
            self.leaf_mut(b).right = nb;
            if old_right != NULLBLOCK {
                self.leaf_mut(old_right).left = nb;
                self.stats.blocks_visited += 1;
                self.stats.buffer_reads += 1;
            }
        }
        let Some(nkey) = self.first_key(nb) else {
            return;
        };
        if level + 1 == self.height {
            let Some(okey) = self.first_key(b) else {
                return;
            };
            let root = self.alloc_block(Block::Node(Node {
                keys: vec![okey, nkey],
                ptrs: vec![b, nb],
            }));
            self.root = root;
            self.height += 1;
            return;
        }
        let (p, ps) = cur.path[level + 1];
        let node = self.node_mut(p);
        node.keys.insert(ps as usize + 1, nkey);
        node.ptrs.insert(ps as usize + 1, nb);
        if node.ptrs.len() > self.geo.node_maxrecs {
            self.split(cur, level + 1);
        }
    }

    /// The block at `level` has fallen under its minimum: borrow from a
    /// sibling with spare entries, else join with one, then fix the parent.
    fn rebalance(&mut self, cur: &BtreeCursor, level: usize) {
        let (b, _) = cur.path[level];
        let (p, ps) = cur.path[level + 1];
        let ps = ps as usize;
        let min = if level == 0 { self.geo.leaf_minrecs } else { self.geo.node_minrecs };
        let nptrs = self.node(p).ptrs.len();
        let right = (ps + 1 < nptrs).then(|| self.node(p).ptrs[ps + 1]);
        let left = (ps > 0).then(|| self.node(p).ptrs[ps - 1]);
        self.stats.blocks_visited += 1;
        self.stats.buffer_reads += 1;
        self.stats.joins += 1;
        if let Some(r) = right.filter(|&r| self.numrecs(r) > min) {
            self.shift_first(r, b);
            self.refresh_key(p, ps + 1);
            self.refresh_key(p, ps);
        } else if let Some(l) = left.filter(|&l| self.numrecs(l) > min) {
            self.shift_last(l, b);
            self.refresh_key(p, ps);
        } else if let Some(r) = right {
            self.join(b, r);
            self.remove_ptr(p, ps + 1);
            self.refresh_key(p, ps);
        } else if let Some(l) = left {
            self.join(l, b);
            self.remove_ptr(p, ps);
        }
        if ps == 0 {
            self.fix_keys(cur, level + 1);
        }
        self.after_parent_shrank(cur, level + 1);
    }

    /// Collapses a one-child root, or rebalances an under-full parent.
    fn after_parent_shrank(&mut self, cur: &BtreeCursor, level: usize) {
        let (p, _) = cur.path[level];
        let n = self.node(p).ptrs.len();
        if level + 1 == self.height {
            if n == 1 {
                self.root = self.node(p).ptrs[0];
                self.free_block(p);
                self.height -= 1;
            }
        } else if n < self.geo.node_minrecs {
            self.rebalance(cur, level);
        }
    }

    /// Sets the parent's key at `slot` to its child's first key.
    fn refresh_key(&mut self, p: u32, slot: usize) {
        let child = self.node(p).ptrs[slot];
        if let Some(k) = self.first_key(child) {
            self.node_mut(p).keys[slot] = k;
        }
    }

    /// Moves the first entry of `from` to the end of its left sibling `to`.
    fn shift_first(&mut self, from: u32, to: u32) {
        match self.blocks[from as usize].clone_first() {
            Entry::Rec(r) => {
                self.leaf_mut(from).recs.remove(0);
                self.leaf_mut(to).recs.push(r);
            }
            Entry::Ptr(k, c) => {
                let n = self.node_mut(from);
                n.keys.remove(0);
                n.ptrs.remove(0);
                let t = self.node_mut(to);
                t.keys.push(k);
                t.ptrs.push(c);
            }
            Entry::None => {}
        }
    }

    /// Moves the last entry of `from` to the front of its right sibling `to`.
    fn shift_last(&mut self, from: u32, to: u32) {
        match &mut self.blocks[from as usize] {
            Block::Leaf(l) => {
                if let Some(r) = l.recs.pop() {
                    self.leaf_mut(to).recs.insert(0, r);
                }
            }
            Block::Node(n) => {
                if let (Some(k), Some(c)) = (n.keys.pop(), n.ptrs.pop()) {
                    let t = self.node_mut(to);
                    t.keys.insert(0, k);
                    t.ptrs.insert(0, c);
                }
            }
            Block::Free => {}
        }
    }

    /// Appends all of `right` to its left sibling `left` and frees `right`.
    fn join(&mut self, left: u32, right: u32) {
        let blk = std::mem::replace(&mut self.blocks[right as usize], Block::Free);
        match blk {
            Block::Leaf(r) => {
                let l = self.leaf_mut(left);
                l.recs.extend_from_slice(&r.recs);
                l.right = r.right;
                if r.right != NULLBLOCK {
                    self.leaf_mut(r.right).left = left;
                }
            }
            Block::Node(r) => {
                let l = self.node_mut(left);
                l.keys.extend_from_slice(&r.keys);
                l.ptrs.extend_from_slice(&r.ptrs);
            }
            Block::Free => {}
        }
        self.free_list.push(right);
    }

    /// Removes key/pointer `slot` from node `p`.
    fn remove_ptr(&mut self, p: u32, slot: usize) {
        let n = self.node_mut(p);
        n.keys.remove(slot);
        n.ptrs.remove(slot);
    }
}

/// The first entry of a block, copied out.
enum Entry {
    Rec(AllocRec),
    Ptr(u64, u32),
    None,
}

impl Block {
    fn clone_first(&self) -> Entry {
        match self {
            Block::Leaf(l) => l.recs.first().map_or(Entry::None, |r| Entry::Rec(*r)),
            Block::Node(n) => match (n.keys.first(), n.ptrs.first()) {
                (Some(k), Some(c)) => Entry::Ptr(*k, *c),
                _ => Entry::None,
            },
            Block::Free => Entry::None,
        }
    }
}
