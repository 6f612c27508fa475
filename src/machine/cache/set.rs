//! One set-associative LRU array, laid out for the host's caches.
//!
//! Per set, `ways` tags, most recent first. A tag is the line address
//! without its set bits (`line >> set_bits`), kept in 32 bits while every
//! tag seen fits (half the host memory of 64-bit tags: a 16-way set is one
//! 64-byte host line) and widened to 64 bits, once and for the whole
//! array, by the first line that does not fit. Widening changes no
//! answer: it only changes how the same tags are stored.
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

/// Most ways a level may have (pending stream counts are kept in a byte).
pub(super) const MAX_WAYS: u32 = 255;

/// Largest tag the 32-bit storage holds (the two above are sentinels).
const NARROW_MAX: u64 = u32::MAX as u64 - 2;

/// Tags of every set, `ways` per set.
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
    next: u64,
    pending: Vec<u8>,
}

/// Pushes `k` (<= ways) placeholders in at the most-recent end.
#[inline]
fn absorb<T: Tag>(set: &mut [T], k: usize) {
    let mut j = set.len();
    while j > k {
        j -= 1;
        set[j] = set[j - k];
    }
    set[..k].fill(T::FRESH);
}

/// Moves `set[0..i]` to `set[1..=i]` and puts `tag` first: an LRU
/// promotion (i = its way) or fill (i = the last way, whose tag is
/// evicted). A plain loop: for a dozen ways it beats a `memmove` call.
#[inline]
fn to_front<T: Tag>(set: &mut [T], i: usize, tag: T) {
    let mut j = i;
    while j > 0 {
        set[j] = set[j - 1];
        j -= 1;
    }
    set[0] = tag;
}

/// On a hit, moves the tag to most-recent and returns true; on a miss,
/// fills it as most-recent (evicting the least recent way).
#[inline]
fn touch_in<T: Tag>(set: &mut [T], tag: T) -> bool {
    match set.iter().position(|&t| t == tag) {
        Some(i) => {
            to_front(set, i, tag);
            true
        }
        None => {
            to_front(set, set.len() - 1, tag);
            false
        }
    }
}

/// Drops a tag; returns true if it was present.
#[inline]
fn remove_in<T: Tag>(set: &mut [T], tag: T) -> bool {
    match set.iter().position(|&t| t == tag) {
        Some(i) => {
            let last = set.len() - 1;
            for j in i..last {
                set[j] = set[j + 1];
            }
            set[last] = T::EMPTY;
            true
        }
        None => false,
    }
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
        Ok(Self {
            ways: cfg.ways as usize,
            set_bits: sets.trailing_zeros(),
            set_mask: sets - 1,
            tags: Tags::Narrow(vec![u32::EMPTY; (sets * u64::from(cfg.ways)) as usize]),
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

    /// Brings set `s` up to date with the stream; returns its first way.
    #[inline]
    fn sync(&mut self, s: usize) -> usize {
        let start = s * self.ways;
        let k = self.pending[s] as usize;
        if k != 0 {
            self.pending[s] = 0;
            let ways = self.ways;
            match &mut self.tags {
                Tags::Narrow(v) => absorb(&mut v[start..start + ways], k),
                Tags::Wide(v) => absorb(&mut v[start..start + ways], k),
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

    /// An access to `line`: on a hit, moves it to most-recent and returns
    /// true; on a miss, fills it as most-recent, evicting what LRU says,
    /// and returns false.
    #[inline]
    pub(super) fn touch(&mut self, line: u64) -> bool {
        let s = (line & self.set_mask) as usize;
        let tag = line >> self.set_bits;
        let start = self.sync(s);
        let ways = self.ways;
        match &mut self.tags {
            Tags::Narrow(v) if tag <= NARROW_MAX => touch_in(&mut v[start..start + ways], tag as u32),
            Tags::Narrow(_) => {
                self.widen();
                self.touch(line)
            }
            Tags::Wide(v) => touch_in(&mut v[start..start + ways], tag),
        }
    }

    /// Drops a line; returns true if it was present.
    pub(super) fn remove(&mut self, line: u64) -> bool {
        let s = (line & self.set_mask) as usize;
        let tag = line >> self.set_bits;
        let start = self.sync(s);
        let ways = self.ways;
        match &mut self.tags {
            Tags::Narrow(v) => tag <= NARROW_MAX && remove_in(&mut v[start..start + ways], tag as u32),
            Tags::Wide(v) => remove_in(&mut v[start..start + ways], tag),
        }
    }

    /// Whether the array holds `line` (no LRU update).
    pub(super) fn contains(&self, line: u64) -> bool {
        let s = (line & self.set_mask) as usize;
        let tag = line >> self.set_bits;
        let set = s * self.ways..(s + 1) * self.ways;
        let way = match &self.tags {
            Tags::Narrow(v) if tag <= NARROW_MAX => v[set].iter().position(|&t| t == tag as u32),
            Tags::Narrow(_) => None,
            Tags::Wide(v) => v[set].iter().position(|&t| t == tag),
        };
        match way {
            Some(i) => i + (self.pending[s] as usize) < self.ways,
            None => false,
        }
    }
}
