//! Case 3 (btrfs batched deletion of delayed dir-index items) out of the
//! model, plus parameter validation and a deep-tree exercise.

use fsmeta::kernel::btrfs::delayed::{BatchStrategy, Thresholds};
use fsmeta::kernel::btrfs::fs::{Fs, ROOT_DIR_INO, rm_rf};
use fsmeta::workload::btrfs_dir::{BtrfsDirParams, run_btrfs_dir};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn run(p: &BtrfsDirParams) -> std::collections::BTreeMap<String, f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    match run_btrfs_dir(p, &mut rng) {
        Ok(m) => m,
        Err(e) => panic!("run failed: {e}"),
    }
}

fn within(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= want * tol
}

#[test]
fn case3_published_batches_and_times() {
    // Published (Filipe Manana, 2022): batches 1001 -> 509, time in
    // btrfs_delete_delayed_items 9563 us -> 7328 us.
    let seq = run(&BtrfsDirParams {
        strategy: BatchStrategy::Sequential,
        ..Default::default()
    });
    let new = run(&BtrfsDirParams {
        strategy: BatchStrategy::LeafMatch,
        ..Default::default()
    });
    assert!(within(seq["batches"], 1001.0, 0.02), "sequential batches {}", seq["batches"]);
    assert!(within(new["batches"], 509.0, 0.02), "leaf-match batches {}", new["batches"]);
    assert!(
        within(seq["delete_delayed_us"], 9563.0, 0.10),
        "sequential us {}",
        seq["delete_delayed_us"]
    );
    assert!(
        within(new["delete_delayed_us"], 7328.0, 0.10),
        "leaf-match us {}",
        new["delete_delayed_us"]
    );
    // Exact counts of this model, hand-traced in the report.
    assert_eq!((seq["batches"], new["batches"]), (1001.0, 509.0));
    assert_eq!(new["batches_rm"], 9.0);
    assert_eq!((new["leaves"], new["tree_height"], new["dir_index_leaves"]), (22.0, 2.0, 4.0));
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
fn kernel_eviction_drops_pending_deletions() {
    // With btrfs_kill_delayed_inode_items at eviction, the deletions still
    // pending when testdir is removed never reach btrfs_del_items.
    let p = BtrfsDirParams {
        strategy: BatchStrategy::Sequential,
        evict_kills_pending: true,
        ..Default::default()
    };
    let m = run(&p);
    assert!(m["batches"] < 1001.0 && m["batches"] > 500.0, "{}", m["batches"]);
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
                cow_block_ns: -1.0,
                ..Default::default()
            },
            "cow_block_ns",
        ),
        (
            BtrfsDirParams {
                item_release_ns: f64::NAN,
                ..Default::default()
            },
            "item_release_ns",
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
    let mut fs = Fs::new(1024, Thresholds::default(), BatchStrategy::LeafMatch);
    let Some(dir) = fs.mkdir(ROOT_DIR_INO, b"testdir") else {
        panic!("mkdir")
    };
    for i in 1..=3000u64 {
        fs.create(dir, format!("file_{i}").as_bytes());
    }
    fs.sync();
    assert!(fs.tree.height() >= 4, "height {}", fs.tree.height());
    assert!(fs.tree.check().is_ok());
    rm_rf(&mut fs, dir);
    assert!(fs.tree.check().is_ok(), "{:?}", fs.tree.check());
    assert!(fs.tree.stats().node_splits > 0 && fs.tree.stats().node_balances > 0);
    assert_eq!(fs.tree.all_items().len(), 2, "only the root dir's items remain");
}
