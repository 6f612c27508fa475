//! What one call of the workload asks of the allocator, and what the AG
//! went through before the timed calls.
//!
//! A call is one `xfs_alloc_ag_vextent_size` (`request = "one"`), or a
//! `fallocate(maxlen blocks)` on an empty file (`request = "fallocate"`):
//! `xfs_alloc_file_space` maps the range one extent per transaction
//! (`xfs_bmapi_write` -> `xfs_bmap_btalloc`). The first allocation finds
//! the file's home AG full and takes the next one by size (`agbno` 0:
//! `xfs_alloc_vextent_iterate_ags` -> `xfs_alloc_ag_vextent_size`, the
//! timed call); each further one asks for the blocks still wanted next
//! to the last extent (`xfs_bmap_adjacent`: its end), which in that AG
//! is `xfs_alloc_ag_vextent_near`. A trace of one such call on 6.18
//! showed the by-size allocation with maxlen 4, then near ones with
//! maxlen 3, 2 and 1 (docs/lab.md).
//!
//! Every allocation of a call asks for `minlen` blocks at least. 6.x takes
//! `minlen` from the longest free extent it saw (`xfs_bmap_select_minlen`:
//! that length when shorter than maxlen); on the lab's AG of one-block
//! extents that is 1, the workload's `minlen`, which the model uses as
//! given.
//!
//! Before the timed calls, `before` replays steps in order: `calls:N`, N
//! calls as the timed ones but untimed and with no frees (the lab's
//! earlier passes), and
//! `busy:N`, N blocks taken by calls of maxlen blocks (the last one
//! shorter) and each call's blocks freed again at once
//! (`FALLOC_FL_PUNCH_HOLE`: `xfs_bunmapi` frees the file's extents from
//! its end; each `xfs_free_ag_extent`, then `xfs_extent_busy_insert`):
//! with no log checkpoint after them they stay busy.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::kernel::xfs::alloc::{
    AllocArgs, AllocResult, CutoffStrategy, xfs_alloc_ag_vextent_near, xfs_alloc_ag_vextent_size, xfs_free_ag_extent,
};
use crate::kernel::xfs::freespace::{BtreeStats, FreeSpace};

/// What one call allocates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Request {
    /// One `xfs_alloc_ag_vextent_size` call.
    #[default]
    One,
    /// `fallocate(maxlen blocks)` on an empty file: the by-size call, then
    /// near ones for the blocks still wanted (module docs).
    Fallocate,
}

/// Largest N of one step of `before`.
pub const MAX_STEP: u64 = 1_000_000;

/// One step of `before`, written `"calls:N"` or `"busy:N"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Step {
    /// N untimed calls as the timed ones.
    Calls(u64),
    /// N blocks allocated by calls and freed at once: busy.
    Busy(u64),
}

impl FromStr for Step {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("unknown step `{s}`: expected `calls:N` or `busy:N` with N in 1..={MAX_STEP}");
        let (kind, n) = s.split_once(':').ok_or_else(bad)?;
        let n: u64 = n.trim().parse().map_err(|_| bad())?;
        if !(1..=MAX_STEP).contains(&n) {
            return Err(bad());
        }
        match kind.trim() {
            "calls" => Ok(Step::Calls(n)),
            "busy" => Ok(Step::Busy(n)),
            _ => Err(bad()),
        }
    }
}

impl TryFrom<String> for Step {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Calls(n) => write!(f, "calls:{n}"),
            Step::Busy(n) => write!(f, "busy:{n}"),
        }
    }
}

impl From<Step> for String {
    fn from(s: Step) -> String {
        s.to_string()
    }
}

/// One call's outcome: the by-size allocation, what it counted, and every
/// extent the call took (the by-size one first).
#[derive(Clone, Debug)]
pub struct Call {
    /// The by-size allocation, None if it found nothing.
    pub first: Option<AllocResult>,
    /// What the by-size allocation counted (the timed part).
    pub stats: BtreeStats,
    /// Every extent taken, as (agbno, blocks), in the file's order.
    pub extents: Vec<(u32, u32)>,
}

/// Makes one call of `request` for `args.maxlen` blocks (module docs).
pub fn make_call(fs: &mut FreeSpace, args: &AllocArgs, strategy: CutoffStrategy, request: Request) -> Call {
    fs.reset_stats();
    let first = xfs_alloc_ag_vextent_size(fs, args, strategy, None);
    let stats = fs.stats();
    let mut extents: Vec<(u32, u32)> = first.iter().map(|r| (r.agbno, r.len)).collect();
    if request == Request::Fallocate {
        let mut got = first.map_or(0, |r| r.len);
        let mut last = first;
        while let Some(prev) = last
            && got < args.maxlen
        {
            let want = args.maxlen - got;
            let near = AllocArgs {
                minlen: args.minlen.min(want),
                maxlen: want,
                agbno: prev.agbno.saturating_add(prev.len),
                userdata: true,
                ..*args
            };
            last = xfs_alloc_ag_vextent_near(fs, &near);
            if let Some(r) = last {
                got += r.len;
                extents.push((r.agbno, r.len));
            }
        }
    }
    Call { first, stats, extents }
}

/// Replays `steps` (module docs) with calls of `args`; returns the blocks
/// the busy steps left busy.
pub fn replay(fs: &mut FreeSpace, steps: &[Step], args: &AllocArgs, strategy: CutoffStrategy, request: Request) -> u64 {
    let mut busy = 0;
    for step in steps {
        match *step {
            Step::Calls(n) => {
                for _ in 0..n {
                    make_call(fs, args, strategy, request);
                }
            }
            Step::Busy(n) => busy += make_busy(fs, n, args, strategy, request),
        }
    }
    busy
}

/// `blocks` blocks taken by calls of at most `args.maxlen` blocks, each
/// call's extents freed from the file's end and marked busy; the blocks
/// made busy (fewer if the AG ran out).
fn make_busy(fs: &mut FreeSpace, blocks: u64, args: &AllocArgs, strategy: CutoffStrategy, request: Request) -> u64 {
    let (mut left, mut made) = (blocks, 0u64);
    while left > 0 {
        let want = u32::try_from(left.min(u64::from(args.maxlen))).unwrap_or(args.maxlen);
        let a = AllocArgs {
            minlen: args.minlen.min(want),
            maxlen: want,
            ..*args
        };
        let call = make_call(fs, &a, strategy, request);
        if call.extents.is_empty() {
            break;
        }
        for &(bno, len) in call.extents.iter().rev() {
            if xfs_free_ag_extent(fs, bno, len) && fs.busy.insert(bno, len) {
                made += u64::from(len);
            }
        }
        left -= u64::from(want);
    }
    made
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_parse_and_print_back() {
        assert_eq!("calls:19".parse(), Ok(Step::Calls(19)));
        assert_eq!("busy: 256".parse(), Ok(Step::Busy(256)));
        assert_eq!(Step::Busy(256).to_string(), "busy:256");
        for bad in ["calls", "calls:0", "busy:x", "free:3", "calls:1000001"] {
            assert!(bad.parse::<Step>().is_err(), "{bad}");
        }
    }
}
