//! Exact shapes of the red-black tree after sequential inserts, derived by
//! hand from `lib/rbtree.c`'s insert cases (the kernel's btrfs inode numbers
//! arrive in increasing order, so this is the shape case 2 walks).
//!
//! How the shape is derived. A red-black tree is a 2-3-4 tree in disguise:
//! a black node plus its red children is one 2-3-4 node. With increasing
//! keys every insert lands at the far right, and `__rb_insert` only ever
//! meets two situations there:
//! - the rightmost 2-3-4 node holds 1 or 2 keys: the new red node joins it
//!   (a black parent stops the loop, or case 3 rotates a right-leaning pair
//!   into a balanced 3-key node);
//! - it holds 3 keys `{a, b, c}` (b black, a and c red): case 1 splits it,
//!   `{a}` stays on the left, `b` turns red and joins the parent 2-3-4
//!   node, and `{c, new}` is the new rightmost node.
//!
//! So each level on the right spine is a counter that receives m keys
//! (inserts at the leaf level, carries above): 1 key after the first, then
//! 2, 3, and on the 4th key it splits back to 2 and carries one key up. For
//! m >= 2 it holds `2 + (m - 2) % 2` keys and passes `(m - 2) / 2` keys up.
//! The top level holds 1..=3 keys; when it splits a new root of 1 key is
//! made. Everything left of the spine is a perfect all-black tree.
//!
//! Depth along the rightmost path (nodes, root = 1): a 1-key spine node adds
//! one node, a 2- or 3-key spine node adds two (its black node, then its red
//! right child). Every other path is no longer, so
//! height = levels + (spine levels holding 2 or 3 keys), and the black
//! height is the number of levels.
//!
//! n = 100_000: m per level, bottom up, is 100000, 49999, 24998, 12498,
//! 6248, 3123, 1560, 779, 388, 193, 95, 46, 22, 10, 4, 1. That is 16 levels;
//! the top holds 1 key and the 15 below hold 2 or 3, so the height is
//! 16 + 15 = 31 and the black height 16. (kernel.md's simulation also found
//! 31 for the right spine at 100k. The changelog's "depth of 17" is near
//! the black height, 16, and the mean depth, about 16; an increasing insert
//! walks the 31-node right spine.)

use fsmeta::kernel::index::rbtree::{Color, RbLayout, RbTree};

fn sequential(n: u64) -> RbTree {
    let mut tree = RbTree::new(
        RbLayout {
            node_offset: 0,
            key_offset: 128,
        },
        0,
    );
    let mut t = Vec::new();
    for k in 1..=n {
        tree.insert(k, k * 1024, &mut t).unwrap();
        t.clear();
    }
    tree
}

/// The counter model above: (levels, height) after n increasing inserts.
fn predicted(n: u64) -> (u32, u32) {
    let (mut m, mut levels, mut height) = (n, 0, 0);
    while m >= 1 {
        levels += 1;
        let keys = if m == 1 { 1 } else { 2 + (m - 2) % 2 };
        height += if keys == 1 { 1 } else { 2 };
        m = if m >= 2 { (m - 2) / 2 } else { 0 };
    }
    (levels, height)
}

fn shape(tree: &RbTree, n: u64) -> Vec<(u32, Color)> {
    (1..=n)
        .map(|k| (tree.depth_of(k).unwrap(), tree.color(tree.find(k).unwrap())))
        .collect()
}

#[test]
fn keys_1_to_7() {
    // 1, 2: 1B with 2R right. 3: case 3 at 1 gives 2B(1R, 3R).
    // 4: case 1 (uncle 1 red), 2 turns red at the root, then black.
    // 5: case 3 at 3 gives 4B(3R, 5R). 6: case 1, 4 turns red under black 2.
    // 7: case 3 at 5 gives 6B(5R, 7R). Final: 2B(1B, 4R(3B, 6B(5R, 7R))).
    use Color::{Black as B, Red as R};
    let tree = sequential(7);
    tree.check_invariants().unwrap();
    assert_eq!(shape(&tree, 7), vec![(2, B), (1, B), (3, B), (2, R), (4, R), (3, B), (4, R)]);
    assert_eq!((tree.height(), tree.black_height(), tree.depth_sum()), (4, 2, 19));
}

#[test]
fn keys_1_to_15() {
    // 8: case 1 at 7, then case 3 at 2: 4B(2R(1B, 3B), 6R(5B, 7B(-, 8R))).
    // 10: two case 1s reach the root: 4B(2B(1B,3B), 6B(5B, 8R(7B, 9B(-,10R)))).
    // 12: case 1 at 11, case 3 at 6: 8 replaces 6 under 4.
    // 14: case 1 at 13, case 1 at 10, 8 red under black 4.
    // 15: case 3 at 13. Final:
    // 4B(2B(1B,3B), 8R(6B(5B,7B), 10B(9B, 12R(11B, 14B(13R, 15R))))).
    use Color::{Black as B, Red as R};
    let tree = sequential(15);
    tree.check_invariants().unwrap();
    let expect = vec![
        (3, B), // 1
        (2, B), // 2
        (3, B), // 3
        (1, B), // 4
        (4, B), // 5
        (3, B), // 6
        (4, B), // 7
        (2, R), // 8
        (4, B), // 9
        (3, B), // 10
        (5, B), // 11
        (4, R), // 12
        (6, R), // 13
        (5, B), // 14
        (6, R), // 15
    ];
    assert_eq!(shape(&tree, 15), expect);
    assert_eq!((tree.height(), tree.black_height(), tree.depth_sum()), (6, 3, 55));
}

#[test]
fn counter_model_predicts_every_small_sequential_tree() {
    // Also: an increasing insert walks the rightmost path, which is the
    // longest one, so its walk depth is the height before the insert.
    let mut tree = RbTree::new(
        RbLayout {
            node_offset: 0,
            key_offset: 0,
        },
        0,
    );
    let mut t = Vec::new();
    for k in 1..=3000u64 {
        let before = tree.height();
        tree.insert(k, k * 1024, &mut t).unwrap();
        t.clear();
        assert_eq!(tree.last_walk_depth(), before, "walk depth of insert {k}");
        let (levels, height) = predicted(k);
        assert_eq!((tree.black_height(), tree.height()), (levels, height), "after inserting 1..={k}");
    }
    tree.check_invariants().unwrap();
}

#[test]
fn keys_1_to_100_000_height_31() {
    let tree = sequential(100_000);
    tree.check_invariants().unwrap();
    assert_eq!(predicted(100_000), (16, 31));
    assert_eq!(tree.height(), 31);
    assert_eq!(tree.black_height(), 16);
}
