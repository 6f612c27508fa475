//! Record insertion, deletion and in-place update, with block splits,
//! shifts and joins.
//!
//! Follows `xfs_btree_insert` (insert at the looked-up slot; a full block
//! is first made unfull by a shift into a sibling or a split,
//! `super::unfull`, and a split's new block goes into the parent; a full
//! root grows a new root, `xfs_btree_new_root`),
//! `xfs_btree_delete` / `xfs_btree_delrec` (a block falling under the
//! minimum first borrows one entry from a sibling with spare entries,
//! `xfs_btree_lshift`/`rshift`, else joins with it; a root node left with
//! one child is removed, `xfs_btree_kill_root`) and `xfs_btree_update`
//! (keys in the parents follow a changed first record, `xfs_btree_updkeys`).
//! Siblings are the blocks beside one at its level, under the same parent
//! or not (the kernel's sibling pointers).

use super::btree::{AllocBtree, AllocRec, Block, NULLBLOCK, Node};
use super::cursor::{BtreeCursor, LookupDir};
use super::unfull::Side;

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
        if self.leaf(leaf).recs.get(slot as usize).is_some_and(|r| kind.key(*r) == key) {
            return false;
        }
        self.nrecs += 1;
        self.stats.updates += 1;
        // xfs_btree_insrec: bc_ops->init_rec_from_cur, init_key_from_rec,
        // get_maxrecs.
        self.stats.indirect_calls += 3;
        self.insrec(&mut cur, 0, Entry::Rec(rec));
        true
    }

    /// `xfs_btree_insrec` of `entry` at the cursor's slot at `level`, and
    /// up the tree while blocks split (`xfs_btree_insert`'s loop): a full
    /// block is first made unfull ([`AllocBtree::make_block_unfull`]); a
    /// split's new block goes into the parent after the old one, keyed by
    /// its first entry once the insert is done; a split root grows a new
    /// root (`xfs_btree_new_root`). The cursor is invalid afterwards.
    fn insrec(&mut self, cur: &mut BtreeCursor, mut level: usize, mut entry: Entry) {
        loop {
            let (old, _) = cur.path[level];
            let new = if self.numrecs(old) >= self.maxrecs(level) {
                self.make_block_unfull(cur, level)
            } else {
                None
            };
            let (b, slot) = cur.path[level];
            self.put_entry(b, slot as usize, entry);
            if slot == 0 && new != Some(b) {
                self.fix_keys(cur, level);
            }
            let Some(nb) = new else {
                return;
            };
            let Some(nkey) = self.first_key(nb) else {
                return;
            };
            if level + 1 == self.height {
                let Some(okey) = self.first_key(old) else {
                    return;
                };
                // xfs_btree_new_root reads the old root's new sibling, which
                // the split made in this transaction (held: no read); the
                // new root is got, not read.
                self.stats.blocks_visited += 2;
                let root = self.alloc_block(Block::Node(Node {
                    keys: vec![okey, nkey],
                    ptrs: vec![old, nb],
                }));
                self.root = root;
                self.height += 1;
                return;
            }
            cur.path[level + 1].1 += 1;
            entry = Entry::Ptr(nkey, nb);
            level += 1;
        }
    }

    /// Puts `entry` into block `b` before slot `slot`.
    fn put_entry(&mut self, b: u32, slot: usize, entry: Entry) {
        match entry {
            Entry::Rec(r) => self.leaf_mut(b).recs.insert(slot, r),
            Entry::Ptr(k, c) => {
                let n = self.node_mut(b);
                n.keys.insert(slot, k);
                n.ptrs.insert(slot, c);
            }
        }
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
        self.nrecs -= 1;
        self.stats.updates += 1;
        // xfs_btree_delrec: bc_ops->get_minrecs, past the root-leaf return.
        self.stats.indirect_calls += u64::from(self.height > 1);
        self.delrec(cur, 0);
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

    /// `xfs_btree_delrec`: removes the entry at `cur.path[level]`. A root
    /// node left with one child is removed (`xfs_btree_kill_root`);
    /// elsewhere the parents' keys follow a removed first entry, and a
    /// block left under its minimum is rebalanced.
    fn delrec(&mut self, cur: &BtreeCursor, level: usize) {
        let (b, slot) = cur.path[level];
        match &mut self.blocks[b as usize] {
            Block::Leaf(l) => {
                l.recs.remove(slot as usize);
            }
            Block::Node(n) => {
                n.keys.remove(slot as usize);
                n.ptrs.remove(slot as usize);
            }
            Block::Free => return,
        }
        let n = self.numrecs(b);
        if level + 1 == self.height {
            if level > 0 && n == 1 {
                self.root = self.node(b).ptrs[0];
                self.free_block(b);
                self.height -= 1;
            }
            return;
        }
        if slot == 0 && n > 0 {
            self.fix_keys(cur, level);
        }
        if n < self.minrecs(level) {
            self.rebalance(cur, level);
        }
    }

    /// The rest of `xfs_btree_delrec` for a block left under its minimum,
    /// in the kernel's order: take the right sibling's first entry if it
    /// can spare one (`xfs_btree_lshift` on a cursor moved right), else
    /// the left sibling's last (`xfs_btree_rshift`), else join into the
    /// left sibling if the two fit one block, else join the right sibling
    /// in; a join removes the emptied block's pointer from its parent
    /// (`delrec` one level up). Siblings are the blocks beside it at its
    /// level, under the same parent or not; each is read through a
    /// cursor walked from the ancestor the two share.
    ///
    /// Reads: only a buffer the transaction does not hold is read
    /// (`xfs_trans_read_buf_map` finds a joined one and fires
    /// `xfs_trans_read_buf_recur` instead). The deleting cursor holds
    /// this block and its ancestors throughout, and the second cursor
    /// (`xfs_btree_dup_cursor`) holds the sibling it stands on; a clean
    /// block it steps off leaves the transaction (`xfs_btree_setbuf` ->
    /// `xfs_trans_brelse`), and so does the one it stands on when it is
    /// deleted, before a join. So the walks into the siblings read, the
    /// walk back and the shifts (whose other block is this one) do not,
    /// and a join reads the block it merges with again.
    fn rebalance(&mut self, cur: &BtreeCursor, level: usize) {
        let (b, _) = cur.path[level];
        let (min, max) = (self.minrecs(level), self.maxrecs(level));
        let right = self.sibling(cur, level, Side::Right);
        let left = self.sibling(cur, level, Side::Left);
        self.stats.joins += 1;
        if let Some((rs, top)) = &right {
            // The second cursor: xfs_btree_lastrec + xfs_btree_increment
            // into the right sibling and the ancestors it does not share.
            self.read_blocks(*top - level);
            let r = rs.path[level].0;
            if self.numrecs(r) > min {
                // xfs_btree_lshift on that cursor: its left sibling is
                // this block, held.
                self.move_first_to_end(r, b);
                self.fix_keys(rs, level);
                return;
            }
            // Back to this block (xfs_btree_firstrec + decrement): held.
        }
        if let Some((ls, top)) = &left {
            // The second cursor into the left sibling.
            self.read_blocks(*top - level);
            let l = ls.path[level].0;
            if self.numrecs(l) > min {
                // xfs_btree_rshift on that cursor: its right sibling and
                // the third cursor walked back here are this block, held.
                self.move_last_to_front(l, b);
                self.fix_keys(cur, level);
                return;
            }
        }
        let n = self.numrecs(b);
        // The second cursor is deleted before a join (the clean sibling
        // it stood on leaves the transaction), so the join reads the
        // block it merges with.
        if let Some((ls, _)) = left.as_ref().filter(|(ls, _)| self.numrecs(ls.path[level].0) + n <= max) {
            let l = ls.path[level].0;
            self.read_blocks(1);
            self.join(l, b, cur, level);
            self.delrec(cur, level + 1);
        } else if let Some((rs, _)) = right.filter(|(rs, _)| self.numrecs(rs.path[level].0) + n <= max) {
            self.read_blocks(1);
            self.join(b, rs.path[level].0, &rs, level);
            self.delrec(&rs, level + 1);
        }
    }

    /// Appends all of `right` to its left sibling `left` and frees `right`;
    /// the block after `right` (from `at_right`, a cursor on `right` at
    /// `level`) is read to fix its left pointer, as the kernel's join does.
    fn join(&mut self, left: u32, right: u32, at_right: &BtreeCursor, level: usize) {
        if self.sibling(at_right, level, Side::Right).is_some() {
            self.read_blocks(1);
        }
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
}

/// An entry to insert: a record into a leaf, a key and child pointer
/// into a node.
enum Entry {
    Rec(AllocRec),
    Ptr(u64, u32),
}
