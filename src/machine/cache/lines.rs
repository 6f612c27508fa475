//! Coherence state of every line the caches have seen, in dense chunks: a
//! line address splits into a region (`line >> REGION_BITS`), a chunk of
//! 4096 lines and an offset; a chunk is allocated when a line in it is
//! first written. Simulated memory is laid out in a few contiguous ranges
//! (one per slab, the xarray node slab, the root), so this is a handful of
//! arrays indexed directly: no hashing, neighbouring lines are neighbours
//! in host memory, and untouched ranges cost nothing. Lines beyond the
//! dense range fall back to a hash map.
//!
//! On a machine of at most [`NARROW_CORES`] cores a state is kept in two
//! bytes ([`Narrow`]: the sharer bits fit a byte and the owner's number
//! another), beyond in four (the [`LineState`] itself). A run holds one
//! state per line it has written (case 2: 17 per inode, 10^8 lines), so
//! this halves most of its memory; both forms answer alike (a test runs
//! the same accesses on both).

use super::LineState;
use crate::machine::linemap::LineMap;

const REGION_BITS: u32 = 30;
const CHUNK_BITS: u32 = 12;
const MAX_DENSE_REGIONS: u64 = 1 << 12;

const CHUNK_LINES: usize = 1 << CHUNK_BITS;

/// Most cores whose line states are kept in two bytes: each core's sharer
/// bit is its own (`1 << core`) and fits a byte, and so does its number.
pub(super) const NARROW_CORES: usize = 8;

/// A [`LineState`] of a machine of at most [`NARROW_CORES`] cores in two
/// bytes: the sharer bits in the low byte, the owner in the high byte
/// ([`NARROW_NO_OWNER`] for none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Narrow(u16);

/// The high byte of a [`Narrow`] state without an owner.
const NARROW_NO_OWNER: u16 = 0xFF;

impl Default for Narrow {
    fn default() -> Self {
        Narrow::pack(LineState::default())
    }
}

impl Narrow {
    /// `s` in two bytes (its sharer bits and owner below [`NARROW_CORES`],
    /// or no owner).
    #[inline(always)]
    fn pack(s: LineState) -> Self {
        debug_assert!(s.sharers >> NARROW_CORES == 0, "sharers {:#x}", s.sharers);
        let owner = if s.owner == super::NO_OWNER { NARROW_NO_OWNER } else { s.owner };
        debug_assert!(owner <= NARROW_NO_OWNER);
        Narrow(s.sharers | owner << 8)
    }

    /// The state packed in `self`.
    #[inline(always)]
    fn unpack(self) -> LineState {
        let owner = self.0 >> 8;
        LineState {
            sharers: self.0 & 0xFF,
            owner: if owner == NARROW_NO_OWNER { super::NO_OWNER } else { owner },
        }
    }
}

/// The states of one chunk's lines; a fixed-size array, so that an offset
/// masked to [`CHUNK_BITS`] bits needs no bounds check.
type Chunk<S> = Box<[S; CHUNK_LINES]>;

/// Per-line state in cells of type `S`, default for a line never seen.
#[derive(Clone, Debug, Default)]
pub(super) struct Cells<S: Copy + Default> {
    regions: Vec<Vec<Option<Chunk<S>>>>,
    sparse: LineMap<S>,
}

/// Per-line state, in the form the machine's core count allows.
#[derive(Clone, Debug)]
pub(super) enum LineStates {
    /// At most [`NARROW_CORES`] cores: two bytes a line.
    Narrow(Cells<Narrow>),
    /// More cores: four bytes a line.
    Wide(Cells<LineState>),
}

/// A form a line's state is kept in ([`LineState`] itself, or
/// [`Narrow`]): an access reads it once and writes it back once, and each
/// form's access path is compiled apart (no choice per field).
pub(super) trait Cell: Copy + Default {
    /// The state.
    fn get(self) -> LineState;
    /// `s` in this form.
    fn put(s: LineState) -> Self;
}

impl Cell for LineState {
    #[inline(always)]
    fn get(self) -> LineState {
        self
    }
    #[inline(always)]
    fn put(s: LineState) -> Self {
        s
    }
}

impl Cell for Narrow {
    #[inline(always)]
    fn get(self) -> LineState {
        self.unpack()
    }
    #[inline(always)]
    fn put(s: LineState) -> Self {
        Narrow::pack(s)
    }
}

impl LineStates {
    /// Empty states for a machine of `cores` cores: two bytes a line when
    /// `cores` is at most [`NARROW_CORES`], unless `wide` asks for four.
    pub(super) fn new(cores: usize, wide: bool) -> Self {
        if cores <= NARROW_CORES && !wide {
            LineStates::Narrow(Cells::default())
        } else {
            LineStates::Wide(Cells::default())
        }
    }
}

impl<S: Copy + Default> Cells<S> {
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

    /// The cell of `line`, mutable (created default if absent).
    #[inline(always)]
    pub(super) fn entry(&mut self, line: u64) -> &mut S {
        match Self::split(line) {
            Some((r, c, o)) => {
                // The common case first: the chunk is already there, found
                // with one walk (the allocation, on the cold path, hands
                // back the new chunk's cell itself).
                let found = matches!(self.regions.get(r).and_then(|v| v.get(c)), Some(Some(_)));
                if !found {
                    return self.new_chunk(r, c, o);
                }
                let chunk = self.regions.get_mut(r).and_then(|v| v.get_mut(c)).and_then(Option::as_mut);
                match chunk {
                    Some(chunk) => &mut chunk[o],
                    None => unreachable!("found just above"),
                }
            }
            None => self.sparse.entry(line),
        }
    }

    /// Allocates chunk `c` of region `r` (not allocated yet).
    /// Returns the cell at offset `o` in it.
    #[cold]
    #[inline(never)]
    fn new_chunk(&mut self, r: usize, c: usize, o: usize) -> &mut S {
        if r >= self.regions.len() {
            self.regions.resize_with(r + 1, Vec::new);
        }
        let v = &mut self.regions[r];
        if c >= v.len() {
            v.resize_with(c + 1, || None);
        }
        &mut v[c].insert(Box::new([S::default(); CHUNK_LINES]))[o]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_state_keeps_every_sharer_set_and_owner() {
        for sharers in 0..=0xFFu16 {
            for owner in (0..NARROW_CORES as u16).chain([super::super::NO_OWNER]) {
                let s = LineState { sharers, owner };
                assert_eq!(Narrow::pack(s).unpack(), s);
            }
        }
        assert_eq!(Narrow::default().unpack(), LineState::default());
    }

    #[test]
    fn the_form_follows_the_core_count() {
        assert!(matches!(LineStates::new(NARROW_CORES, false), LineStates::Narrow(_)));
        assert!(matches!(LineStates::new(NARROW_CORES + 1, false), LineStates::Wide(_)));
        assert!(matches!(LineStates::new(1, true), LineStates::Wide(_)));
    }
}
