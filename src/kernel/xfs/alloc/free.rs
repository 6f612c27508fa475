//! `xfs_free_ag_extent`: return an extent to the free-space btrees,
//! merging it with free neighbours on either side.

use crate::kernel::xfs::freespace::{AllocRec, FreeSpace, LookupDir};

/// Frees `len` blocks at `bno`: bnobt `lookup_le` finds the left
/// neighbour (merged if it ends at `bno`), `increment` the right one
/// (merged if it starts at `bno + len`). Merged neighbours leave the cntbt
/// (`lookup_eq` + delete each); in the bnobt the right one is deleted and
/// the left one updated, or the right one updated, or a new record
/// inserted; the merged extent goes into the cntbt. Returns false (and
/// changes nothing) if the range is empty, past the AG, or overlaps free
/// space.
pub fn xfs_free_ag_extent(fs: &mut FreeSpace, bno: u32, len: u32) -> bool {
    let end = u64::from(bno) + u64::from(len);
    if len == 0 || end > u64::from(fs.agblocks) {
        return false;
    }
    let mut bc = fs.bno.cursor();
    let mut left = None;
    if fs.bno.lookup(&mut bc, LookupDir::Le, AllocRec::new(bno, len)) {
        let Some(r) = fs.bno.get_rec(&bc) else {
            return false;
        };
        if r.end() > u64::from(bno) {
            return false;
        }
        left = (r.end() == u64::from(bno)).then_some(r);
    }
    let mut right = None;
    if fs.bno.increment(&mut bc) {
        let Some(r) = fs.bno.get_rec(&bc) else {
            return false;
        };
        if u64::from(r.startblock) < end {
            return false;
        }
        right = (u64::from(r.startblock) == end).then_some(r);
    }
    let start = left.map_or(bno, |l| l.startblock);
    let stop = right.map_or(end, |r| r.end());
    let merged = AllocRec::new(start, (stop - u64::from(start)) as u32);
    for r in left.iter().chain(right.iter()) {
        fs.cnt.delete(*r);
    }
    match (left, right) {
        (Some(l), Some(_)) => {
            fs.bno.delete_at(&bc);
            let mut c = fs.bno.cursor();
            fs.bno.lookup(&mut c, LookupDir::Eq, l);
            fs.bno.update_at(&c, merged);
        }
        (Some(_), None) => {
            fs.bno.decrement(&mut bc);
            fs.bno.update_at(&bc, merged);
        }
        (None, Some(_)) => {
            fs.bno.update_at(&bc, merged);
        }
        (None, None) => {
            fs.bno.insert(merged);
        }
    }
    fs.cnt.insert(merged);
    left.iter().chain(right.iter()).for_each(|r| fs.note_removed(*r));
    fs.note_added(merged);
    true
}
