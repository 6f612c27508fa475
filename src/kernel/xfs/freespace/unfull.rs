//! Making room in a full block before an insert, as
//! `xfs_btree_make_block_unfull` (fs/xfs/libxfs/xfs_btree.c) does for a
//! block that is not an inode root: first shift the block's last entry
//! into its right sibling (`xfs_btree_rshift`), else its first entry into
//! its left sibling (`xfs_btree_lshift`), else split it
//! (`__xfs_btree_split`).
//!
//! Siblings are the blocks before and after at the same level, under the
//! same parent or not: the kernel follows the blocks' sibling pointers,
//! this model the cursor's path (the block before or after at that level
//! is the same block). Records appended at the end of a tree (the lab's
//! holes punched in block order) so fill every leaf but the last two: a
//! full last leaf hands its first record to its left sibling until that
//! one is full too, and only then splits.

use super::btree::{AllocBtree, Block, Leaf, NULLBLOCK, Node};
use super::cursor::BtreeCursor;

/// Which sibling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Left,
    Right,
}

impl AllocBtree {
    /// Entries a block at `level` holds at most.
    pub(crate) fn maxrecs(&self, level: usize) -> usize {
        if level == 0 { self.geo.leaf_maxrecs } else { self.geo.node_maxrecs }
    }

    /// Entries a non-root block at `level` holds at least.
    pub(crate) fn minrecs(&self, level: usize) -> usize {
        if level == 0 { self.geo.leaf_minrecs } else { self.geo.node_minrecs }
    }

    /// A copy of `cur` moved to the block beside `cur.path[level]` on
    /// `side` at the same level (its slot there 0 for the right sibling,
    /// the last entry for the left), with the parents above it; and the
    /// level of the lowest ancestor the two share. None at the tree's
    /// edge. Levels below `level` are left as they were.
    pub(crate) fn sibling(&self, cur: &BtreeCursor, level: usize, side: Side) -> Option<(BtreeCursor, usize)> {
        let top = (level + 1..self.height).find(|&lev| {
            let (p, s) = cur.path[lev];
            match side {
                Side::Left => s > 0,
                Side::Right => s + 1 < self.numrecs(p) as isize,
            }
        })?;
        let mut sib = cur.clone();
        sib.path[top].1 += if side == Side::Left { -1 } else { 1 };
        for l in (level..top).rev() {
            let (pb, ps) = sib.path[l + 1];
            let child = self.node(pb).ptrs[ps as usize];
            let slot = match side {
                Side::Left => self.numrecs(child) as isize - 1,
                Side::Right => 0,
            };
            sib.path[l] = (child, slot);
        }
        Some((sib, top))
    }

    /// `n` blocks read through `xfs_btree_read_buf_block`: a sibling, or
    /// the blocks a second cursor walks down from a shared ancestor at
    /// `top` to `level` (`n = top - level`, `xfs_btree_increment` /
    /// `decrement`).
    pub(crate) fn read_blocks(&mut self, n: usize) {
        self.stats.blocks_visited += n as u64;
        self.stats.buffer_reads += n as u64;
    }

    /// `xfs_btree_make_block_unfull` for the full block at `cur.path[level]`
    /// into which an entry is to go at slot `cur.path[level].1`: afterwards
    /// the cursor's block at `level` has room and its slot is where the
    /// entry goes. Returns the new block when it took a split (its parent
    /// has yet to get a pointer to it, after the old block's).
    pub(crate) fn make_block_unfull(&mut self, cur: &mut BtreeCursor, level: usize) -> Option<u32> {
        let mut right_held = false;
        if level + 1 < self.height {
            let (shifted, read_right) = self.rshift(cur, level);
            right_held = read_right;
            if shifted || self.lshift(cur, level) {
                return None;
            }
        }
        Some(self.split_before_insert(cur, level, right_held))
    }

    /// `xfs_btree_rshift`: moves the block's last entry to the front of its
    /// right sibling, unless there is none, the cursor's slot is at or
    /// past that last entry ("too complicated", the kernel says), or the
    /// sibling is full. Then the sibling's parent keys follow its new
    /// first key, through a second cursor walked right
    /// (`xfs_btree_increment` reads the blocks under the shared ancestor
    /// but the sibling, which the transaction already holds).
    /// Returns whether it shifted, and whether it read the sibling (a
    /// full one stays in the transaction: the kernel's `out0` does not
    /// release it, so a split after finds it held).
    fn rshift(&mut self, cur: &BtreeCursor, level: usize) -> (bool, bool) {
        let (b, slot) = cur.path[level];
        let Some((sib, top)) = self.sibling(cur, level, Side::Right) else {
            return (false, false);
        };
        if slot + 1 >= self.numrecs(b) as isize {
            return (false, false);
        }
        self.read_blocks(1);
        let r = sib.path[level].0;
        if self.numrecs(r) >= self.maxrecs(level) {
            return (false, true);
        }
        self.move_last_to_front(b, r);
        self.stats.joins += 1;
        // The second cursor's walk ends on the sibling, which the
        // transaction holds (read above and changed): only the ancestors
        // it does not share with this block are read.
        self.read_blocks(top - level - 1);
        self.fix_keys(&sib, level);
        (true, true)
    }

    /// `xfs_btree_lshift`: moves the block's first entry to the end of its
    /// left sibling, unless there is none, the cursor's slot is the first
    /// (the entry would be the one moved), or the sibling is full. Then
    /// the block's parent keys follow its new first key and the cursor's
    /// slot moves left by one.
    fn lshift(&mut self, cur: &mut BtreeCursor, level: usize) -> bool {
        let (b, slot) = cur.path[level];
        let Some((sib, _)) = self.sibling(cur, level, Side::Left) else {
            return false;
        };
        if slot <= 0 {
            return false;
        }
        self.read_blocks(1);
        let l = sib.path[level].0;
        if self.numrecs(l) >= self.maxrecs(level) {
            return false;
        }
        self.move_first_to_end(b, l);
        self.stats.joins += 1;
        self.fix_keys(cur, level);
        cur.path[level].1 -= 1;
        true
    }

    /// `__xfs_btree_split` of the full block at `cur.path[level]` before an
    /// entry goes in at the cursor's slot: the right half moves to a new
    /// block (one more entry stays left of an odd count unless the entry
    /// goes into the left half), the new block is linked between the block
    /// and its right sibling (read to fix its left pointer), and the
    /// cursor follows the entry's slot into the new block if it lies
    /// there. Returns the new block. The new block is visited but not read
    /// (`xfs_btree_get_buf_block`), nor is the right sibling when
    /// `right_held` (an `rshift` read it and found it full).
    fn split_before_insert(&mut self, cur: &mut BtreeCursor, level: usize, right_held: bool) -> u32 {
        let (b, slot) = cur.path[level];
        self.stats.splits += 1;
        // The new block: got with xfs_btree_get_buf_block, not read.
        self.stats.blocks_visited += 1;
        let n = self.numrecs(b);
        // The kernel's ptr is 1-based: the entry goes before ptr.
        let ptr = slot as usize + 1;
        let mut rrecs = n / 2;
        if n % 2 == 1 && ptr <= rrecs + 1 {
            rrecs += 1;
        }
        let lrecs = n - rrecs;
        let right = match &mut self.blocks[b as usize] {
            Block::Leaf(l) => Block::Leaf(Leaf {
                recs: l.recs.split_off(lrecs),
                left: b,
                right: l.right,
            }),
            Block::Node(nd) => Block::Node(Node {
                keys: nd.keys.split_off(lrecs),
                ptrs: nd.ptrs.split_off(lrecs),
            }),
            Block::Free => Block::Free,
        };
        let has_right = self.sibling(cur, level, Side::Right).is_some();
        let nb = self.alloc_block(right);
        if level == 0 {
            let old_right = self.leaf(nb).right;
            self.leaf_mut(b).right = nb;
            if old_right != NULLBLOCK {
                self.leaf_mut(old_right).left = nb;
            }
        }
        if has_right && !right_held {
            self.read_blocks(1);
        }
        if ptr > lrecs + 1 {
            cur.path[level] = (nb, slot - lrecs as isize);
        }
        nb
    }

    /// Moves the last entry of `from` to the front of its right sibling
    /// `to`.
    pub(crate) fn move_last_to_front(&mut self, from: u32, to: u32) {
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

    /// Moves the first entry of `from` to the end of its left sibling `to`.
    pub(crate) fn move_first_to_end(&mut self, from: u32, to: u32) {
        match &mut self.blocks[from as usize] {
            Block::Leaf(l) => {
                if !l.recs.is_empty() {
                    let r = l.recs.remove(0);
                    self.leaf_mut(to).recs.push(r);
                }
            }
            Block::Node(n) => {
                if !n.ptrs.is_empty() {
                    let (k, c) = (n.keys.remove(0), n.ptrs.remove(0));
                    let t = self.node_mut(to);
                    t.keys.push(k);
                    t.ptrs.push(c);
                }
            }
            Block::Free => {}
        }
    }
}
