//! Case 3 (btrfs batched deletion of delayed dir-index items) out of the
//! model, plus parameter validation and a deep-tree exercise.

use fsmeta::kernel::btrfs::delayed::{BatchStrategy, InsertStrategy, RsvRelease, Rules, Thresholds};
use fsmeta::kernel::btrfs::fs::{Fs, ROOT_DIR_INO, rm_rf};
use fsmeta::machine::find_builtin;
use fsmeta::workload::btrfs_dir::{BtrfsDirParams, run_btrfs_dir};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn run(p: &BtrfsDirParams) -> std::collections::BTreeMap<String, f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let machine = find_builtin("icelake-2s").expect("built-in profile");
    match run_btrfs_dir(p, &machine, &mut rng) {
        Ok(m) => m,
        Err(e) => panic!("run failed: {e}"),
    }
}

fn within(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= want * tol
}

fn case3(strategy: BatchStrategy) -> BtrfsDirParams {
    BtrfsDirParams {
        strategy,
        insert_strategy: InsertStrategy::Contiguous,
        rsv_release: RsvRelease::PerItem,
        ..Default::default()
    }
}

#[test]
fn case3_exact_counts_under_the_kernels_accounting_and_eviction() {
    // Published (Filipe Manana, 2022): batches 1001 -> 509. With the file's
    // iref and inode update counted, rm -fr flushes at unlinks 125, 250,
    // 375 and 500, so nothing is pending when testdir is evicted and the
    // kill drops nothing: 1001 = 500 + 500 + 1 and 509 = 500 + 8 + 1.
    let seq = run(&case3(BatchStrategy::Sequential));
    let new = run(&case3(BatchStrategy::LeafMatch));
    let walk = run(&case3(BatchStrategy::LeafWalk));
    assert_eq!((seq["batches"], new["batches"], walk["batches"]), (1001.0, 509.0, 509.0));
    assert_eq!((seq["batches_rm"], new["batches_rm"]), (501.0, 9.0));
    assert_eq!((seq["searches"], new["searches"]), (1001.0, 509.0));
    assert!(walk["searches"] < new["searches"]);
    assert_eq!((seq["items_released"], new["items_released"]), (1001.0, 1001.0));
    assert_eq!((seq["killed_at_evict"], new["killed_at_evict"]), (0.0, 0.0));
    assert_eq!((new["leaves"], new["tree_height"], new["dir_index_leaves"]), (22.0, 2.0, 4.0));
    // The old rule does the same as the what-if "no kill": nothing pending.
    let nokill = run(&BtrfsDirParams {
        evict_kills_pending: false,
        ..case3(BatchStrategy::Sequential)
    });
    assert_eq!(nokill["batches"], 1001.0);
}

#[test]
fn case3_times_fit_the_old_rule_and_predict_the_new() {
    // batch_overhead_ns (6540) was fitted on the old-rule time, 9563 us.
    let seq = run(&case3(BatchStrategy::Sequential));
    assert!(
        within(seq["delete_delayed_us"], 9563.0, 0.005),
        "sequential us {}",
        seq["delete_delayed_us"]
    );
    // The new-rule time is a prediction: 5378 us against 7328 published
    // (-26.6%, a known gap in the scenario). Pinned to the model's value
    // (5414 before a line transfer was counted only where another task
    // wrote the block or took its lock last; 5396 before the sync and the
    // unmount wrote the tree back first).
    let new = run(&case3(BatchStrategy::LeafMatch));
    assert!(
        (new["delete_delayed_us"] - 5377.8).abs() < 1.0,
        "leaf-match us {}",
        new["delete_delayed_us"]
    );
    // Without the fitted cost only the counted cache lines remain.
    let physical = run(&BtrfsDirParams {
        batch_overhead_ns: 0.0,
        ..case3(BatchStrategy::Sequential)
    });
    assert!(
        (physical["delete_delayed_us"] - 3014.4).abs() < 1.0,
        "{}",
        physical["delete_delayed_us"]
    );
}

#[test]
fn leaf_walk_keeps_batches_and_saves_searches() {
    let lm = run(&BtrfsDirParams {
        strategy: BatchStrategy::LeafMatch,
        files: 20_000,
        ..Default::default()
    });
    let lw = run(&BtrfsDirParams {
        strategy: BatchStrategy::LeafWalk,
        files: 20_000,
        ..Default::default()
    });
    assert!(lw["leaf_walks"] > 0.0);
    assert!(lw["searches"] < lm["searches"]);
    assert!((lw["batches"] - lm["batches"]).abs() <= 2.0);
}

#[test]
fn eviction_with_pending_deletions_drops_or_runs_them() {
    // 996 files: rm -fr unlinks 498, flushing at 125, 250 and 375; the
    // last 123 deletions are pending at rmdir, whose own check reads
    // 123 + 1 + 3 = 127 and does not fire (with 998 files it reads 128
    // and the flush runs them). So they are pending when testdir is
    // evicted. The kernel's
    // rule drops them (the truncate removes the items, outside the
    // counted function); the what-if runs them at the unmount commit.
    for (strategy, ran) in [(BatchStrategy::Sequential, 123.0), (BatchStrategy::LeafMatch, 1.0)] {
        let p = BtrfsDirParams {
            files: 996,
            ..case3(strategy)
        };
        let kill = run(&p);
        let keep = run(&BtrfsDirParams {
            evict_kills_pending: false,
            ..p
        });
        assert_eq!(kill["killed_at_evict"], 123.0, "{strategy:?}");
        assert_eq!(keep["killed_at_evict"], 0.0, "{strategy:?}");
        assert_eq!(keep["items_released"] - kill["items_released"], 123.0, "{strategy:?}");
        assert_eq!(keep["batches"] - kill["batches"], ran, "{strategy:?}");
    }
}

#[test]
fn random_fraction_is_deterministic_per_seed() {
    let p = BtrfsDirParams {
        delete_fraction: Some(0.3),
        files: 3000,
        ..Default::default()
    };
    let a = run(&p);
    let b = run(&p);
    assert_eq!(a, b);
    assert!(a["files_deleted"] > 800.0 && a["files_deleted"] < 1000.0);
}

#[test]
fn name_len_and_nodesize_change_the_layout() {
    let base = run(&BtrfsDirParams::default());
    let long = run(&BtrfsDirParams {
        name_len: Some(64),
        ..Default::default()
    });
    let small = run(&BtrfsDirParams {
        nodesize: 4096,
        ..Default::default()
    });
    assert!(long["leaves"] > base["leaves"]);
    assert!(small["leaves"] > base["leaves"]);
}

#[test]
fn bad_parameters_name_their_field() {
    let cases = [
        (
            BtrfsDirParams {
                files: 0,
                ..Default::default()
            },
            "files",
        ),
        (
            BtrfsDirParams {
                delete_every: Some(0),
                ..Default::default()
            },
            "delete_every",
        ),
        (
            BtrfsDirParams {
                delete_fraction: Some(1.5),
                ..Default::default()
            },
            "delete_fraction",
        ),
        (
            BtrfsDirParams {
                name_len: Some(3),
                ..Default::default()
            },
            "name_len",
        ),
        (
            BtrfsDirParams {
                nodesize: 5000,
                ..Default::default()
            },
            "nodesize",
        ),
        (
            BtrfsDirParams {
                nodesize: 131072,
                ..Default::default()
            },
            "nodesize",
        ),
        (
            BtrfsDirParams {
                batch_overhead_ns: -1.0,
                ..Default::default()
            },
            "batch_overhead_ns",
        ),
        (
            BtrfsDirParams {
                batch_overhead_ns: f64::NAN,
                ..Default::default()
            },
            "batch_overhead_ns",
        ),
    ];
    for (p, field) in cases {
        match p.validate() {
            Err(e) => assert_eq!(e.field, field),
            other => panic!("{field}: expected a parameter error, got {other:?}"),
        }
    }
}

#[test]
fn toml_section_round_trips_and_rejects_unknown_keys() {
    let p: BtrfsDirParams = match toml::from_str("files = 10\nstrategy = \"leaf-walk\"\n") {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    assert_eq!((p.files, p.strategy), (10, BatchStrategy::LeafWalk));
    assert!(toml::from_str::<BtrfsDirParams>("filez = 10\n").is_err());
    let text = toml::to_string(&BtrfsDirParams::default()).unwrap_or_default();
    assert!(text.contains("strategy = \"leaf-match\""));
}

#[test]
fn deep_tree_survives_the_whole_script() {
    // 1 KiB blocks: 27 pointers per node, so thousands of files make a
    // 4-level tree with node splits on the way up and node rebalancing as
    // rm -fr empties it.
    let mut fs = Fs::new(1024, Thresholds::default(), Rules::default());
    let Some(dir) = fs.mkdir(ROOT_DIR_INO, b"testdir") else {
        panic!("mkdir")
    };
    for i in 1..=3000u64 {
        fs.create(dir, format!("file_{i}").as_bytes());
    }
    fs.sync();
    assert!(fs.tree.height() >= 4, "height {}", fs.tree.height());
    assert!(fs.tree.check().is_ok());
    rm_rf(&mut fs, dir, &mut |_| {});
    assert!(fs.tree.check().is_ok(), "{:?}", fs.tree.check());
    assert!(fs.tree.stats().node_splits > 0 && fs.tree.stats().node_balances > 0);
    assert_eq!(fs.tree.all_items().len(), 2, "only the root dir's items remain");
}
