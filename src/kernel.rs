//! Kernel algorithms on real data structures, grouped by subsystem:
//! [`sync`] (counters), [`btrfs`] (the ctree B+tree, delayed items and the
//! syscall-level filesystem model), [`xfs`] (free-space btrees, the
//! allocator and the sources of free space).
//!
//! Every model runs the real algorithm on a real data structure and counts
//! what it touches; time follows from those counts priced by a profile.

use std::path::PathBuf;

/// An error raised by a model while it is set up or run from user input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A parameter is out of range or inconsistent.
    #[error(transparent)]
    InvalidParam(#[from] crate::param::ParamError),
    /// An input file (e.g. `xfs_db freesp` text) is malformed at a line.
    #[error("{}:{line}: {message}", path.display())]
    InputFile {
        /// The file that was read.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong with it.
        message: String,
    },
    /// An input file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file that was read.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

pub mod btrfs;
pub mod sync;
pub mod xfs;
