//! Coherence state of every line the caches have seen, in dense chunks: a
//! line address splits into a region (`line >> REGION_BITS`), a chunk of
//! 4096 lines and an offset; a chunk is allocated when a line in it is
//! first written. Simulated memory is laid out in a few contiguous ranges
//! (one per slab, the xarray node slab, the root), so this is a handful of
//! arrays indexed directly: no hashing, neighbouring lines are neighbours
//! in host memory, and untouched ranges cost nothing. Lines beyond the
//! dense range fall back to a hash map.

use super::LineState;
use crate::machine::linemap::LineMap;

const REGION_BITS: u32 = 30;
const CHUNK_BITS: u32 = 12;
const MAX_DENSE_REGIONS: u64 = 1 << 12;

type Chunk = Box<[LineState]>;

/// Per-line state, default for a line never seen.
#[derive(Clone, Debug, Default)]
pub(super) struct LineStates {
    regions: Vec<Vec<Option<Chunk>>>,
    sparse: LineMap<LineState>,
}

impl LineStates {
    #[inline]
    fn split(line: u64) -> Option<(usize, usize, usize)> {
        let r = line >> REGION_BITS;
        let within = line & ((1 << REGION_BITS) - 1);
        (r < MAX_DENSE_REGIONS).then_some((
            r as usize,
            (within >> CHUNK_BITS) as usize,
            (within & ((1 << CHUNK_BITS) - 1)) as usize,
        ))
    }

    /// The state of `line`, mutable (created default if absent).
    #[inline]
    pub(super) fn entry(&mut self, line: u64) -> &mut LineState {
        match Self::split(line) {
            Some((r, c, o)) => {
                // The common case first: the chunk is already there (so the
                // insertion below never runs).
                if self.regions.get(r).and_then(|v| v.get(c)).is_some_and(Option::is_some) {
                    return &mut self.regions[r][c].get_or_insert_with(new_chunk)[o];
                }
                self.entry_new_chunk(r, c, o)
            }
            None => self.sparse.entry(line),
        }
    }

    /// [`Self::entry`] when the line's chunk is not allocated yet.
    #[cold]
    fn entry_new_chunk(&mut self, r: usize, c: usize, o: usize) -> &mut LineState {
        if r >= self.regions.len() {
            self.regions.resize_with(r + 1, Vec::new);
        }
        let v = &mut self.regions[r];
        if c >= v.len() {
            v.resize_with(c + 1, || None);
        }
        &mut v[c].get_or_insert_with(new_chunk)[o]
    }
}

/// A chunk of lines never seen.
fn new_chunk() -> Chunk {
    vec![LineState::default(); 1 << CHUNK_BITS].into_boxed_slice()
}
