//! A fixed, deterministic access pattern shaped like case 2
//! (`scenarios/btrfs-inode-index.toml`) for timing the cache model alone
//! (`cargo bench --bench cache`, `fsmeta bench`), on the cache geometry of
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

use crate::machine::cache::{CacheConfig, CacheError, Hierarchy, LevelConfig};

const THREADS: u64 = 12;
const OBJ_BYTES: u64 = 1072;
const SLAB_BASE: u64 = 1 << 40;
const SLAB_SPAN: u64 = 1 << 36;

/// The hierarchy of `scenarios/machines/spr-12vcpu.toml`, cold.
pub fn spr() -> Result<Hierarchy, CacheError> {
    let level = |size_bytes, ways| LevelConfig { size_bytes, ways };
    Hierarchy::new(&CacheConfig {
        l1d: level(48 * 1024, 12),
        l2: level(2 << 20, 16),
        llc: level(64 << 20, 16),
        core_socket: vec![0; 6],
    })
}

/// Byte address of global object `g` (thread g mod 12, its (g / 12)-th object).
fn object(g: u64) -> u64 {
    SLAB_BASE + (g % THREADS) * SLAB_SPAN + (g / THREADS) * OBJ_BYTES
}

/// Runs `creates` creates on `h` (fresh caches from [`spr`]); returns the
/// accesses made and the L1 misses counted (so the work cannot be
/// optimised away).
pub fn run(h: &mut Hierarchy, creates: u64) -> (u64, u64) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_counts_its_accesses_and_misses() {
        let mut h = spr().expect("the spr geometry is valid");
        // 17 writes per create, plus 2 reads per level of the spine
        // (height of g: 0, 1, 2, 2 for g = 0..4).
        let (accesses, l1_misses) = run(&mut h, 4);
        assert_eq!(accesses, 4 * 17 + 2 * (1 + 2 + 2));
        assert_eq!(h.totals().accesses, accesses);
        assert!(l1_misses >= 4 * 17, "every new object's line misses: {l1_misses}");
    }
}
