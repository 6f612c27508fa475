//! The two moves `btrfs_del_items` (6.18 fs/btrfs/ctree.c) makes inside
//! a leaf, as the kernel's `__memmove` (arch/x86/lib/memmove_64.S) runs
//! them, in ns per 64 bytes moved with the leaf in L1d:
//!
//! - **backward**: the data of the items after the deleted ones moves up
//!   by the deleted size (`memmove_leaf_data`, destination above the
//!   source, overlapping). `__memmove` copies it from the top in 32-byte
//!   turns, four 8-byte loads and then four stores (label 8; the
//!   `std; rep movsq` path needs 680 bytes or more *and* the same low
//!   address byte on both sides, which a shift by an item's size almost
//!   never gives). Measured by [`BACK_BYTES`] bytes moved up by
//!   [`BACK_SHIFT`].
//! - **forward**: their item headers move down by the deleted headers
//!   (`memmove_leaf_items`, destination below the source). On a CPU with
//!   fast short `rep movsb` (`fsrm`) or enhanced `rep movsb` (`erms`, 32
//!   bytes or more) `__memmove` runs `rep movsb` (its `ALTERNATIVE_2`);
//!   without either, 32-byte turns from the bottom, as above. A `rep
//!   movsb` whose destination is less than 64 bytes below its source
//!   leaves the fast-string path (a hand check on the Xeon family 6 model
//!   207 VM, 2,950 bytes: 17-19 ns per 64 bytes at a distance of 25, 32,
//!   50 or 63 bytes, 0.41 at 64 or 75). One deleted item's header is 25
//!   bytes and two are 50, so a one- or two-item deletion batch moves its
//!   headers the slow way ([`forward_near`], [`NEAR_SHIFT`]), a batch of
//!   three or more the fast way ([`forward_far`], [`FAR_SHIFT`]).
//!   [`FORWARD_BYTES`] bytes a move, about the headers after the slot in
//!   a half-full leaf.
//!
//! Each sample times [`MOVES`] moves of one kind over one buffer (the
//! same move each time) and is `elapsed / (moves x bytes / 64)`. x86-64 only: elsewhere the kernel's
//! `memmove` is other code, and nothing is measured.

use std::hint::black_box;
use std::time::Instant;

/// Bytes of item data moved up per backward move (about 118 dir-index
/// items of 41 bytes).
pub const BACK_BYTES: usize = 4_800;
/// How far the backward move goes, bytes (one dir-index item's data).
pub const BACK_SHIFT: usize = 41;
/// Bytes of item headers moved down per forward move (118 headers).
pub const FORWARD_BYTES: usize = 2_950;
/// One item header (`struct btrfs_item`, 25 bytes): a one-item batch's
/// forward distance.
pub const NEAR_SHIFT: usize = 25;
/// Three item headers: the shortest distance a batch gives at or past
/// [`crate::machine::profile::FAST_STRING_DISTANCE`].
pub const FAR_SHIFT: usize = 75;
/// Moves per sample.
pub const MOVES: usize = 20_000;

/// How `__memmove` copies forward on this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// `rep movsb` (the CPU flags `fsrm` or `erms`).
    RepMovsb,
    /// 32-byte turns of four loads and four stores.
    Turns,
}

impl Forward {
    /// The forward copy `__memmove` patches in for the flags of the first
    /// CPU in /proc/cpuinfo text `cpuinfo`.
    pub fn of_cpuinfo(cpuinfo: &str) -> Forward {
        let first = cpuinfo.split("\n\n").next().unwrap_or("");
        let fast = first.lines().any(|l| {
            l.split_once(':')
                .is_some_and(|(k, v)| k.trim() == "flags" && v.split_whitespace().any(|f| f == "fsrm" || f == "erms"))
        });
        if fast { Forward::RepMovsb } else { Forward::Turns }
    }

    /// What the profile's note says the forward moves ran.
    pub fn name(self) -> &'static str {
        match self {
            Forward::RepMovsb => "rep movsb (fsrm or erms)",
            Forward::Turns => "32-byte turns (no fsrm, no erms)",
        }
    }
}

/// `n` samples of ns per 64 bytes of the backward move, on the calling
/// thread (pin it first); none off x86-64.
pub fn backward(n: usize) -> Vec<f64> {
    samples(n, BACK_BYTES, |buf| turns_backward(buf, 0, BACK_SHIFT, BACK_BYTES))
}

/// `n` samples of ns per 64 bytes of the forward move down by
/// [`NEAR_SHIFT`], made as `how`.
pub fn forward_near(n: usize, how: Forward) -> Vec<f64> {
    samples(n, FORWARD_BYTES, |buf| copy_forward(buf, NEAR_SHIFT, 0, FORWARD_BYTES, how))
}

/// `n` samples of ns per 64 bytes of the forward move down by
/// [`FAR_SHIFT`], made as `how`.
pub fn forward_far(n: usize, how: Forward) -> Vec<f64> {
    samples(n, FORWARD_BYTES, |buf| copy_forward(buf, FAR_SHIFT, 0, FORWARD_BYTES, how))
}

/// Times [`MOVES`] calls of `one` (the same move each time: what the
/// bytes hold does not change what a move costs) on a 16 KiB buffer (a
/// leaf), warmed first; ns per 64 bytes of `bytes` a call. None off
/// x86-64.
fn samples(n: usize, bytes: usize, one: impl Fn(&mut [u8])) -> Vec<f64> {
    if !cfg!(target_arch = "x86_64") {
        return Vec::new();
    }
    let mut buf: Vec<u8> = (0..16_384).map(|i| (i * 7) as u8).collect();
    for _ in 0..MOVES / 10 {
        one(&mut buf);
    }
    (0..n)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..MOVES {
                one(&mut buf);
            }
            black_box(&buf);
            t0.elapsed().as_nanos() as f64 / (MOVES as f64 * bytes as f64 / 64.0)
        })
        .collect()
}

/// Copies `len` bytes from `buf[src..]` to `buf[dst..]` (`dst > src`,
/// overlapping) from the top, 32 bytes a turn: four 8-byte loads, then
/// four stores; the tail under 32 bytes by `ptr::copy` (`__memmove`
/// finishes with overlapping 8- or 16-byte pairs; one tail a move).
/// `#[inline(never)]`: one copy of the loop, the same code each sample.
#[inline(never)]
fn turns_backward(buf: &mut [u8], src: usize, dst: usize, len: usize) {
    assert!(src.max(dst) + len <= buf.len());
    let p = buf.as_mut_ptr();
    let mut k = len;
    // SAFETY: every access is an unaligned 8-byte read or write inside
    // `buf[src..src + len]` or `buf[dst..dst + len]` (k >= 32 before each
    // turn, so k - 32 >= 0), both in bounds by the assertion above.
    unsafe {
        while k >= 32 {
            k -= 32;
            let s = p.add(src + k);
            let d = p.add(dst + k);
            let a = s.add(24).cast::<u64>().read_unaligned();
            let b = s.add(16).cast::<u64>().read_unaligned();
            let c = s.add(8).cast::<u64>().read_unaligned();
            let e = s.cast::<u64>().read_unaligned();
            d.add(24).cast::<u64>().write_unaligned(a);
            d.add(16).cast::<u64>().write_unaligned(b);
            d.add(8).cast::<u64>().write_unaligned(c);
            d.cast::<u64>().write_unaligned(e);
        }
        std::ptr::copy(p.add(src), p.add(dst), k);
    }
}

/// As [`turns_backward`], from the bottom (`dst < src`).
#[inline(never)]
fn turns_forward(buf: &mut [u8], src: usize, dst: usize, len: usize) {
    assert!(src.max(dst) + len <= buf.len());
    let p = buf.as_mut_ptr();
    let mut k = 0;
    // SAFETY: as in `turns_backward`, every access stays inside the two
    // ranges (k + 32 <= len in each turn).
    unsafe {
        while k + 32 <= len {
            let s = p.add(src + k);
            let d = p.add(dst + k);
            let a = s.cast::<u64>().read_unaligned();
            let b = s.add(8).cast::<u64>().read_unaligned();
            let c = s.add(16).cast::<u64>().read_unaligned();
            let e = s.add(24).cast::<u64>().read_unaligned();
            d.cast::<u64>().write_unaligned(a);
            d.add(8).cast::<u64>().write_unaligned(b);
            d.add(16).cast::<u64>().write_unaligned(c);
            d.add(24).cast::<u64>().write_unaligned(e);
            k += 32;
        }
        std::ptr::copy(p.add(src + k), p.add(dst + k), len - k);
    }
}

/// The forward copy `__memmove` makes on this CPU (`how`).
fn copy_forward(buf: &mut [u8], src: usize, dst: usize, len: usize, how: Forward) {
    match how {
        Forward::RepMovsb => rep_movsb(buf, src, dst, len),
        Forward::Turns => turns_forward(buf, src, dst, len),
    }
}

/// `rep movsb` of `len` bytes from `buf[src..]` to `buf[dst..]`.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn rep_movsb(buf: &mut [u8], src: usize, dst: usize, len: usize) {
    assert!(src.max(dst) + len <= buf.len());
    let p = buf.as_mut_ptr();
    // SAFETY: `rep movsb` with the direction flag clear (the ABI's
    // state) copies `len` bytes upward from `p + src` to `p + dst`, both
    // ranges inside `buf` by the assertion; it clobbers rcx, rsi, rdi.
    unsafe {
        std::arch::asm!(
            "rep movsb",
            inout("rcx") len => _,
            inout("rsi") p.add(src).cast_const() => _,
            inout("rdi") p.add(dst) => _,
            options(nostack, preserves_flags)
        );
    }
}

/// Off x86-64 the kernel's `memmove` is other code: the turns stand in
/// (never timed: [`samples`] measures nothing there).
#[cfg(not(target_arch = "x86_64"))]
fn rep_movsb(buf: &mut [u8], src: usize, dst: usize, len: usize) {
    turns_forward(buf, src, dst, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(buf: &[u8], src: usize, dst: usize, len: usize) -> Vec<u8> {
        let mut v = buf.to_vec();
        v.copy_within(src..src + len, dst);
        v
    }

    /// Each copy is a correct overlapping move (what `memmove` promises),
    /// whatever the tail.
    #[test]
    fn each_copy_moves_the_bytes_as_memmove_would() {
        let start: Vec<u8> = (0..512).map(|i| (i * 13 + 1) as u8).collect();
        for len in [0, 7, 31, 32, 33, 100, 255] {
            for shift in [1, 25, 41, 64, 75] {
                let mut b = start.clone();
                turns_backward(&mut b, 10, 10 + shift, len);
                assert_eq!(b, reference(&start, 10, 10 + shift, len), "backward {len} by {shift}");
                for how in [Forward::RepMovsb, Forward::Turns] {
                    let mut f = start.clone();
                    copy_forward(&mut f, 10 + shift, 10, len, how);
                    assert_eq!(f, reference(&start, 10 + shift, 10, len), "{how:?} {len} by {shift}");
                }
            }
        }
    }

    #[test]
    fn the_forward_copy_follows_the_cpu_flags() {
        let cpu = |flags: &str| format!("processor\t: 0\nflags\t\t: fpu {flags} sse2\n\nprocessor\t: 1\nflags\t\t: fpu erms\n");
        assert_eq!(Forward::of_cpuinfo(&cpu("fsrm")), Forward::RepMovsb);
        assert_eq!(Forward::of_cpuinfo(&cpu("erms")), Forward::RepMovsb);
        // Only the first CPU's flags are read; `ermsx` is not `erms`.
        assert_eq!(Forward::of_cpuinfo(&cpu("ermsx")), Forward::Turns);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn each_sample_is_a_positive_finite_price_per_line() {
        for s in [backward(2), forward_near(2, Forward::Turns), forward_far(2, Forward::RepMovsb)] {
            assert_eq!(s.len(), 2);
            assert!(s.iter().all(|v| v.is_finite() && *v > 0.0), "{s:?}");
        }
    }
}
