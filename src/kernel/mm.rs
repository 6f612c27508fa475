//! Memory as the kernel lays it out: SLUB-like placement of objects at
//! simulated byte addresses ([`slab`], `mm/slub.c`) and the record of the
//! cache lines an algorithm touches ([`touch`]), which the machine's cache
//! model prices.

pub mod slab;
pub mod touch;
