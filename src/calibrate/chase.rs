//! Latency chains on one CPU: the dependent pointer chase that gives the
//! load latency of each cache level and of DRAM, and a dependent chain of
//! `lock xadd` that gives the uncontended atomic's latency.
//!
//! The chase: a working set of `bytes` is cut into 64-byte lines, and the
//! first word of each line holds the index of the next line to visit, in
//! one random cycle over all lines (Sattolo's shuffle, fixed seed), so
//! every load waits for the one before and the prefetchers cannot guess the
//! next line. The buffer starts on a line boundary and, from 2 MiB up, on a
//! 2 MiB boundary with transparent huge pages requested (`madvise`): the
//! kernel reaches its own structures through a direct map of large pages,
//! so the chase should not add the page walks of 4 KiB pages at sizes the
//! TLB cannot cover. A sample is `elapsed / loads` in ns.

use rand::{RngExt, SeedableRng};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Bytes in a cache line.
pub const LINE: usize = 64;
/// Words (u64) in a line.
const WORDS: usize = LINE / 8;
/// Huge page size asked for by `madvise(MADV_HUGEPAGE)`.
pub(super) const HUGE: usize = 2 << 20;

/// A random cyclic chase over the lines of a working set.
#[derive(Debug)]
pub struct Chase {
    words: Vec<u64>,
    /// Word index of the first line (aligned).
    base: usize,
    lines: usize,
    /// Whether huge pages were requested and the kernel accepted the advice.
    pub huge_pages: bool,
}

impl Chase {
    /// A chase over `bytes` (rounded down to whole lines, at least 2 lines).
    pub fn new(bytes: usize) -> Chase {
        let lines = (bytes / LINE).max(2);
        let align = if lines * LINE >= HUGE { HUGE } else { LINE };
        let (mut words, base, huge_pages) = aligned_words(lines * WORDS, align);
        let mut order: Vec<u32> = (0..lines as u32).collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x0063_6861_7365);
        for i in (1..lines).rev() {
            let j = rng.random_range(0..i);
            order.swap(i, j);
        }
        // Sattolo's shuffle makes `i -> order[i]` one cycle over all lines.
        for (i, &next) in order.iter().enumerate() {
            words[base + i * WORDS] = (base + next as usize * WORDS) as u64;
        }
        Chase {
            words,
            base,
            lines,
            huge_pages,
        }
    }

    /// Lines in the working set.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Loads until the chase is back at its first line (at most
    /// `lines()` + 1): the length of the cycle it follows.
    pub fn cycle_length(&self) -> usize {
        let mut i = self.base;
        for n in 1..=self.lines + 1 {
            i = self.words[i] as usize;
            if i == self.base {
                return n;
            }
        }
        self.lines + 1
    }

    /// Follows `loads` links from the first line; returns where it ended.
    fn run(&self, loads: u64) -> usize {
        self.run_from(self.base, loads)
    }

    /// Follows `loads` links from word `i` (a line of the cycle); returns
    /// where it ended.
    fn run_from(&self, mut i: usize, loads: u64) -> usize {
        for _ in 0..loads {
            i = self.words[i] as usize;
        }
        i
    }

    /// Where a walk starts: the first line (for [`Chase::time_from`]).
    pub fn start(&self) -> usize {
        self.base
    }

    /// `samples` timings of `loads` dependent loads each, with no warm-up
    /// pass, starting at `*at` (from [`Chase::start`] or an earlier call)
    /// and leaving `*at` where the walk stopped: successive samples and
    /// calls go on along the cycle, so they meet lines no recent walk
    /// touched, where [`Chase::time`] times the same first lines again.
    /// ns per load.
    pub fn time_from(&self, at: &mut usize, loads: u64, samples: usize) -> Vec<f64> {
        (0..samples)
            .map(|_| {
                let t0 = Instant::now();
                *at = black_box(self.run_from(*at, loads));
                t0.elapsed().as_nanos() as f64 / loads as f64
            })
            .collect()
    }

    /// `samples` timings of `loads` dependent loads each, after one
    /// untimed pass; ns per load.
    pub fn time(&self, loads: u64, samples: usize) -> Vec<f64> {
        black_box(self.run(loads.min(self.lines as u64)));
        (0..samples)
            .map(|_| {
                let t0 = Instant::now();
                black_box(self.run(loads));
                t0.elapsed().as_nanos() as f64 / loads as f64
            })
            .collect()
    }
}

/// A zeroed buffer of at least `words` u64s whose word `base` starts on an
/// `align`-byte boundary, with huge pages asked for from `base` on when
/// `align` is [`HUGE`]: `(buffer, base, whether the kernel took the
/// advice)`.
pub(super) fn aligned_words(words: usize, align: usize) -> (Vec<u64>, usize, bool) {
    let mut buf = vec![0u64; words + 2 * align / 8];
    let addr = buf.as_ptr() as usize;
    let base = (align - addr % align) % align / 8;
    let huge = align == HUGE && advise_huge(&mut buf[base..]);
    (buf, base, huge)
}

/// Asks for transparent huge pages over `words` (whose start is 2 MiB
/// aligned); true if the kernel took the advice.
fn advise_huge(words: &mut [u64]) -> bool {
    let len = words.len() * 8 / HUGE * HUGE;
    if len == 0 {
        return false;
    }
    // SAFETY: the range starts at `words`' first element and is no longer
    // than `words`, which this function borrows mutably; MADV_HUGEPAGE only
    // changes how the kernel backs the pages, never their contents (zero
    // here, untouched), so no Rust reference observes a change.
    let rc = unsafe { libc::madvise(words.as_mut_ptr().cast(), len, libc::MADV_HUGEPAGE) };
    rc == 0
}

/// Loads per chase sample for a working set of `lines`: two passes, at
/// least 2^16 (so the smallest sets are timed over ~0.1 ms) and at most
/// 2^19 (so a DRAM sample stays near 0.1 s at 200 ns per load).
pub fn loads_for(lines: usize) -> u64 {
    (2 * lines as u64).clamp(1 << 16, 1 << 19)
}

/// Working-set sizes from 4 KiB to `max_bytes`, two per octave (`2^k` and
/// `1.5 x 2^k`), ascending.
pub fn sizes(max_bytes: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut s = 4usize << 10;
    while s <= max_bytes {
        out.push(s);
        if s + s / 2 <= max_bytes {
            out.push(s + s / 2);
        }
        s *= 2;
    }
    out
}

/// `samples` timings of `ops` dependent `lock xadd`s (`fetch_add` whose
/// addend depends on the previous result) on a line this CPU owns; ns per
/// operation.
pub fn xadd_chain(ops: u64, samples: usize) -> Vec<f64> {
    #[repr(align(128))]
    struct Own(AtomicU64);
    let line = Own(AtomicU64::new(0));
    let mut d = 1u64;
    (0..samples)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..ops {
                // `r >> 63` is 0 (the counter never reaches 2^63) but the
                // compiler cannot know it: the next addend waits for `r`.
                let r = line.0.fetch_add(d, Ordering::SeqCst);
                d = (r >> 63) | 1;
            }
            t0.elapsed().as_nanos() as f64 / ops as f64
        })
        .collect()
}
