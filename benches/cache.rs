//! Simulated cache accesses per second of the hierarchy (issue 12, "Speed").
//!
//! A fixed, deterministic access pattern shaped like case 2
//! (`scenarios/btrfs-inode-index.toml`) on the cache geometry of
//! `scenarios/machines/spr-12vcpu.toml` (6 cores, L1d 48 KiB 12-way, L2
//! 2 MiB 16-way, one 64 MiB 16-way LLC): 12 threads, two per core, take
//! turns creating files. A create
//!
//! - streams 256 fresh lines through its core's caches (the 16 KiB of
//!   `create_touch_bytes`),
//! - writes the 17 lines of a new 1072-byte object from its thread's slab
//!   (slabs 64 GiB apart from 1 << 40 bytes, as the fsmark workload lays
//!   them out),
//! - walks the right spine of a balanced tree over the objects created so
//!   far (sequential keys: each insert goes down the right edge), reading
//!   two lines per level (the node's line and the key's line), and writes
//!   the node lines of the last two levels (link and recolour).
//!
//! `FSMETA_CACHE_CREATES` overrides the creates per iteration (default
//! 20,000, about 2.2M accesses); throughput is in accesses (criterion's
//! elements/s). Time is the thread's CPU time where Linux reports it
//! (`clock_gettime`, [`fsmeta::measure::timed`]), wall time elsewhere: the machine the
//! figures come from is shared.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fsmeta::machine::cache::{CacheConfig, Hierarchy, LevelConfig};
use fsmeta::measure::timed;

const THREADS: u64 = 12;
const OBJ_BYTES: u64 = 1072;
const SLAB_BASE: u64 = 1 << 40;
const SLAB_SPAN: u64 = 1 << 36;

fn spr() -> Hierarchy {
    let config = CacheConfig {
        l1d: LevelConfig {
            size_bytes: 48 * 1024,
            ways: 12,
        },
        l2: LevelConfig {
            size_bytes: 2 << 20,
            ways: 16,
        },
        llc: LevelConfig {
            size_bytes: 64 << 20,
            ways: 16,
        },
        core_socket: vec![0; 6],
    };
    match Hierarchy::new(&config) {
        Ok(h) => h,
        Err(e) => panic!("bench geometry: {e}"),
    }
}

/// Byte address of global object `g` (thread g mod 12, its (g / 12)-th object).
fn object(g: u64) -> u64 {
    SLAB_BASE + (g % THREADS) * SLAB_SPAN + (g / THREADS) * OBJ_BYTES
}

/// Runs `creates` creates on fresh caches; returns the accesses made and
/// the L1 misses (so the work cannot be optimised away).
fn run(creates: u64) -> (u64, u64) {
    let mut h = spr();
    let mut accesses = 0;
    for g in 0..creates {
        let core = ((g % THREADS) / 2) as usize;
        h.stream_fresh(core, 256);
        let obj = object(g);
        for line in obj / 64..=(obj + OBJ_BYTES - 1) / 64 {
            h.access(core, line, true);
            accesses += 1;
        }
        // The right spine: objects g - 2^k for k from the height down.
        let height = 64 - g.leading_zeros();
        for k in (0..height).rev() {
            let node = object(g - (1 << k));
            let last_two = k < 2;
            h.access(core, (node + 256) / 64, last_two);
            h.access(core, (node + 8) / 64, false);
            accesses += 2;
        }
    }
    (accesses, h.totals().l1_misses)
}

fn cache(c: &mut Criterion) {
    let creates: u64 = std::env::var("FSMETA_CACHE_CREATES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let (accesses, _) = run(creates);
    let mut g = c.benchmark_group("cache");
    g.throughput(Throughput::Elements(accesses));
    g.sample_size(10);
    g.bench_function("case2_pattern", |b| b.iter_custom(|iters| timed(iters, || run(creates))));
    g.finish();
}

criterion_group!(benches, cache);
criterion_main!(benches);
