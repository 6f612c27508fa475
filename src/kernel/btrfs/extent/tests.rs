use super::*;
use crate::kernel::btrfs::ctree::{INODE_ITEM_KEY, SearchMode};

const N: u32 = 16384;

/// The fs tree the lab's preparation leaves: one committed leaf at its
/// place, the allocator at the last free extent.
fn fs_tree() -> Tree {
    let l = Layout::lab(N);
    let mut t = Tree::new_at(N, l.fs_leaf());
    t.insert_items(&[Item::new(Key::new(256, INODE_ITEM_KEY, 0), 160)]);
    t.commit_transaction();
    t.set_next_bytenr(l.cursor());
    t
}

fn free_extents(t: &ExtentTrees) -> Vec<(u64, u64)> {
    let g = t.layout().metadata;
    let mut v = Vec::new();
    let mut tree = t.free_space.clone();
    let path = tree.search_slot(&Key::new(0, 0, 0), SearchMode::Lookup).1;
    for i in tree.leaf_items(path.nodes[0]) {
        let k = i.key;
        let start = k.objectid;
        if k.item_type == FREE_SPACE_EXTENT_KEY && (g.start..g.end()).contains(&start) {
            v.push((k.objectid, k.offset));
        }
    }
    v
}

#[test]
fn the_trees_start_as_mkfs_and_the_preparation_left_them() {
    // dump-tree of the lab's image after `mkdir testdir` and `syncfs`
    // (6.18.44, btrfs-progs v6.2, session 72): the extent tree's 12 items
    // (3 block groups, 9 tree blocks), the free space tree's 13 (5 infos,
    // 8 extents), the root tree's 11.
    let t = ExtentTrees::new(N, &fs_tree());
    let items = |tree: &Tree| {
        let mut tree = tree.clone();
        let p = tree.search_slot(&Key::new(0, 0, 0), SearchMode::Lookup).1;
        tree.leaf_items(p.nodes[0]).len()
    };
    assert_eq!((items(&t.extent), items(&t.free_space), items(&t.root)), (12, 13, 11));
    let l = t.layout();
    assert_eq!(l.fs_leaf(), 30_507_008);
    assert_eq!(l.cursor(), 30_638_080);
    assert_eq!(l.leaves[0], 30_457_856, "the extent tree's leaf");
    assert_eq!(l.leaves[6], 30_605_312, "the root tree's leaf");
    assert_eq!(
        free_extents(&t),
        vec![(30_408_704, 49_152), (30_556_160, 49_152), (30_638_080, 53_444_608)]
    );
    // 53,673,984 bytes: 7 bitmaps of 8 MiB would be 7 x 281 bytes, 78
    // extents' headers.
    assert_eq!(l.metadata.bitmap_high_thresh(), 78);
}

#[test]
fn a_commit_runs_the_fs_trees_refs_then_the_three_trees_own() {
    let l = Layout::lab(N);
    let mut fs = fs_tree();
    let mut t = ExtentTrees::new(N, &fs);
    // One change to the fs tree's old leaf: copied on write.
    fs.insert_items(&[Item::new(Key::new(257, INODE_ITEM_KEY, 0), 160)]);
    let c0 = l.cursor();
    assert_eq!(fs.root_bytenr(), c0);
    let before = t.counts();
    t.run_queued(&mut fs, Task::Sync);
    t.commit(&mut fs, Task::Sync);
    let r = t.counts().since(&before);
    assert_eq!(t.dirty_shapes().len(), 3, "the three trees' leaves, copied once each");
    t.end_transaction();
    fs.commit_transaction();
    // The fs leaf's DROP and ADD, then the extent, free space and root
    // trees' leaves copied by the run: a DROP and an ADD each.
    assert_eq!((r.heads, r.adds, r.drops), (8, 4, 4));
    assert_eq!(r.unmatched, 0);
    assert_eq!(r.free_space_calls, 8);
    // The four new blocks follow the fs leaf's copy; the old leaves went
    // back to free space, merged where a free neighbour touched them:
    // the extent and free space trees' beside the first hole, the root
    // tree's after the second; the fs tree's leaf alone.
    let n = u64::from(N);
    let at = |i: u64| l.metadata.start + i * n;
    assert_eq!(
        free_extents(&t),
        vec![
            (at(0), 5 * n),
            (at(6), n),
            (at(9), 4 * n),
            (c0 + 4 * n, l.metadata.end() - c0 - 4 * n)
        ]
    );
    assert_eq!(t.free_extents(), [4]);
    assert_eq!(fs.next_bytenr(), c0 + 4 * n, "the fs tree's allocator moved past the three copies");
    // Root items: the fs tree's and the two cow-only roots'; the metadata
    // group's item each time heads had dirtied it: after the first pass's
    // fs refs and again after the three trees' own refs
    // (`btrfs_start_dirty_block_groups` loops back once), and after the
    // root tree's in `commit_cowonly_roots`.
    assert_eq!(r.item_writes, 3 + 3, "{r:?}");
    // The free space info at each change of its count: the ADDs take the
    // start of the last extent (no change), the DROPs merged into a
    // neighbour (no change) but the fs tree's leaf, a new extent (+1).
    assert_eq!(r.info_updates, 1, "{r:?}");
    // A commit with nothing to do runs nothing.
    let before = t.counts();
    t.run_queued(&mut fs, Task::Sync);
    t.commit(&mut fs, Task::Sync);
    let idle = t.counts().since(&before);
    assert_eq!(idle.heads, 0);
    assert_eq!(idle.tree.searches, 0);
}

#[test]
fn a_block_whose_add_ran_in_the_first_pass_is_dropped_when_copied_again() {
    let mut fs = fs_tree();
    let mut t = ExtentTrees::new(N, &fs);
    fs.insert_items(&[Item::new(Key::new(257, INODE_ITEM_KEY, 0), 160)]);
    let copy = fs.root_bytenr();
    // The commit's first pass runs the copy's ADD; the write-back then
    // writes it, and the commit's delayed items copy it again.
    let before = t.counts();
    t.run_queued(&mut fs, Task::Sync);
    assert_eq!(
        t.counts().since(&before).adds,
        1 + 2,
        "the fs leaf's copy and the extent and free space trees' leaves"
    );
    fs.write_back_dirty();
    fs.insert_items(&[Item::new(Key::new(258, INODE_ITEM_KEY, 0), 160)]);
    let again = fs.root_bytenr();
    assert_ne!(again, copy);
    let mid = t.counts();
    t.commit(&mut fs, Task::Sync);
    let second = t.counts().since(&mid);
    // The copy's real extent dropped and the new copy added, besides the
    // root tree's leaf (a DROP and an ADD).
    assert_eq!((second.adds, second.drops), (2, 2), "{second:?}");
    assert_eq!(t.counts().unmatched, 0);
    let freed = free_extents(&t);
    assert!(
        freed.iter().any(|&(s, len)| s <= copy && copy < s + len),
        "the copy's range is free again: {freed:?}"
    );
    assert!(
        freed.iter().all(|&(s, len)| !(s <= again && again < s + len)),
        "the new copy's is not"
    );
}

#[test]
fn the_allocator_past_the_metadata_group_reaches_a_new_one() {
    let mut fs = fs_tree();
    let mut t = ExtentTrees::new(N, &fs);
    let g = t.layout().metadata;
    // The allocator about to leave the group: the next copy lands past it.
    fs.set_next_bytenr(g.end());
    fs.insert_items(&[Item::new(Key::new(257, INODE_ITEM_KEY, 0), 160)]);
    assert_eq!(fs.root_bytenr(), g.end());
    let before = t.counts();
    t.run_queued(&mut fs, Task::Sync);
    t.commit(&mut fs, Task::Sync);
    let r = t.counts().since(&before);
    assert_eq!(r.groups_added, 1);
    assert_eq!(r.unmatched, 0, "{r:?}");
    assert_eq!(t.groups().len(), 2);
    assert_eq!(t.groups()[1].start, g.end());
    // The new group's free extent lost the blocks allocated in it: its
    // start moved past them, still one extent.
    assert_eq!(t.free_extents()[1], 1);
}

#[test]
fn a_block_made_and_freed_in_one_transaction_leaves_no_ref() {
    let mut t = Tree::new(N);
    t.commit_transaction();
    // Enough items to split the root leaf: a new leaf and a new root.
    for i in 0..400u64 {
        t.insert_items(&[Item::new(Key::new(300 + i, INODE_ITEM_KEY, 0), 160)]);
    }
    let refs = t.take_delayed_refs();
    assert_eq!(refs.drops.len(), 1, "the old root leaf");
    assert_eq!(refs.adds.len(), t.extents().len(), "every live block is this transaction's");
    assert!(refs.adds.len() >= 3);
    t.commit_transaction();
    // Next transaction: delete every item; emptied leaves are freed.
    let old_end = t.next_bytenr();
    for i in 0..400u64 {
        t.delete_item(&Key::new(300 + i, INODE_ITEM_KEY, 0));
    }
    let refs = t.take_delayed_refs();
    // Every old block copied or freed is dropped once; the copies that
    // were freed again leave no ADD, the live ones one each.
    let live = t.extents();
    assert_eq!(refs.adds, live);
    let mut dropped: Vec<u64> = refs.drops.iter().map(|e| e.bytenr).collect();
    dropped.dedup();
    assert_eq!(dropped.len(), refs.drops.len(), "each old extent dropped once");
    assert!(
        dropped.iter().all(|&b| b < old_end),
        "only extents of the earlier transaction: {dropped:?}"
    );
    assert!(refs.drops.len() >= 3);
}
