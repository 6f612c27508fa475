//! The free-space btrees' indirect calls (`cur->bc_ops`, fs/xfs/libxfs/
//! xfs_btree.c) held to hand counts: the calls a retpoline makes dear.

use fsmeta::kernel::xfs::freespace::{AllocBtree, AllocRec, BtreeGeometry, BtreeKind, LookupDir};

/// 128-byte blocks: 9 records per leaf (min 4), 6 pointers per node (min 3).
fn tiny() -> BtreeGeometry {
    BtreeGeometry::new(128, 56).unwrap()
}

/// `n` one-block extents two blocks apart, in by-block order.
fn recs(n: u32) -> Vec<AllocRec> {
    (0..n).map(|i| AllocRec::new(10 + 2 * i, 1)).collect()
}

/// A tree of the given records with its counters zeroed.
fn tree(n: u32, fill: f64) -> AllocBtree {
    let mut t = AllocBtree::bulk_load(BtreeKind::Bno, tiny(), &recs(n), fill);
    t.reset_stats();
    t
}

#[test]
fn a_lookup_in_a_root_leaf_makes_one_call_then_two_per_probe() {
    // Seven records: a binary search over 7 probes 3 times, whatever the
    // key. xfs_btree_lookup: init_ptr_from_cur once; per leaf probe
    // init_key_from_rec and cmp_key_with_cur.
    let mut t = tree(7, 1.0);
    assert_eq!(t.height(), 1);
    let mut cur = t.cursor();
    assert!(t.lookup(&mut cur, LookupDir::Eq, AllocRec::new(16, 1)));
    assert_eq!(t.stats.keys_compared, 3);
    assert_eq!(t.stats.indirect_calls, 1 + 2 * 3);
}

#[test]
fn a_node_level_adds_one_call_per_probe_and_one_for_the_pointer() {
    // 21 records at 7 per leaf: three leaves of 7 under a root of 3 keys.
    // The root's search over 3 keys probes twice (cmp_key_with_cur each),
    // the pointer's address takes get_maxrecs, the leaf's search over 7
    // probes 3 times at two calls each; init_ptr_from_cur once.
    let mut t = tree(21, 7.0 / 9.0);
    assert_eq!(t.height(), 2);
    assert_eq!(t.block_count(), 4);
    let mut cur = t.cursor();
    assert!(t.lookup(&mut cur, LookupDir::Eq, AllocRec::new(10 + 2 * 10, 1)));
    assert_eq!(t.stats.keys_compared, 2 + 3);
    assert_eq!(t.stats.indirect_calls, 1 + (2 + 1) + 2 * 3);
}

#[test]
fn an_insert_adds_three_calls_and_a_delete_in_a_root_leaf_none() {
    // Six records, then one inserted past the first: the insert's lookup
    // (search over 6: probes at 3, 1 then 2, so 3 probes for a key between
    // the second and third records) and xfs_btree_insrec's
    // init_rec_from_cur, init_key_from_rec and get_maxrecs.
    let mut t = tree(6, 1.0);
    assert!(t.insert(AllocRec::new(13, 1)));
    let lookup = 1 + 2 * t.stats.keys_compared;
    assert_eq!(t.stats.indirect_calls, lookup + 3);
    // xfs_btree_delrec returns at a root leaf before get_minrecs: the
    // delete costs its lookup's calls alone.
    t.reset_stats();
    assert!(t.delete(AllocRec::new(13, 1)));
    assert_eq!(t.stats.indirect_calls, 1 + 2 * t.stats.keys_compared);
}

#[test]
fn a_delete_below_a_root_node_asks_for_the_minimum_once() {
    // Three full-ish leaves under a root node: deleting a record that is
    // not a leaf's first leaves the keys alone and the leaf above its
    // minimum, so beyond the lookup only get_minrecs is called.
    let mut t = tree(21, 7.0 / 9.0);
    let mut cur = t.cursor();
    assert!(t.lookup(&mut cur, LookupDir::Eq, AllocRec::new(10 + 2 * 10, 1)));
    let lookup = t.stats.indirect_calls;
    assert!(t.delete_at(&cur));
    assert_eq!(t.stats.indirect_calls, lookup + 1);
}
