//! Kernel algorithms on real data structures, grouped by subsystem:
//! [`sync`] (counters), [`mm`] (slab placement, touched lines), [`index`]
//! (rb-tree and XArray), [`btrfs`] (the ctree B+tree, delayed items and the
//! syscall-level filesystem model), [`xfs`] (free-space btrees, the
//! allocator and the sources of free space).
//!
//! Every model runs the real algorithm on a real data structure and counts
//! what it touches; time follows from those counts priced by a profile.

/// An error raised by a model while it is set up or run from user input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A parameter is out of range or inconsistent.
    #[error(transparent)]
    InvalidParam(#[from] crate::param::ParamError),
    /// An input file (e.g. `xfs_db freesp` text) is unreadable or malformed.
    #[error(transparent)]
    Input(#[from] crate::param::InputError),
    /// A count times a cost (or a sum of them) does not fit the integer
    /// type it is computed in; names the quantity. Parameter bounds should
    /// make this unreachable: it is the backstop, never a silent wrap.
    #[error("{0} overflows")]
    Overflow(&'static str),
    /// A buffer sized from the parameters could not be reserved.
    #[error("cannot allocate {what}: {bytes} bytes")]
    OutOfMemory {
        /// What the buffer holds.
        what: &'static str,
        /// Bytes asked for.
        bytes: u128,
    },
}

pub mod btrfs;
pub mod index;
pub mod mm;
pub mod sync;
pub mod tracing;
pub mod vfs;
pub mod work;
pub mod xfs;
