//! One set-associative LRU array, laid out for the host's caches.
//!
//! Per set, `ways` tags in way order and a recency word. A tag is the line
//! address without its set bits (`line >> set_bits`), kept in 32 bits while
//! every tag seen fits (a 16-way set is one 64-byte host line) and widened
//! to 64 bits, once and for the whole array, by the first line that does
//! not fit. The recency word holds, in 4-bit field `p`, the way at LRU
//! position `p` (0 = most recent), so a hit, a fill or an eviction rewrites
//! one word instead of moving tags: the tags stay in their ways, as in a
//! real cache. Neither widening nor this layout changes any answer; the
//! reference model in `oracle.rs` keeps the sets as recency-ordered lists
//! and a proptest holds this one to it.
//!
//! Streams of fresh lines ([`SetAssoc::stream`]) are applied lazily. The
//! stream's lines land on consecutive sets, continuing where the last
//! stream stopped (`next`, starting at set 0), and `pending[s]` counts the
//! fresh lines set `s` has been sent and not absorbed yet, saturating at
//! `ways` (more push out the whole set just the same). Before a set is
//! read, its pending lines are pushed in as never-matching placeholder tags
//! at the most-recent end, exactly as if the lines had been filled one by
//! one. The counts are one byte per set (64 KiB for a 64 MiB, 16-way LLC),
//! so checking a set costs the host little; a stream adds to a run of them.

use super::{CacheError, LevelConfig};

/// A tag width: `u32` or `u64`, with two values no real tag takes.
trait Tag: Copy + Eq {
    /// An empty way.
    const EMPTY: Self;
    /// A fresh streamed line: matches no real line.
    const FRESH: Self;
}

impl Tag for u32 {
    const EMPTY: Self = u32::MAX;
    const FRESH: Self = u32::MAX - 1;
}

impl Tag for u64 {
    const EMPTY: Self = u64::MAX;
    const FRESH: Self = u64::MAX - 1;
}

/// Most ways a level may have (a recency word holds 16 four-bit fields).
pub(super) const MAX_WAYS: u32 = 16;

/// Largest tag the 32-bit storage holds (the two above are sentinels).
const NARROW_MAX: u64 = u32::MAX as u64 - 2;

/// Tags of every set, `ways` per set, in way order.
#[derive(Clone, Debug)]
enum Tags {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

/// One set-associative LRU array.
#[derive(Clone, Debug)]
pub(super) struct SetAssoc {
    ways: usize,
    set_bits: u32,
    set_mask: u64,
    tags: Tags,
    recency: Vec<u64>,
    next: u64,
    pending: Vec<u8>,
}

/// The low `n` four-bit fields of a recency word set (n <= 16).
#[inline]
fn low(n: usize) -> u64 {
    if n >= 16 { u64::MAX } else { (1u64 << (4 * n)) - 1 }
}

/// The way at LRU position `p`.
#[inline]
fn way_at(r: u64, p: usize) -> usize {
    ((r >> (4 * p)) & 0xF) as usize
}

/// The LRU position of way `w` (which `r`, a permutation of the ways, holds
/// exactly once): the one field equal to `w`, found without a loop.
#[inline]
fn position_of(r: u64, w: usize) -> usize {
    const ONES: u64 = 0x1111_1111_1111_1111;
    const HIGHS: u64 = 0x8888_8888_8888_8888;
    let x = r ^ (ONES * w as u64);
    // The lowest zero field of x sets its high bit here; a field above a
    // zero field may too (borrow), never one below it.
    let zero = x.wrapping_sub(ONES) & !x & HIGHS;
    (zero.trailing_zeros() / 4) as usize
}

/// The way holding `tag`, if any (a real tag is held at most once).
#[inline]
fn find<T: Tag>(set: &[T], tag: T) -> Option<usize> {
    let mut hits = 0u32;
    for (i, &t) in set.iter().enumerate() {
        hits |= u32::from(t == tag) << i;
    }
    (hits != 0).then(|| hits.trailing_zeros() as usize)
}

/// Way `w` at LRU position `p` becomes the most recent.
#[inline]
fn promote(r: u64, p: usize, w: usize) -> u64 {
    (r & !low(p + 1)) | ((r & low(p)) << 4) | w as u64
}

/// Recency word of a fresh set: way p at position p.
fn identity(ways: usize) -> u64 {
    (0..ways).fold(0, |r, w| r | (w as u64) << (4 * w))
}

impl SetAssoc {
    pub(super) fn new(level: &'static str, cfg: LevelConfig) -> Result<Self, CacheError> {
        let bad = CacheError::BadGeometry(level, cfg.size_bytes, cfg.ways);
        let per_way = 64 * u64::from(cfg.ways);
        if cfg.ways == 0 || cfg.ways > MAX_WAYS || !cfg.size_bytes.is_multiple_of(per_way) || !(cfg.size_bytes / per_way).is_power_of_two()
        {
            return Err(bad);
        }
        let sets = cfg.size_bytes / per_way;
        let ways = cfg.ways as usize;
        Ok(Self {
            ways,
            set_bits: sets.trailing_zeros(),
            set_mask: sets - 1,
            tags: Tags::Narrow(vec![u32::EMPTY; sets as usize * ways]),
            recency: vec![identity(ways); sets as usize],
            next: 0,
            pending: vec![0; sets as usize],
        })
    }

    /// `lines` fresh lines pass through the array (applied lazily).
    #[inline]
    pub(super) fn stream(&mut self, lines: u64) {
        let sets = self.set_mask + 1;
        let cap = self.ways as u8;
        let add = |p: &mut [u8], k: u64| {
            let k = k.min(u64::from(cap)) as u8;
            p.iter_mut().for_each(|x| *x = x.saturating_add(k).min(cap));
        };
        // Every set gets `lines / sets` of them, and the `lines % sets`
        // sets from `next` on (wrapping) one more.
        let (whole, rest) = (lines >> self.set_bits, lines & self.set_mask);
        if whole > 0 {
            add(&mut self.pending, whole);
        }
        let first = self.next;
        let head = rest.min(sets - first);
        add(&mut self.pending[first as usize..(first + head) as usize], 1);
        add(&mut self.pending[..(rest - head) as usize], 1);
        self.next = (first + rest) & self.set_mask;
    }

    /// Brings set `s` up to date with the stream: its `k` pending fresh
    /// lines take the `k` least recent ways, which become the most recent
    /// in the same relative order (k fills in a row). Returns its first way.
    #[inline]
    fn sync(&mut self, s: usize) -> usize {
        let start = s * self.ways;
        let k = self.pending[s] as usize;
        if k != 0 {
            self.pending[s] = 0;
            let (ways, r) = (self.ways, self.recency[s]);
            for p in ways - k..ways {
                let w = start + way_at(r, p);
                match &mut self.tags {
                    Tags::Narrow(v) => v[w] = u32::FRESH,
                    Tags::Wide(v) => v[w] = u64::FRESH,
                }
            }
            if k < ways {
                self.recency[s] = ((r << (4 * k)) | (r >> (4 * (ways - k)))) & low(ways);
            }
        }
        start
    }

    /// Stores 64-bit tags from now on (a tag did not fit in 32 bits).
    #[cold]
    fn widen(&mut self) {
        if let Tags::Narrow(v) = &self.tags {
            let wide = v
                .iter()
                .map(|&t| match t {
                    u32::EMPTY => u64::EMPTY,
                    u32::FRESH => u64::FRESH,
                    t => u64::from(t),
                })
                .collect();
            self.tags = Tags::Wide(wide);
        }
    }

    /// The way of set `s` (first way `start`) holding `tag`, if any.
    #[inline]
    fn way_of(&self, start: usize, tag: u64) -> Option<usize> {
        let set = start..start + self.ways;
        match &self.tags {
            Tags::Narrow(v) if tag <= NARROW_MAX => find(&v[set], tag as u32),
            Tags::Narrow(_) => None,
            Tags::Wide(v) => find(&v[set], tag),
        }
    }

    /// An access to `line`: on a hit, makes it most-recent and returns
    /// true; on a miss, fills it as most-recent in the least recent way
    /// (evicting its line) and returns false.
    #[inline]
    pub(super) fn touch(&mut self, line: u64) -> bool {
        let s = (line & self.set_mask) as usize;
        let tag = line >> self.set_bits;
        let start = self.sync(s);
        let r = self.recency[s];
        if let Some(w) = self.way_of(start, tag) {
            self.recency[s] = promote(r, position_of(r, w), w);
            return true;
        }
        let last = self.ways - 1;
        let w = way_at(r, last);
        match &mut self.tags {
            Tags::Narrow(v) if tag <= NARROW_MAX => v[start + w] = tag as u32,
            Tags::Narrow(_) => {
                self.widen();
                return self.touch(line);
            }
            Tags::Wide(v) => v[start + w] = tag,
        }
        self.recency[s] = ((r & low(last)) << 4) | w as u64;
        false
    }

    /// Drops a line (its way becomes empty and least recent); returns true
    /// if it was present.
    pub(super) fn remove(&mut self, line: u64) -> bool {
        let s = (line & self.set_mask) as usize;
        let tag = line >> self.set_bits;
        let start = self.sync(s);
        let Some(w) = self.way_of(start, tag) else {
            return false;
        };
        let (r, last) = (self.recency[s], self.ways - 1);
        let p = position_of(r, w);
        self.recency[s] = (r & low(p)) | ((r >> 4) & !low(p) & low(last)) | (w as u64) << (4 * last);
        match &mut self.tags {
            Tags::Narrow(v) => v[start + w] = u32::EMPTY,
            Tags::Wide(v) => v[start + w] = u64::EMPTY,
        }
        true
    }

    /// Whether the array holds `line` (no LRU update): a way holds it and
    /// the set's pending fresh lines do not push it out.
    pub(super) fn contains(&self, line: u64) -> bool {
        let s = (line & self.set_mask) as usize;
        let tag = line >> self.set_bits;
        match self.way_of(s * self.ways, tag) {
            Some(w) => position_of(self.recency[s], w) + (self.pending[s] as usize) < self.ways,
            None => false,
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
                let rot = if k == 0 {
                    r
                } else {
                    ((r << (4 * k)) | (r >> (4 * (ways - k)))) & low(ways)
                };
                for p in 0..ways {
                    assert_eq!(position_of(rot, way_at(rot, p)), p, "ways {ways} rotation {k}");
                }
            }
        }
    }

    #[test]
    fn promote_moves_one_way_to_the_front() {
        let r = identity(4); // ways 0,1,2,3 at positions 0..3
        assert_eq!(promote(r, 2, 2), 0x3102);
        assert_eq!(promote(r, 0, 0), r);
        assert_eq!(promote(identity(16), 15, 15), 0xEDCB_A987_6543_210F);
    }
}
