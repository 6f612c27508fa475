//! `xfs_alloc_fixup_trees`: take an allocated extent out of both trees and
//! put back what remains of the free extent on either side.

use crate::kernel::xfs::freespace::{AllocRec, BtreeCursor, FreeSpace, LookupDir};

/// Removes [`rbno`, `rbno + rlen`) from free extent (`fbno`, `flen`):
/// cntbt delete (at `cnt_cur` if it is positioned on the record, as with
/// `XFSA_FIXUP_CNT_OK`, else after a `lookup_eq`), one `lookup_eq` +
/// insert per remainder; bnobt `lookup_eq`, then delete (no remainder) or
/// update to the first remainder and insert the second. If the cntbt
/// record sat in the last leaf (`xfs_alloc_cursor_at_lastrec`),
/// `agf_longest` is re-read with a LE lookup of an all-ones key on the
/// cntbt cursor and logged (`xfs_alloc_fixup_longest`, one AGF log). The
/// inserts and the longest lookup go through the cursors, so blocks they
/// hold are not read again. Returns false if the extent is not a free
/// record or the range does not fit in it.
pub fn xfs_alloc_fixup_trees(fs: &mut FreeSpace, cnt_cur: Option<&BtreeCursor>, fbno: u32, flen: u32, rbno: u32, rlen: u32) -> bool {
    let f = AllocRec::new(fbno, flen);
    let r_end = u64::from(rbno) + u64::from(rlen);
    if rlen == 0 || rbno < fbno || r_end > f.end() {
        return false;
    }
    let mut own = fs.cnt.cursor();
    let cur = match cnt_cur {
        Some(c) if fs.cnt.get_rec_uncounted(c) == Some(f) => c,
        _ => {
            if !fs.cnt.lookup(&mut own, LookupDir::Eq, f) {
                return false;
            }
            &own
        }
    };
    let was_last = fs.cnt.is_last_block(cur);
    let mut bcur = fs.bno.cursor();
    if !fs.bno.lookup(&mut bcur, LookupDir::Eq, f) {
        return false;
    }
    fs.cnt.delete_at(cur);
    let left = (rbno > fbno).then(|| AllocRec::new(fbno, rbno - fbno));
    let right = (r_end < f.end()).then(|| AllocRec::new(r_end as u32, (f.end() - r_end) as u32));
    let rems: Vec<AllocRec> = left.into_iter().chain(right).collect();
    let held = cur.clone();
    for &rem in &rems {
        fs.cnt.insert_from(Some(&held), rem);
    }
    match rems.as_slice() {
        [] => {
            fs.bno.delete_at(&bcur);
        }
        [one] => {
            fs.bno.update_at(&bcur, *one);
        }
        [a, b] => {
            fs.bno.update_at(&bcur, *a);
            fs.bno.insert_from(Some(&bcur), *b);
        }
        _ => {}
    }
    fs.note_removed(f);
    rems.iter().for_each(|r| fs.note_added(*r));
    if was_last {
        let mut c = held;
        fs.cnt.lookup(&mut c, LookupDir::Le, AllocRec::new(u32::MAX, u32::MAX));
        fs.cnt.stats.agf_logs += 1;
    }
    true
}
