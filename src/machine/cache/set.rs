//! One set-associative LRU array, laid out for the host's caches.
//!
//! Per set, one block of 16 tag slots in way order (the set's `ways` used,
//! the rest empty), one 64-byte-aligned host line, and a small [`Meta`]
//! state in a dense array of its own (four sets' states to a host line).
//! A tag is the line address without its set bits (`line >> set_bits`).
//! A block keeps the low 32 bits of each tag (compared at once); the high
//! 32 bits live in a third array, allocated only when the first tag that
//! needs them is seen, and are checked only for the ways whose low half
//! matched. The set's recency word holds, in 4-bit field `p`, the way at
//! LRU position `p` (0 = most recent), so a hit, a fill or an eviction
//! rewrites one word instead of moving tags: the tags stay in their ways,
//! as in a real cache. None of this layout changes any answer; the
//! reference model in `oracle.rs` keeps the sets as recency-ordered lists
//! and a proptest holds this one to it.
//!
//! Streams of fresh lines ([`SetAssoc::stream`]) are applied lazily, at no
//! cost per line: the n-th fresh line ever streamed (n from 0) lands on set
//! `n mod sets`, so a stream only adds to the array's count `streamed`, and
//! how many of them set `s` has been sent follows from that count
//! ([`SetAssoc::landed`]). A set remembers how many it has absorbed
//! (`seen`); the difference, capped at `ways` (more push out the whole set
//! just the same), is what it has pending. Before a set is read, its
//! pending lines take its least recent ways, which become the most recent,
//! exactly as if the lines had been filled one by one; a fresh line matches
//! no real line, so its way's tag is only set empty ([`EMPTY32`]), which
//! no lookup matches, until the way is filled again.
//!
//! Tried in issue 35 (session 49) and not kept: each set's tags and its
//! `Meta` in one 128-byte-aligned block, so that the host's adjacent-line
//! prefetch would bring the state with the tags (perf put the two loads'
//! stalls at 4-5% of case 2's time each). Case 2's rb-tree variant, one
//! loop (1.2M inserts), three alternating pairs: 4.97 / 5.61 / 4.42 s user
//! against 4.76 / 5.10 / 4.35 in the dense layout, outputs byte-identical.

use super::{CacheError, LevelConfig};

/// Most ways a level may have (a recency word holds 16 four-bit fields).
pub const MAX_WAYS: u32 = 16;

/// Low half of an empty tag slot (with high half [`EMPTY32`] once high
/// halves are kept; no line's tag has high half `u32::MAX`, as a line
/// address is below 2^58).
const EMPTY32: u32 = u32::MAX;

/// Tags from this value on need their high halves kept (its low half is
/// the empty slot's).
const HIGH_FROM: u64 = EMPTY32 as u64;

/// Replacement state of one set.
#[derive(Clone, Copy, Debug)]
struct Meta {
    /// Field `p` (4 bits): the way at LRU position `p`, 0 = most recent.
    recency: u64,
    /// Fresh streamed lines this set has absorbed since the start.
    seen: u64,
}

/// One set's 32-bit tags (way `w` in slot `w`; slots from `ways` on stay
/// empty): one host cache line, apart from the set's [`Meta`], so that the
/// states of many sets share a host line and a set's tags never straddle
/// two.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Set {
    tags: [u32; 16],
}

/// One set-associative LRU array.
#[derive(Clone, Debug)]
pub(super) struct SetAssoc {
    ways: usize,
    set_bits: u32,
    set_mask: u64,
    sets: Vec<Set>,
    /// Each set's replacement state, by set (as long as `sets`).
    metas: Vec<Meta>,
    /// High halves of the tags, per set in way order; empty until a tag
    /// of [`HIGH_FROM`] or more is seen (until then every tag's high half
    /// is 0).
    high: Vec<[u32; 16]>,
    /// Tags from this value on need `high` allocated first: [`HIGH_FROM`]
    /// while it is empty, `u64::MAX` (no tag) after.
    high_from: u64,
    streamed: u64,
    /// Bit `w` set for every way of a set.
    way_mask: u32,
    /// `low(ways - 1)`: the recency fields of every position but the last.
    low_last: u64,
    /// `4 * (ways - 1)`: the shift of the last (least recent) position's
    /// field.
    lru_shift: u32,
}

/// The low `n` four-bit fields of a recency word set (n <= 16).
#[inline]
fn low(n: usize) -> u64 {
    LOW[n & 0x1F]
}

/// [`low`] for n = 0 to 16, and all ones beyond (never asked for).
const LOW: [u64; 32] = {
    let mut t = [u64::MAX; 32];
    let mut n = 0;
    while n < 16 {
        t[n] = (1 << (4 * n)) - 1;
        n += 1;
    }
    t
};

/// The way at LRU position `p`.
#[cfg(test)]
fn way_at(r: u64, p: usize) -> usize {
    ((r >> (4 * p)) & 0xF) as usize
}

/// The LRU position of way `w` (which `r`, a permutation of the ways, holds
/// exactly once): the one field equal to `w`, found without a loop.
#[inline]
fn position_of(r: u64, w: usize) -> usize {
    (field_top_bit(r, w).trailing_zeros() / 4) as usize
}

/// The top bit (`4p + 3`) of the field at position `p` that holds way `w`
/// (which `r` holds exactly once), found without a loop.
#[inline]
fn field_top_bit(r: u64, w: usize) -> u64 {
    const ONES: u64 = 0x1111_1111_1111_1111;
    const HIGHS: u64 = 0x8888_8888_8888_8888;
    let x = r ^ (ONES * w as u64);
    // The lowest zero field of x sets its high bit here; a field above a
    // zero field may too (borrow), never one below it.
    let zero = x.wrapping_sub(ONES) & !x & HIGHS;
    zero & zero.wrapping_neg()
}

/// Bit `w` set where `ways[w] == tag`, for 16 32-bit tags: on x86-64 four
/// SSE2 compares packed into one byte mask (SSE2 is part of every x86-64
/// CPU).
#[cfg(target_arch = "x86_64")]
#[inline]
fn matches16(ways: &[u32; 16], tag: u32) -> u32 {
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU this
    // target runs on has the one feature the function is compiled for.
    unsafe { matches16_sse2(ways, tag) }
}

/// The SSE2 body of [`matches16`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn matches16_sse2(ways: &[u32; 16], tag: u32) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_epi8, _mm_packs_epi16, _mm_packs_epi32, _mm_set1_epi32,
    };
    let want = _mm_set1_epi32(tag as i32);
    let base = ways.as_ptr().cast::<__m128i>();
    // SAFETY: `ways` is 16 u32 = 64 readable bytes, so the four unaligned
    // 16-byte loads at offsets 0, 16, 32 and 48 stay inside it.
    let quad = |k: usize| unsafe { _mm_cmpeq_epi32(_mm_loadu_si128(base.add(k)), want) };
    let bytes = _mm_packs_epi16(_mm_packs_epi32(quad(0), quad(1)), _mm_packs_epi32(quad(2), quad(3)));
    _mm_movemask_epi8(bytes) as u32
}

/// [`matches16`] where there is no SIMD path.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn matches16(ways: &[u32; 16], tag: u32) -> u32 {
    ways.iter().enumerate().fold(0, |hits, (i, &t)| hits | u32::from(t == tag) << i)
}

/// Way `w` (which `r` holds exactly once) becomes the most recent: the
/// fields below its position move up one, the rest stay. The position is
/// kept as its field's top bit ([`field_top_bit`]) rather than `p`, so
/// that the two masks follow from it by shifts alone.
#[inline]
fn promote(r: u64, w: usize) -> u64 {
    let top = field_top_bit(r, w); // bit 4p + 3
    let below = (top >> 3).wrapping_sub(1); // fields 0 .. p
    let through = (top << 1).wrapping_sub(1); // fields 0 ..= p
    (r & !through) | ((r & below) << 4) | w as u64
}

/// The recency word of a `ways`-way set after `k` (< ways) fills in a row:
/// the `k` least recent ways become the most recent, in the same order.
#[inline]
fn rotate(r: u64, ways: usize, k: usize) -> u64 {
    ((r << (4 * k)) | (r >> (4 * (ways - k)))) & low(ways)
}

/// Recency word of a fresh set: way p at position p.
fn identity(ways: usize) -> u64 {
    (0..ways).fold(0, |r, w| r | (w as u64) << (4 * w))
}

/// Brings `set` up to date with the stream, the set having been sent
/// `landed` fresh lines in all: its `k` pending ones (capped at `ways`)
/// take the `k` least recent ways, whose tags (and high halves, `high`,
/// when kept) become empty, and which become the most recent in the same
/// relative order (k fills in a row).
#[inline]
fn absorb(set: &mut Set, m: &mut Meta, mut high: Option<&mut [u32; 16]>, ways: usize, landed: u64) {
    if landed == m.seen {
        return;
    }
    let k = (landed - m.seen).min(ways as u64) as usize;
    m.seen = landed;
    if k == ways {
        // Every way takes a fresh line, in LRU order: the order stays.
        set.tags = [EMPTY32; 16];
        if let Some(high) = high {
            *high = [EMPTY32; 16];
        }
        return;
    }
    let r = m.recency;
    m.recency = rotate(r, ways, k);
    // The ways at positions ways - k .. ways, one field at a time.
    let mut top = r >> (4 * (ways - k));
    for _ in 0..k {
        let w = (top & 0xF) as usize;
        set.tags[w] = EMPTY32;
        if let Some(high) = high.as_mut() {
            high[w] = EMPTY32;
        }
        top >>= 4;
    }
}

impl SetAssoc {
    /// The number of sets of level `cfg`, or why it cannot be built.
    pub(super) fn sets(level: &'static str, cfg: LevelConfig) -> Result<u64, CacheError> {
        let bad = CacheError::BadGeometry(level, cfg.size_bytes, cfg.ways);
        let per_way = 64 * u64::from(cfg.ways);
        if cfg.ways == 0 || cfg.ways > MAX_WAYS || !cfg.size_bytes.is_multiple_of(per_way) || !(cfg.size_bytes / per_way).is_power_of_two()
        {
            return Err(bad);
        }
        Ok(cfg.size_bytes / per_way)
    }

    pub(super) fn new(level: &'static str, cfg: LevelConfig) -> Result<Self, CacheError> {
        let sets = Self::sets(level, cfg)?;
        let ways = cfg.ways as usize;
        let set = Set { tags: [EMPTY32; 16] };
        let meta = Meta {
            recency: identity(ways),
            seen: 0,
        };
        Ok(Self {
            ways,
            set_bits: sets.trailing_zeros(),
            set_mask: sets - 1,
            sets: vec![set; sets as usize],
            metas: vec![meta; sets as usize],
            high: Vec::new(),
            high_from: HIGH_FROM,
            way_mask: (1u32 << ways) - 1,
            low_last: low(ways - 1),
            lru_shift: 4 * (cfg.ways - 1),
            streamed: 0,
        })
    }

    /// `lines` fresh lines pass through the array (applied lazily). The
    /// count saturates at 2^64 lines, beyond any run.
    #[inline]
    pub(super) fn stream(&mut self, lines: u64) {
        self.streamed = self.streamed.saturating_add(lines);
    }

    /// Fresh lines set `s` has been sent by the first `total` streamed:
    /// the n < total with n mod sets = s.
    #[inline]
    fn landed(&self, s: usize, total: u64) -> u64 {
        (total + self.set_mask - s as u64) >> self.set_bits
    }

    /// Fresh lines set `s` (state `m`) has been sent and not absorbed,
    /// capped at `ways`.
    #[inline]
    fn pending(&self, s: usize, m: &Meta) -> usize {
        (self.landed(s, self.streamed) - m.seen).min(self.ways as u64) as usize
    }

    /// Starts keeping the tags' high halves (a tag of [`HIGH_FROM`] or
    /// more is about to be looked up): every tag so far has high half 0,
    /// an empty slot gets [`EMPTY32`].
    #[cold]
    fn keep_high_halves(&mut self) {
        self.high = self
            .sets
            .iter()
            .map(|set| set.tags.map(|t| if t == EMPTY32 { EMPTY32 } else { 0 }))
            .collect();
        self.high_from = u64::MAX;
    }

    /// The first line address whose tag needs the high halves kept, so
    /// that [`Self::admit`] must see it first; `u64::MAX` once they are
    /// kept (or when no line's tag can need them).
    pub(super) fn high_line(&self) -> u64 {
        if self.high_from == u64::MAX {
            return u64::MAX;
        }
        let line = HIGH_FROM << self.set_bits;
        if line >> self.set_bits == HIGH_FROM { line } else { u64::MAX }
    }

    /// Makes sure an operation on `line` can be answered: starts keeping
    /// the tags' high halves when its tag is the first to need them.
    /// Every line an operation names must have been admitted (the
    /// hierarchy does it once per access, for all its arrays, whenever a
    /// line reaches [`Self::high_line`]).
    #[cold]
    pub(super) fn admit(&mut self, line: u64) {
        if line >> self.set_bits >= self.high_from {
            self.keep_high_halves();
        }
    }

    /// Set `s` (`line & set_mask`) brought up to date with the stream and
    /// reached once for one operation on a line with tag `tag` (admitted,
    /// [`Self::admit`]).
    #[inline(always)]
    fn open(&mut self, s: usize, tag: u64) -> Slot<'_> {
        debug_assert!(tag < self.high_from, "tag {tag:#x} not admitted");
        debug_assert!(s < self.sets.len());
        let landed = self.landed(s, self.streamed);
        // SAFETY: every caller passes `s = line & set_mask`, and
        // `set_mask = sets.len() - 1 = metas.len() - 1` (a power of two
        // set when the array is built; neither changes length), so `s` is
        // in bounds of both.
        let (set, meta) = unsafe { (self.sets.get_unchecked_mut(s), self.metas.get_unchecked_mut(s)) };
        let mut high = self.high.get_mut(s);
        absorb(set, meta, high.as_deref_mut(), self.ways, landed);
        Slot {
            set,
            meta,
            high,
            way_mask: self.way_mask,
            low_last: self.low_last,
            lru_shift: self.lru_shift,
        }
    }

    /// An access to `line`: on a hit, makes it most-recent and returns
    /// true; on a miss, fills it as most-recent in the least recent way
    /// (evicting its line) and returns false.
    #[inline(always)]
    pub(super) fn touch(&mut self, line: u64) -> bool {
        let tag = line >> self.set_bits;
        let mut slot = self.open((line & self.set_mask) as usize, tag);
        if slot.holds_mru(tag) {
            return true; // already the most recent: the order stays
        }
        let hits = slot.hits(tag);
        if hits != 0 {
            slot.promote(hits.trailing_zeros() as usize);
            return true;
        }
        slot.fill_lru(tag);
        false
    }

    /// Fills `line`, which the array does not hold, as most-recent in the
    /// least recent way (evicting its line): [`Self::touch`] of a line
    /// known to miss, without the lookup.
    #[inline(always)]
    pub(super) fn fill(&mut self, line: u64) {
        let tag = line >> self.set_bits;
        self.open((line & self.set_mask) as usize, tag).fill_lru(tag);
    }

    /// Drops a line (its way becomes empty and least recent); returns true
    /// if it was present.
    #[inline(always)]
    pub(super) fn remove(&mut self, line: u64) -> bool {
        let tag = line >> self.set_bits;
        let mut slot = self.open((line & self.set_mask) as usize, tag);
        let hits = slot.hits(tag);
        if hits != 0 {
            slot.empty(hits.trailing_zeros() as usize);
        }
        hits != 0
    }

    /// Whether the array holds `line` (no LRU update): a way holds it and
    /// the set's pending fresh lines do not push it out.
    #[inline]
    pub(super) fn contains(&self, line: u64) -> bool {
        let s = (line & self.set_mask) as usize;
        let tag = line >> self.set_bits;
        if tag >= self.high_from {
            return false; // no tag this large was ever filled
        }
        let (set, meta) = (&self.sets[s], &self.metas[s]);
        match holding(set, self.high.get(s), self.way_mask, tag) {
            0 => false,
            hits => position_of(meta.recency, hits.trailing_zeros() as usize) + self.pending(s, meta) < self.ways,
        }
    }
}

/// The ways of a set (block `set`; its tag high halves `high`, `None`
/// while the array keeps none; ways `way_mask`) holding `tag` and not stale (a
/// real tag is held at most once outside stale ways). High halves are
/// compared only for the ways whose low half matched.
#[inline(always)]
fn holding(set: &Set, high: Option<&[u32; 16]>, way_mask: u32, tag: u64) -> u32 {
    let low = matches16(&set.tags, tag as u32) & way_mask;
    if low == 0 {
        return 0;
    }
    let Some(high) = high else {
        return low;
    };
    let want = (tag >> 32) as u32;
    let (mut bits, mut hits) = (low, 0);
    while bits != 0 {
        let w = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        hits |= u32::from(high[w] == want) << w;
    }
    hits
}

/// One set, synced with the stream, for one operation: its block, its
/// tags' high halves if the array keeps them, and the array's shape (so
/// the set is found, and bounds-checked, once).
struct Slot<'a> {
    set: &'a mut Set,
    meta: &'a mut Meta,
    /// The set's tag high halves, if the array keeps them (found once).
    high: Option<&'a mut [u32; 16]>,
    way_mask: u32,
    low_last: u64,
    lru_shift: u32,
}

impl Slot<'_> {
    /// The ways holding `tag` and not stale.
    #[inline(always)]
    fn hits(&self, tag: u64) -> u32 {
        holding(self.set, self.high.as_deref(), self.way_mask, tag)
    }

    /// Whether the most recent way holds `tag`: one tag compared (two
    /// when high halves are kept) instead of the whole set, for the line
    /// a core touches again before anything else reaches its set (an
    /// empty way's tag, [`EMPTY32`] with high half [`EMPTY32`], is no
    /// line's).
    #[inline(always)]
    fn holds_mru(&self, tag: u64) -> bool {
        let w = (self.meta.recency & 0xF) as usize;
        self.set.tags[w] == tag as u32 && self.high.as_ref().is_none_or(|high| high[w] == (tag >> 32) as u32)
    }

    /// Way `w` (holding a line) becomes the most recent.
    #[inline(always)]
    fn promote(&mut self, w: usize) {
        let r = self.meta.recency;
        self.meta.recency = promote(r, w);
    }

    /// Puts `tag` in the least recent way (evicting its line) and makes it
    /// the most recent.
    #[inline(always)]
    fn fill_lru(&mut self, tag: u64) {
        let r = self.meta.recency;
        let w = ((r >> self.lru_shift) & 0xF) as usize;
        self.set.tags[w] = tag as u32;
        self.meta.recency = ((r & self.low_last) << 4) | w as u64;
        if let Some(high) = self.high.as_deref_mut() {
            high[w] = (tag >> 32) as u32;
        }
    }

    /// Way `w` (holding a line) is emptied and becomes the least recent.
    #[inline(always)]
    fn empty(&mut self, w: usize) {
        let r = self.meta.recency;
        let p = position_of(r, w);
        self.meta.recency = (r & low(p)) | ((r >> 4) & !low(p) & self.low_last) | (w as u64) << self.lru_shift;
        self.set.tags[w] = EMPTY32;
        if let Some(high) = self.high.as_deref_mut() {
            high[w] = EMPTY32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_of_finds_every_way_of_every_rotation() {
        for ways in 1..=16 {
            let r = identity(ways);
            for k in 0..ways {
                let rot = if k == 0 { r } else { rotate(r, ways, k) };
                for p in 0..ways {
                    assert_eq!(position_of(rot, way_at(rot, p)), p, "ways {ways} rotation {k}");
                }
            }
        }
    }

    #[test]
    fn the_most_recent_way_matches_only_its_own_line() {
        // One set of 4 ways: the tag is the line itself.
        let mut a = SetAssoc::new("l1d", LevelConfig { size_bytes: 256, ways: 4 }).expect("one set of 4 ways");
        let (low, high) = (5, (3 << 40) + 5); // same low 32 bits of tag
        a.admit(high);
        assert!(!a.touch(low), "cold");
        assert!(a.touch(low), "most recent: hit");
        assert!(!a.touch(high), "the most recent way holds another line with the same low half");
        assert!(a.touch(high) && a.touch(low), "both held");
        a.stream(1); // the least recent way takes a fresh line, now the most recent
        assert!(a.touch(low) && a.contains(high), "a fresh line is no line's");
    }

    #[test]
    fn promote_moves_one_way_to_the_front() {
        let r = identity(4); // ways 0,1,2,3 at positions 0..3
        assert_eq!(promote(r, 2), 0x3102);
        assert_eq!(promote(r, 0), r);
        assert_eq!(promote(r, 3), 0x2103);
        assert_eq!(promote(identity(16), 15), 0xEDCB_A987_6543_210F);
        assert_eq!(promote(identity(12), 11), 0xA987_6543_210B);
    }
}
