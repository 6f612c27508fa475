//! Block fill as the kernel leaves it. A full block before an insert
//! (`xfs_btree_make_block_unfull`): shift an entry into the right sibling,
//! else into the left, else split, at the kernel's split point
//! (`__xfs_btree_split`). A block under its minimum after a delete
//! (`xfs_btree_delrec`): borrow from the right, else the left, else join
//! the left, else the right. Block sizes worked out by hand from
//! fs/xfs/libxfs/xfs_btree.c on 128-byte blocks: 9 records a leaf
//! (minimum 4), 6 pointers a node (minimum 3).

use fsmeta::kernel::xfs::freespace::btree::{AllocBtree, AllocRec, BtreeGeometry, BtreeKind};

fn tiny() -> BtreeGeometry {
    BtreeGeometry::new(128, 56).unwrap()
}

/// An empty by-block tree with `n` one-block records appended at keys
/// 10, 20, ...
fn appended(n: u32) -> AllocBtree {
    let mut t = AllocBtree::new(BtreeKind::Bno, tiny());
    for i in 1..=n {
        assert!(t.insert(AllocRec::new(10 * i, 1)));
    }
    assert_eq!(t.check(), Ok(()));
    t
}

/// Leaves 9 | 6: `appended(14)` (5 | 9), three records off the right leaf,
/// four into the left one.
fn full_then_six() -> AllocBtree {
    let mut t = appended(14);
    for k in [130, 140, 120] {
        assert!(t.delete(AllocRec::new(k, 1)));
    }
    for k in [11, 12, 13, 14] {
        assert!(t.insert(AllocRec::new(k, 1)));
    }
    assert_eq!(t.level_sizes(0), vec![9, 6]);
    t
}

#[test]
fn appending_fills_every_leaf_but_the_last_two() {
    // The 10th record splits the full root leaf 5 | 5 (9 entries, the
    // insert past the end: 4 go right, and the insert with them); the
    // right leaf then fills to 9; each later insert into the full right
    // leaf first shifts its first record left (rshift: no right sibling)
    // until the left leaf is full, and only then splits. A split-only
    // tree would leave every leaf at 5.
    assert_eq!(appended(14).level_sizes(0), vec![5, 9]);
    assert_eq!(appended(18).level_sizes(0), vec![9, 9]);
    assert_eq!(appended(19).level_sizes(0), vec![9, 5, 5]);
    let t = appended(400);
    let leaves = t.level_sizes(0);
    let (full, last2) = leaves.split_at(leaves.len() - 2);
    assert!(full.iter().all(|&n| n == 9), "{leaves:?}");
    assert!(last2.iter().all(|&n| n >= 5), "{leaves:?}");
    assert_eq!(leaves.iter().sum::<usize>(), 400);
    // The same holds one level up: pointers are appended too.
    let nodes = t.level_sizes(1);
    assert!(nodes.len() > 4, "{nodes:?}");
    assert!(nodes[..nodes.len() - 2].iter().all(|&n| n == 6), "{nodes:?}");
}

#[test]
fn a_full_leaf_shifts_its_first_record_into_a_left_sibling_with_room() {
    let mut t = appended(14);
    let blocks = t.block_count();
    t.reset_stats();
    assert!(t.insert(AllocRec::new(125, 1)));
    assert_eq!(t.level_sizes(0), vec![6, 9]);
    assert_eq!((t.stats.splits, t.stats.joins), (0, 1));
    assert_eq!(t.block_count(), blocks);
    assert_eq!(t.check(), Ok(()));
}

#[test]
fn a_full_leaf_shifts_its_last_record_into_a_right_sibling_with_room() {
    let mut t = full_then_six();
    assert_eq!(t.level_sizes(0), vec![9, 6]);
    t.reset_stats();
    assert!(t.insert(AllocRec::new(15, 1)));
    // The left leaf's last record (50) now leads the right leaf, and the
    // root's key for it followed (check).
    assert_eq!(t.level_sizes(0), vec![9, 7]);
    assert_eq!((t.stats.splits, t.stats.joins), (0, 1));
    assert_eq!(t.check(), Ok(()));
    assert_eq!(t.records()[9], AllocRec::new(50, 1));
}

#[test]
fn an_insert_past_the_last_record_splits_rather_than_shift_it_right() {
    // Leaves 9 | 6: a record after the left leaf's last one would be the
    // entry rshift moves, so rshift declines; there is no left sibling;
    // the leaf splits 5 | 4 and the record joins the right half (5).
    let mut t = full_then_six();
    t.reset_stats();
    assert!(t.insert(AllocRec::new(55, 1)));
    assert_eq!(t.level_sizes(0), vec![5, 5, 6]);
    assert_eq!((t.stats.splits, t.stats.joins), (1, 0));
    assert_eq!(t.check(), Ok(()));
}

#[test]
fn a_shift_crosses_to_a_sibling_under_another_parent() {
    // 3 levels; the first node's last leaf is full, the next leaf (the
    // second node's first) has room: rshift moves a record across the
    // parents and the root's key for the second node follows (check).
    let mut t = appended(120);
    assert_eq!(t.height(), 3);
    let leaves = t.level_sizes(0);
    let first_node = t.level_sizes(1)[0];
    assert_eq!(first_node, 6);
    // Make room in the 7th leaf (the second node's first).
    let start: usize = leaves[..6].iter().sum();
    let recs = t.records();
    for r in &recs[start + 1..start + 4] {
        assert!(t.delete(*r));
    }
    let before = t.level_sizes(0);
    assert_eq!(before[5], 9);
    assert!(before[6] < 9, "{before:?}");
    let mid = recs[start - 4];
    assert!(t.insert(AllocRec::new(mid.startblock + 1, 1)));
    let after = t.level_sizes(0);
    assert_eq!((after[5], after[6]), (9, before[6] + 1), "{before:?} -> {after:?}");
    assert_eq!(t.level_sizes(1)[0], 6);
    assert_eq!(t.check(), Ok(()));
}

#[test]
fn a_leaf_under_its_minimum_joins_its_left_sibling_before_its_right() {
    // Leaves 4 | 4 | 4 (none can spare a record): a delete from the middle
    // leaf leaves 3; xfs_btree_delrec joins it into the left leaf (7)
    // when both fit, before it would try the right one.
    let mut t = appended(19);
    assert_eq!(t.level_sizes(0), vec![9, 5, 5]);
    for k in [20, 30, 40, 50, 60, 110, 160] {
        assert!(t.delete(AllocRec::new(k, 1)));
    }
    assert_eq!(t.level_sizes(0), vec![4, 4, 4]);
    t.reset_stats();
    assert!(t.delete(AllocRec::new(120, 1)));
    assert_eq!(t.level_sizes(0), vec![7, 4]);
    assert_eq!(t.check(), Ok(()));
    // Besides the lookup (2): a second cursor into the right sibling
    // (could it spare one?), back (held by the deleting cursor: no read)
    // and into the left one; that cursor is deleted before the join,
    // which reads the left leaf again and the block after the emptied
    // one (its left pointer).
    assert_eq!(t.stats.buffer_reads, 2 + 4);
}

#[test]
fn a_leaf_under_its_minimum_borrows_from_the_right_first() {
    // 9 | 5 | 5: the middle leaf at 3 takes the right leaf's first record
    // (150) although the left one could spare one too.
    let mut t = appended(19);
    assert!(t.delete(AllocRec::new(110, 1)));
    assert!(t.delete(AllocRec::new(120, 1)));
    assert_eq!(t.level_sizes(0), vec![9, 4, 4]);
    assert_eq!(t.records()[12], AllocRec::new(150, 1));
    assert_eq!(t.check(), Ok(()));
}

#[test]
fn a_full_leaf_shifts_right_before_left_when_both_siblings_have_room() {
    // 5 | 9 | 5: a record into the middle of the full middle leaf moves
    // its last record right (rshift is tried first), not its first left.
    let mut t = appended(19);
    for k in [20, 30, 40, 50] {
        assert!(t.delete(AllocRec::new(k, 1)));
    }
    for k in [101, 102, 103, 104] {
        assert!(t.insert(AllocRec::new(k, 1)));
    }
    assert_eq!(t.level_sizes(0), vec![5, 9, 5]);
    assert!(t.insert(AllocRec::new(105, 1)));
    assert_eq!(t.level_sizes(0), vec![5, 9, 6]);
    assert_eq!(t.check(), Ok(()));
}
