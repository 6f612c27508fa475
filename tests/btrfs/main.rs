//! btrfs model tests, one binary: `ctree_props` (proptest: random
//! create/unlink/mkdir/rmdir/sync keep leaf budgets, key order, parent keys
//! and equal a `BTreeMap`), `delayed_props` (proptest: new batch rules
//! never exceed the old, insertion flushes equal a `BTreeMap`),
//! `accounting` (the kernel's delayed-item count unlink by unlink),
//! `case3` (the case-3 script's exact counts, eviction, parameter
//! validation, deep trees), `insert` (issue 16's script), `hostile`
//! (conflicting keys, cost overflow, the memory estimate), `stacks` (the
//! twin's priced stacks of the lab's events), `syscall` (an
//! unlink's own tree work and its price), `writeback` (a block written
//! back in its transaction is copied again; 6.18's syncfs).

mod accounting;
mod case3;
mod ctree_props;
mod delayed_props;
mod hostile;
mod insert;
mod stacks;
mod syscall;
mod window;
mod writeback;
