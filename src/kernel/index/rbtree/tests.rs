use super::*;
use crate::kernel::mm::touch::line_of;

/// Objects 1 KiB apart from 0x10000, rb_node at +0, key at +128 (another line).
fn split_layout() -> RbLayout {
    RbLayout {
        node_offset: 0,
        key_offset: 128,
    }
}

fn obj(key: u64) -> u64 {
    0x10000 + key * 1024
}

fn tree_of(keys: impl IntoIterator<Item = u64>, layout: RbLayout) -> RbTree {
    let mut tree = RbTree::new(layout, 0x100);
    let mut t = Vec::new();
    for k in keys {
        tree.insert(k, obj(k), &mut t).unwrap();
    }
    tree
}

#[test]
fn lookup_reads_key_line_and_node_line_per_level() {
    // 1..=7 in order: 2B(1B, 4R(3B, 6B(5R, 7R))); 5 is at depth 4.
    let mut tree = tree_of(1..=7, split_layout());
    let mut t = Vec::new();
    assert_eq!(tree.lookup(5, &mut t).map(|n| tree.key(n)), Some(5));
    assert_eq!(tree.last_walk_depth(), 4);
    let expect = [
        line_of(0x100),
        line_of(obj(2) + 128),
        line_of(obj(2) + 8),
        line_of(obj(4) + 128),
        line_of(obj(4) + 8),
    ];
    let got: Vec<u64> = t.iter().map(|x| x.line).collect();
    assert_eq!(&got[..5], &expect);
    assert_eq!(t.len(), 1 + 2 * 3 + 1, "root, 3 levels of key + child pointer, the found key");
    assert!(t.iter().all(|x| x.access == Access::Read));
}

#[test]
fn key_on_the_node_line_costs_one_line_per_level() {
    let mut tree = tree_of(
        1..=7,
        RbLayout {
            node_offset: 0,
            key_offset: 32,
        },
    );
    let mut t = Vec::new();
    tree.lookup(5, &mut t).unwrap();
    assert_eq!(t.len(), 1 + 4);
}

#[test]
fn insert_writes_exactly_the_nodes_it_recolours_and_rotates() {
    // Insert 8 into 2B(1B, 4R(3B, 6B(5R, 7R))): case 1 at 7 (uncle 5),
    // then case 3 at 2 (node 6, parent 4): 4 becomes the root.
    let mut tree = tree_of(1..=7, split_layout());
    let mut t = Vec::new();
    tree.insert(8, obj(8), &mut t).unwrap();
    let mut written: Vec<u64> = t.iter().filter(|x| x.access == Access::Write).map(|x| x.line).collect();
    written.sort_unstable();
    written.dedup();
    let mut expect: Vec<u64> = [2, 3, 4, 5, 6, 7, 8].iter().map(|&k| line_of(obj(k))).collect();
    expect.push(line_of(0x100));
    expect.sort_unstable();
    assert_eq!(written, expect);
    assert_eq!(tree.color(tree.find(4).unwrap()), Color::Black);
    assert_eq!(tree.depth_of(4), Some(1));
    tree.check_invariants().unwrap();
}

#[test]
fn duplicate_insert_leaves_tree_alone() {
    let mut tree = tree_of(1..=5, split_layout());
    let before = tree.in_order();
    let mut t = Vec::new();
    let existing = tree.insert(3, 0xdead, &mut t).unwrap_err();
    assert_eq!((tree.key(existing), tree.object(existing)), (3, obj(3)));
    assert_eq!(tree.in_order(), before);
    assert!(t.iter().all(|x| x.access == Access::Read));
}

#[test]
fn first_at_or_after_and_next() {
    let mut tree = tree_of((1..=10).map(|k| k * 10), split_layout());
    let mut t = Vec::new();
    let mut q = |k| tree.first_at_or_after(k, &mut t).map(|n| tree.key(n));
    assert_eq!(
        (q(0), q(10), q(35), q(99), q(100), q(101)),
        (Some(10), Some(10), Some(40), Some(100), Some(100), None)
    );
    let mut keys = Vec::new();
    let mut cur = tree.find(10);
    while let Some(n) = cur {
        keys.push(tree.key(n));
        cur = tree.next(n, &mut t);
    }
    assert_eq!(keys, (1..=10).map(|k| k * 10).collect::<Vec<_>>());
}

#[test]
fn erase_root_inner_and_leaf_keeps_invariants() {
    let mut tree = tree_of(1..=31, split_layout());
    let mut t = Vec::new();
    for k in [16, 1, 8, 24, 31, 2, 3, 4, 5] {
        assert_eq!(tree.erase(k, &mut t), Some(obj(k)));
        tree.check_invariants().unwrap();
        assert_eq!(tree.find(k), None);
    }
    assert_eq!(tree.erase(16, &mut t), None);
    assert_eq!(tree.len(), 22);
}

#[test]
fn replace_object_moves_node_to_new_inode() {
    let mut tree = tree_of(1..=9, split_layout());
    let mut t = Vec::new();
    let n = tree.find(4).unwrap();
    assert_eq!(tree.replace_object(n, 0x90_0000, &mut t), obj(4));
    assert_eq!(tree.object(n), 0x90_0000);
    assert!(t.contains(&Touch::new(line_of(0x90_0000), Access::Write)));
    tree.check_invariants().unwrap();
    assert_eq!(tree.in_order().iter().find(|(k, _)| *k == 4), Some(&(4, 0x90_0000)));
}

#[test]
fn check_invariants_detects_a_broken_tree() {
    let mut tree = tree_of(1..=7, split_layout());
    let n = tree.find(4).unwrap().0 as usize;
    tree.nodes[n].black = true; // 4 was red: now one side has an extra black
    assert!(matches!(tree.check_invariants(), Err(RbViolation::BlackHeight(..))));
    tree.nodes[n].black = false;
    let r = tree.root as usize;
    tree.nodes[r].black = false;
    assert_eq!(tree.check_invariants(), Err(RbViolation::RedRoot));
}

#[test]
fn child_load_overlaps_the_key_load_only_when_the_branch_is_predicted() {
    use crate::kernel::mm::touch::{Issue, critical_path};
    // 1..=7 in order: 2B(1B, 4R(3B, 6B(5R, 7R))). The inserts last went
    // right, so the walk to 5 (right, right, left) overlaps the child
    // loads at 2 and 4 and replays the one at 6 after its key.
    let mut tree = tree_of(1..=7, split_layout());
    let mut t = Vec::new();
    tree.lookup(5, &mut t).unwrap();
    let child_issues: Vec<Issue> = t
        .iter()
        .filter(|x| x.line % 16 == 0 && x.line != line_of(0x100))
        .map(|x| x.issue)
        .collect();
    assert_eq!(child_issues, vec![Issue::WithPrevious, Issue::WithPrevious, Issue::AfterPrevious]);
    // Unit costs: root, (key 2 | child 2), (key 4 | child 4), key 6, child 6, key 5.
    assert_eq!(critical_path(&t, |_| 1), 6);
    // The next walk to 5 starts predicting left (the last direction taken).
    t.clear();
    tree.lookup(5, &mut t).unwrap();
    assert_eq!(critical_path(&t, |_| 1), 7);
}

#[test]
fn an_unrecorded_insert_leaves_the_same_tree_as_a_recorded_one() {
    // Sequential keys (the prefill's) and a scrambled order, with a
    // duplicate: same nodes, links and colours, depth after each insert,
    // path and predicted side; then a recorded lookup on each gives the
    // same touches, so a run after an unrecorded prefill is the one after
    // a recorded prefill.
    let scrambled: Vec<u64> = (0..2000u64).map(|i| (i * 7919) % 2003).chain([5, 77]).collect();
    for keys in [(1..=3000u64).collect::<Vec<_>>(), scrambled] {
        let (mut a, mut b) = (RbTree::new(split_layout(), 0x100), RbTree::new(split_layout(), 0x100));
        let (mut ta, mut tb) = (Vec::new(), Vec::new());
        for &k in &keys {
            let ra = a.insert(k, obj(k), &mut ta);
            let rb = b.insert_unrecorded(k, obj(k), &mut tb);
            assert_eq!(ra, rb, "key {k}");
            assert_eq!(a.last_walk_depth(), b.last_walk_depth(), "key {k}");
            assert_eq!(a.path, b.path, "key {k}");
            assert_eq!(a.predicted, b.predicted, "key {k}");
        }
        assert!(tb.len() < ta.len(), "the descent's touches are left out");
        assert_eq!(a.nodes, b.nodes);
        assert_eq!((a.root, a.len), (b.root, b.len));
        b.check_invariants().unwrap();
        for k in [keys[0], keys[keys.len() / 2], 4000] {
            let (mut la, mut lb) = (Vec::new(), Vec::new());
            assert_eq!(a.lookup(k, &mut la), b.lookup(k, &mut lb));
            assert_eq!(la, lb, "lookup {k}");
        }
    }
}

#[test]
fn appends_build_the_tree_that_inserts_build() {
    // Rising keys appended without descents, with recorded inserts and
    // erases between them (each forgets the largest node): the same tree
    // as inserts all along, and the same touches for a walk after it.
    let (mut a, mut b) = (RbTree::new(split_layout(), 0x100), RbTree::new(split_layout(), 0x100));
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for k in 1..=4000u64 {
        match k % 1000 {
            500 => {
                // Larger than every key: the next appends must not link
                // under the node the last append made.
                a.insert(k * 10, obj(k * 10), &mut ta).unwrap();
                b.insert(k * 10, obj(k * 10), &mut tb).unwrap();
            }
            700 => {
                assert_eq!(a.erase(k - 1, &mut ta), b.erase(k - 1, &mut tb));
            }
            _ => {
                let key = if k > 500 { 10_000_000 + k } else { k };
                assert_eq!(
                    a.insert(key, obj(key), &mut ta),
                    b.append_unrecorded(key, obj(key), &mut tb),
                    "key {key}"
                );
            }
        }
        assert_eq!(a.nodes, b.nodes, "after {k}");
        assert_eq!(a.root, b.root, "after {k}");
    }
    b.check_invariants().unwrap();
    assert_eq!(a.predicted, b.predicted);
    for k in [1, 250, 10_003_999, 7] {
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        assert_eq!(a.lookup(k, &mut la), b.lookup(k, &mut lb));
        assert_eq!(la, lb, "lookup {k}");
    }
}
