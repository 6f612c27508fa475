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

/// The least AG space a population of free extents takes: `extents`
/// free extents holding `blocks` blocks, kept apart by at least one
/// allocated block each ([`lay_out`]'s rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Free extents.
    pub extents: u64,
    /// Free blocks they hold (at least).
    pub blocks: u64,
}

impl Footprint {
    /// AG blocks needed: `blocks + extents - 1`, or `None` past `u64::MAX`.
    pub fn ag_blocks(&self) -> Option<u64> {
        self.blocks.checked_add(self.extents.saturating_sub(1))
    }

    /// Checks that the population fits an AG of `agblocks` blocks; the
    /// message says what it needs. Bounds the extents to `agblocks / 2 + 1`
    /// (every extent takes a block and a gap), so the vectors built from a
    /// population that passes are at most a few bytes per AG block.
    pub fn check(&self, agblocks: u32) -> Result<(), String> {
        match self.ag_blocks() {
            Some(need) if need <= u64::from(agblocks) => Ok(()),
            need => Err(format!(
                "{} free extents of {} blocks need at least {} AG blocks (one allocated block between \
                 neighbours), the AG has {agblocks}",
                self.extents,
                self.blocks,
                need.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string())
            )),
        }
    }
}

/// The least footprint of a bucket histogram (every extent at its
/// bucket's `from`), or `None` if the counts overflow `u64`.
pub fn buckets_footprint(buckets: &[HistogramBucket]) -> Option<Footprint> {
    buckets.iter().try_fold(Footprint { extents: 0, blocks: 0 }, |f, b| {
        Some(Footprint {
            extents: f.extents.checked_add(b.extents)?,
            blocks: f.blocks.checked_add(u64::from(b.from).checked_mul(b.extents)?)?,
        })
    })
}

/// The footprint of a freesp histogram (its totals, which the lengths
/// built from it match exactly), or `None` if they overflow `u64`.
pub fn freesp_footprint(h: &FreespHistogram) -> Option<Footprint> {
    h.bins.iter().try_fold(Footprint { extents: 0, blocks: 0 }, |f, b| {
        Some(Footprint {
            extents: f.extents.checked_add(b.extents)?,
            blocks: f.blocks.checked_add(b.blocks)?,
        })
    })
}

/// A parameter error on `agblocks` (the AG cannot hold the population).
fn too_small(message: String) -> ModelError {
    ModelError::InvalidParam(crate::param::ParamError::new("agblocks", message))
}

/// Lengths for a bucket histogram: each drawn uniformly in its bucket.
/// Fails (field `agblocks`, nothing allocated) if a bucket is not
/// `1 <= from <= to` or the extents cannot fit an AG of `agblocks` blocks
/// even at their shortest.
pub fn lengths_from_buckets(buckets: &[HistogramBucket], agblocks: u32, rng: &mut ChaCha8Rng) -> Result<Vec<u32>, ModelError> {
    if let Some(b) = buckets.iter().find(|b| b.from == 0 || b.to < b.from) {
        return Err(too_small(format!("bucket {}..{} needs 1 <= from <= to", b.from, b.to)));
    }
    let f = buckets_footprint(buckets).ok_or_else(|| too_small("the buckets' extent counts overflow".into()))?;
    f.check(agblocks).map_err(too_small)?;
    let mut out = Vec::with_capacity(f.extents as usize);
    for b in buckets {
        for _ in 0..b.extents {
            out.push(rng.random_range(b.from..=b.to));
        }
    }
    Ok(out)
}

/// Lengths for a freesp histogram. Each bin's lengths are drawn uniformly
/// in `from..=to`, then nudged (in a random order, within the bin) until
/// they add up to the bin's block total exactly, so the histogram read
/// back equals the input. A bin whose total forces one length (e.g. N
/// extents holding 2N blocks in bin 2..3) yields exactly that. Fails
/// (field `agblocks`, nothing allocated) if the totals cannot fit an AG
/// of `agblocks` blocks.
pub fn lengths_from_freesp(h: &FreespHistogram, agblocks: u32, rng: &mut ChaCha8Rng) -> Result<Vec<u32>, ModelError> {
    let f = freesp_footprint(h).ok_or_else(|| too_small("the histogram's totals overflow".into()))?;
    f.check(agblocks).map_err(too_small)?;
    let mut out = Vec::with_capacity(f.extents as usize);
    for b in &h.bins {
        // Within the AG, so `from` fits u32; a `to` past it is capped.
        let lo = u32::try_from(b.from).unwrap_or(u32::MAX);
        let hi = u32::try_from(b.to).unwrap_or(u32::MAX).max(lo);
        let start = out.len();
        out.extend((0..b.extents).map(|_| rng.random_range(lo..=hi)));
        fit_sum(&mut out[start..], lo, hi, b.blocks, rng);
    }
    Ok(out)
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

/// The extents a fragmentation level makes: `small` extents of
/// `small_len` blocks and, if blocks are left, one extent of `rest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragmentationShape {
    /// Number of small extents.
    pub small: u64,
    /// Length of each small extent, blocks.
    pub small_len: u32,
    /// Blocks of the contiguous extent (0: none).
    pub rest: u64,
}

impl FragmentationShape {
    /// The shape for level `level` in [0, 1] over `free_blocks` free
    /// blocks with small extents of `small_blocks` blocks (see
    /// [`lengths_from_fragmentation`]).
    pub fn new(level: f64, free_blocks: u64, small_blocks: u32) -> Self {
        let small_len = small_blocks.max(1);
        let small = ((level.clamp(0.0, 1.0) * free_blocks as f64) / f64::from(small_len)).floor() as u64;
        let small = small.min(free_blocks / u64::from(small_len));
        FragmentationShape {
            small,
            small_len,
            rest: free_blocks - small * u64::from(small_len),
        }
    }

    /// Its extents and blocks.
    pub fn footprint(&self) -> Footprint {
        Footprint {
            extents: self.small + u64::from(self.rest > 0),
            blocks: self.small * u64::from(self.small_len) + self.rest,
        }
    }
}

/// Lengths for a fragmentation level `level` in [0, 1] over `free_blocks`
/// free blocks: a share `level` of the free blocks sits in extents of
/// `small_blocks` blocks each, the rest in one contiguous extent. Level 0
/// is one free extent; level 1 is all free space in small extents (the
/// shape of case 4 with `small_blocks = 2`). Between, the share of free
/// blocks in small extents grows linearly with the level. Fails (field
/// `agblocks`, nothing allocated) if they cannot fit an AG of `agblocks`
/// blocks.
pub fn lengths_from_fragmentation(level: f64, free_blocks: u64, small_blocks: u32, agblocks: u32) -> Result<Vec<u32>, ModelError> {
    let shape = FragmentationShape::new(level, free_blocks, small_blocks);
    let f = shape.footprint();
    f.check(agblocks).map_err(too_small)?;
    let mut out = Vec::with_capacity(f.extents as usize);
    out.resize(shape.small as usize, shape.small_len);
    if shape.rest > 0 {
        // Below agblocks, so it fits u32.
        out.push(u32::try_from(shape.rest).unwrap_or(u32::MAX));
    }
    Ok(out)
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
