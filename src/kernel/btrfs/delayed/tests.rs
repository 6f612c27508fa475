//! Hand-checked batch counts of `btrfs_delete_delayed_items`.

use super::*;
use crate::kernel::btrfs::ctree::{DIR_INDEX_KEY, Item, Key, Tree};

const DIR: u64 = 257;

fn dir_index_leaf(indexes: &[u64]) -> Vec<Item> {
    indexes.iter().map(|&i| Item::new(Key::new(DIR, DIR_INDEX_KEY, i), 38)).collect()
}

/// Runs the pending deletions of `pending` on a tree of `leaves` and
/// returns (batches, searches, leaf walks, items left in the tree).
fn run(leaves: Vec<Vec<Item>>, pending: &[u64], strategy: BatchStrategy) -> (u64, u64, u64, usize) {
    let mut tree = Tree::from_leaves(16384, leaves);
    let mut delayed = DelayedRoot::new(Thresholds::default());
    for &i in pending {
        delayed.delete_dir_index(DIR, i);
    }
    delayed.commit_node(&mut tree, DIR, strategy);
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
        d.balance(&mut tree, BatchStrategy::LeafMatch);
        if i < 128 {
            assert_eq!(d.items(), (i - 1) as usize + 1);
        }
    }
    assert_eq!(d.items(), 0);
    assert_eq!(tree.all_items().len(), 127);
}
