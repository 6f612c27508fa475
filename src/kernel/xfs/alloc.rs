//! XFS extent allocation inside one allocation group, run on the
//! [`FreeSpace`](crate::kernel::xfs::freespace::FreeSpace) btrees: the by-size
//! allocator `xfs_alloc_ag_vextent_size` with its backward-walk cutoff as a
//! strategy, 6.x's `xfs_alloc_ag_vextent_near`, `xfs_alloc_fixup_trees`
//! and `xfs_free_ag_extent`. Busy extents are trimmed out of every
//! candidate of both allocators (`xfs_extent_busy_trim`, see
//! [`crate::kernel::xfs::freespace::busy`]); the AGFL does not see them.

pub mod fixup;
pub mod free;
pub mod near;
pub mod size;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use fixup::xfs_alloc_fixup_trees;
pub use free::xfs_free_ag_extent;
pub use near::xfs_alloc_ag_vextent_near;
pub use size::xfs_alloc_ag_vextent_size;

/// When the backward walk of `xfs_alloc_ag_vextent_size` stops (step 7c of
/// docs/reference/kernel.md section 4.3). Written `"lt"`, `"le"` or `"budget:N"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum CutoffStrategy {
    /// Before commit 3ef22684038a: break when `flen < bestrlen`, so every
    /// record as long as the best is still examined.
    Lt,
    /// After commit 3ef22684038a (6.12, backported to 6.6.y): break when
    /// `flen <= bestrlen`.
    Le,
    /// The `lt` test plus a cap: stop after N records examined by the
    /// backward walk (a what-if, not a kernel version).
    Budget(u64),
}

impl FromStr for CutoffStrategy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "lt" => Ok(Self::Lt),
            "le" => Ok(Self::Le),
            _ => s
                .strip_prefix("budget:")
                .and_then(|n| n.trim().parse().ok())
                .map(Self::Budget)
                .ok_or_else(|| format!("unknown strategy `{s}`: expected `lt`, `le` or `budget:N`")),
        }
    }
}

impl TryFrom<String> for CutoffStrategy {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl fmt::Display for CutoffStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Lt => f.write_str("lt"),
            Self::Le => f.write_str("le"),
            Self::Budget(n) => write!(f, "budget:{n}"),
        }
    }
}

impl From<CutoffStrategy> for String {
    fn from(s: CutoffStrategy) -> String {
        s.to_string()
    }
}

/// The subset of `struct xfs_alloc_arg` the model uses. Lengths in blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocArgs {
    /// Minimum acceptable length (`minlen`, >= 1).
    pub minlen: u32,
    /// Wanted length (`maxlen`, >= minlen).
    pub maxlen: u32,
    /// Start-block alignment (`alignment`, >= 1; 1 = none).
    pub alignment: u32,
    /// `prod`: the length should be `mod` modulo `prod` (1 = no rule).
    pub prod: u32,
    /// `mod` (see `prod`).
    pub modulo: u32,
    /// Locality hint for `_near` (`agbno`).
    pub agbno: u32,
    /// File data (`XFS_ALLOC_USERDATA` in `datatype`): `_near` then takes
    /// the start of a free extent lying wholly before the hint
    /// (`xfs_alloc_compute_diff`). False for metadata.
    pub userdata: bool,
}

impl AllocArgs {
    /// A plain request for `minlen..=maxlen` blocks, no alignment.
    pub fn new(minlen: u32, maxlen: u32) -> Self {
        Self {
            minlen,
            maxlen,
            alignment: 1,
            prod: 1,
            modulo: 0,
            agbno: 0,
            userdata: false,
        }
    }
}

/// A successful allocation: `len` blocks at `agbno`, carved from the free
/// extent (`fbno`, `flen`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocResult {
    /// First allocated block.
    pub agbno: u32,
    /// Blocks allocated.
    pub len: u32,
    /// Start of the free extent it came from.
    pub fbno: u32,
    /// Length of that free extent.
    pub flen: u32,
}

/// `xfs_alloc_compute_aligned` without busy extents: the aligned start
/// and usable length inside free extent (`fbno`, `flen`); `rlen <= flen`.
pub fn compute_aligned(args: &AllocArgs, fbno: u32, flen: u32) -> (u32, u32) {
    if args.alignment > 1 && flen >= args.minlen {
        let a = u64::from(args.alignment);
        let rbno = u64::from(fbno).div_ceil(a) * a;
        let diff = rbno - u64::from(fbno);
        let rlen = u64::from(flen).saturating_sub(diff);
        (rbno.min(u64::from(u32::MAX)) as u32, rlen as u32)
    } else {
        (fbno, flen)
    }
}

/// `xfs_alloc_fix_len`: trims `rlen` so that `rlen % prod == mod`, unless
/// that is not needed or would drop it below `minlen`.
pub fn fix_len(args: &AllocArgs, rlen: u32) -> u32 {
    let (prod, m) = (args.prod, args.modulo);
    if prod <= 1 || rlen < m || rlen == args.maxlen || (m == 0 && rlen < prod) {
        return rlen;
    }
    let k = rlen % prod;
    if k == m {
        return rlen;
    }
    let trimmed = if k > m {
        rlen - (k - m)
    } else {
        rlen.saturating_sub(prod - (m - k))
    };
    if trimmed < args.minlen { rlen } else { trimmed }
}
