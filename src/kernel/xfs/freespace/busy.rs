//! Busy extents: blocks freed by transactions whose log records are not
//! yet on disk, which an allocation must not reuse for user data
//! (fs/xfs/xfs_extent_busy.c, 6.x).
//!
//! The AG keeps them in an rb-tree keyed by start block
//! (`xfs_extent_busy_insert_list`: `struct xfs_extent_busy`, its `rb_node`
//! first, one slab object each) under `eb_lock`. Every free extent the
//! by-size allocator considers goes through `xfs_alloc_compute_aligned`,
//! which calls `xfs_extent_busy_trim`: it takes `eb_lock` and looks at
//! the root whether or not the tree holds anything (6.x; that part every
//! record pays, and the walk's per-record cost counts it); a non-empty
//! tree is then searched (`busy_searches` counts those): it walks down the tree
//! comparing the candidate `[fbno, fend)` with each node, and cuts the
//! busy part off (start overlap: keep the tail; end overlap: keep the
//! head; a busy piece in the middle: keep the head if it reaches
//! `maxlen`, else the tail if it reaches `4 * maxlen`, else the head if it
//! reaches `minlen`, else nothing). A trimmed extent fires the
//! `xfs_extent_busy_trim` tracepoint. Busy extents leave the tree when
//! the CIL checkpoint that freed them commits (`xfs_extent_busy_clear`),
//! which this model never does within a run.

use super::BtreeStats;
use super::btree::LineSet;
use crate::kernel::index::rbtree::{RbLayout, RbTree};
use crate::kernel::mm::touch::Touch;
use std::collections::BTreeMap;

/// `sizeof(struct xfs_extent_busy)` rounded to its slab (kmalloc-64 is
/// not used: it has its own cache, `xfs_extent_busy_cache`, 64-byte
/// objects on 6.x): one object per line.
const OBJECT_BYTES: u64 = 64;

/// Where `bno` sits in `struct xfs_extent_busy` (after the 24-byte
/// `rb_node`, the 16-byte `list_head` and the 8-byte group pointer).
const BNO_OFFSET: u64 = 48;

/// Simulated address of the first busy-extent object; the tree root
/// pointer sits just below.
const SLAB_BASE: u64 = 1 << 40;

/// The busy extents of one AG: the ranges, and the rb-tree the kernel
/// walks to find them.
#[derive(Clone, Debug)]
pub struct BusyExtents {
    ranges: BTreeMap<u32, u32>,
    tree: RbTree,
    next_object: u64,
    /// What the trims of the current call counted (busy fields and the
    /// busy objects' lines).
    pub stats: BtreeStats,
    lines: LineSet,
    walk: Vec<Touch>,
}

impl Default for BusyExtents {
    fn default() -> Self {
        Self {
            ranges: BTreeMap::new(),
            tree: RbTree::new(
                RbLayout {
                    node_offset: 0,
                    key_offset: BNO_OFFSET,
                },
                SLAB_BASE - OBJECT_BYTES,
            ),
            next_object: SLAB_BASE,
            stats: BtreeStats::default(),
            lines: LineSet::default(),
            walk: Vec::new(),
        }
    }
}

impl BusyExtents {
    /// Number of busy extents.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether there are none (`RB_EMPTY_ROOT`).
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Marks `[bno, bno + len)` busy (`xfs_extent_busy_insert`). Returns
    /// false, changing nothing, if it is empty or overlaps a busy extent
    /// (the kernel never inserts overlapping ones).
    pub fn insert(&mut self, bno: u32, len: u32) -> bool {
        let end = u64::from(bno) + u64::from(len);
        let before = self.ranges.range(..=bno).next_back();
        let after = self.ranges.range(bno..).next();
        let overlaps =
            before.is_some_and(|(&b, &l)| u64::from(b) + u64::from(l) > u64::from(bno)) || after.is_some_and(|(&b, _)| u64::from(b) < end);
        if len == 0 || overlaps {
            return false;
        }
        self.ranges.insert(bno, len);
        let obj = self.next_object;
        self.next_object += OBJECT_BYTES;
        let mut scratch = Vec::new();
        self.tree.insert(u64::from(bno), obj, &mut scratch).is_ok()
    }

    /// Lines an earlier call touched count as `lines_recent` (see
    /// `AllocBtree::keep_warm`).
    pub fn keep_warm(&mut self, on: bool) {
        self.lines.keep_warm(on);
    }

    /// Zeroes the counters (the start of a call).
    pub fn reset_stats(&mut self) {
        self.stats = BtreeStats::default();
        self.lines.next_call();
    }

    /// `xfs_extent_busy_trim`: the part of free extent `[fbno, fbno +
    /// flen)` that is not busy, by the kernel's rules (module docs) for a
    /// request of `minlen..=maxlen` blocks, as `(bno, len)`; `len` 0 if
    /// nothing usable is left. The walk is the kernel's descent: one node
    /// per level until the candidate is clear of every busy extent or
    /// shorter than `minlen`.
    pub fn trim(&mut self, minlen: u32, maxlen: u32, fbno: u32, flen: u32) -> (u32, u32) {
        if self.ranges.is_empty() {
            return (fbno, flen);
        }
        self.stats.busy_searches += 1;
        let (mut lo, mut hi) = (u64::from(fbno), u64::from(fbno) + u64::from(flen));
        // The descent: the rb-tree lookup of fbno visits the nodes the
        // kernel's loop compares against (a node overlapping the
        // candidate is on that path, or the candidate is clear).
        self.tree.lookup(u64::from(fbno), &mut self.walk);
        self.stats.busy_nodes += u64::from(self.tree.last_walk_depth());
        for t in self.walk.drain(..) {
            self.lines.touch(t.line, &mut self.stats);
        }
        let (minlen, maxlen) = (u64::from(minlen), u64::from(maxlen));
        let overlapping: Vec<(u64, u64)> = self
            .ranges
            .range(..fbno.saturating_add(flen))
            .rev()
            .take_while(|&(&b, &l)| u64::from(b) + u64::from(l) > lo)
            .map(|(&b, &l)| (u64::from(b), u64::from(b) + u64::from(l)))
            .collect();
        for (b, e) in overlapping.into_iter().rev() {
            if hi <= lo || hi - lo < minlen {
                break;
            }
            if e <= lo || b >= hi {
                continue;
            }
            if b <= lo {
                // Start overlap: keep the tail.
                lo = e.min(hi);
            } else if e >= hi || b - lo >= maxlen {
                // End overlap, or a middle one whose head reaches maxlen:
                // keep the head.
                hi = b;
            } else if hi - e >= 4 * maxlen {
                lo = e;
            } else if b - lo >= minlen {
                hi = b;
            } else {
                hi = lo;
            }
        }
        let len = if hi > lo && hi - lo >= minlen { (hi - lo) as u32 } else { 0 };
        if lo != u64::from(fbno) || len != flen {
            self.stats.busy_trims += 1;
        }
        (lo.min(u64::from(u32::MAX)) as u32, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_tree_takes_no_lock() {
        let mut b = BusyExtents::default();
        assert_eq!(b.trim(1, 4, 10, 1), (10, 1));
        assert_eq!(b.stats.busy_searches, 0);
    }

    #[test]
    fn a_busy_block_empties_a_one_block_extent_and_spares_its_neighbour() {
        let mut b = BusyExtents::default();
        for bno in (100..200).step_by(2) {
            assert!(b.insert(bno, 1));
        }
        assert!(!b.insert(100, 1), "overlap refused");
        assert_eq!(b.trim(1, 4, 150, 1).1, 0);
        assert_eq!(b.trim(1, 4, 151, 1), (151, 1));
        assert_eq!(b.stats.busy_searches, 2);
        assert_eq!(b.stats.busy_trims, 1);
        // 50 nodes: the descent visits 1..=2*log2(51) nodes.
        assert!((2..=12).contains(&b.stats.busy_nodes), "{}", b.stats.busy_nodes);
    }

    #[test]
    fn overlaps_are_cut_as_the_kernel_does() {
        let mut b = BusyExtents::default();
        b.insert(10, 2); // start overlap of [10, 20)
        assert_eq!(b.trim(1, 4, 10, 10), (12, 8));
        b.insert(30, 2); // end overlap of [24, 32)
        assert_eq!(b.trim(1, 4, 24, 8), (24, 6));
        b.insert(45, 1); // middle of [40, 60): head 5 >= maxlen 4: keep it
        assert_eq!(b.trim(1, 4, 40, 20), (40, 5));
        b.insert(72, 1); // middle of [70, 100): head 2 < 4, tail 27 >= 16: tail
        assert_eq!(b.trim(1, 4, 70, 30), (73, 27));
        assert_eq!(b.stats.busy_trims, 4);
    }
}
