//! `xfs_alloc_ag_vextent_size`: best fit by length, no locality
//! (docs/reference/kernel.md section 4.3, steps 3 to 11).

use super::{AllocArgs, AllocResult, CutoffStrategy, compute_aligned, fix_len, xfs_alloc_fixup_trees};
use crate::kernel::xfs::freespace::{AllocRec, BtreeCursor, FreeSpace, LookupDir};

/// The pick being improved by the backward walk (`bestrlen`, `bestrbno`,
/// `bestflen`, `bestfbno`).
#[derive(Clone, Copy, Debug)]
struct Pick {
    rbno: u32,
    rlen: u32,
    fbno: u32,
    flen: u32,
}

/// Runs `xfs_alloc_ag_vextent_size` on `fs`: cntbt `lookup_ge(maxlen +
/// alignment - 1)`; failing that `_small` takes the rightmost record;
/// else the forward loop takes the first record whose aligned length
/// reaches maxlen. If the pick is short of maxlen, walk backwards while a
/// record could improve it, stopping per `strategy`; `lookup_eq` back to
/// the best; `fix_len`; `xfs_alloc_fixup_trees`. Every record read with
/// `get_rec` is appended to `trace` (if given), in order. Returns None
/// when nothing of at least `minlen` blocks can be found.
pub fn xfs_alloc_ag_vextent_size(
    fs: &mut FreeSpace,
    args: &AllocArgs,
    strategy: CutoffStrategy,
    mut trace: Option<&mut Vec<AllocRec>>,
) -> Option<AllocResult> {
    let mut cnt = fs.cnt.cursor();
    fs.cnt.stats.cursors += 1;
    let slop = args.alignment.saturating_sub(1);
    let want = AllocRec::new(0, args.maxlen.saturating_add(slop));
    let first = if fs.cnt.lookup(&mut cnt, LookupDir::Ge, want) {
        first_fit(fs, &mut cnt, args, &mut trace)?
    } else {
        vextent_small(fs, &mut cnt, args, &mut trace)?
    };
    let mut pick = Pick {
        rlen: first.rlen.min(args.maxlen),
        ..first
    };
    if pick.rlen < args.maxlen {
        pick = walk_back(fs, &mut cnt, args, strategy, pick, &mut trace);
        fs.cnt.lookup(&mut cnt, LookupDir::Eq, AllocRec::new(pick.fbno, pick.flen));
    }
    if pick.rlen < args.minlen {
        return None;
    }
    let rlen = fix_len(args, pick.rlen);
    fs.bno.stats.cursors += 1;
    if !xfs_alloc_fixup_trees(fs, Some(&cnt), pick.fbno, pick.flen, pick.rbno, rlen) {
        return None;
    }
    Some(AllocResult {
        agbno: pick.rbno,
        len: rlen,
        fbno: pick.fbno,
        flen: pick.flen,
    })
}

/// `xfs_alloc_compute_aligned`: busy parts trimmed off
/// (`xfs_extent_busy_trim`), then the start aligned.
fn aligned(fs: &mut FreeSpace, args: &AllocArgs, fbno: u32, flen: u32) -> (u32, u32) {
    let (bno, len) = fs.busy.trim(args.minlen, args.maxlen, fbno, flen);
    compute_aligned(args, bno, len)
}

/// Reads the record under the cursor and appends it to the trace.
fn read(fs: &mut FreeSpace, cnt: &BtreeCursor, trace: &mut Option<&mut Vec<AllocRec>>) -> Option<AllocRec> {
    let r = fs.cnt.get_rec(cnt)?;
    if let Some(t) = trace.as_deref_mut() {
        t.push(r);
    }
    Some(r)
}

/// Step 5: from the lookup_ge position, the first record whose aligned
/// length reaches maxlen (without busy extents this is the first one).
fn first_fit(fs: &mut FreeSpace, cnt: &mut BtreeCursor, args: &AllocArgs, trace: &mut Option<&mut Vec<AllocRec>>) -> Option<Pick> {
    loop {
        let r = read(fs, cnt, trace)?;
        let (rbno, rlen) = aligned(fs, args, r.startblock, r.blockcount);
        if rlen >= args.maxlen {
            return Some(Pick {
                rbno,
                rlen,
                fbno: r.startblock,
                flen: r.blockcount,
            });
        }
        if !fs.cnt.increment(cnt) {
            return None;
        }
    }
}

/// Step 4, `xfs_alloc_ag_vextent_small`: decrement from past the end onto
/// the rightmost (longest) record; fail if none or shorter than minlen.
fn vextent_small(fs: &mut FreeSpace, cnt: &mut BtreeCursor, args: &AllocArgs, trace: &mut Option<&mut Vec<AllocRec>>) -> Option<Pick> {
    if !fs.cnt.decrement(cnt) {
        return None;
    }
    let r = read(fs, cnt, trace)?;
    if r.blockcount < args.minlen {
        return None;
    }
    let (rbno, rlen) = aligned(fs, args, r.startblock, r.blockcount);
    Some(Pick {
        rbno,
        rlen,
        fbno: r.startblock,
        flen: r.blockcount,
    })
}

/// Step 7: the backward search for something better, with the cutoff of
/// `strategy`.
fn walk_back(
    fs: &mut FreeSpace,
    cnt: &mut BtreeCursor,
    args: &AllocArgs,
    strategy: CutoffStrategy,
    mut best: Pick,
    trace: &mut Option<&mut Vec<AllocRec>>,
) -> Pick {
    let mut walked = 0u64;
    loop {
        if let CutoffStrategy::Budget(n) = strategy
            && walked >= n
        {
            break;
        }
        if !fs.cnt.decrement(cnt) {
            break;
        }
        let Some(r) = read(fs, cnt, trace) else {
            break;
        };
        walked += 1;
        let stop = match strategy {
            CutoffStrategy::Le => r.blockcount <= best.rlen,
            CutoffStrategy::Lt | CutoffStrategy::Budget(_) => r.blockcount < best.rlen,
        };
        if stop {
            break;
        }
        let (rbno, rlen) = aligned(fs, args, r.startblock, r.blockcount);
        let rlen = rlen.min(args.maxlen);
        if rlen > best.rlen {
            best = Pick {
                rbno,
                rlen,
                fbno: r.startblock,
                flen: r.blockcount,
            };
            if rlen == args.maxlen {
                break;
            }
        }
    }
    best
}
