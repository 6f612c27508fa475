//! A new kernel object's lines initialised where no cache holds them: what
//! a slab constructor's `memset` (`xfs_fs_inode_init_once`, fs/xfs/
//! xfs_super.c) or a fresh object's first stores cost per 64-byte line.
//!
//! The measurement: a region well beyond the last-level cache (the
//! chase's largest working set, 64 MiB to 1 GiB, huge pages asked for as
//! the kernel's direct map has them, every page faulted in first) is cut
//! into [`OBJECT`]-byte objects, visited in one random order (fixed seed),
//! and each is zeroed with `write_bytes` (a `memset`), [`OBJECTS`] per
//! sample. Stores to lines in no cache do not stall the way dependent loads
//! do: the store buffer takes them and the line fills overlap, so a line
//! costs far less than a load from DRAM (`memory_ns`). A sample is
//! `elapsed / (objects x lines per object)` in ns.

use super::chase::{HUGE, LINE, aligned_words};
use rand::{RngExt, SeedableRng};
use std::hint::black_box;
use std::time::Instant;

/// Bytes per object: about a `struct xfs_inode` with its VFS inode.
pub const OBJECT: usize = 1024;
/// Objects zeroed per sample (4 MiB).
pub const OBJECTS: usize = 4096;
/// Smallest and largest region, bytes.
pub const REGION: (usize, usize) = (64 << 20, 1 << 30);

/// `n` samples of ns per line over a region of about `bytes` (clamped to
/// [`REGION`]), on the calling thread (pin it first).
pub fn fresh_line_ns(bytes: usize, n: usize) -> Vec<f64> {
    let region = bytes.clamp(REGION.0, REGION.1) / HUGE * HUGE;
    let (mut words, base, _) = aligned_words(region / 8, HUGE);
    let body = &mut words[base..base + region / 8];
    // Fault every page in (and let the kernel zero it) before timing.
    for page in body.chunks_mut(4096 / 8) {
        page[0] = 1;
    }
    let objects = region / OBJECT;
    let mut order: Vec<u32> = (0..objects as u32).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x0066_7265_7368);
    for i in (1..objects).rev() {
        let j = rng.random_range(0..=i);
        order.swap(i, j);
    }
    let lines = (OBJECT / LINE) as f64;
    let ptr = body.as_mut_ptr().cast::<u8>();
    let mut next = 0usize;
    (0..n)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..OBJECTS {
                let at = order[next % objects] as usize * OBJECT;
                next += 1;
                // SAFETY: `at + OBJECT <= objects x OBJECT <= region`, the
                // length of `body`, which `ptr` points at and this function
                // borrows mutably; bytes have no invalid values.
                unsafe { std::ptr::write_bytes(ptr.add(at), 0, OBJECT) };
                black_box(ptr);
            }
            t0.elapsed().as_nanos() as f64 / (OBJECTS as f64 * lines)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sample_is_a_positive_finite_price_per_line() {
        let s = fresh_line_ns(REGION.0, 3);
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(|v| v.is_finite() && *v > 0.0), "{s:?}");
    }
}
