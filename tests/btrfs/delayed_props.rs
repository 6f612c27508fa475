//! Properties of the delayed-item batch rules on random inputs: the new
//! rule never makes more batches than the old one (deletions and
//! insertions), and after an insertion flush the tree holds exactly the
//! items a `BTreeMap` says, within every leaf's byte budget.

use std::collections::{BTreeMap, BTreeSet};

use fsmeta::kernel::btrfs::ctree::{DIR_INDEX_KEY, Item, Key, Tree};
use fsmeta::kernel::btrfs::delayed::{BatchStrategy, DelayedRoot, InsertStrategy, Rules, Thresholds};
use proptest::prelude::*;

const DIR: u64 = 257;

fn root(delete: BatchStrategy, insert: InsertStrategy) -> DelayedRoot {
    let mut d = DelayedRoot::new(Thresholds::default());
    d.set_rules(Rules {
        delete,
        insert,
        ..Rules::default()
    });
    d
}

/// Deletion batches for `pending` over the leaves `leaves` (a tree of
/// dir-index items built by inserting `present`).
fn delete_batches(present: &BTreeMap<u64, u32>, pending: &BTreeSet<u64>, rule: BatchStrategy, nodesize: u32) -> (u64, Tree) {
    let (batches, _, tree) = delete_run(present, pending, rule, nodesize);
    (batches, tree)
}

/// (batches, searches, tree) of a deletion flush.
fn delete_run(present: &BTreeMap<u64, u32>, pending: &BTreeSet<u64>, rule: BatchStrategy, nodesize: u32) -> (u64, u64, Tree) {
    let mut tree = Tree::new(nodesize);
    for (&i, &size) in present {
        tree.insert_items(&[Item::new(Key::new(DIR, DIR_INDEX_KEY, i), size)]);
    }
    tree.commit_transaction();
    let mut d = root(rule, InsertStrategy::LeafFit);
    for &i in pending {
        d.delete_dir_index(DIR, i);
    }
    d.commit_node(&mut tree, DIR);
    (d.delete_stats().batches, d.delete_stats().searches, tree)
}

fn insert_flush(base: &BTreeMap<u64, u32>, pending: &BTreeMap<u64, u32>, rule: InsertStrategy, nodesize: u32) -> (u64, u64, Tree) {
    let mut tree = Tree::new(nodesize);
    for (&i, &size) in base {
        tree.insert_items(&[Item::new(Key::new(DIR, DIR_INDEX_KEY, i), size)]);
    }
    let mut d = root(BatchStrategy::LeafMatch, rule);
    for (&i, &size) in pending {
        d.insert_dir_index(DIR, i, size);
    }
    d.commit_node(&mut tree, DIR);
    let s = d.insert_stats();
    assert_eq!(d.items(), 0);
    (s.batches, s.searches, tree)
}

fn sizes() -> impl Strategy<Value = u32> {
    prop_oneof![36u32..48, 30u32..300, Just(2000u32)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn leaf_match_never_exceeds_sequential(
        nodesize in prop_oneof![Just(4096u32), Just(16384u32)],
        present in prop::collection::btree_map(2u64..3000, sizes(), 1..800),
        pick in prop::collection::vec(any::<bool>(), 800),
    ) {
        let pending: BTreeSet<u64> = present.keys().zip(&pick).filter(|(_, p)| **p).map(|(k, _)| *k).collect();
        let (seq, t1) = delete_batches(&present, &pending, BatchStrategy::Sequential, nodesize);
        let (lm, t2) = delete_batches(&present, &pending, BatchStrategy::LeafMatch, nodesize);
        prop_assert!(lm <= seq, "leaf-match {lm} > sequential {seq}");
        prop_assert_eq!(t1.all_items(), t2.all_items());
        prop_assert!(t1.check().is_ok() && t2.check().is_ok());
        let (_, lm_searches, _) = delete_run(&present, &pending, BatchStrategy::LeafMatch, nodesize);
        let (_, lw_searches, t3) = delete_run(&present, &pending, BatchStrategy::LeafWalk, nodesize);
        prop_assert!(lw_searches <= lm_searches, "leaf-walk searched {lw_searches} > {lm_searches}");
        prop_assert_eq!(t3.all_items(), t2.all_items());
    }

    #[test]
    fn insert_flush_equals_a_btreemap_and_leaf_fit_never_exceeds_contiguous(
        nodesize in prop_oneof![Just(4096u32), Just(16384u32)],
        base in prop::collection::btree_map(2u64..1000, sizes(), 0..300),
        pending in prop::collection::btree_map(1000u64..5000, sizes(), 1..600),
    ) {
        let (cb, cs, ct) = insert_flush(&base, &pending, InsertStrategy::Contiguous, nodesize);
        let (lb, ls, lt) = insert_flush(&base, &pending, InsertStrategy::LeafFit, nodesize);
        prop_assert!(lb <= cb, "leaf-fit {lb} > contiguous {cb}");
        prop_assert_eq!((cs, ls), (cb, lb), "one search per batch");
        let mut want = base.clone();
        want.extend(pending.iter());
        for t in [&ct, &lt] {
            prop_assert!(t.check().is_ok(), "{:?}", t.check());
            let got: BTreeMap<u64, u32> = t.all_items().iter().map(|i| (i.key.offset, i.data_size)).collect();
            prop_assert_eq!(&got, &want);
        }
        // Batches are at least the number of leaves' worth of bytes.
        let bytes: u64 = pending.values().map(|&s| u64::from(s) + 25).sum();
        prop_assert!(lb >= bytes.div_ceil(u64::from(nodesize - 101)));
    }
}
