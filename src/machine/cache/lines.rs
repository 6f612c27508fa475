//! Coherence state of every line the caches have seen, in dense chunks: a
//! line address splits into a region (`line >> REGION_BITS`), a chunk of
//! 4096 lines and an offset; a chunk is allocated when a line in it is
//! first written. Simulated memory is laid out in a few contiguous ranges
//! (one per slab, the xarray node slab, the root), so this is a handful of
//! arrays indexed directly: no hashing, neighbouring lines are neighbours
//! in host memory, and untouched ranges cost nothing. Lines beyond the
//! dense range fall back to a hash map.
//!
//! A state is kept in the fewest bytes the machine's core count allows:
//! two ([`Narrow`]) up to [`NARROW_CORES`] cores (the sharer bits fit a
//! byte and the owner's number another), four ([`Wide`]) up to
//! [`WIDE_CORES`], ten ([`Broad`]: 64 sharer bits and the owner) beyond.
//! A run holds one state per line it has written (case 2: 17 per inode,
//! 10^8 lines), so the small forms halve most of its memory; every form
//! answers alike (a test runs the same accesses on each).

use super::LineState;
use crate::machine::linemap::LineMap;

const REGION_BITS: u32 = 30;
const CHUNK_BITS: u32 = 12;
const MAX_DENSE_REGIONS: u64 = 1 << 12;

const CHUNK_LINES: usize = 1 << CHUNK_BITS;

/// Most cores whose line states are kept in two bytes: each core's sharer
/// bit is its own (`1 << core`) and fits a byte, and so does its number.
pub(super) const NARROW_CORES: usize = 8;

/// Most cores whose line states are kept in four bytes: each core's
/// sharer bit fits 16 bits, its number the other 16.
pub(super) const WIDE_CORES: usize = 16;

/// The forms a line's state is kept in.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// [`Narrow`].
    Narrow,
    /// [`Wide`].
    Wide,
    /// [`Broad`].
    Broad,
}

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
        Narrow((s.sharers & 0xFF) as u16 | owner << 8)
    }

    /// The state packed in `self`.
    #[inline(always)]
    fn unpack(self) -> LineState {
        let owner = self.0 >> 8;
        LineState {
            sharers: u64::from(self.0 & 0xFF),
            owner: if owner == NARROW_NO_OWNER { super::NO_OWNER } else { owner },
        }
    }
}

/// A [`LineState`] of a machine of at most [`WIDE_CORES`] cores in four
/// bytes: the sharer bits in the low half, the owner in the high half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Wide(u32);

impl Default for Wide {
    fn default() -> Self {
        Wide::put(LineState::default())
    }
}

/// A [`LineState`] of any machine in ten bytes (no padding: a chunk of
/// 4096 lines takes 40 KiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, packed(2))]
pub(super) struct Broad {
    sharers: u64,
    owner: u16,
}

impl Default for Broad {
    fn default() -> Self {
        Broad::put(LineState::default())
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
    /// At most [`WIDE_CORES`] cores: four bytes a line.
    Wide(Cells<Wide>),
    /// More cores: ten bytes a line.
    Broad(Cells<Broad>),
}

/// A form a line's state is kept in ([`Narrow`], [`Wide`], [`Broad`]): an
/// access reads it once and writes it back once, and each form's access
/// path is compiled apart (no choice per field).
pub(super) trait Cell: Copy + Default {
    /// The state.
    fn get(self) -> LineState;
    /// `s` in this form.
    fn put(s: LineState) -> Self;
}

impl Cell for Wide {
    #[inline(always)]
    fn get(self) -> LineState {
        LineState {
            sharers: u64::from(self.0 as u16),
            owner: (self.0 >> 16) as u16,
        }
    }
    #[inline(always)]
    fn put(s: LineState) -> Self {
        debug_assert!(s.sharers >> WIDE_CORES == 0, "sharers {:#x}", s.sharers);
        Wide(u32::from(s.sharers as u16) | u32::from(s.owner) << 16)
    }
}

impl Cell for Broad {
    #[inline(always)]
    fn get(self) -> LineState {
        LineState {
            sharers: self.sharers,
            owner: self.owner,
        }
    }
    #[inline(always)]
    fn put(s: LineState) -> Self {
        Broad {
            sharers: s.sharers,
            owner: s.owner,
        }
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
    /// Empty states in `form`, which must hold `cores` cores (tests hold
    /// the forms to each other).
    #[cfg(test)]
    pub(super) fn with_form(cores: usize, form: Form) -> Self {
        match form {
            Form::Narrow if cores <= NARROW_CORES => LineStates::Narrow(Cells::default()),
            Form::Wide if cores <= WIDE_CORES => LineStates::Wide(Cells::default()),
            Form::Broad => LineStates::Broad(Cells::default()),
            f => panic!("{f:?} line states do not hold {cores} cores"),
        }
    }

    /// Empty states for a machine of `cores` cores, in the smallest form
    /// that holds them.
    pub(super) fn new(cores: usize) -> Self {
        if cores <= NARROW_CORES {
            LineStates::Narrow(Cells::default())
        } else if cores <= WIDE_CORES {
            LineStates::Wide(Cells::default())
        } else {
            LineStates::Broad(Cells::default())
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
        for sharers in 0..=0xFFu64 {
            for owner in (0..NARROW_CORES as u16).chain([super::super::NO_OWNER]) {
                let s = LineState { sharers, owner };
                assert_eq!(Narrow::pack(s).unpack(), s);
            }
        }
        assert_eq!(Narrow::default().unpack(), LineState::default());
    }

    #[test]
    fn wide_and_broad_states_keep_their_cores_sharer_sets_and_owners() {
        let owners = |n: usize| (0..n as u16).chain([super::super::NO_OWNER]);
        for sharers in [0, 1, 0x8001, 0xFFFF, 0x5A5A] {
            for owner in owners(WIDE_CORES) {
                let s = LineState { sharers, owner };
                assert_eq!(Wide::put(s).get(), s);
            }
        }
        for sharers in [0, 1 << 63, u64::MAX, 0x8000_0001_0000_FFFF] {
            for owner in owners(300) {
                let s = LineState { sharers, owner };
                assert_eq!(Broad::put(s).get(), s);
            }
        }
        assert_eq!(Wide::default().get(), LineState::default());
        assert_eq!(Broad::default().get(), LineState::default());
        assert_eq!(std::mem::size_of::<Broad>(), 10);
    }

    #[test]
    fn the_form_follows_the_core_count() {
        assert!(matches!(LineStates::new(NARROW_CORES), LineStates::Narrow(_)));
        assert!(matches!(LineStates::new(NARROW_CORES + 1), LineStates::Wide(_)));
        assert!(matches!(LineStates::new(WIDE_CORES), LineStates::Wide(_)));
        assert!(matches!(LineStates::new(WIDE_CORES + 1), LineStates::Broad(_)));
        assert!(matches!(LineStates::with_form(1, Form::Broad), LineStates::Broad(_)));
    }
}
