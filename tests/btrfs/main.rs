//! btrfs model tests, one binary: `ctree_props` (proptest: random
//! create/unlink/mkdir/rmdir/sync keep leaf budgets, key order, parent keys
//! and equal a `BTreeMap`), `case3` (the case-3 script's exact counts,
//! parameter validation, deep trees), `hostile` (conflicting keys, cost
//! overflow, the memory estimate).

mod case3;
mod ctree_props;
mod hostile;
