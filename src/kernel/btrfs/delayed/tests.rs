//! Hand-checked batch counts of `btrfs_delete_delayed_items` and
//! `btrfs_insert_delayed_items`.

use super::*;
use crate::kernel::btrfs::ctree::{DIR_INDEX_KEY, Item, Key, Tree};

const DIR: u64 = 257;

fn dir_index_leaf(indexes: &[u64]) -> Vec<Item> {
    indexes.iter().map(|&i| Item::new(Key::new(DIR, DIR_INDEX_KEY, i), 38)).collect()
}

fn rules(delete: BatchStrategy) -> Rules {
    Rules {
        delete,
        insert: InsertStrategy::LeafFit,
        ..Rules::default()
    }
}

/// Runs the pending deletions of `pending` on a tree of `leaves` and
/// returns (batches, searches, leaf walks, items left in the tree).
fn run(leaves: Vec<Vec<Item>>, pending: &[u64], strategy: BatchStrategy) -> (u64, u64, u64, usize) {
    let mut tree = Tree::from_leaves(16384, leaves);
    let mut delayed = DelayedRoot::new(Thresholds::default());
    delayed.set_rules(rules(strategy));
    for &i in pending {
        delayed.delete_dir_index(DIR, i);
    }
    delayed.commit_node(&mut tree, DIR);
    let s = delayed.delete_stats();
    assert_eq!(delayed.items(), 0);
    assert!(tree.check().is_ok());
    (s.batches, s.searches, s.leaf_walks, tree.all_items().len())
}

#[test]
fn changelog_example_sequential_takes_three_batches() {
    let idx = [2, 3, 4, 6, 7, 10];
    assert_eq!(run(vec![dir_index_leaf(&idx)], &idx, BatchStrategy::Sequential), (3, 3, 0, 0));
}

#[test]
fn changelog_example_leaf_match_takes_one_batch() {
    let idx = [2, 3, 4, 6, 7, 10];
    assert_eq!(run(vec![dir_index_leaf(&idx)], &idx, BatchStrategy::LeafMatch), (1, 1, 0, 0));
    assert_eq!(run(vec![dir_index_leaf(&idx)], &idx, BatchStrategy::LeafWalk), (1, 1, 0, 0));
}

#[test]
fn survivors_between_pending_split_batches_under_both_rules() {
    // Leaf 2..=10; pending 2,3 | 5,6 | 8: survivors 4, 7 break the runs.
    let all: Vec<u64> = (2..=10).collect();
    let pending = [2, 3, 5, 6, 8];
    for s in [BatchStrategy::Sequential, BatchStrategy::LeafMatch, BatchStrategy::LeafWalk] {
        assert_eq!(run(vec![dir_index_leaf(&all)], &pending, s), (3, 3, 0, 4), "{s:?}");
    }
}

#[test]
fn every_other_index_pending_is_one_batch_per_item_under_sequential_only() {
    // Survivors already gone: the leaf holds 3,5,7,9,11, all pending.
    let idx = [3, 5, 7, 9, 11];
    assert_eq!(run(vec![dir_index_leaf(&idx)], &idx, BatchStrategy::Sequential).0, 5);
    assert_eq!(run(vec![dir_index_leaf(&idx)], &idx, BatchStrategy::LeafMatch).0, 1);
}

#[test]
fn leaf_boundary_costs_a_batch_and_leaf_walk_saves_the_search() {
    // Two leaves 2..=5 and 6..=9 under one parent, all pending: one batch
    // per leaf; leaf-walk steps sideways instead of searching again.
    let leaves = vec![dir_index_leaf(&[2, 3, 4, 5]), dir_index_leaf(&[6, 7, 8, 9])];
    let pending: Vec<u64> = (2..=9).collect();
    assert_eq!(run(leaves.clone(), &pending, BatchStrategy::LeafMatch), (2, 2, 0, 0));
    assert_eq!(run(leaves, &pending, BatchStrategy::LeafWalk), (2, 1, 1, 0));
}

#[test]
fn deletion_of_pending_insertion_cancels_it() {
    let mut d = DelayedRoot::new(Thresholds::default());
    d.insert_dir_index(DIR, 2, 38);
    assert!(d.delete_dir_index(DIR, 2));
    assert_eq!(d.items(), 0);
    assert!(d.node(DIR).is_none_or(|n| n.del.is_empty()));
}

#[test]
fn background_threshold_runs_the_worker_and_stops_below_half() {
    // 127 insertions + the dirty inode = 128 items: the worker runs the
    // node, leaving nothing pending.
    let mut tree = Tree::new(16384);
    let mut d = DelayedRoot::new(Thresholds::default());
    for i in 2..129 {
        d.insert_dir_index(DIR, i, 38);
        d.update_inode(DIR);
        let check = d.balance(&mut tree);
        assert_eq!(check.items, (i - 1) as usize + 1);
        assert_eq!(check.fired, i == 128);
    }
    assert_eq!(d.items(), 0);
    assert_eq!(tree.all_items().len(), 127);
}

#[test]
fn iref_and_inode_update_count_once_each_and_kill_drops_everything() {
    let mut d = DelayedRoot::new(Thresholds::default());
    d.delete_inode_ref(300);
    d.delete_inode_ref(300);
    d.update_inode(300);
    d.update_inode(300);
    assert_eq!(d.items(), 2);
    d.delete_dir_index(DIR, 5);
    d.delete_dir_index(DIR, 7);
    d.update_inode(DIR);
    assert_eq!(d.items(), 5);
    assert_eq!(d.kill_inode_items(DIR), 2);
    assert_eq!(d.items(), 2);
    assert!(d.node(DIR).is_none());
}

/// Inserts `pending` (index, data bytes) into an empty tree under `rule`
/// and returns (batches, searches, items in the tree).
fn insert(pending: &[(u64, u32)], rule: InsertStrategy) -> (u64, u64, usize) {
    let mut tree = Tree::new(16384);
    let mut d = DelayedRoot::new(Thresholds::default());
    d.set_rules(Rules {
        delete: BatchStrategy::LeafMatch,
        insert: rule,
        ..Rules::default()
    });
    for &(i, size) in pending {
        d.insert_dir_index(DIR, i, size);
    }
    d.commit_node(&mut tree, DIR);
    let s = d.insert_stats();
    assert_eq!(d.items(), 0);
    assert_eq!(s.items, pending.len() as u64);
    assert!(tree.check().is_ok(), "{:?}", tree.check());
    (s.batches, s.searches, tree.all_items().len())
}

#[test]
fn insert_contiguous_run_is_one_batch_under_both_rules() {
    let pending: Vec<(u64, u32)> = (2..=10).map(|i| (i, 38)).collect();
    assert_eq!(insert(&pending, InsertStrategy::Contiguous), (1, 1, 9));
    assert_eq!(insert(&pending, InsertStrategy::LeafFit), (1, 1, 9));
}

#[test]
fn insert_changelog_example_three_batches_then_one() {
    // "btrfs: improve batch insertion of delayed dir index items": keys
    // 10, 11, 12, 15, 16, 20, 21 went in three batches, now in one.
    let pending: Vec<(u64, u32)> = [10, 11, 12, 15, 16, 20, 21].iter().map(|&i| (i, 38)).collect();
    assert_eq!(insert(&pending, InsertStrategy::Contiguous), (3, 3, 7));
    assert_eq!(insert(&pending, InsertStrategy::LeafFit), (1, 1, 7));
}

#[test]
fn insert_leaf_boundary_closes_a_batch_under_both_rules() {
    // 4000-byte items take 4025 bytes each: four fit 16,283 bytes
    // (16,100), a fifth does not.
    let run: Vec<(u64, u32)> = (2..=9).map(|i| (i, 4000)).collect();
    assert_eq!(insert(&run, InsertStrategy::Contiguous), (2, 2, 8));
    assert_eq!(insert(&run, InsertStrategy::LeafFit), (2, 2, 8));
    // Every other index: one batch per item, or one per four items.
    let gaps: Vec<(u64, u32)> = (1..=8).map(|i| (2 * i, 4000)).collect();
    assert_eq!(insert(&gaps, InsertStrategy::Contiguous), (8, 8, 8));
    assert_eq!(insert(&gaps, InsertStrategy::LeafFit), (2, 2, 8));
}

#[test]
fn insert_batch_takes_the_first_item_even_when_it_alone_is_large() {
    let ins = std::collections::BTreeMap::from([(2u64, 16_230u32), (3, 38)]);
    let b = run::insert_batch(&ins, DIR, 16_283, InsertStrategy::LeafFit);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].key, Key::new(DIR, DIR_INDEX_KEY, 2));
}

/// A delayed root under the concurrent worker with these thresholds, over
/// a tree holding dir indexes 2..=41 of [`DIR`].
fn concurrent(background: usize, writeback: usize) -> (Tree, DelayedRoot) {
    let all: Vec<u64> = (2..=41).collect();
    let tree = Tree::from_leaves(16384, vec![dir_index_leaf(&all)]);
    let mut d = DelayedRoot::new(Thresholds {
        background,
        writeback,
        batch: 16,
    });
    d.set_rules(rules(BatchStrategy::LeafMatch));
    d.set_worker_mode(WorkerMode::Concurrent);
    (tree, d)
}

#[test]
fn concurrent_worker_is_only_queued_by_the_check_and_steps_one_batch_at_a_time() {
    let (mut tree, mut d) = concurrent(4, 512);
    // Every other index: one-item batches.
    for i in [2, 4, 6, 8] {
        d.delete_dir_index(DIR, i);
    }
    assert!(d.balance(&mut tree).fired);
    assert!(d.worker_queued());
    assert_eq!(d.delete_stats().batches, 0, "the check ran nothing");
    let Some(WorkerStep::Delete(s)) = d.worker_step(&mut tree) else {
        panic!("the first step is a deletion batch");
    };
    assert_eq!((s.batches, s.items_released, s.searches), (1, 1, 1));
    assert_eq!(d.delete_stats().batches, 1);
    assert_eq!(d.items(), 3);
}

#[test]
fn concurrent_worker_picks_up_deletions_queued_while_it_runs() {
    let (mut tree, mut d) = concurrent(4, 512);
    for i in [2, 4, 6, 8] {
        d.delete_dir_index(DIR, i);
    }
    d.balance(&mut tree);
    d.worker_step(&mut tree);
    // The syscall thread deletes two more while the worker is at index 4.
    d.delete_dir_index(DIR, 10);
    d.delete_dir_index(DIR, 12);
    let mut steps = Vec::new();
    while let Some(s) = d.worker_step(&mut tree) {
        steps.push(s);
    }
    let deletes = steps.iter().filter(|s| matches!(s, WorkerStep::Delete(_))).count();
    assert_eq!(deletes, 5, "{steps:?}");
    assert!(
        matches!(steps.last(), Some(WorkerStep::Inode(_))),
        "the node ends with its inode item"
    );
    let s = d.delete_stats();
    assert_eq!((s.runs, s.batches, s.items_released), (1, 6, 6), "one flush took all six");
    assert_eq!(d.items(), 0);
    assert!(!d.worker_queued());
    assert_eq!(tree.all_items().len(), 34);
}

#[test]
fn concurrent_worker_stops_below_half_the_background_threshold() {
    // Two nodes pending: the directory's four deletions and a file's two
    // items (its ref and inode). After the directory, 2 items are left,
    // below 6 / 2: the worker stops and the file's node stays queued.
    let (mut tree, mut d) = concurrent(6, 512);
    for i in [2, 4, 6, 8] {
        d.delete_dir_index(DIR, i);
    }
    d.delete_inode_ref(300);
    d.update_inode(300);
    assert!(d.balance(&mut tree).fired);
    while d.worker_step(&mut tree).is_some() {}
    assert_eq!(d.delete_stats().batches, 4);
    assert_eq!(d.items(), 2);
    assert!(d.node(300).is_some_and(|n| n.del_iref && n.inode_dirty));
    // The inline worker at the same point stops there too.
    let (mut tree, mut inline) = concurrent(6, 512);
    inline.set_worker_mode(WorkerMode::Inline);
    for i in [2, 4, 6, 8] {
        inline.delete_dir_index(DIR, i);
    }
    inline.delete_inode_ref(300);
    inline.update_inode(300);
    inline.balance(&mut tree);
    assert_eq!((inline.delete_stats(), inline.items()), (d.delete_stats(), 2));
}

#[test]
fn concurrent_worker_is_waited_for_at_writeback() {
    let (mut tree, mut d) = concurrent(4, 6);
    for i in [2, 4, 6, 8, 10, 12] {
        d.delete_dir_index(DIR, i);
    }
    // 6 items >= writeback: the caller waits, the worker runs inline.
    assert!(d.balance(&mut tree).fired);
    assert!(!d.worker_queued());
    assert_eq!((d.delete_stats().batches, d.items()), (6, 0));
}

#[test]
fn the_commit_runs_what_a_queued_worker_had_left() {
    let (mut tree, mut d) = concurrent(4, 512);
    for i in [2, 4, 6, 8] {
        d.delete_dir_index(DIR, i);
    }
    d.balance(&mut tree);
    d.worker_step(&mut tree);
    d.run_all(&mut tree);
    assert!(!d.worker_queued());
    assert_eq!(d.worker_step(&mut tree), None);
    let s = d.delete_stats();
    assert_eq!((s.runs, s.batches, d.items()), (2, 4, 0), "the worker's flush and the commit's");
}

#[test]
fn checks_that_find_a_worker_queued_do_not_queue_another() {
    let (mut tree, mut d) = concurrent(4, 512);
    for i in [2, 4, 6, 8] {
        d.delete_dir_index(DIR, i);
    }
    d.balance(&mut tree);
    d.delete_dir_index(DIR, 10);
    assert!(d.balance(&mut tree).fired);
    assert_eq!(d.worker_runs(), 1);
}

#[test]
fn writeback_finishes_a_worker_caught_inside_a_node() {
    // The worker has taken the directory's node (off prepare_list) and
    // done one batch; then other inodes' items reach writeback: the
    // caller waits for that worker too, so the directory's last three
    // deletions are not left behind.
    let (mut tree, mut d) = concurrent(4, 8);
    for i in [2, 4, 6, 8] {
        d.delete_dir_index(DIR, i);
    }
    d.balance(&mut tree);
    d.worker_step(&mut tree);
    for ino in [300, 301, 302] {
        d.delete_inode_ref(ino);
        d.update_inode(ino);
    }
    assert_eq!(d.items(), 9);
    assert!(d.balance(&mut tree).fired);
    assert!(!d.worker_queued());
    assert_eq!((d.items(), d.delete_stats().batches), (0, 4));
}

#[test]
fn the_reservation_goes_back_per_item_before_6_0_and_per_batch_since() {
    // One leaf-match batch of three deletions and one whose key is gone:
    // before 6.0 one btrfs_block_rsv_release per deleted item, since then
    // one per batch; the missing key releases none in either.
    for (rsv_release, expected) in [(RsvRelease::PerItem, 3), (RsvRelease::PerBatch, 1)] {
        let mut tree = Tree::from_leaves(16384, vec![dir_index_leaf(&[2, 4, 6])]);
        let mut delayed = DelayedRoot::new(Thresholds::default());
        delayed.set_rules(Rules {
            rsv_release,
            ..rules(BatchStrategy::LeafMatch)
        });
        for i in [2, 4, 6, 9] {
            delayed.delete_dir_index(DIR, i);
        }
        delayed.commit_node(&mut tree, DIR);
        let s = delayed.delete_stats();
        assert_eq!((s.batches, s.not_found, s.items_released), (1, 1, 4), "{rsv_release:?}");
        assert_eq!(s.rsv_releases, expected, "{rsv_release:?}");
    }
}
