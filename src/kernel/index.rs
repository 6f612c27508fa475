//! In-memory indexes of the kernel's `lib/`: a red-black tree whose nodes
//! are embedded in slab objects ([`rbtree`], `lib/rbtree.c`) and the XArray
//! radix tree with 64-slot, 576-byte nodes from their own slab ([`xarray`],
//! `lib/xarray.c`). Every operation records the lines it touches
//! ([`super::mm::touch`]); case 2 (btrfs's open-inode index) compares them.

pub mod rbtree;
pub mod xarray;
