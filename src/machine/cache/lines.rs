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

const CHUNK_LINES: usize = 1 << CHUNK_BITS;

/// The states of one chunk's lines; a fixed-size array, so that an offset
/// masked to [`CHUNK_BITS`] bits needs no bounds check.
type Chunk = Box<[LineState; CHUNK_LINES]>;

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
    #[inline(always)]
    pub(super) fn entry(&mut self, line: u64) -> &mut LineState {
        match Self::split(line) {
            Some((r, c, o)) => {
                // The common case first: the chunk is already there. The
                // position is found once, as a pointer-free index pair, and
                // the cold path runs only when it is missing.
                let found = self.regions.get(r).and_then(|v| v.get(c)).is_some_and(Option::is_some);
                if !found {
                    self.new_chunk(r, c);
                }
                match &mut self.regions[r][c] {
                    Some(chunk) => &mut chunk[o],
                    None => unreachable!("new_chunk allocated it"),
                }
            }
            None => self.sparse.entry(line),
        }
    }

    /// Allocates chunk `c` of region `r` (not allocated yet).
    #[cold]
    #[inline(never)]
    fn new_chunk(&mut self, r: usize, c: usize) {
        if r >= self.regions.len() {
            self.regions.resize_with(r + 1, Vec::new);
        }
        let v = &mut self.regions[r];
        if c >= v.len() {
            v.resize_with(c + 1, || None);
        }
        v[c] = Some(new_chunk());
    }
}

/// A chunk of lines never seen.
fn new_chunk() -> Chunk {
    Box::new([LineState::default(); CHUNK_LINES])
}
