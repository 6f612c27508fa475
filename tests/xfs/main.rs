//! XFS model tests, one binary: `alloc_walk` (hand-checked by-size walks),
//! `busy` (busy extents in the walk and the lab window's pricing),
//! `case4` (the published allocation group, exact counts), `cutoff_props`
//! (proptest: `le` never walks further nor costs more than `lt`), `freesp_text` (`xfs_db freesp`
//! round trip and malformed text), `freespace_props` (proptest: the two
//! free-space btrees against a `BTreeSet`), `workload` (the `xfs-alloc`
//! workload's parameters, sources and streams), `hostile` (counts beyond
//! the AG, cost overflow, bad data files, the memory estimate), `shape`
//! (block fill after inserts and deletes, as the kernel shifts, splits
//! and joins), `near` (6.x's near allocator, the lab's fallocate calls and
//! history, trees with a live layout).

mod alloc_walk;
mod busy;
mod case4;
mod cutoff_props;
mod freesp_text;
mod freespace_props;
mod hostile;
mod indirect;
mod near;
mod shape;
mod workload;
