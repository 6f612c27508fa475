//! Wiring check for case 2: inode numbers inserted in increasing order into
//! the rb-tree (nodes embedded in 1064-byte inodes from a slab) and into
//! the xarray (reserve, then store), every touch fed through one cache
//! hierarchy. Asserts the structural counts the study rests on.

use fsmeta::kernel::index::rbtree::{RbLayout, RbTree};
use fsmeta::kernel::index::xarray::XArray;
use fsmeta::kernel::mm::slab::{SlabCache, SlabConfig};
use fsmeta::kernel::mm::touch::{Access, Touch, distinct_lines};
use fsmeta::machine::cache::{CacheConfig, Hierarchy, LevelConfig};

const N: u64 = 100_000;
const FIRST_INO: u64 = 256;

fn machine() -> Hierarchy {
    let l = |size_bytes, ways| LevelConfig { size_bytes, ways };
    Hierarchy::new(&CacheConfig {
        l1d: l(48 << 10, 12),
        l2: l(2 << 20, 16),
        llc: l(32 << 20, 16),
        core_socket: vec![0],
    })
    .unwrap()
}

fn feed(h: &mut Hierarchy, t: &[Touch]) {
    for x in t {
        h.access(0, x.line, x.access == Access::Write);
    }
}

#[test]
fn rbtree_insert_walks_the_right_spine_through_two_lines_per_level() {
    let mut inodes = SlabCache::new(SlabConfig::new(1064).with_freeptr_outside(true), 1 << 40).unwrap();
    // rb_node and the key (location.objectid) on different lines of the inode.
    let mut tree = RbTree::new(
        RbLayout {
            node_offset: 0x100,
            key_offset: 0x40,
        },
        0x1000,
    );
    let (mut h, mut t) = (machine(), Vec::new());
    for ino in FIRST_INO..FIRST_INO + N {
        t.clear();
        tree.insert(ino, inodes.alloc(), &mut t).unwrap();
        feed(&mut h, &t);
    }
    assert_eq!(tree.height(), 31);
    t.clear();
    tree.insert(FIRST_INO + N, inodes.alloc(), &mut t).unwrap();
    assert_eq!(tree.last_walk_depth(), 31);
    // Root pointer, then a key line and an rb_node line in each of 31 inodes, then the new inode.
    assert!(distinct_lines(&t) > 1 + 2 * 31, "{} lines", distinct_lines(&t));
    assert_eq!(h.totals().accesses, h.totals().l1_hits + h.totals().l1_misses);
}

#[test]
fn xarray_store_after_reserve_is_a_short_walk() {
    let mut x = XArray::new(0x2000, 1 << 41);
    let (mut h, mut t) = (machine(), Vec::new());
    for ino in FIRST_INO..FIRST_INO + N {
        t.clear();
        x.reserve(ino, &mut t).unwrap();
        let attempts = x.alloc_attempts();
        x.store(ino, ino * 1072, &mut t).unwrap();
        assert_eq!(x.alloc_attempts(), attempts, "xa_store after xa_reserve never allocates");
        feed(&mut h, &t);
    }
    assert_eq!((x.height(), x.node_count()), (3, 1563 + 25 + 1));
    let mut t = Vec::new();
    x.reserve(FIRST_INO + N, &mut t).unwrap();
    let mut s = Vec::new();
    x.store(FIRST_INO + N, 1, &mut s).unwrap();
    // xa_head, then header and slot line of 3 nodes: at most 7 lines.
    assert!(distinct_lines(&s) <= 7, "{} lines", distinct_lines(&s));
    assert_eq!(s.iter().filter(|t| t.access == Access::Write).count(), 1);
}

/// A prefilled point's memory estimate counts the prefilled inodes: the
/// 10^7 point of `index-scaling.toml` holds 10^7 rb-tree nodes of 32 bytes
/// (320 MB; 0.47 GB measured for the whole run at 64 threads), however
/// few files its threads create (5,000 each). It once counted only the
/// created files (82 MB), so `--max-memory` let runs in that hold far more.
#[test]
fn a_prefilled_point_is_estimated_with_its_open_inodes() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/index-scaling.toml");
    let study = fsmeta::Study::load(&file, &fsmeta::LoadOptions::default()).expect("loads");
    let last = study.scenario.points.last().expect("points");
    for config in &last.configs {
        let bytes = config.prepared.memory_bytes();
        assert!(bytes >= 10_000_000 * 32 + (64 << 20), "{bytes}");
        assert!(bytes < 1 << 30, "{bytes}");
    }
}
