use super::*;
use crate::kernel::btrfs::ctree::SearchMode;

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
    assert_eq!(t.free_extents(), 4);
    assert_eq!(fs.next_bytenr(), c0 + 4 * n, "the fs tree's allocator moved past the three copies");
    // Root items: the fs tree's and the two cow-only roots'; the metadata
    // group's item once (the first pass ran heads, the second none).
    assert_eq!(r.item_writes, 3 + 1, "{r:?}");
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
    assert!(refs.drops.len() >= 3);
}
