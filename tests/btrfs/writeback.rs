//! Tree blocks written back inside their transaction are copied again at
//! their next change (`should_cow_block`: `BTRFS_HEADER_FLAG_WRITTEN`), and
//! `syncfs` writes every dirty block back before its commit
//! (`sync_filesystem`: `writeback_inodes_sb` on 6.18, whose
//! `btree_writepages` lost its 32 MiB threshold in upstream 4e159150a9a5,
//! and `sync_inodes_sb` on every kernel).

use fsmeta::kernel::btrfs::ctree::{DIR_INDEX_KEY, Item, Key, Tree};
use fsmeta::kernel::btrfs::delayed::{Rules, Thresholds};
use fsmeta::kernel::btrfs::fs::{COW_ONLY_ROOT_BLOCKS, Fs, ROOT_DIR_INO};

/// `n` items of 100 bytes from key offset `from`: a leaf well inside its
/// budget, so no change below splits, pushes or merges.
fn leaf(from: u64, n: u64) -> Vec<Item> {
    (from..from + n).map(|o| Item::new(Key::new(300, 1, o), 100)).collect()
}

fn cows(t: &Tree) -> u64 {
    t.stats().cow_blocks
}

#[test]
fn a_block_written_back_is_copied_again_once() {
    // A committed root node over two leaves.
    let mut t = Tree::from_leaves(16384, vec![leaf(0, 60), leaf(1000, 60)]);
    let c0 = cows(&t);
    assert!(t.delete_item(&Key::new(300, 1, 5)));
    assert_eq!(cows(&t) - c0, 2, "the root node and the left leaf, first change in the transaction");
    assert!(t.delete_item(&Key::new(300, 1, 6)));
    assert_eq!(cows(&t) - c0, 2, "already copied in this transaction");
    assert_eq!(t.write_back_dirty(), 2, "the two blocks dirtied in this transaction");
    assert_eq!(t.write_back_dirty(), 0, "nothing is dirty any more");
    assert!(t.delete_item(&Key::new(300, 1, 7)));
    assert_eq!(cows(&t) - c0, 4, "written back: the node and the leaf are copied again");
    assert!(t.delete_item(&Key::new(300, 1, 8)));
    assert_eq!(cows(&t) - c0, 4, "the new copies are dirty, not written");
    assert!(t.delete_item(&Key::new(300, 1, 1005)));
    assert_eq!(cows(&t) - c0, 5, "the right leaf: only its first copy in the transaction");
    t.check().expect("invariants");
}

/// Case 3's script up to the sync: 1000 creates, every other file
/// unlinked. Returns the filesystem, testdir and the dir-index keys whose
/// deletion is still pending.
fn before_sync(writeback_on_sync: bool) -> (Fs, u64, Vec<Key>) {
    let mut fs = Fs::new(16384, Thresholds::default(), Rules::default());
    fs.writeback_on_sync = writeback_on_sync;
    let dir = fs.mkdir(ROOT_DIR_INO, b"testdir").expect("mkdir");
    let name = |i: u64| format!("file_{i}").into_bytes();
    for i in 1..=1000 {
        fs.create(dir, &name(i));
    }
    let mut unlinked = Vec::new();
    for i in (1..=1000).step_by(2) {
        let idx = fs.dirs[&dir].entries[name(i).as_slice()].1;
        assert!(fs.unlink(dir, &name(i)));
        unlinked.push(Key::new(dir, DIR_INDEX_KEY, idx));
    }
    let pending = unlinked.into_iter().filter(|k| fs.tree.lookup(k).is_some()).collect();
    (fs, dir, pending)
}

#[test]
fn syncfs_writes_the_tree_back_and_the_commit_copies_what_it_changes() {
    let (mut old, _, pending) = before_sync(false);
    let c0 = cows(&old.tree);
    old.sync();
    assert_eq!(cows(&old.tree) - c0, 0, "one transaction: every block was copied by the creates");
    assert_eq!(old.blocks_written_back, 0);
    // Without the write-back the commit writes each live block once (all
    // made in this transaction), and the other trees' three leaves.
    assert_eq!((old.commits(), old.tree.height()), (1, 2));
    let live = old.tree.leaf_layout().len() as u64 + 1;
    assert_eq!(old.blocks_written(), live + COW_ONLY_ROOT_BLOCKS);

    let (mut fs, _, same) = before_sync(true);
    assert_eq!(pending, same);
    assert!(!pending.is_empty(), "the worker leaves deletions to the commit");
    // Every block was made in the running transaction (the tree's first
    // leaf was copied by mkdir): all are dirty and written back.
    let layout = fs.tree.leaf_layout();
    assert_eq!(fs.tree.height(), 2);
    let blocks = layout.len() as u64 + 1;
    // The leaves holding the pending deletions: the last leaf whose first
    // key is at or below each key.
    let mut leaves: Vec<usize> = pending
        .iter()
        .map(|k| layout.iter().rposition(|l| l.2.is_some_and(|f| f <= *k)).expect("a leaf"))
        .collect();
    leaves.dedup();
    let (c0, f0) = (cows(&fs.tree), fs.tree.stats().leaves_freed);
    fs.sync();
    assert_eq!(fs.blocks_written_back, blocks);
    // The commit's deletions copy the root node and each leaf they change
    // once, and the delayed inode update testdir's inode item leaf (the
    // first leaf, which holds inode 257's items).
    let inode_leaf = u64::from(!leaves.contains(&0));
    assert_eq!(cows(&fs.tree) - c0, 1 + leaves.len() as u64 + inode_leaf, "leaves {leaves:?}");
    // What the device sees: every block written back, then each copy the
    // commit made and did not free again (a leaf its deletions emptied or
    // merged into a sibling), and the other trees' leaves.
    let freed = fs.tree.stats().leaves_freed - f0;
    assert!(freed <= 1, "{freed} leaves freed by the commit");
    assert_eq!(fs.commits(), 1);
    assert_eq!(fs.blocks_written(), blocks + cows(&fs.tree) - c0 - freed + COW_ONLY_ROOT_BLOCKS);
    // The commit's record, for its time: the blocks written back (one
    // node, the leaves with their items), the deletions it ran, and the
    // blocks it wrote itself, which with them make the commit's count.
    let work = &fs.commit_work[0];
    assert_eq!(work.writeback.len() as u64, blocks);
    assert_eq!(work.writeback.iter().filter(|b| b.level == 1).count(), 1);
    let items: u32 = work.writeback.iter().filter(|b| b.level == 0).map(|b| b.slots).sum();
    assert_eq!(items as usize, layout.iter().map(|l| l.0).sum::<usize>());
    assert_eq!(work.deletes.items_released, pending.len() as u64);
    assert_eq!(work.writeback.len() + work.written.len(), fs.blocks_written() as usize);
    fs.tree.check().expect("invariants");
}
