//! Issue 16's script (create N files, unlink every other one, sync):
//! delayed-insertion batches under the two rules, hand-computed.

use fsmeta::kernel::btrfs::delayed::InsertStrategy;
use fsmeta::machine::find_builtin;
use fsmeta::workload::btrfs_dir::{BtrfsDirParams, run_btrfs_dir};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn run(files: u64, insert_strategy: InsertStrategy) -> std::collections::BTreeMap<String, f64> {
    let p = BtrfsDirParams {
        files,
        insert_strategy,
        rm_rf: false,
        ..Default::default()
    };
    let machine = find_builtin("icelake-2s").expect("built-in profile");
    run_btrfs_dir(&p, &machine, &mut ChaCha8Rng::seed_from_u64(1)).expect("runs")
}

#[test]
fn hundred_files_every_other_unlinked_before_any_flush() {
    // 3 + 100 = 103 items after the creates, fewer after each unlink (its
    // insertion is cancelled): no flush before the sync. The sync inserts
    // the root's entry for testdir (1 batch) and testdir's 50 survivors,
    // indexes 3, 5, ..., 101: one batch each under the contiguous rule,
    // one batch for all under leaf-fit (50 x 62 bytes fit a leaf).
    let old = run(100, InsertStrategy::Contiguous);
    let new = run(100, InsertStrategy::LeafFit);
    assert_eq!((old["insert_items_sync"], new["insert_items_sync"]), (51.0, 51.0));
    assert_eq!((old["insert_batches_sync"], new["insert_batches_sync"]), (51.0, 2.0));
    assert_eq!((old["insert_searches"], new["insert_searches"]), (51.0, 2.0));
    assert_eq!(old["worker_runs"], 0.0);
    assert!(new["insert_sync_us"] < old["insert_sync_us"]);
    // No deletion ever reaches the tree: every unlink cancelled a pending
    // insertion.
    assert_eq!((old["batches"], new["batches"]), (0.0, 0.0));
}

#[test]
fn a_flush_before_the_unlinks_leaves_no_gaps_to_batch_across() {
    // With 124 files the first unlink lifts the count to 128 (127 - 1 +
    // 2): the flush writes every pending insertion before any gap exists,
    // so both rules make the same batches.
    for files in [124, 1000] {
        let old = run(files, InsertStrategy::Contiguous);
        let new = run(files, InsertStrategy::LeafFit);
        assert_eq!(old["insert_batches"], new["insert_batches"], "{files}");
        assert_eq!(old["insert_delayed_us"], new["insert_delayed_us"], "{files}");
    }
}
