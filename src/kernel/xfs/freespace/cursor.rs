//! Btree cursors: lookup, increment, decrement and get_rec, counting the
//! blocks and records they touch.
//!
//! Follows `xfs_btree_lookup` (root-to-leaf descent with one binary search
//! per block; a GE lookup that lands past the end of a leaf steps to the
//! next leaf), `xfs_btree_increment` / `xfs_btree_decrement` (O(1) inside a
//! leaf; at a leaf boundary walk up to the first ancestor that can move,
//! step there, and read each block on the way back down to the sibling
//! leaf) and `xfs_alloc_get_rec`. Ancestors are held by the cursor (as the
//! kernel's `bc_levels[].bp`), so only blocks descended into are counted.

use super::btree::{AllocBtree, AllocRec, NULLBLOCK};

/// Comparison of a lookup (`xfs_lookup_t`): `XFS_LOOKUP_LE`, `_EQ`, `_GE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookupDir {
    /// Last record with key <= the search key.
    Le,
    /// The record whose key equals the search key.
    Eq,
    /// First record with key >= the search key.
    Ge,
}

/// A position in one tree: for each level from the leaf (index 0) up to the
/// root, the block and the slot in it. Slot -1 is "before the first record"
/// and `numrecs` is "past the last". A cursor is valid only until the tree
/// is modified through another cursor.
#[derive(Clone, Debug, Default)]
pub struct BtreeCursor {
    pub(crate) path: Vec<(u32, isize)>,
}

/// `partition_point` that records each probed index (one key comparison
/// each) in `probes`.
fn probed_partition<T>(v: &[T], probes: &mut Vec<usize>, pred: impl Fn(&T) -> bool) -> usize {
    let (mut lo, mut hi) = (0, v.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        probes.push(mid);
        if pred(&v[mid]) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl AllocBtree {
    /// A fresh, unpositioned cursor.
    pub fn cursor(&self) -> BtreeCursor {
        BtreeCursor::default()
    }

    /// Root-to-leaf descent towards `key`; the leaf slot is the first
    /// record with key >= `key` in the leaf reached (may be `numrecs`).
    /// Per level, as `xfs_btree_lookup`: get the block (a buffer read
    /// unless the cursor already holds that block at that level,
    /// `xfs_btree_lookup_get_block`), check its header
    /// (`xfs_btree_check_block`), binary-search it (one key comparison and
    /// one line touch per probe) and, in a node, read the pointer followed.
    pub(crate) fn descend(&mut self, cur: &mut BtreeCursor, key: u64) {
        let held = std::mem::take(&mut cur.path);
        cur.path.resize(self.height, (NULLBLOCK, 0));
        let mut b = self.root;
        let mut probes = Vec::with_capacity(16);
        // xfs_btree_init_ptr_from_cur: bc_ops->init_ptr_from_cur.
        self.stats.indirect_calls += 1;
        for level in (1..self.height).rev() {
            self.get_block(&held, level, b);
            probes.clear();
            let n = self.node(b);
            let i = probed_partition(&n.keys, &mut probes, |k| *k <= key).saturating_sub(1);
            let child = n.ptrs[i];
            self.touch_probes(b, &probes);
            // Per probe bc_ops->cmp_key_with_cur; the pointer's address
            // through bc_ops->get_maxrecs.
            self.stats.indirect_calls += probes.len() as u64 + 1;
            self.touch(b, self.ptr_offset(i));
            cur.path[level] = (b, i as isize);
            b = child;
        }
        self.get_block(&held, 0, b);
        probes.clear();
        let kind = self.kind;
        let slot = probed_partition(&self.leaf(b).recs, &mut probes, |r| kind.key(*r) < key);
        self.touch_probes(b, &probes);
        // Per leaf probe bc_ops->init_key_from_rec and cmp_key_with_cur.
        self.stats.indirect_calls += 2 * probes.len() as u64;
        cur.path[0] = (b, slot as isize);
    }

    /// One block visit of a lookup: a buffer read unless `held` (the
    /// cursor's previous path) has block `b` at `level`; the header line.
    fn get_block(&mut self, held: &[(u32, isize)], level: usize, b: u32) {
        self.stats.blocks_visited += 1;
        if held.get(level).is_none_or(|&(hb, _)| hb != b) {
            self.stats.buffer_reads += 1;
        }
        self.touch(b, 0);
    }

    /// Counts the comparisons of a binary search in block `b` and the
    /// lines its probes touch.
    fn touch_probes(&mut self, b: u32, probes: &[usize]) {
        self.stats.keys_compared += probes.len() as u64;
        for &p in probes {
            self.touch(b, self.entry_offset(p));
        }
    }

    /// A block entered by an increment/decrement at a leaf boundary
    /// (`xfs_btree_read_buf_block`): a buffer read, its header line and,
    /// in a node, the line of the pointer followed next.
    fn step_into(&mut self, b: u32, slot: usize) {
        self.stats.blocks_visited += 1;
        self.stats.buffer_reads += 1;
        self.touch(b, 0);
        if matches!(self.blocks[b as usize], super::btree::Block::Node(_)) {
            self.touch(b, self.ptr_offset(slot));
            // xfs_btree_ptr_addr: bc_ops->get_maxrecs.
            self.stats.indirect_calls += 1;
        }
    }

    /// `xfs_alloc_lookup_{le,eq,ge}`: positions `cur` by `rec`'s key in this
    /// tree (startblock for the bnobt, (blockcount, startblock) for the
    /// cntbt). Returns whether a record satisfying `dir` was found.
    pub fn lookup(&mut self, cur: &mut BtreeCursor, dir: LookupDir, rec: AllocRec) -> bool {
        let key = self.kind.key(rec);
        self.descend(cur, key);
        let (b, slot) = cur.path[0];
        let kind = self.kind;
        let l = self.leaf(b);
        let n = l.recs.len() as isize;
        match dir {
            LookupDir::Eq => slot < n && kind.key(l.recs[slot as usize]) == key,
            LookupDir::Ge => {
                if slot < n {
                    true
                } else if l.right != NULLBLOCK {
                    self.increment(cur)
                } else {
                    false
                }
            }
            LookupDir::Le => {
                let hit = slot < n && kind.key(l.recs[slot as usize]) == key;
                if !hit {
                    cur.path[0].1 = slot - 1;
                }
                cur.path[0].1 >= 0
            }
        }
    }

    /// `xfs_btree_increment`: moves to the next record; false (cursor past
    /// the end) if there is none.
    pub fn increment(&mut self, cur: &mut BtreeCursor) -> bool {
        let Some(&(leaf, slot)) = cur.path.first() else {
            return false;
        };
        let l = self.leaf(leaf);
        let n = l.recs.len() as isize;
        if slot + 1 < n {
            cur.path[0].1 = slot + 1;
            return true;
        }
        cur.path[0].1 = n;
        if l.right == NULLBLOCK {
            return false;
        }
        let Some(lev) = (1..self.height).find(|&lev| {
            let (b, s) = cur.path[lev];
            s + 1 < self.numrecs(b) as isize
        }) else {
            return false;
        };
        cur.path[lev].1 += 1;
        let (top, top_slot) = cur.path[lev];
        self.touch(top, self.ptr_offset(top_slot as usize));
        for l in (0..lev).rev() {
            let (pb, ps) = cur.path[l + 1];
            let child = self.node(pb).ptrs[ps as usize];
            self.step_into(child, 0);
            cur.path[l] = (child, 0);
        }
        true
    }

    /// `xfs_btree_decrement`: moves to the previous record; false (cursor
    /// before the start) if there is none.
    pub fn decrement(&mut self, cur: &mut BtreeCursor) -> bool {
        let Some(&(leaf, slot)) = cur.path.first() else {
            return false;
        };
        let l = self.leaf(leaf);
        let n = l.recs.len() as isize;
        if slot > 0 && n > 0 {
            cur.path[0].1 = (slot - 1).min(n - 1);
            return true;
        }
        cur.path[0].1 = -1;
        if l.left == NULLBLOCK {
            return false;
        }
        let Some(lev) = (1..self.height).find(|&lev| cur.path[lev].1 > 0) else {
            return false;
        };
        cur.path[lev].1 -= 1;
        let (top, top_slot) = cur.path[lev];
        self.touch(top, self.ptr_offset(top_slot as usize));
        for l in (0..lev).rev() {
            let (pb, ps) = cur.path[l + 1];
            let child = self.node(pb).ptrs[ps as usize];
            let last = self.numrecs(child) as isize - 1;
            self.step_into(child, last.max(0) as usize);
            cur.path[l] = (child, last);
        }
        true
    }

    /// `xfs_alloc_get_rec`: the record under the cursor, counted as one
    /// record examined; None if the cursor is off either end.
    pub fn get_rec(&mut self, cur: &BtreeCursor) -> Option<AllocRec> {
        let &(leaf, slot) = cur.path.first()?;
        let r = *self.leaf(leaf).recs.get(usize::try_from(slot).ok()?)?;
        self.stats.records_examined += 1;
        Some(r)
    }

    /// The record under the cursor without counting it (for sanity checks
    /// the kernel does on data it already holds).
    pub fn get_rec_uncounted(&self, cur: &BtreeCursor) -> Option<AllocRec> {
        let &(leaf, slot) = cur.path.first()?;
        let l = self.leaf(leaf);
        usize::try_from(slot).ok().and_then(|s| l.recs.get(s).copied())
    }

    /// `bc_levels[0].ptr = 1`: the first record of the cursor's leaf (the
    /// leaf is held: no block is read).
    pub fn to_leaf_start(&self, cur: &mut BtreeCursor) {
        if let Some(p) = cur.path.first_mut() {
            p.1 = 0;
        }
    }

    /// `xfs_btree_islastblock`: is the cursor's leaf the rightmost one?
    pub fn is_last_block(&self, cur: &BtreeCursor) -> bool {
        cur.path.first().is_some_and(|&(leaf, _)| self.leaf(leaf).right == NULLBLOCK)
    }
}
