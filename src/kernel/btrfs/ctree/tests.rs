//! Hand-checked split, push and merge choices on small leaves (4 KiB
//! blocks: 3,995 bytes of leaf data, 121 pointers per node).

use super::*;

const NS: u32 = 4096;

fn item(off: u64, size: u32) -> Item {
    Item::new(Key::new(300, INODE_ITEM_KEY, off), size)
}

/// Items with offsets in `range`, each of `size` data bytes.
fn leaf(range: std::ops::Range<u64>, size: u32) -> Vec<Item> {
    range.map(|o| item(o, size)).collect()
}

/// (siblings read, pushes, items pushed, offsets rewritten by pushes).
fn push_counts(t: &Tree) -> (u64, u64, u64, u64) {
    let s = t.stats();
    (s.sibling_reads, s.leaf_pushes, s.items_pushed, s.push_offsets)
}

fn counts(t: &Tree) -> Vec<usize> {
    t.leaf_layout().iter().map(|l| l.0).collect()
}

#[test]
fn geometry_matches_kernel_sizes() {
    let g = Tree::new(16384).geometry();
    assert_eq!(g.leaf_data_size(), 16283);
    assert_eq!(g.nodeptrs(), 493);
    assert_eq!(Tree::new(NS).geometry().nodeptrs(), 121);
}

#[test]
fn append_to_single_item_root_leaf_makes_empty_right_leaf() {
    // One 3000-byte item; a 1000-byte item past the end cannot join it:
    // nritems == 1 and slot >= nritems, so split = 0 and nothing moves.
    let mut t = Tree::from_leaves(NS, vec![vec![item(1, 3000)]]);
    let before = t.stats();
    assert!(t.insert_items(&[item(2, 1000)]));
    assert_eq!(counts(&t), vec![1, 1]);
    let d = t.stats().since(&before);
    assert_eq!((d.leaf_splits, d.bytes_moved), (1, 0));
    assert_eq!(t.height(), 2);
    assert!(t.check().is_ok());
}

#[test]
fn full_root_leaf_mid_split_in_the_middle() {
    // 39 items of 75 B (100 B each with header) = 3900 B; insert in the
    // middle needs 100 B > 95 free. No parent: new root, mid = 20, the new
    // item at slot 20 goes right (mid <= slot), so 20 | 20.
    let mut items = leaf(0..39, 75);
    for (i, it) in items.iter_mut().enumerate() {
        it.key.offset = 2 * i as u64;
    }
    let mut t = Tree::from_leaves(NS, vec![items]);
    assert!(t.insert_items(&[item(39, 75)]));
    assert_eq!(counts(&t), vec![20, 20]);
    assert!(t.check().is_ok());
}

#[test]
fn append_past_end_pushes_into_left_sibling() {
    // Left leaf has 10 items (1000 B), the rightmost is full (39 items).
    // Appending past its end: no right sibling, so push_leaf_left moves
    // items from its front until the new item fits; no split.
    let mut t = Tree::from_leaves(NS, vec![leaf(0..10, 75), leaf(10..49, 75)]);
    assert!(t.insert_items(&[item(100, 75)]));
    let c = counts(&t);
    assert_eq!(c.len(), 2);
    assert!(c[0] > 10, "left sibling received items: {c:?}");
    assert_eq!(c.iter().sum::<usize>(), 50);
    assert_eq!(t.stats().leaf_splits, 0);
    assert!(t.check().is_ok());
}

#[test]
fn insert_in_middle_pushes_tail_into_right_sibling() {
    // Left full (39 items), right has 10: inserting at slot 5 of the left
    // pushes items from its end (never below the insert slot) rightward.
    let mut items = leaf(0..39, 75);
    for (i, it) in items.iter_mut().enumerate() {
        it.key.offset = 2 * i as u64;
    }
    let mut t = Tree::from_leaves(NS, vec![items, leaf(100..110, 75)]);
    assert!(t.insert_items(&[item(9, 75)]));
    let c = counts(&t);
    assert_eq!(c.len(), 2);
    assert!(c[1] > 10, "right sibling received items: {c:?}");
    assert_eq!(t.stats().leaf_splits, 0);
    assert!(t.check().is_ok());
}

#[test]
fn thin_leaf_merges_into_left_and_is_freed() {
    // Middle leaf drops to 10 items (1000 B < 3995/3 = 1331): everything
    // fits in the left sibling, so it is pushed left and the leaf freed.
    let mut t = Tree::from_leaves(NS, vec![leaf(0..10, 75), leaf(10..24, 75), leaf(24..34, 75)]);
    let mut path = t.search_slot(&item(10, 0).key, SearchMode::Delete).1;
    t.del_items(&mut path, 0, 4);
    assert_eq!(counts(&t), vec![20, 10]);
    assert_eq!(t.stats().leaves_freed, 1);
    // One sibling read and locked (the left), one push of the 10 items;
    // __push_leaf_left rewrites the offsets of the 10 pushed items in the
    // left leaf and of the 0 left in the right: 10.
    assert_eq!(push_counts(&t), (1, 1, 10, 10));
    assert!(t.check().is_ok());
}

#[test]
fn thin_leaf_goes_right_all_or_nothing() {
    // Left sibling full: nothing goes left. The right sibling can take all
    // 10 remaining items, so they all go right and the leaf is freed.
    let mut t = Tree::from_leaves(NS, vec![leaf(0..39, 75), leaf(39..53, 75), leaf(53..63, 75)]);
    let mut path = t.search_slot(&item(39, 0).key, SearchMode::Delete).1;
    t.del_items(&mut path, 0, 4);
    assert_eq!(counts(&t), vec![39, 20]);
    assert_eq!(t.stats().leaves_freed, 1);
    // The left sibling is read and locked but has no room; the right
    // takes the 10 items, and __push_leaf_right rewrites the offsets of
    // every item of the right leaf after the move: 10 + 10.
    assert_eq!(push_counts(&t), (2, 1, 10, 20));
    assert!(t.check().is_ok());
}

#[test]
fn thin_leaf_stays_when_neighbours_cannot_take_it() {
    // Both neighbours nearly full: the left can take a few items (it is
    // not all-or-nothing) but the rest cannot go right, so the leaf stays
    // under a third full.
    let mut t = Tree::from_leaves(NS, vec![leaf(0..38, 75), leaf(38..52, 75), leaf(52..90, 75)]);
    let mut path = t.search_slot(&item(38, 0).key, SearchMode::Delete).1;
    t.del_items(&mut path, 0, 4);
    assert_eq!(counts(&t), vec![39, 9, 38]);
    assert_eq!(t.stats().leaves_freed, 0);
    // Left: read, one item pushed, the offsets of that item and of the
    // 9 left behind rewritten (10). The path's slot 0 was pushed, so the
    // path now points into the left leaf and btrfs_del_items does not try
    // the right one (`path->nodes[0] == leaf` fails).
    assert_eq!(push_counts(&t), (1, 1, 1, 10));
    assert!(t.check().is_ok());
}

#[test]
fn del_items_moves_bytes_after_the_range() {
    // Deleting slots 2..4 of 10 items of 75 B moves the 6 items after the
    // range: 6 x (75 data + 25 header) = 600 bytes.
    let mut t = Tree::from_leaves(NS, vec![leaf(0..10, 75)]);
    let mut path = t.search_slot(&item(2, 0).key, SearchMode::Delete).1;
    let before = t.stats();
    t.del_items(&mut path, 2, 2);
    let d = t.stats().since(&before);
    assert_eq!((d.del_items_calls, d.items_deleted, d.bytes_moved), (1, 2, 600));
    // The two memmoves: the 6 items' data up (450 B), their headers down
    // (150 B) by the two deleted headers, 50 B: under 64, the near kind.
    assert_eq!((d.del_data_moved, d.del_headers_near, d.del_headers_far), (450, 150, 0));
    // Each of the 6 items after the range has its offset rewritten.
    assert_eq!(d.items_shifted, 6);
    // Deleting the last item rewrites none and moves nothing.
    let before = t.stats();
    let mut path = t.search_slot(&item(9, 0).key, SearchMode::Delete).1;
    t.del_items(&mut path, 7, 1);
    let d = t.stats().since(&before);
    assert_eq!((d.items_shifted, d.bytes_moved, d.del_data_moved, d.del_headers_near), (0, 0, 0, 0));
    // Three deleted headers (75 B) move the headers after them the far way:
    // slots 0..3 of the 7 left, 4 after.
    let before = t.stats();
    let mut path = t.search_slot(&item(0, 0).key, SearchMode::Delete).1;
    t.del_items(&mut path, 0, 3);
    let d = t.stats().since(&before);
    assert_eq!((d.del_data_moved, d.del_headers_near, d.del_headers_far), (300, 0, 100));
}

/// The line counts of a lookup of `key` by `task`: [lock transfers,
/// foreign visits, foreign compares, key compares].
fn lookup_lines(t: &mut Tree, task: Task, key: &Key) -> [u64; 4] {
    t.set_task(task);
    let before = t.stats();
    t.lookup(key);
    let d = t.stats().since(&before);
    [d.lock_transfers, d.foreign_visits, d.foreign_compares, d.key_compares]
}

#[test]
fn a_block_moves_to_a_task_only_after_another_task_wrote_it_or_took_its_lock() {
    // A root node over two leaves, built cold: nothing is counted until a
    // task has touched a block.
    let mut t = Tree::from_leaves(NS, vec![leaf(0..20, 75), leaf(20..40, 75)]);
    let key = item(25, 75).key;
    assert_eq!(lookup_lines(&mut t, Task::Syscall, &key)[..3], [0, 0, 0]);
    // The worker takes both locks the syscall thread took last; the lines
    // were only read, so both CPUs keep them.
    assert_eq!(lookup_lines(&mut t, Task::Worker, &key)[..3], [2, 0, 0]);
    assert_eq!(lookup_lines(&mut t, Task::Worker, &key)[..3], [0, 0, 0]);
    // The syscall thread deletes from the right leaf: a delete search
    // copies root and leaf (its own lines now), the deletion writes the
    // leaf. The worker's next lookup moves both lock words, both headers
    // and every probe.
    t.set_task(Task::Syscall);
    assert!(t.delete_item(&item(30, 75).key));
    let [locks, visits, foreign, compares] = lookup_lines(&mut t, Task::Worker, &key);
    assert_eq!((locks, visits), (2, 2));
    assert!(compares > 2, "{compares}");
    assert_eq!(foreign, compares);
    // Read once, the lines are the worker's too.
    assert_eq!(lookup_lines(&mut t, Task::Worker, &key), [0, 0, 0, compares]);
}

#[test]
fn a_copy_on_write_makes_the_probes_that_follow_the_copiers() {
    // The syscall thread writes the right leaf; in the next transaction the
    // unmount's delete search locks the root and the leaf (both last the
    // syscall thread's: lock words and headers move) and copies each
    // before its binary search, which then reads its own copy.
    let mut t = Tree::from_leaves(NS, vec![leaf(0..20, 75), leaf(20..40, 75)]);
    assert!(t.delete_item(&item(30, 75).key));
    t.commit_transaction();
    t.set_task(Task::Unmount);
    let before = t.stats();
    assert!(t.delete_item(&item(31, 75).key));
    let d = t.stats().since(&before);
    assert_eq!((d.cow_blocks, d.lock_transfers, d.foreign_visits), (2, 2, 2));
    assert_eq!(d.foreign_compares, 0);
    assert!(d.key_compares > 0);
}
