//! Aging: fragment an AG's free space by running allocate / free /
//! punch-hole streams through the real allocator until a target share of
//! the free space sits in short extents (as MySQL page compression,
//! punching holes in its files, did to the AG of case 4).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::freespace::FreeSpace;
use crate::kernel::ModelError;
use crate::kernel::xfs::alloc::{AllocArgs, xfs_alloc_ag_vextent_near, xfs_free_ag_extent};

/// The aging streams. Lengths in blocks; shares are probabilities.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgingParams {
    /// Longest extent a file write allocates, blocks; lengths are uniform
    /// in `1..=alloc_max_blocks`. Default 256.
    pub alloc_max_blocks: u32,
    /// Hole length punched, blocks (uniform in `1..=punch_max_blocks`).
    /// Default 2.
    pub punch_max_blocks: u32,
    /// Among release steps, the share that punches a hole inside a live
    /// extent; the rest free a whole extent (file deletion). Default 0.9.
    pub punch_share: f64,
    /// Allocate while the AG's used share is below this. Default 0.95.
    pub target_used: f64,
    /// "Short" means shorter than this many blocks. Default 4.
    pub short_below_blocks: u32,
    /// Stop once this share of the free blocks is in short extents.
    /// Default 0.9.
    pub target_short_share: f64,
    /// Give up (error) after this many steps, at most [`MAX_AGING_STEPS`].
    /// Default 20,000,000.
    pub max_steps: u64,
}

/// Largest accepted `max_steps`: the real allocator ages at about a
/// million steps a second (the default 20,000,000 took 24 s to give up on
/// an unreachable target), so 10^8 steps give up within about two
/// minutes; at 10^9 an unreachable target kept a run going for twenty.
pub const MAX_AGING_STEPS: u64 = 100_000_000;

impl Default for AgingParams {
    fn default() -> Self {
        Self {
            alloc_max_blocks: 256,
            punch_max_blocks: 2,
            punch_share: 0.9,
            target_used: 0.95,
            short_below_blocks: 4,
            target_short_share: 0.9,
            max_steps: 20_000_000,
        }
    }
}

impl AgingParams {
    /// Range checks; `prefix` is the section path for field names.
    pub fn validate(&self, prefix: &str) -> Result<(), crate::param::ParamError> {
        let bad = |f: &str, m: &str| Err(crate::param::ParamError::new(format!("{prefix}{f}"), m));
        if self.alloc_max_blocks == 0 {
            return bad("alloc_max_blocks", "must be >= 1");
        }
        if self.punch_max_blocks == 0 {
            return bad("punch_max_blocks", "must be >= 1");
        }
        if !(0.0..=1.0).contains(&self.punch_share) {
            return bad("punch_share", "must be in [0, 1]");
        }
        if !(self.target_used > 0.0 && self.target_used < 1.0) {
            return bad("target_used", "must be in (0, 1)");
        }
        if !(0.0..=1.0).contains(&self.target_short_share) {
            return bad("target_short_share", "must be in [0, 1]");
        }
        if !(1..=MAX_AGING_STEPS).contains(&self.max_steps) {
            return bad("max_steps", "must be in 1..=100000000");
        }
        Ok(())
    }
}

/// Ages `fs` (normally a fresh AG with one free extent). Each step either
/// allocates a file extent near a random hint (`_near`, while the used
/// share is below `target_used`), or punches a hole strictly inside a
/// random live extent, or frees a whole live extent (`xfs_free_ag_extent`).
/// Stops when the short-extent share reaches the target; returns the
/// number of steps. Fails (field `aging.max_steps`) if it never does.
pub fn age(fs: &mut FreeSpace, p: &AgingParams, rng: &mut ChaCha8Rng) -> Result<u64, ModelError> {
    fs.track_small_below(p.short_below_blocks);
    let ag = f64::from(fs.agblocks);
    let mut live: Vec<(u32, u32)> = Vec::new();
    for step in 0..p.max_steps {
        if fs.small_share() >= p.target_short_share && fs.free_blocks() > 0 {
            return Ok(step);
        }
        let used = 1.0 - fs.free_blocks() as f64 / ag;
        if used < p.target_used || live.is_empty() {
            let len = rng.random_range(1..=p.alloc_max_blocks);
            let mut args = AllocArgs::new(1, len);
            args.agbno = rng.random_range(0..fs.agblocks.max(1));
            match xfs_alloc_ag_vextent_near(fs, &args) {
                Some(r) => live.push((r.agbno, r.len)),
                None if live.is_empty() => break,
                None => {}
            }
        } else {
            release(fs, p, &mut live, rng);
        }
    }
    Err(ModelError::InvalidParam(crate::param::ParamError::new(
        "aging.max_steps",
        format!(
            "free space did not reach {} in extents shorter than {} blocks",
            p.target_short_share, p.short_below_blocks
        ),
    )))
}

/// One release step: punch a hole inside a live extent, or free it whole.
fn release(fs: &mut FreeSpace, p: &AgingParams, live: &mut Vec<(u32, u32)>, rng: &mut ChaCha8Rng) {
    let i = rng.random_range(0..live.len());
    let (bno, len) = live[i];
    let hole = rng.random_range(1..=p.punch_max_blocks);
    if rng.random_bool(p.punch_share) && len >= hole + 2 {
        let off = rng.random_range(1..=len - hole - 1);
        if xfs_free_ag_extent(fs, bno + off, hole) {
            live[i] = (bno, off);
            live.push((bno + off + hole, len - off - hole));
        }
    } else if xfs_free_ag_extent(fs, bno, len) {
        live.swap_remove(i);
    }
}
