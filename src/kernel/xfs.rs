//! XFS: the free-space btrees of one allocation group (by block and by
//! size), the allocator that searches them (`fs/xfs/libxfs/xfs_alloc.c`),
//! and the sources that lay out free space (freesp text, histograms,
//! fragmentation levels, aging).

pub mod aging;
pub mod alloc;
pub mod dir2;
pub mod freespace;
pub mod inode;
pub mod log;
pub mod paths;
pub mod trans;
