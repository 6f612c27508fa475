//! The free space of one XFS allocation group: the bnobt and the cntbt kept
//! consistent, plus the AGF counters the allocator maintains
//! (`agf_freeblks`, `agf_longest`).
//!
//! Sources of free space live in the submodules: a bucket histogram or
//! `xfs_db -c freesp` text (`source`, `freesp`), a single fragmentation
//! level (`source`), and aging by allocate/free/punch-hole streams
//! (`super::aging`).

pub mod btree;
pub mod busy;
pub mod cursor;
pub mod freesp;
pub mod layout;
pub mod modify;
pub mod source;
pub(crate) mod unfull;

pub use btree::{AllocBtree, AllocRec, BtreeGeometry, BtreeKind, BtreeStats};
pub use busy::BusyExtents;
pub use cursor::{BtreeCursor, LookupDir};
pub use freesp::{FreespBin, FreespHistogram};
pub use layout::BtreeLayout;

use crate::kernel::ModelError;

/// Both free-space btrees of one allocation group of `agblocks` blocks.
#[derive(Clone, Debug)]
pub struct FreeSpace {
    /// AG size in blocks (`sb_agblocks`).
    pub agblocks: u32,
    /// By-block tree (`agf_bno_root`).
    pub bno: AllocBtree,
    /// By-size tree (`agf_cnt_root`).
    pub cnt: AllocBtree,
    /// The AG's busy extents (`xg_busy_extents`).
    pub busy: BusyExtents,
    free_blocks: u64,
    small_below: u32,
    small_blocks: u64,
}

/// Checks free extents sorted by startblock: none empty, past `agblocks`,
/// overlapping or touching its left neighbour (errors on field
/// `agblocks`).
fn check_extents(agblocks: u32, extents: &[AllocRec]) -> Result<(), ModelError> {
    let bad = |message: String| ModelError::InvalidParam(crate::param::ParamError::new("agblocks", message));
    let mut prev_end = None;
    for r in extents {
        if r.blockcount == 0 || r.end() > u64::from(agblocks) {
            return Err(bad(format!("extent {r:?} is empty or past the AG end")));
        }
        if prev_end.is_some_and(|e| u64::from(r.startblock) <= e) {
            return Err(bad(format!("extent {r:?} overlaps or touches its left neighbour")));
        }
        prev_end = Some(r.end());
    }
    Ok(())
}

impl FreeSpace {
    /// An AG with no free space at all.
    pub fn new(agblocks: u32, geo: BtreeGeometry) -> Self {
        Self {
            agblocks,
            bno: AllocBtree::new(BtreeKind::Bno, geo),
            cnt: AllocBtree::new(BtreeKind::Cnt, geo),
            busy: BusyExtents::default(),
            free_blocks: 0,
            small_below: 0,
            small_blocks: 0,
        }
    }

    /// Builds both trees from free extents sorted by startblock, bulk
    /// loaded with blocks `fill` full (see [`AllocBtree::bulk_load`]).
    /// Fails (field `agblocks`) if extents overlap, touch, are empty or
    /// run past the AG.
    pub fn from_extents(agblocks: u32, geo: BtreeGeometry, extents: &[AllocRec], fill: f64) -> Result<Self, ModelError> {
        check_extents(agblocks, extents)?;
        let mut by_cnt = extents.to_vec();
        by_cnt.sort_unstable_by_key(|r| BtreeKind::Cnt.key(*r));
        Ok(Self {
            agblocks,
            bno: AllocBtree::bulk_load(BtreeKind::Bno, geo, extents, fill),
            cnt: AllocBtree::bulk_load(BtreeKind::Cnt, geo, &by_cnt, fill),
            busy: BusyExtents::default(),
            free_blocks: extents.iter().map(|r| u64::from(r.blockcount)).sum(),
            small_below: 0,
            small_blocks: 0,
        })
    }

    /// Builds both trees from free extents sorted by startblock by
    /// inserting them one by one in that order into empty trees, as
    /// `xfs_free_ag_extent` grows them when the extents are freed in
    /// block order (the lab punches its holes so): the blocks are as full
    /// as the kernel's shifts and splits leave them
    /// ([`AllocBtree::insert`]), not as a bulk load fills them. Fails as
    /// [`FreeSpace::from_extents`] does; the trees' counters start at 0.
    pub fn grown(agblocks: u32, geo: BtreeGeometry, extents: &[AllocRec]) -> Result<Self, ModelError> {
        check_extents(agblocks, extents)?;
        let mut fs = Self::new(agblocks, geo);
        fs.bno.insert_all_uncounted(extents.iter().copied());
        fs.cnt.insert_all_uncounted(extents.iter().copied());
        fs.free_blocks = extents.iter().map(|r| u64::from(r.blockcount)).sum();
        Ok(fs)
    }

    /// Builds both trees from free extents sorted by startblock with the
    /// blocks of `layout` (as `xfs_db` read them from a live AG). Fails
    /// as [`FreeSpace::from_extents`] does, or (field `btree_layout_file`)
    /// if the layout does not fit the extents.
    pub fn from_layout(agblocks: u32, geo: BtreeGeometry, extents: &[AllocRec], layout: &BtreeLayout) -> Result<Self, ModelError> {
        check_extents(agblocks, extents)?;
        let mut by_cnt = extents.to_vec();
        by_cnt.sort_unstable_by_key(|r| BtreeKind::Cnt.key(*r));
        let bad = |tree: &str, m: String| crate::param::ParamError::new("btree_layout_file", format!("{tree}: {m}"));
        Ok(Self {
            agblocks,
            bno: AllocBtree::from_layout(BtreeKind::Bno, geo, extents, &layout.bno).map_err(|m| bad("bnobt", m))?,
            cnt: AllocBtree::from_layout(BtreeKind::Cnt, geo, &by_cnt, &layout.cnt).map_err(|m| bad("cntbt", m))?,
            busy: BusyExtents::default(),
            free_blocks: extents.iter().map(|r| u64::from(r.blockcount)).sum(),
            small_below: 0,
            small_blocks: 0,
        })
    }

    /// Free blocks in the AG (`agf_freeblks`).
    pub fn free_blocks(&self) -> u64 {
        self.free_blocks
    }

    /// Blocks of the two trees as the AGF's `agf_btreeblks` counts them:
    /// `xfs_alloc_get_freelist` with `btreeblk` set adds one for every
    /// block `xfs_allocbt_alloc_block` takes from the AGFL (a split, a new
    /// root), `xfs_alloc_put_freelist` takes one off for a freed block, and
    /// the root block mkfs made for each tree is not counted.
    pub fn btree_blocks(&self) -> u64 {
        (self.bno.block_count() + self.cnt.block_count()).saturating_sub(2) as u64
    }

    /// Number of free extents (records in either tree).
    pub fn extent_count(&self) -> u64 {
        self.cnt.len()
    }

    /// Longest free extent (`agf_longest`): the cntbt's rightmost record.
    /// Read without counting, like the in-core `pagf_longest`.
    pub fn longest(&self) -> u32 {
        let mut b = self.cnt.root;
        while let btree::Block::Node(n) = &self.cnt.blocks[b as usize] {
            b = n.ptrs[n.ptrs.len() - 1];
        }
        self.cnt.leaf(b).recs.last().map_or(0, |r| r.blockcount)
    }

    /// Starts tracking the free blocks held in extents shorter than
    /// `blocks` (used by aging); see [`FreeSpace::small_share`].
    pub fn track_small_below(&mut self, blocks: u32) {
        self.small_below = blocks;
        self.small_blocks = self
            .cnt
            .records()
            .iter()
            .filter(|r| r.blockcount < blocks)
            .map(|r| u64::from(r.blockcount))
            .sum();
    }

    /// Share of free blocks in extents shorter than the tracked threshold.
    pub fn small_share(&self) -> f64 {
        if self.free_blocks == 0 {
            0.0
        } else {
            self.small_blocks as f64 / self.free_blocks as f64
        }
    }

    /// Books a free extent that left both trees.
    pub(crate) fn note_removed(&mut self, r: AllocRec) {
        self.free_blocks -= u64::from(r.blockcount);
        if r.blockcount < self.small_below {
            self.small_blocks -= u64::from(r.blockcount);
        }
    }

    /// Books a free extent that entered both trees.
    pub(crate) fn note_added(&mut self, r: AllocRec) {
        self.free_blocks += u64::from(r.blockcount);
        if r.blockcount < self.small_below {
            self.small_blocks += u64::from(r.blockcount);
        }
    }

    /// Zeroes both trees' counters.
    pub fn reset_stats(&mut self) {
        self.bno.reset_stats();
        self.cnt.reset_stats();
        self.busy.reset_stats();
    }

    /// Lines touched by an earlier call count as `lines_recent` in both
    /// trees and the busy tree (see [`AllocBtree::keep_warm`]).
    pub fn keep_warm(&mut self, on: bool) {
        self.bno.keep_warm(on);
        self.cnt.keep_warm(on);
        self.busy.keep_warm(on);
    }

    /// Both trees' counters and the busy tree's added together.
    pub fn stats(&self) -> BtreeStats {
        self.bno.stats.plus(self.cnt.stats).plus(self.busy.stats)
    }

    /// Marks busy the `n` free extents the by-size walk meets first: the
    /// last `n` records of the by-size tree (longest, then highest start
    /// block), as freeing them just before the calls leaves them
    /// (`xfs_extent_busy_insert` at `xfs_free_ag_extent`). Returns how
    /// many were marked (fewer if the AG has fewer extents).
    pub fn mark_busy_last(&mut self, n: u64) -> u64 {
        let recs = self.cnt.records();
        let mut marked = 0;
        for r in recs.iter().rev().take(usize::try_from(n).unwrap_or(usize::MAX)) {
            marked += u64::from(self.busy.insert(r.startblock, r.blockcount));
        }
        marked
    }

    /// The free-space histogram with `xfs_db freesp`'s power-of-two bins.
    pub fn histogram(&self) -> FreespHistogram {
        FreespHistogram::from_lengths(self.cnt.records().iter().map(|r| r.blockcount), self.agblocks)
    }

    /// Checks both trees' structure, that they hold the same extents, that
    /// no two free extents overlap or touch, that all lie inside the AG,
    /// and that the free-block counter equals the records' sum.
    pub fn check(&self) -> Result<(), String> {
        self.bno.check()?;
        self.cnt.check()?;
        let by_bno = self.bno.records();
        let mut by_cnt = self.cnt.records();
        by_cnt.sort_unstable();
        if by_bno != by_cnt {
            return Err("bnobt and cntbt hold different extents".into());
        }
        for w in by_bno.windows(2) {
            if w[0].end() >= u64::from(w[1].startblock) {
                return Err(format!("free extents {:?} and {:?} overlap or touch", w[0], w[1]));
            }
        }
        if by_bno.iter().any(|r| r.blockcount == 0 || r.end() > u64::from(self.agblocks)) {
            return Err("empty extent or extent past the AG end".into());
        }
        let sum: u64 = by_bno.iter().map(|r| u64::from(r.blockcount)).sum();
        if sum != self.free_blocks {
            return Err(format!("records sum to {sum}, counter says {}", self.free_blocks));
        }
        Ok(())
    }
}
