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

/// Asserts that a counted figure equals its hand sum to within `rel` of
/// the sum (absolute below 1): the hand-count tests of [`log`] and
/// [`paths`].
#[cfg(test)]
pub(crate) fn assert_close(what: &str, got: f64, want: f64, rel: f64) {
    assert!(
        (got - want).abs() <= rel * want.abs().max(1.0),
        "{what}: counted {got}, hand sum {want}"
    );
}
