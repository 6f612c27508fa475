//! The fs_mark simulation on a small machine: counts that follow from the
//! program, ENOMEM recovery, eviction, determinism.

use super::params::{FsmarkParams, IndexKind};
use super::sim::{FIRST_INO, Outcome, Sim};
use crate::machine::cache::MachineCaches;
use crate::machine::{Machine, MachineConfig, Threads};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn machine(threads: u32) -> Machine {
    let config = MachineConfig {
        profile: "machines/spr-12vcpu.toml".into(),
        ..MachineConfig::default()
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    Machine::build(&config, Threads::Count(threads), &dir).unwrap()
}

fn run(p: &FsmarkParams, threads: u32, seed: u64) -> Outcome {
    let m = machine(threads);
    let caches = MachineCaches::for_machine(&m).unwrap();
    let rngs = (0..threads).map(|t| ChaCha8Rng::seed_from_u64(seed * 100 + u64::from(t))).collect();
    Sim::new(p, &m.pricing, &m.slowdown_permille, caches, rngs).run().unwrap()
}

fn params(index: IndexKind) -> FsmarkParams {
    FsmarkParams {
        index,
        files_per_thread: 500,
        loops: 2,
        ..FsmarkParams::default()
    }
}

#[test]
fn every_create_is_one_timed_insert_and_one_open_inode() {
    for kind in [IndexKind::Rbtree, IndexKind::Xarray] {
        let o = run(&params(kind), 4, 1);
        assert_eq!(o.latency.count(), 4 * 500 * 2);
        assert_eq!(o.loops, vec![(2000, o.loops[0].1), (2000, o.loops[1].1)]);
        assert_eq!(o.open, 4000);
        assert_eq!(o.failed, 0);
    }
}

#[test]
fn rbtree_height_after_4000_sequential_inodes() {
    // 4000 inodes from FIRST_INO: a red-black tree of 4000 nodes is at
    // least ceil(log2(4001)) = 12 and at most 2 log2(4001) = 23.9 high.
    let o = run(&params(IndexKind::Rbtree), 4, 1);
    assert!((12..=23).contains(&o.height), "height {}", o.height);
    let _ = FIRST_INO;
}

#[test]
fn xarray_levels_for_dense_numbers() {
    // 3600 inodes: largest index 256 + 3600 - 1 = 3855 < 4096, two levels
    // for every store (kernel.md 2.4); 4000 reach 4255 and a third level.
    let mut p = params(IndexKind::Xarray);
    p.files_per_thread = 450;
    let o = run(&p, 4, 1);
    assert_eq!(o.height, 2);
    assert_eq!(o.depth_sum, 2 * 3600);
    assert_eq!(run(&params(IndexKind::Xarray), 4, 1).height, 3);
}

#[test]
fn eviction_keeps_the_configured_number_open() {
    let mut p = params(IndexKind::Rbtree);
    p.open_inodes = 300;
    let o = run(&p, 4, 1);
    assert_eq!(o.open, 300);
    let mut p = params(IndexKind::Xarray);
    p.open_inodes = 300;
    assert_eq!(run(&p, 4, 1).open, 300);
}

#[test]
fn enomem_abandons_the_create_and_is_counted() {
    let mut p = params(IndexKind::Xarray);
    p.enomem_every = 3;
    let o = run(&p, 2, 1);
    // Every create is still timed; the failed ones leave no inode behind.
    assert_eq!(o.latency.count(), 2000);
    assert!(o.failed > 0);
    assert_eq!(o.open + o.failed, 2000);
    let created: u64 = o.loops.iter().map(|l| l.0).sum();
    assert_eq!(created, 2000 - o.failed);
}

#[test]
fn lock_wait_is_part_of_the_insert() {
    // No work between creates: the threads queue on inode_lock.
    let mut p = params(IndexKind::Rbtree);
    p.create_work_ns = 0.0;
    p.create_touch_bytes = 0;
    let o = run(&p, 8, 1);
    let mean_ps = o.latency.mean();
    let wait_per_insert = o.insert_wait_ps as f64 / o.latency.count() as f64;
    assert!(wait_per_insert > 0.3 * mean_ps, "wait {wait_per_insert} of {mean_ps}");
    assert!(wait_per_insert < mean_ps);
}

#[test]
fn same_seed_same_outcome() {
    let p = params(IndexKind::Rbtree);
    let (a, b) = (run(&p, 4, 7), run(&p, 4, 7));
    assert_eq!(a.latency.mean(), b.latency.mean());
    assert_eq!(a.log2_ns, b.log2_ns);
    assert_eq!(a.end_ps, b.end_ps);
    assert_ne!(run(&p, 4, 8).end_ps, a.end_ps);
}

/// A loaded point validates its cache model without building it (issue
/// 33: `check` of an 800-point sweep held 10.5 MB a point); a run builds
/// its own.
#[test]
fn loading_points_builds_no_cache_model_and_a_run_builds_one() {
    use crate::machine::cache::BUILT;
    let text = "[scenario]\nname = \"t\"\nreplications = 1\n[machine]\nprofile = \"machines/spr-12vcpu.toml\"\n\
                [workload]\nkind = \"fsmark\"\nthreads = 2\n[fsmark]\nfiles_per_thread = 50\nloops = 1\n\
                [sweep]\n\"fsmark.create_work_ns\" = [1.0, 2.0, 3.0]\n";
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/t.toml");
    let before = BUILT.with(std::cell::Cell::get);
    let s = crate::scenario::load_str(&file, text, &crate::scenario::LoadOptions::default()).expect("loads");
    assert_eq!(s.points.len(), 3);
    assert_eq!(BUILT.with(std::cell::Cell::get), before, "loading built a cache model");
    let key = crate::engine::rng::RunKey {
        seed: 1,
        point: 0,
        replication: 0,
    };
    s.points[0].configs[0].prepared.run(key).expect("runs");
    assert_eq!(BUILT.with(std::cell::Cell::get), before + 1, "a run builds its own");
}
