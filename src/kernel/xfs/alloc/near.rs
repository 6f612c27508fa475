//! `xfs_alloc_ag_vextent_near` in a basic form (docs/reference/kernel.md section 4.4):
//! best length first, then locality around the hint `agbno`.

use super::{AllocArgs, AllocResult, compute_aligned, fix_len, xfs_alloc_fixup_trees};
use crate::kernel::xfs::freespace::{AllocRec, FreeSpace, LookupDir};

/// A candidate: the free extent and the chosen start/length inside it.
#[derive(Clone, Copy, Debug)]
struct Cand {
    fbno: u32,
    flen: u32,
    bno: u32,
    len: u32,
    diff: u64,
}

/// Allocates near `args.agbno`. cntbt `lookup_ge(maxlen + alignment - 1)`;
/// if nothing is that long, `_small` (the rightmost record, allocated at
/// its aligned start). If the cursor is in the last cntbt leaf, scan that
/// leaf to its end and keep the best by (length, then distance) — the
/// "first algorithm". Otherwise search the bnobt left (`lookup_le`,
/// `decrement`) and right (`lookup_ge`, `increment`) of the hint in turn,
/// taking only full-length candidates; a side stops when its next record
/// is farther than the best so far or at the tree's end. Then
/// `xfs_alloc_fixup_trees` with fresh lookups. Returns None if nothing of
/// at least `minlen` blocks exists.
pub fn xfs_alloc_ag_vextent_near(fs: &mut FreeSpace, args: &AllocArgs) -> Option<AllocResult> {
    let agbno = args.agbno.min(fs.agblocks.saturating_sub(1));
    let mut cnt = fs.cnt.cursor();
    fs.cnt.stats.cursors += 1;
    fs.bno.stats.cursors += 2;
    let slop = args.alignment.saturating_sub(1);
    let want = AllocRec::new(0, args.maxlen.saturating_add(slop));
    let best = if !fs.cnt.lookup(&mut cnt, LookupDir::Ge, want) {
        fs.cnt.decrement(&mut cnt);
        let r = fs.cnt.get_rec(&cnt)?;
        check(args, r, agbno)
    } else if fs.cnt.is_last_block(&cnt) {
        let mut best: Option<Cand> = None;
        while let Some(r) = fs.cnt.get_rec(&cnt) {
            best = better(best, check(args, r, agbno));
            if !fs.cnt.increment(&mut cnt) {
                break;
            }
        }
        best
    } else {
        locality(fs, args, agbno)
    }?;
    let len = fix_len(args, best.len);
    if !xfs_alloc_fixup_trees(fs, None, best.fbno, best.flen, best.bno, len) {
        return None;
    }
    Some(AllocResult {
        agbno: best.bno,
        len,
        fbno: best.fbno,
        flen: best.flen,
    })
}

/// The longer candidate, or the nearer one at equal length.
fn better(a: Option<Cand>, b: Option<Cand>) -> Option<Cand> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if (y.len, std::cmp::Reverse(y.diff)) > (x.len, std::cmp::Reverse(x.diff)) {
            y
        } else {
            x
        }),
        (x, y) => x.or(y),
    }
}

/// `xfs_alloc_cur_check` + `xfs_alloc_compute_diff`, simplified: the
/// usable length (aligned, at most maxlen, at least minlen) and the
/// aligned start nearest `agbno`.
fn check(args: &AllocArgs, r: AllocRec, agbno: u32) -> Option<Cand> {
    let (rbno, rlen) = compute_aligned(args, r.startblock, r.blockcount);
    let len = rlen.min(args.maxlen);
    if len < args.minlen || len == 0 {
        return None;
    }
    let a = u64::from(args.alignment.max(1));
    let last_start = u64::from(rbno) + u64::from(rlen - len);
    let want = u64::from(agbno).div_ceil(a) * a;
    let bno = if want <= u64::from(rbno) {
        u64::from(rbno)
    } else if want <= last_start {
        want
    } else {
        (last_start / a * a).max(u64::from(rbno))
    };
    Some(Cand {
        fbno: r.startblock,
        flen: r.blockcount,
        bno: bno as u32,
        len,
        diff: bno.abs_diff(u64::from(agbno)),
    })
}

/// The bnobt left/right scan around `agbno` (`xfs_alloc_ag_vextent_locality`
/// without the cntbt iterator), keeping full-length candidates only.
fn locality(fs: &mut FreeSpace, args: &AllocArgs, agbno: u32) -> Option<Cand> {
    let mut lt = fs.bno.cursor();
    let mut gt = fs.bno.cursor();
    let mut lt_on = fs.bno.lookup(&mut lt, LookupDir::Le, AllocRec::new(agbno, 0));
    let mut gt_on = fs.bno.lookup(&mut gt, LookupDir::Ge, AllocRec::new(agbno.saturating_add(1), 0));
    let mut best: Option<Cand> = None;
    while lt_on || gt_on {
        if lt_on {
            match fs.bno.get_rec(&lt) {
                Some(r) if best.is_none_or(|b| u64::from(agbno).saturating_sub(r.end()) < b.diff) => {
                    best = better(best, check(args, r, agbno).filter(|c| c.len == args.maxlen));
                    lt_on = fs.bno.decrement(&mut lt);
                }
                _ => lt_on = false,
            }
        }
        if gt_on {
            match fs.bno.get_rec(&gt) {
                Some(r) if best.is_none_or(|b| u64::from(r.startblock - agbno.min(r.startblock)) < b.diff) => {
                    best = better(best, check(args, r, agbno).filter(|c| c.len == args.maxlen));
                    gt_on = fs.bno.increment(&mut gt);
                }
                _ => gt_on = false,
            }
        }
    }
    best
}
