//! Property tests for the XArray: loads and finds agree with a `BTreeMap`
//! after random stores, reservations and erases; the height follows the
//! largest index; an injected ENOMEM leaves the tree exactly as it was.

use std::collections::BTreeMap;

use fsmeta::kernel::index::xarray::{FailPlan, XArray, XaError, levels_for};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Store(u64, u64),
    Reserve(u64),
    Erase(u64),
    Find(u64),
}

/// Mostly dense small indices (as inode numbers are), some far away.
fn index() -> impl Strategy<Value = u64> {
    prop_oneof![6 => 0u64..700, 2 => 0u64..(1 << 20), 1 => any::<u64>()]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (index(), any::<u64>()).prop_map(|(i, v)| Op::Store(i, v)),
        1 => index().prop_map(Op::Reserve),
        3 => index().prop_map(Op::Erase),
        2 => index().prop_map(Op::Find),
    ]
}

/// The model: `Some(v)` present, `None` reserved.
type Model = BTreeMap<u64, Option<u64>>;

fn apply(x: &mut XArray, m: &mut Model, op: &Op) -> Result<(), TestCaseError> {
    let mut t = Vec::new();
    match *op {
        Op::Store(i, v) => {
            let old = m.insert(i, Some(v)).flatten();
            prop_assert_eq!(x.store(i, v, &mut t), Ok(old));
        }
        Op::Reserve(i) => {
            x.reserve(i, &mut t).unwrap();
            m.entry(i).or_insert(None);
        }
        Op::Erase(i) => prop_assert_eq!(x.erase(i, &mut t), m.remove(&i).flatten()),
        Op::Find(i) => {
            let want = m.range(i..).find_map(|(&k, v)| v.map(|v| (k, v)));
            prop_assert_eq!(x.find(i, &mut t), want);
            let load = m.get(&i).copied().flatten();
            prop_assert_eq!(x.load(i, &mut t), load);
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn agrees_with_btreemap(ops in prop::collection::vec(op(), 1..300)) {
        let mut x = XArray::new(0x40, 0x1000_0000);
        let mut m = Model::new();
        for op in &ops {
            apply(&mut x, &mut m, op)?;
            prop_assert_eq!(x.check_invariants(), Ok(()));
        }
        let present: Vec<(u64, u64)> = m.iter().filter_map(|(&k, v)| v.map(|v| (k, v))).collect();
        prop_assert_eq!(x.entries(), present);
        prop_assert_eq!(x.len(), m.values().filter(|v| v.is_some()).count());
        // Height follows the largest index held (present or reserved); a lone
        // index 0 value sits in xa_head with no node.
        if let Some((&max, v)) = m.iter().next_back() {
            let head_only = max == 0 && v.is_some();
            let expect = if head_only { 0 } else { levels_for(max) };
            prop_assert!(x.height() >= expect, "height {} for max {}", x.height(), max);
        }
    }

    #[test]
    fn height_for_largest_index(indices in prop::collection::btree_set(1u64..(1 << 40), 1..40)) {
        let mut x = XArray::new(0x40, 0x1000_0000);
        for &i in &indices {
            x.store(i, i, &mut Vec::new()).unwrap();
        }
        let max = *indices.iter().next_back().unwrap();
        prop_assert_eq!(x.height(), levels_for(max));
        prop_assert_eq!(x.height(), (64 - max.leading_zeros()).div_ceil(6));
    }

    #[test]
    fn enomem_leaves_tree_unchanged(
        pre in prop::collection::vec((index(), any::<u64>()), 0..200),
        target in index(),
        fail_after in 0u64..4,
        use_reserve in any::<bool>(),
    ) {
        let mut x = XArray::new(0x40, 0x1000_0000);
        for &(i, v) in &pre {
            x.store(i, v, &mut Vec::new()).unwrap();
        }
        let before = (x.entries(), x.node_count(), x.height(), x.slab().objects_live(), x.alloc_failures());
        // Fail the (fail_after + 1)-th allocation attempt from now on.
        x.set_fail_plan(FailPlan::EveryNth(x.alloc_attempts() + fail_after + 1));
        let attempts = x.alloc_attempts();
        let result = if use_reserve { x.reserve(target, &mut Vec::new()) } else { x.store(target, 1, &mut Vec::new()).map(|_| ()) };
        let needed = x.alloc_attempts() - attempts;
        match result {
            Err(XaError::NoMemory) => {
                prop_assert_eq!(needed, fail_after + 1, "stopped at the failing attempt");
                let after = (x.entries(), x.node_count(), x.height(), x.slab().objects_live(), x.alloc_failures() - 1);
                prop_assert_eq!(after, before);
            }
            Ok(()) => {
                prop_assert!(needed <= fail_after, "succeeded only if it needed fewer nodes");
                prop_assert_eq!(x.node_count(), before.1 + needed as usize);
                prop_assert!(x.load(target, &mut Vec::new()).is_some() || use_reserve);
            }
            Err(e) => prop_assert!(false, "unexpected {e:?}"),
        }
        prop_assert_eq!(x.check_invariants(), Ok(()));
    }
}
