//! Free-extent populations: lengths from a bucket histogram, from a freesp
//! histogram (exact per-bin block totals), or from a single fragmentation
//! level, and their layout in the AG with allocated gaps between them.

use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::btree::AllocRec;
use super::freesp::FreespHistogram;
use crate::kernel::ModelError;

/// One bucket of a scenario histogram: `extents` free extents whose
/// lengths are drawn uniformly in `from..=to` blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistogramBucket {
    /// Shortest length, blocks (>= 1).
    pub from: u32,
    /// Longest length, blocks (>= from).
    pub to: u32,
    /// Number of extents in the bucket.
    pub extents: u64,
}

/// Lengths for a bucket histogram: each drawn uniformly in its bucket.
pub fn lengths_from_buckets(buckets: &[HistogramBucket], rng: &mut ChaCha8Rng) -> Vec<u32> {
    let mut out = Vec::with_capacity(buckets.iter().map(|b| b.extents as usize).sum());
    for b in buckets {
        for _ in 0..b.extents {
            out.push(rng.random_range(b.from..=b.to));
        }
    }
    out
}

/// Lengths for a freesp histogram. Each bin's lengths are drawn uniformly
/// in `from..=to`, then nudged (in a random order, within the bin) until
/// they add up to the bin's block total exactly, so the histogram read
/// back equals the input. A bin whose total forces one length (e.g. N
/// extents holding 2N blocks in bin 2..3) yields exactly that.
pub fn lengths_from_freesp(h: &FreespHistogram, rng: &mut ChaCha8Rng) -> Vec<u32> {
    let mut out = Vec::with_capacity(h.total_extents() as usize);
    for b in &h.bins {
        let (lo, hi) = (b.from as u32, b.to as u32);
        let mut lens: Vec<u32> = (0..b.extents).map(|_| rng.random_range(lo..=hi)).collect();
        fit_sum(&mut lens, lo, hi, b.blocks, rng);
        out.extend(lens);
    }
    out
}

/// Adjusts lengths in `lo..=hi` so that they sum to `target` (which must
/// lie in `[lo * n, hi * n]`), spreading the change evenly.
fn fit_sum(lens: &mut [u32], lo: u32, hi: u32, target: u64, rng: &mut ChaCha8Rng) {
    let mut order: Vec<usize> = (0..lens.len()).collect();
    order.shuffle(rng);
    for _pass in 0..64 {
        let sum: u64 = lens.iter().map(|&l| u64::from(l)).sum();
        let mut diff = target as i64 - sum as i64;
        if diff == 0 {
            return;
        }
        let n = order.len() as i64;
        for (k, &i) in order.iter().enumerate() {
            let remaining = n - k as i64;
            let want = if diff > 0 {
                (diff + remaining - 1) / remaining
            } else {
                (diff - remaining + 1) / remaining
            };
            let l = i64::from(lens[i]);
            let step = want.clamp(i64::from(lo) - l, i64::from(hi) - l);
            lens[i] = (l + step) as u32;
            diff -= step;
        }
    }
}

/// Lengths for a fragmentation level `level` in [0, 1] over `free_blocks`
/// free blocks: a share `level` of the free blocks sits in extents of
/// `small_blocks` blocks each, the rest in one contiguous extent. Level 0
/// is one free extent; level 1 is all free space in small extents (the
/// shape of case 4 with `small_blocks = 2`). Between, the share of free
/// blocks in small extents grows linearly with the level.
pub fn lengths_from_fragmentation(level: f64, free_blocks: u64, small_blocks: u32) -> Vec<u32> {
    let small = u64::from(small_blocks.max(1));
    let n_small = ((level.clamp(0.0, 1.0) * free_blocks as f64) / small as f64).floor() as u64;
    let rest = free_blocks - n_small * small;
    let mut out = vec![small as u32; n_small as usize];
    if rest > 0 {
        out.push(rest.min(u64::from(u32::MAX)) as u32);
    }
    out
}

/// Places extents of the given lengths (in a random order) in an AG of
/// `agblocks` blocks, separated by allocated gaps of at least one block so
/// that no two free extents touch; the allocated blocks left over are
/// spread over the gaps (and before the first / after the last extent) in
/// random proportions. Returns the extents sorted by startblock. Fails
/// (field `agblocks`) if the AG is too small.
pub fn lay_out(mut lengths: Vec<u32>, agblocks: u32, rng: &mut ChaCha8Rng) -> Result<Vec<AllocRec>, ModelError> {
    lengths.shuffle(rng);
    let n = lengths.len() as u64;
    let free: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
    let min_used = n.saturating_sub(1);
    if free + min_used > u64::from(agblocks) || lengths.contains(&0) {
        return Err(ModelError::InvalidParam(crate::param::ParamError::new(
            "agblocks",
            format!(
                "{n} free extents of {free} blocks need at least {} blocks, the AG has {agblocks}",
                free + min_used
            ),
        )));
    }
    let extra = u64::from(agblocks) - free - min_used;
    let weights: Vec<u64> = (0..=n).map(|_| u64::from(rng.random_range(1..=1u32 << 20))).collect();
    let wsum: u64 = weights.iter().sum();
    let gap = |i: usize| (u128::from(extra) * u128::from(weights[i]) / u128::from(wsum)) as u64;
    let mut out = Vec::with_capacity(lengths.len());
    let mut at = gap(0);
    for (i, &len) in lengths.iter().enumerate() {
        out.push(AllocRec::new(at as u32, len));
        at += u64::from(len) + 1 + gap(i + 1);
    }
    Ok(out)
}
