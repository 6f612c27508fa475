//! The lab's parsers on real outputs saved from the live kernel (Linux
//! 6.18, btrfs-progs 6.2, xfsprogs 6.1), in the way fstests compares a
//! test's output with a checked-in `.out` file. Modules:
//! - `parsers`: trace text, dump-tree text, freesp text, mountinfo.
//! - `docs`: docs/lab.md merged by `validate --lab`, the load warning.
//! - `pool`: `fsmeta lab --pool` joining sets.
//! - `twin`: the shipped profile of the lab run's CPU, for its twin.
//!
//! The live lab tests (root, loop devices, tracefs) are in `tests/lab_live`.

mod docs;
mod parsers;
mod pool;
mod stacks;
mod twin;
