//! Issue 34: `hdrhistogram` against our `engine::histogram` on case 2's
//! insert latencies (`scenarios/btrfs-inode-index.toml`, quick mode, the
//! rb-tree variant's 120,000 inserts in the order they completed), from
//! `benches/data/case2-insert-latencies.u32le` (picoseconds, u32
//! little-endian; how it was made is in `benches/data/README.md`).
//!
//! Measured: the cost of recording every sample into a fresh histogram
//! (criterion, thread CPU time, elements = samples), and, printed before
//! the measurements, the percentiles each reports next to the exact ones
//! from the sorted samples (the rank `ceil(q * n)` sample, the rule both
//! use).
//!
//! hdrhistogram is set up as a user of it would for these values: 2
//! significant digits (its resolution closest to ours, 1/128 of a power
//! of two = 0.78%) and 3; both auto-resize off, bounds 1 ps .. 2^32 ps.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fsmeta::engine::histogram::LatencyHistogram;
use fsmeta::measure::timed;
use hdrhistogram::Histogram;
use std::hint::black_box;

fn samples() -> Vec<u64> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/data/case2-insert-latencies.u32le");
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    bytes
        .chunks_exact(4)
        .map(|c| u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect()
}

fn ours(v: &[u64]) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for &x in v {
        h.record(x);
    }
    h
}

fn hdr(v: &[u64], sigfig: u8) -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 1 << 32, sigfig).expect("valid bounds");
    for &x in v {
        // Within the bounds by construction (u32 samples); a value out of
        // them is an error, which this bench would count as a failure.
        h.record(x.max(1)).expect("in bounds");
    }
    h
}

fn percentiles(v: &[u64]) {
    let mut sorted = v.to_vec();
    sorted.sort_unstable();
    let (ours, h2, h3) = (ours(v), hdr(v, 2), hdr(v, 3));
    eprintln!("case 2 rb-tree insert latency, {} samples, ns:", v.len());
    eprintln!(
        "{:>8} {:>12} {:>12} {:>12} {:>12}",
        "q", "exact", "ours", "hdr 2 digits", "hdr 3 digits"
    );
    for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
        let rank = ((q * v.len() as f64).ceil() as usize).max(1);
        let ns = |ps: u64| ps as f64 / 1000.0;
        eprintln!(
            "{q:>8} {:>12.3} {:>12.3} {:>12.3} {:>12.3}",
            ns(sorted[rank - 1]),
            ns(ours.quantile(q)),
            ns(h2.value_at_quantile(q)),
            ns(h3.value_at_quantile(q))
        );
    }
    eprintln!(
        "mean: exact {:.3}, ours {:.3}, hdr 2 digits {:.3}, hdr 3 digits {:.3}",
        v.iter().sum::<u64>() as f64 / v.len() as f64 / 1000.0,
        ours.mean() / 1000.0,
        h2.mean() / 1000.0,
        h3.mean() / 1000.0
    );
}

fn histogram(c: &mut Criterion) {
    let v = samples();
    percentiles(&v);
    let mut g = c.benchmark_group("record_case2");
    g.throughput(Throughput::Elements(v.len() as u64));
    g.bench_function("ours", |b| b.iter_custom(|iters| timed(iters, || ours(black_box(&v)).count())));
    g.bench_function("hdrhistogram_2", |b| {
        b.iter_custom(|iters| timed(iters, || hdr(black_box(&v), 2).len()))
    });
    g.bench_function("hdrhistogram_3", |b| {
        b.iter_custom(|iters| timed(iters, || hdr(black_box(&v), 3).len()))
    });
    g.finish();
}

criterion_group!(benches, histogram);
criterion_main!(benches);
