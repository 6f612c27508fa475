//! Inode-index model tests (case 2), one binary: `rbtree_shape` (exact
//! shapes after sequential inserts, hand-derived height 31 at 100,000),
//! `rbtree_props` (proptest: red-black invariants and a `BTreeSet`),
//! `xarray_props` (proptest: a `BTreeMap`, heights, ENOMEM leaves the tree
//! unchanged), `slab_props` (placement), `cache_props` (the set-associative
//! LRU model against a reference), `index_study` (both indexes through the
//! cache model).

mod cache_props;
mod index_study;
mod rbtree_props;
mod rbtree_shape;
mod slab_props;
mod xarray_props;
