use super::*;
use crate::kernel::mm::touch::line_of;

fn xa() -> XArray {
    XArray::new(0x1000, 0x100_0000)
}

/// Nodes on a 640-byte, 64-aligned stride, so every node starts a line.
fn aligned_xa() -> XArray {
    XArray::with_slab_config(0x1000, SlabConfig::new(XA_NODE_BYTES).with_align(64), 0x100_0000).unwrap()
}

fn store(x: &mut XArray, index: u64) {
    x.store(index, index * 16, &mut Vec::new()).unwrap();
}

#[test]
fn height_follows_largest_index() {
    for (index, height) in [
        (1, 1),
        (63, 1),
        (64, 2),
        (4095, 2),
        (4096, 3),
        (262_143, 3),
        (262_144, 4),
        (u64::MAX, 11),
    ] {
        let mut x = xa();
        store(&mut x, index);
        assert_eq!((x.height(), levels_for(index)), (height, height), "index {index}");
        assert_eq!(x.node_count() as u32, height, "a single entry needs one node per level");
        x.check_invariants().unwrap();
    }
}

#[test]
fn index_zero_lives_in_the_head() {
    let mut x = xa();
    store(&mut x, 0);
    assert_eq!((x.height(), x.node_count()), (0, 0));
    assert_eq!(x.load(0, &mut Vec::new()), Some(0));
    // A reservation is never kept in the head (xas_store: allow_root false).
    let mut y = xa();
    y.reserve(0, &mut Vec::new()).unwrap();
    assert_eq!((y.height(), y.node_count()), (1, 1));
    // Storing 64 next to a head entry expands: leaf for 0..63, root, leaf for 64.
    store(&mut x, 64);
    assert_eq!((x.height(), x.node_count()), (2, 3));
    assert_eq!(x.entries(), vec![(0, 0), (64, 1024)]);
}

#[test]
fn dense_inode_numbers_node_count() {
    // 100k inodes from 256 (BTRFS_FIRST_FREE_OBJECTID): leaves 4..=1566,
    // level-1 nodes 0..=24, one root: 1563 + 25 + 1 nodes, 3 levels.
    let mut x = xa();
    for ino in 256..256 + 100_000 {
        store(&mut x, ino);
    }
    assert_eq!((x.height(), x.node_count(), x.len()), (3, 1563 + 25 + 1, 100_000));
    assert_eq!(x.slab().objects_live(), 1589);
    assert_eq!(x.slab().slabs_total(), 1589usize.div_ceil(7));
    x.check_invariants().unwrap();
}

#[test]
fn load_reads_header_and_slot_line_per_level() {
    let mut x = aligned_xa();
    store(&mut x, 0);
    let index = (5 << 12) | (9 << 6) | 17; // offsets 5, 9, 17: slots off the header line
    store(&mut x, index);
    let mut t = Vec::new();
    assert_eq!(x.load(index, &mut t), Some(index * 16));
    assert_eq!(t.len(), 1 + 2 * 3);
    assert_eq!(t[0].line, line_of(0x1000 + XA_HEAD_OFFSET));
    assert!(t.iter().all(|x| x.access == Access::Read));
    // Offset 0 at every level: slot 0 (byte 40) shares the header line.
    let mut t = Vec::new();
    x.load(0, &mut t);
    assert_eq!(t.len(), 1 + 3);
}

#[test]
fn store_after_reserve_allocates_nothing_and_writes_one_slot() {
    let mut x = xa();
    for ino in 256..300 {
        store(&mut x, ino);
    }
    let mut t = Vec::new();
    x.reserve(320, &mut t).unwrap(); // new leaf: one node
    assert_eq!(x.alloc_attempts(), 2 + 1, "root and leaf for 256..=319, then the leaf of 320");
    assert_eq!(x.load(320, &mut t), None, "reserved loads as NULL");
    let (attempts, nodes) = (x.alloc_attempts(), x.node_count());
    let mut t = Vec::new();
    assert_eq!(x.store(320, 7, &mut t), Ok(None));
    assert_eq!((x.alloc_attempts(), x.node_count()), (attempts, nodes));
    let writes: Vec<_> = t.iter().filter(|t| t.access == Access::Write).collect();
    assert_eq!(writes.len(), 1, "only the slot: count already includes the reservation");
    assert_eq!(x.load(320, &mut t), Some(7));
    x.check_invariants().unwrap();
}

#[test]
fn enomem_on_reserve_leaves_tree_unchanged() {
    let mut x = xa();
    for ino in 256..1000 {
        store(&mut x, ino);
    }
    let (entries, nodes, live, h) = (x.entries(), x.node_count(), x.slab().objects_live(), x.height());
    x.set_fail_plan(FailPlan::NextN(1));
    assert_eq!(x.reserve(5000, &mut Vec::new()), Err(XaError::NoMemory));
    assert_eq!(
        (x.entries(), x.node_count(), x.slab().objects_live(), x.height()),
        (entries.clone(), nodes, live, h)
    );
    assert_eq!(x.alloc_failures(), 1);
    // 5000 needs three nodes: a new root (shift 12), a level-1 node and a
    // leaf. Fail the second of them.
    x.set_fail_plan(FailPlan::EveryNth(x.alloc_attempts() + 2));
    assert_eq!(x.reserve(5000, &mut Vec::new()), Err(XaError::NoMemory));
    assert_eq!((x.entries(), x.node_count(), x.alloc_failures()), (entries, nodes, 2));
    x.set_fail_plan(FailPlan::Never);
    x.reserve(5000, &mut Vec::new()).unwrap();
    assert_eq!(x.node_count(), nodes + 3);
    x.check_invariants().unwrap();
}

#[test]
fn enomem_on_store_without_reserve() {
    let mut x = xa();
    store(&mut x, 300);
    x.set_fail_plan(FailPlan::NextN(5));
    let mut t = Vec::new();
    assert_eq!(x.store(1 << 20, 1, &mut t), Err(XaError::NoMemory));
    assert!(!t.is_empty(), "the walk before the failure is recorded");
    assert_eq!((x.entries(), x.node_count()), (vec![(300, 4800)], 2));
    assert_eq!(x.store(301, 2, &mut t), Ok(None), "no allocation needed: succeeds");
}

#[test]
fn erase_frees_nodes_and_shrinks() {
    let mut x = xa();
    store(&mut x, 0);
    store(&mut x, 64);
    store(&mut x, 5000); // new root, then a level-1 node and a leaf under slot 1
    assert_eq!((x.height(), x.node_count()), (3, 6));
    let mut t = Vec::new();
    assert_eq!(x.erase(5000, &mut t), Some(80_000));
    // Its leaf and level-1 node are freed; the root (count 1, slot 0) is
    // collapsed by xas_shrink: height 2 again.
    assert_eq!((x.height(), x.node_count()), (2, 3));
    assert_eq!(x.erase(64, &mut t), Some(1024));
    assert_eq!((x.height(), x.node_count(), x.slab().objects_live()), (0, 0, 0));
    assert_eq!(x.load(0, &mut t), Some(0));
    assert_eq!(x.erase(0, &mut t), Some(0));
    assert_eq!(x.erase(0, &mut t), None);
    assert!(x.is_empty());
    x.check_invariants().unwrap();
}

#[test]
fn erase_in_a_non_root_node_does_not_shrink() {
    let mut x = xa();
    store(&mut x, 1);
    store(&mut x, 4096);
    store(&mut x, 4097);
    assert_eq!(x.erase(4097, &mut Vec::new()), Some(4097 * 16));
    assert_eq!(x.height(), 3, "the leaf of 4096 is not empty: no xas_shrink");
}

#[test]
fn find_skips_reserved_and_crosses_nodes() {
    let mut x = xa();
    store(&mut x, 10);
    x.reserve(20, &mut Vec::new()).unwrap();
    store(&mut x, 5000);
    let mut t = Vec::new();
    assert_eq!(x.find(0, &mut t), Some((10, 160)));
    assert_eq!(x.find(10, &mut t), Some((10, 160)));
    assert_eq!(x.find(11, &mut t), Some((5000, 80_000)));
    assert_eq!(x.find(5001, &mut t), None);
    assert_eq!(x.find(u64::MAX, &mut t), None);
    let mut y = xa();
    y.reserve(0, &mut t).unwrap();
    assert_eq!(y.find(0, &mut t), None);
}

#[test]
fn invariant_check_catches_a_bad_count() {
    let mut x = xa();
    store(&mut x, 100);
    let Slot::Node(r) = x.head else { panic!("a node") };
    x.nodes[r as usize].count = 2;
    assert!(x.check_invariants().is_err());
}

/// The same observable state: entries, shape, node allocations and the
/// node addresses a later recorded operation touches.
fn assert_same_xarray(a: &mut XArray, b: &mut XArray, what: &str) {
    assert_eq!(a.entries(), b.entries(), "{what}: entries");
    assert_eq!(
        (a.len(), a.height(), a.node_count()),
        (b.len(), b.height(), b.node_count()),
        "{what}: shape"
    );
    assert_eq!(
        (a.alloc_attempts(), a.alloc_failures()),
        (b.alloc_attempts(), b.alloc_failures()),
        "{what}: allocations"
    );
    assert_eq!(a.slab().objects_live(), b.slab().objects_live(), "{what}: live nodes");
    assert!(a.check_invariants().is_ok() && b.check_invariants().is_ok(), "{what}: invariants");
    let probe = a.entries().last().map_or(70, |&(i, _)| i + 70);
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    assert_eq!(a.store(probe, 1, &mut ta), b.store(probe, 1, &mut tb), "{what}: a later store");
    assert_eq!(ta, tb, "{what}: the later store's touches");
}

#[test]
fn an_unrecorded_append_leaves_the_tree_reserve_and_store_leave() {
    // Rising indices from 0 with gaps that cross leaves and add levels,
    // with allocations failing now and then, and erases in between
    // (after which the remembered leaf may be freed and its arena slot
    // reused).
    let indices: Vec<u64> = (0..9000u64).map(|k| k + (k / 700) * 3000).collect();
    for fail_every in [0, 7] {
        let (mut a, mut b) = (xa(), xa());
        if fail_every > 0 {
            a.set_fail_plan(FailPlan::EveryNth(fail_every));
            b.set_fail_plan(FailPlan::EveryNth(fail_every));
        }
        let mut scratch = Vec::new();
        for (k, &i) in indices.iter().enumerate() {
            if a.reserve(i, &mut Vec::new()).is_ok() {
                a.store(i, i * 16, &mut Vec::new()).unwrap();
            }
            let _ = b.append_unrecorded(i, i * 16, &mut scratch);
            assert!(scratch.is_empty(), "nothing recorded");
            if k % 1000 == 999 {
                // Empty a whole leaf, so the next appends' leaf is new.
                for j in i.saturating_sub(80)..=i {
                    a.erase(j, &mut Vec::new());
                    b.erase(j, &mut Vec::new());
                }
            }
        }
        assert!(a.len() > 7000, "most appends stored ({})", a.len());
        assert_same_xarray(&mut a, &mut b, &format!("fail every {fail_every}"));
    }
}
