//! What one L1-resident load costs in the body of a hot loop whose turns
//! do not wait on one another: the price of the counted paths' loops
//! whose turns overlap ([`crate::kernel::work::Work::overlapped`]).
//!
//! The pointer chase ([`super::chase`]) prices a load that waits for the
//! one before it (`hit_ns`). A kernel loop such as the by-size walk
//! (`xfs_alloc_ag_vextent_size`: a record decremented to, read, trimmed
//! against the busy tree) turns with its code hot and its branches
//! trained, and its turns' loads take their addresses from registers and
//! the turn's own first loads, not from the turn before: an out-of-order
//! core overlaps them, turn over turn, and the loop runs at the rate the
//! core issues them.
//!
//! The measurement: [`RECORDS`] records of 64 bytes (16 KiB, inside every
//! L1d of the project's hosts), walked from the last to the first as the
//! by-size walk goes; each turn loads [`LOADS_PER_TURN`] fields of its
//! record (volatile: each is one load, none hoisted, merged or
//! vectorised), compares them against a bound and one another, and
//! stores the flags into the record: nothing carries from one turn to the
//! next but the index. About four instructions a load (23 a turn as
//! rustc compiles it for x86-64), what a counted load stands for in the
//! counted paths (src/kernel/work.rs: one per 3-5 instructions). A sample is `elapsed / (turns x loads per turn)`, in
//! ns, [`WALKS`] walks.

use std::hint::black_box;
use std::time::Instant;

/// Records walked per pass (64 bytes each: 16 KiB).
pub const RECORDS: usize = 256;
/// Loads per turn.
pub const LOADS_PER_TURN: usize = 6;
/// Passes over the records per sample.
pub const WALKS: usize = 2_000;

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Record([u32; 16]);

/// `n` samples of ns per load, on the calling thread (pin it first).
pub fn loop_load_ns(n: usize) -> Vec<f64> {
    let mut records: Vec<Record> = (0..RECORDS)
        .map(|i| {
            let mut r = [0u32; 16];
            for (j, f) in r.iter_mut().enumerate() {
                *f = (i * 7 + j * 3) as u32;
            }
            Record(r)
        })
        .collect();
    let bound = black_box(900u32);
    walk(&mut records, bound, WALKS / 10); // warm up: code and lines hot
    (0..n)
        .map(|_| {
            let t0 = Instant::now();
            walk(&mut records, bound, WALKS);
            t0.elapsed().as_nanos() as f64 / (WALKS * RECORDS * LOADS_PER_TURN) as f64
        })
        .collect()
}

/// `walks` passes, last record first. Nothing carries from one turn to
/// the next but the loop's index: each turn's result is stored into its
/// own record. `#[inline(never)]`: one copy of the loop, the same code
/// each sample.
#[inline(never)]
fn walk(records: &mut [Record], bound: u32, walks: usize) {
    for _ in 0..walks {
        for r in records.iter_mut().rev() {
            let p = r.0.as_mut_ptr();
            // SAFETY: `p` points at the 16 initialised u32 of `r`, which
            // this loop borrows mutably; indices 0..6 and 8 are in bounds.
            let (bno, len, lo, hi, a, b) = unsafe {
                (
                    std::ptr::read_volatile(p),
                    std::ptr::read_volatile(p.add(1)),
                    std::ptr::read_volatile(p.add(2)),
                    std::ptr::read_volatile(p.add(3)),
                    std::ptr::read_volatile(p.add(4)),
                    std::ptr::read_volatile(p.add(5)),
                )
            };
            let fits = u32::from(len > bound) | u32::from(bno < lo) << 1;
            let ordered = u32::from(lo < hi) << 2 | u32::from(a.wrapping_add(b) > bound) << 3;
            // SAFETY: as above; index 8 is in bounds.
            unsafe { std::ptr::write_volatile(p.add(8), fits | ordered) };
        }
    }
    black_box(&records);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sample_is_a_positive_finite_price_per_load() {
        let s = loop_load_ns(3);
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(|v| v.is_finite() && *v > 0.0), "{s:?}");
    }
}
