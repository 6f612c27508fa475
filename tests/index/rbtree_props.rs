//! Property tests for the red-black tree: the red-black invariants, the
//! height bound h <= 2 log2(n + 1), and equality with a `BTreeSet` after
//! random inserts and erases.

use std::collections::BTreeSet;

use fsmeta::kernel::index::rbtree::{RbLayout, RbTree};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    Erase(u64),
    LowerBound(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..400).prop_map(Op::Insert),
        2 => (0u64..400).prop_map(Op::Erase),
        1 => (0u64..420).prop_map(Op::LowerBound),
    ]
}

fn height_bound_holds(tree: &RbTree) -> bool {
    f64::from(tree.height()) <= 2.0 * ((tree.len() + 1) as f64).log2() + 1e-9
}

proptest! {
    #[test]
    fn matches_btreeset_and_keeps_invariants(ops in prop::collection::vec(op(), 1..400)) {
        let mut tree = RbTree::new(RbLayout { node_offset: 40, key_offset: 200 }, 8);
        let mut set = BTreeSet::new();
        let mut t = Vec::new();
        for op in ops {
            match op {
                Op::Insert(k) => {
                    let fresh = set.insert(k);
                    prop_assert_eq!(tree.insert(k, 0x1000 + k * 1024, &mut t).is_ok(), fresh);
                }
                Op::Erase(k) => {
                    let had = set.remove(&k);
                    prop_assert_eq!(tree.erase(k, &mut t), had.then_some(0x1000 + k * 1024));
                }
                Op::LowerBound(k) => {
                    let got = tree.first_at_or_after(k, &mut t).map(|n| tree.key(n));
                    prop_assert_eq!(got, set.range(k..).next().copied());
                }
            }
            prop_assert_eq!(tree.check_invariants(), Ok(()));
            prop_assert!(height_bound_holds(&tree), "height {} with {} nodes", tree.height(), tree.len());
        }
        let keys: Vec<u64> = tree.in_order().into_iter().map(|(k, _)| k).collect();
        prop_assert_eq!(keys, set.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn bulk_insert_then_erase_half(keys in prop::collection::btree_set(0u64..100_000, 1..2000), seed in any::<u64>()) {
        let mut tree = RbTree::new(RbLayout { node_offset: 0, key_offset: 64 }, 0);
        let mut t = Vec::new();
        for &k in &keys {
            tree.insert(k, k * 1024, &mut t).unwrap();
        }
        prop_assert!(height_bound_holds(&tree));
        let mut left = keys.clone();
        for (i, &k) in keys.iter().enumerate() {
            if (k ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 63 == 1 || i % 7 == 0 {
                prop_assert_eq!(tree.erase(k, &mut t), Some(k * 1024));
                left.remove(&k);
            }
        }
        prop_assert_eq!(tree.check_invariants(), Ok(()));
        prop_assert!(height_bound_holds(&tree));
        let got: Vec<u64> = tree.in_order().into_iter().map(|(k, _)| k).collect();
        prop_assert_eq!(got, left.into_iter().collect::<Vec<_>>());
    }
}
