//! `xfs_alloc_ag_vextent_near` as 6.x has it (fs/xfs/libxfs/xfs_alloc.c,
//! since the 5.5 rework; docs/reference/kernel.md section 4.4): one
//! by-size cursor and two by-block cursors (`struct xfs_alloc_cur`),
//! each active while its last lookup or step landed on a record.
//!
//! 1. `xfs_alloc_cur_setup`: cntbt `lookup_ge(0, maxlen)`. Nothing that
//!    long: `xfs_alloc_ag_vextent_small` steps back onto the rightmost
//!    record (the cursor stays inactive).
//! 2. First algorithm, when the cntbt cursor sits in the last leaf
//!    (`xfs_alloc_ag_vextent_lastblock`): after `_small` go to the leaf's
//!    first record of at least minlen, then check every record to the end
//!    of the leaf (`xfs_alloc_walk_iter` with no count) if the cursor is
//!    active. A candidate ends the allocation.
//! 3. Second algorithm (`xfs_alloc_ag_vextent_locality`): cntbt
//!    `lookup_ge(agbno, cur_len)`, bnobt `lookup_le(agbno)` and
//!    `lookup_ge(agbno)`; then in turn one record left, one record right
//!    (a candidate there ends the loop) and one cntbt probe
//!    (`xfs_alloc_cntbt_iter`, whose search length grows), until every
//!    cursor is inactive or the cntbt probe ran off the tree. After a
//!    bnobt hit, the other side is walked until a record is farther than
//!    the best (`xfs_alloc_cur_check` deactivates it) or one is better
//!    (the walk stops at the first new candidate); with nothing found
//!    and nothing busy, the cntbt is walked back from its end. The range
//!    check on the aligned start (`min_agbno`/`max_agbno`) is left out:
//!    the model's range is the whole AG.
//! 4. `xfs_alloc_cur_finish`: `xfs_alloc_fixup_trees` with fresh lookups.
//!
//! Every record checked goes through `xfs_alloc_compute_aligned`, so busy
//! extents are trimmed out (`xfs_extent_busy_trim`). When the only
//! candidates were busy the kernel forces the log out and retries
//! (`xfs_extent_busy_flush`); the model returns None there, as the by-size
//! allocator does.

use super::{AllocArgs, AllocResult, compute_aligned, fix_len, xfs_alloc_fixup_trees};
use crate::kernel::xfs::freespace::{AllocBtree, AllocRec, BtreeCursor, FreeSpace, LookupDir};

/// `NULLAGBLOCK`.
const NULL_AGBNO: u32 = u32::MAX;

/// Which tree a cursor walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tree {
    Cnt,
    Bno,
}

/// A cursor and its `XFS_BTREE_ALLOCBT_ACTIVE` flag.
#[derive(Clone, Debug)]
struct Cur {
    tree: Tree,
    at: BtreeCursor,
    active: bool,
}

/// The candidate of `struct xfs_alloc_cur`: the free record (`rec_bno`,
/// `rec_len`), the blocks chosen in it (`bno`, `len`) and their distance
/// from the hint (`diff`); `cur_len` is the cntbt search length.
#[derive(Clone, Copy, Debug)]
struct Acur {
    cur_len: u32,
    rec_bno: u32,
    rec_len: u32,
    bno: u32,
    len: u32,
    diff: u32,
    busy: bool,
}

fn tree(fs: &mut FreeSpace, t: Tree) -> &mut AllocBtree {
    match t {
        Tree::Cnt => &mut fs.cnt,
        Tree::Bno => &mut fs.bno,
    }
}

impl Cur {
    fn new(fs: &FreeSpace, tree: Tree) -> Self {
        let at = match tree {
            Tree::Cnt => fs.cnt.cursor(),
            Tree::Bno => fs.bno.cursor(),
        };
        Cur { tree, at, active: false }
    }

    /// `xfs_alloc_lookup_{le,ge}`: the cursor is active if it found a record.
    fn lookup(&mut self, fs: &mut FreeSpace, dir: LookupDir, rec: AllocRec) -> bool {
        self.active = tree(fs, self.tree).lookup(&mut self.at, dir, rec);
        self.active
    }

    fn step(&mut self, fs: &mut FreeSpace, increment: bool) -> bool {
        let t = tree(fs, self.tree);
        if increment {
            t.increment(&mut self.at)
        } else {
            t.decrement(&mut self.at)
        }
    }
}

/// Allocates near `args.agbno` (module docs). Returns None if nothing of
/// at least `minlen` blocks is free and clear of busy extents.
pub fn xfs_alloc_ag_vextent_near(fs: &mut FreeSpace, args: &AllocArgs) -> Option<AllocResult> {
    let args = AllocArgs {
        agbno: args.agbno.min(fs.agblocks.saturating_sub(1)),
        ..*args
    };
    let mut acur = Acur {
        cur_len: args.maxlen,
        rec_bno: 0,
        rec_len: 0,
        bno: 0,
        len: 0,
        diff: u32::MAX,
        busy: false,
    };
    fs.cnt.stats.cursors += 1;
    fs.bno.stats.cursors += 2;
    let mut cnt = Cur::new(fs, Tree::Cnt);
    let mut small_len = 0;
    if !cnt.lookup(fs, LookupDir::Ge, AllocRec::new(0, args.maxlen)) {
        // xfs_alloc_ag_vextent_small: the rightmost record, or nothing.
        if !cnt.step(fs, false) {
            return None;
        }
        small_len = fs.cnt.get_rec(&cnt.at)?.blockcount;
        if small_len < args.minlen {
            return None;
        }
    }
    let mut found = fs.cnt.is_last_block(&cnt.at) && lastblock(fs, &args, &mut acur, &mut cnt, small_len);
    if !found {
        found = locality(fs, &args, &mut acur, &mut cnt);
    }
    if !found {
        return None;
    }
    if !xfs_alloc_fixup_trees(fs, None, acur.rec_bno, acur.rec_len, acur.bno, acur.len) {
        return None;
    }
    Some(AllocResult {
        agbno: acur.bno,
        len: acur.len,
        fbno: acur.rec_bno,
        flen: acur.rec_len,
    })
}

/// `xfs_alloc_ag_vextent_lastblock`: true if the last cntbt leaf gave a
/// candidate.
fn lastblock(fs: &mut FreeSpace, args: &AllocArgs, acur: &mut Acur, cnt: &mut Cur, small_len: u32) -> bool {
    if small_len > 0 || args.alignment > 1 {
        fs.cnt.to_leaf_start(&mut cnt.at);
        loop {
            let Some(r) = fs.cnt.get_rec(&cnt.at) else {
                return false;
            };
            if r.blockcount >= args.minlen {
                break;
            }
            if !cnt.step(fs, true) {
                return false;
            }
        }
    }
    walk_iter(fs, args, acur, cnt, true, false, None);
    acur.len > 0
}

/// `xfs_alloc_ag_vextent_locality`: true if a candidate was found.
fn locality(fs: &mut FreeSpace, args: &AllocArgs, acur: &mut Acur, cnt: &mut Cur) -> bool {
    let mut lt = Cur::new(fs, Tree::Bno);
    let mut gt = Cur::new(fs, Tree::Bno);
    cnt.lookup(fs, LookupDir::Ge, AllocRec::new(args.agbno, acur.cur_len));
    lt.lookup(fs, LookupDir::Le, AllocRec::new(args.agbno, 0));
    gt.lookup(fs, LookupDir::Ge, AllocRec::new(args.agbno, 0));
    // After a bnobt hit, the other side is finished: Some(true) walks
    // right (`bnogt`), Some(false) left (`bnolt`).
    let mut finish: Option<bool> = None;
    while lt.active || gt.active || cnt.active {
        if walk_iter(fs, args, acur, &mut lt, false, true, Some(1)) {
            finish = Some(true);
            break;
        }
        if walk_iter(fs, args, acur, &mut gt, true, true, Some(1)) {
            finish = Some(false);
            break;
        }
        cntbt_iter(fs, args, acur, cnt);
        if !cnt.active {
            break;
        }
    }
    // Nothing found and nothing busy: give up on locality and walk back
    // from the cntbt's end.
    if finish.is_none() && !cnt.active && acur.len == 0 && !acur.busy && cnt.step(fs, false) {
        cnt.active = true;
        walk_iter(fs, args, acur, cnt, false, true, None);
    }
    match finish {
        Some(true) => walk_iter(fs, args, acur, &mut gt, true, true, None),
        Some(false) => walk_iter(fs, args, acur, &mut lt, false, true, None),
        None => false,
    };
    acur.len > 0
}

/// `xfs_alloc_walk_iter`: checks records from the cursor on while it is
/// active and `count` (None: no limit) lasts; true if one became the
/// candidate. With `find_one` the first such record ends the walk.
fn walk_iter(
    fs: &mut FreeSpace,
    args: &AllocArgs,
    acur: &mut Acur,
    cur: &mut Cur,
    increment: bool,
    find_one: bool,
    mut count: Option<u32>,
) -> bool {
    let mut stat = false;
    while cur.active && count != Some(0) {
        if cur_check(fs, args, acur, cur) {
            stat = true;
            if find_one {
                break;
            }
        }
        if !cur.active {
            break;
        }
        if !cur.step(fs, increment) {
            cur.active = false;
        }
        count = count.map(|c| c - 1);
    }
    stat
}

/// `xfs_alloc_cntbt_iter`: one cntbt probe at (`cur_len`, agbno), the
/// record before it too when it has the same length, then a longer search
/// length (one more, or doubled once a candidate exists).
fn cntbt_iter(fs: &mut FreeSpace, args: &AllocArgs, acur: &mut Acur, cnt: &mut Cur) {
    if !cnt.active {
        return;
    }
    let cur_len = acur.cur_len;
    if !cnt.lookup(fs, LookupDir::Ge, AllocRec::new(args.agbno, cur_len)) {
        return;
    }
    let Some(r) = fs.cnt.get_rec(&cnt.at) else {
        return;
    };
    cur_check(fs, args, acur, cnt);
    acur.cur_len = r.blockcount;
    if r.startblock > args.agbno && cnt.step(fs, false) {
        // The step may leave the cursor's leaf; it stays active (the
        // kernel only deactivates through cur_check).
        if fs.cnt.get_rec(&cnt.at).is_some_and(|p| p.blockcount == acur.cur_len) {
            cur_check(fs, args, acur, cnt);
        }
    }
    let doubled = cur_len.saturating_mul(2);
    acur.cur_len = if acur.len == 0 || acur.cur_len >= doubled {
        acur.cur_len.saturating_add(1)
    } else {
        doubled
    };
}

/// `xfs_alloc_cur_check`: the record under `cur` as a candidate. Busy
/// parts are trimmed off and the start aligned; the usable length
/// (`fix_len` of min(length, maxlen)) must reach minlen and the current
/// candidate's; then the nearer wins (`xfs_alloc_compute_diff`). Deactivates
/// a cntbt cursor on a record shorter than minlen, a bnobt cursor on a
/// record farther than the candidate, and any cursor on a perfect fit.
/// True if the record became the candidate.
fn cur_check(fs: &mut FreeSpace, args: &AllocArgs, acur: &mut Acur, cur: &mut Cur) -> bool {
    let is_bno = cur.tree == Tree::Bno;
    let Some(r) = tree(fs, cur.tree).get_rec(&cur.at) else {
        return false;
    };
    if r.blockcount < args.minlen {
        cur.active &= is_bno;
        return false;
    }
    let (tbno, tlen) = fs.busy.trim(args.minlen, args.maxlen, r.startblock, r.blockcount);
    acur.busy |= (tbno, tlen) != (r.startblock, r.blockcount);
    let (bnoa, lena) = compute_aligned(args, tbno, tlen);
    if lena < args.minlen {
        return false;
    }
    let len = fix_len(args, lena.min(args.maxlen));
    if len < acur.len {
        return false;
    }
    let (diff, bnew) = compute_diff(args.agbno, len, args.alignment, args.userdata, bnoa, lena);
    if bnew == NULL_AGBNO {
        return false;
    }
    if diff > acur.diff {
        cur.active &= !is_bno;
        return false;
    }
    *acur = Acur {
        rec_bno: r.startblock,
        rec_len: r.blockcount,
        bno: bnew,
        len,
        diff,
        ..*acur
    };
    if diff == 0 && len == args.maxlen {
        cur.active = false;
    }
    true
}

/// `xfs_alloc_compute_diff`: the best start for `wantlen` blocks near
/// `wantbno` inside free extent (`freebno`, `freelen`), and its distance
/// from `wantbno`; (0, `NULL_AGBNO`) if none. User data takes the start of
/// an extent that lies wholly before the target, so a file growing soon
/// after can extend into the rest.
fn compute_diff(wantbno: u32, wantlen: u32, alignment: u32, userdata: bool, freebno: u32, freelen: u32) -> (u32, u32) {
    let a = u64::from(alignment.max(1));
    let roundup = |x: u64| x.div_ceil(a) * a;
    let (wantbno64, freebno64) = (u64::from(wantbno), u64::from(freebno));
    let freeend = freebno64 + u64::from(freelen);
    let wantend = wantbno64 + u64::from(wantlen);
    let null = u64::from(NULL_AGBNO);
    let newbno = if freebno64 >= wantbno64 || (userdata && freeend < wantend) {
        let b = roundup(freebno64);
        if b >= freeend { null } else { b }
    } else if freeend >= wantend && a > 1 {
        let b1 = roundup(wantbno64);
        let b2 = b1.checked_sub(a).filter(|&b| b >= freebno64);
        let len_at = |b: u64| u64::from(wantlen).min(freeend - b);
        match (b1 < freeend, b2) {
            (true, Some(b2)) => {
                let (l1, l2) = (len_at(b1), len_at(b2));
                if l1 < l2 || (l1 == l2 && b1.abs_diff(wantbno64) > b2.abs_diff(wantbno64)) {
                    b2
                } else {
                    b1
                }
            }
            (true, None) => b1,
            (false, Some(b2)) => b2,
            (false, None) => null,
        }
    } else if freeend >= wantend {
        wantbno64
    } else if a > 1 {
        let last = freeend - u64::from(wantlen);
        let b = roundup(last);
        if b > last && b >= freebno64 + a {
            b - a
        } else if b >= freeend {
            null
        } else {
            b
        }
    } else {
        freeend - u64::from(wantlen)
    };
    if newbno >= null {
        (0, NULL_AGBNO)
    } else {
        (newbno.abs_diff(wantbno64).min(u64::from(u32::MAX - 1)) as u32, newbno as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::compute_diff;

    #[test]
    fn user_data_takes_the_start_of_an_extent_before_the_target() {
        // Free block 98, target 101: user data takes 98 (diff 3), as the
        // other three blocks of a fallocate(16 KiB) did on 6.18.
        assert_eq!(compute_diff(101, 1, 1, true, 98, 1), (3, 98));
        // Metadata takes the end nearest the target.
        assert_eq!(compute_diff(101, 1, 1, false, 90, 10), (2, 99));
        assert_eq!(compute_diff(101, 1, 1, true, 90, 20), (0, 101));
        // Past the target: the extent's aligned start.
        assert_eq!(compute_diff(101, 2, 4, false, 103, 8), (3, 104));
        assert_eq!(compute_diff(101, 2, 4, false, 103, 1), (0, u32::MAX));
    }
}
