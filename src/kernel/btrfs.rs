//! btrfs: the ctree B+tree (leaves of `nodesize` bytes, item headers, splits
//! and merges as `fs/btrfs/ctree.c`), delayed dir-index items
//! (`fs/btrfs/delayed-inode.c`) and a syscall-level model of one filesystem
//! (`mkdir`, `create`, `unlink`, `rmdir`, `sync`) that drives them.

pub mod ctree;
pub mod delayed;
pub mod dirname;
pub mod extent;
pub mod fs;
pub mod syscall;
pub mod unmount;
pub mod writeout;
