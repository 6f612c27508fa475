//! Coherence state of every line the caches have seen, in dense per-region
//! arrays: a line address splits into a region (`line >> REGION_BITS`) and
//! an offset, and each region holds a `Vec` grown to the highest offset
//! used. Simulated memory is laid out in a few contiguous ranges (one per
//! slab, the xarray node slab, the root), so this is a handful of arrays
//! indexed directly: no hashing, and neighbouring lines are neighbours in
//! host memory. Lines beyond the dense range fall back to a hash map.

use super::LineState;
use crate::machine::linemap::LineMap;

const REGION_BITS: u32 = 30;
const MAX_DENSE_REGIONS: u64 = 1 << 12;

/// Per-line state, default for a line never seen.
#[derive(Clone, Debug, Default)]
pub(super) struct LineStates {
    regions: Vec<Vec<LineState>>,
    sparse: LineMap<LineState>,
}

impl LineStates {
    #[inline]
    fn split(line: u64) -> Option<(usize, usize)> {
        let r = line >> REGION_BITS;
        (r < MAX_DENSE_REGIONS).then(|| (r as usize, (line & ((1 << REGION_BITS) - 1)) as usize))
    }

    /// The state of `line` (default if never set).
    #[inline]
    pub(super) fn get(&self, line: u64) -> LineState {
        match Self::split(line) {
            Some((r, o)) => self.regions.get(r).and_then(|v| v.get(o)).copied().unwrap_or_default(),
            None => self.sparse.get(line).unwrap_or_default(),
        }
    }

    /// The state of `line`, mutable (created default if absent).
    #[inline]
    pub(super) fn entry(&mut self, line: u64) -> &mut LineState {
        match Self::split(line) {
            Some((r, o)) => {
                if r >= self.regions.len() {
                    self.regions.resize_with(r + 1, Vec::new);
                }
                let v = &mut self.regions[r];
                if o >= v.len() {
                    let want = (o + 1).max(v.len() * 2).min(1 << REGION_BITS);
                    v.resize(want, LineState::default());
                }
                &mut v[o]
            }
            None => self.sparse.entry(line),
        }
    }
}
