//! Time of the delayed-item functions from their counts: each counted
//! event is a number of cache-line accesses of four kinds, priced by the
//! machine profile, plus one fitted per-batch cost for what no count
//! captures.
//!
//! The four kinds ([`LinePrices`]): a hit in the CPU's own L1
//! (`hit_ns`); a line last written by the other busy CPU, here the
//! unlinking (or creating) thread while the worker flushes, which moves
//! between cores (`same_llc_ns`); a line from DRAM (`memory_ns`); and a
//! locked read-modify-write on a line already held (`atomic_ns`). The
//! counts per event are estimates from the kernel functions named on each
//! constant (S1/S3/S4 of docs/reference/kernel.md section 8.1); they are
//! the same in every scenario.
//!
//! The one fitted cost, `batch_overhead_ns`, is charged per batch (per
//! `btrfs_del_items` or `btrfs_insert_empty_items` call, i.e. per search):
//! the bpftrace kprobe the measurement put on that call (an `int3` trap
//! and a BPF map update per hit), waits for tree locks held by the
//! concurrent syscall thread (deletion searches write-lock levels 0 to 2),
//! and the instruction work of `btrfs_search_slot` and path bookkeeping
//! beyond the lines counted here. It is fitted once, on case 3's old-rule
//! time (docs/reference/cases.md, 9563 us), in btrfs-dir-index-batch.toml.

use crate::kernel::ModelError;
use crate::kernel::btrfs::delayed::{DeleteRunStats, InsertRunStats};
use crate::machine::MachineProfile;

/// Prices of one cache-line access of each kind, ps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinePrices {
    /// A load or store hitting L1 (`hit_ns`).
    pub hit_ps: u64,
    /// A line last written by another core of the same LLC
    /// (`same_llc_ns`).
    pub xfer_ps: u64,
    /// A line from local DRAM (`memory_ns`).
    pub miss_ps: u64,
    /// A locked read-modify-write on a held line (`atomic_ns`).
    pub atomic_ps: u64,
}

impl LinePrices {
    /// The prices of a machine profile.
    pub fn from_profile(p: &MachineProfile) -> Self {
        let ps = crate::machine::ns_to_ps;
        LinePrices {
            hit_ps: ps(p.hit_ns),
            xfer_ps: ps(p.same_llc_ns),
            miss_ps: ps(p.memory_ns),
            atomic_ps: ps(p.atomic_ns),
        }
    }
}

/// Cache-line accesses of one event, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lines {
    /// L1 hits.
    pub hits: u64,
    /// Lines moved from the other busy core.
    pub xfers: u64,
    /// Lines from DRAM.
    pub misses: u64,
    /// Locked read-modify-writes.
    pub atomics: u64,
}

impl Lines {
    /// The event's price, ps.
    pub fn price(&self, p: &LinePrices) -> u64 {
        self.hits * p.hit_ps + self.xfers * p.xfer_ps + self.misses * p.miss_ps + self.atomics * p.atomic_ps
    }
}

/// One tree block visited by `btrfs_search_slot`: `btrfs_tree_lock` and
/// the unlock at `btrfs_release_path` (rwsem: 2 atomics, the lock word
/// last taken by the syscall thread's own tree operations: 1 transfer);
/// `find_extent_buffer` (xarray walk, 3 hits, `atomic_inc_not_zero` on
/// the refs and `free_extent_buffer` at release: 2 atomics); the header
/// (`nritems`, `level`, `generation` for `should_cow_block`): 1 transfer.
pub const BLOCK_VISIT: Lines = Lines {
    hits: 3,
    xfers: 2,
    misses: 0,
    atomics: 2,
};

/// One key comparison of `btrfs_bin_search`: the key at the probed slot
/// (a different line per probe, written by whoever changed the block
/// last: 1 transfer) and the extent-buffer page lookup and key copy
/// (`read_extent_buffer` into a stack key: 2 hits).
pub const KEY_COMPARE: Lines = Lines {
    hits: 2,
    xfers: 1,
    misses: 0,
    atomics: 0,
};

/// 64 bytes memmoved inside a leaf (`memmove_extent_buffer`, a prefetched
/// stream): one load and one store.
pub const MOVE_LINE: Lines = Lines {
    hits: 2,
    xfers: 0,
    misses: 0,
    atomics: 0,
};

/// `btrfs_cow_block` of a block first touched in the transaction, besides
/// the copy (priced as `nodesize / 64` [`MOVE_LINE`]s):
/// `btrfs_alloc_tree_block` (block-rsv spinlock, `find_free_extent` in the
/// block group, a new extent buffer and its pages, a delayed ref: about 30
/// lines from DRAM and 8 atomics) and freeing the old block (a delayed
/// ref: about 10 lines and 2 atomics).
pub const COW_ALLOC: Lines = Lines {
    hits: 0,
    xfers: 0,
    misses: 40,
    atomics: 10,
};

/// `btrfs_del_leaf`: `btrfs_del_ptr` in the parent and
/// `btrfs_free_tree_block` (a delayed ref: about 10 lines and 4 atomics).
pub const LEAF_FREE: Lines = Lines {
    hits: 0,
    xfers: 0,
    misses: 10,
    atomics: 4,
};

/// Per batch, the lines of the delayed-item loop itself: `node->mutex`
/// lock and unlock (2 atomics; the mutex line last taken by the syscall
/// thread queueing items: 1 transfer); the first pending item
/// (`rb_first_cached`, the item written by the syscall thread: 1
/// transfer); `btrfs_mark_buffer_dirty` (2 atomics) and the path's
/// slots (4 hits).
pub const BATCH_FIXED: Lines = Lines {
    hits: 4,
    xfers: 2,
    misses: 0,
    atomics: 4,
};

/// Per delayed item taken into a batch and released: `rb_next` and the
/// item's key (1 transfer: the item was written by the syscall thread's
/// CPU); the leaf key it is matched with (1 hit);
/// `btrfs_delayed_item_release_metadata` -> `btrfs_block_rsv_release`
/// (the delayed and the global block-rsv spinlocks, both also taken by the
/// syscall thread: 2 atomics, 2 transfers); `rb_erase_cached` (the node,
/// parent and sibling lines: 3 transfers); `finish_one_item`
/// (`atomic_inc_return(items_seq)` and `atomic_dec_return(items)` on a
/// line the syscall thread increments: 2 atomics, 1 transfer, and the
/// waitqueue check: 1 hit); `refcount_dec_and_test` (1 atomic); `kfree`
/// of a 112-byte item allocated on the other CPU (SLUB `__slab_free`: the
/// slab's struct and freelist, 2 transfers, 1 `cmpxchg`).
pub const ITEM_RELEASE: Lines = Lines {
    hits: 2,
    xfers: 9,
    misses: 0,
    atomics: 6,
};

/// The price list of the delayed-item functions on one machine, plus the
/// fitted per-batch cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelayedCost {
    /// Line prices of the machine.
    pub prices: LinePrices,
    /// Tree block size, bytes (a COW copies it).
    pub nodesize: u32,
    /// The fitted per-batch cost, ps.
    pub batch_overhead_ps: u64,
}

impl DelayedCost {
    /// Price of one event of each kind, ps: (block visit, key compare,
    /// moved line, COW, leaf free, batch fixed, item release).
    fn unit_ps(&self) -> [u64; 7] {
        let p = &self.prices;
        let copy = u64::from(self.nodesize / 64) * MOVE_LINE.price(p);
        [
            BLOCK_VISIT.price(p),
            KEY_COMPARE.price(p),
            MOVE_LINE.price(p),
            copy + COW_ALLOC.price(p),
            LEAF_FREE.price(p),
            BATCH_FIXED.price(p) + self.batch_overhead_ps,
            ITEM_RELEASE.price(p),
        ]
    }

    /// Time in `btrfs_delete_delayed_items` for these counts, ps.
    pub fn delete_ps(&self, s: &DeleteRunStats) -> Result<u128, ModelError> {
        let counts = [
            s.node_visits + s.leaf_visits,
            s.key_compares,
            s.bytes_moved.div_ceil(64),
            s.cow_blocks,
            s.leaves_freed,
            s.batches,
            s.items_released,
        ];
        total(&counts, &self.unit_ps(), "btrfs_dir: time of the delayed-deletion function in ps")
    }

    /// Time in `btrfs_insert_delayed_items` for these counts, ps; the
    /// bytes written for the new items are priced as moved lines.
    pub fn insert_ps(&self, s: &InsertRunStats) -> Result<u128, ModelError> {
        let counts = [
            s.node_visits + s.leaf_visits,
            s.key_compares,
            (s.bytes_moved + s.bytes_inserted).div_ceil(64),
            s.cow_blocks,
            0,
            s.batches,
            s.items,
        ];
        total(&counts, &self.unit_ps(), "btrfs_dir: time of the delayed-insertion function in ps")
    }
}

/// Sum of count x unit price in `u128`, failing on overflow.
fn total(counts: &[u64; 7], unit: &[u64; 7], what: &'static str) -> Result<u128, ModelError> {
    counts.iter().zip(unit).try_fold(0u128, |sum, (&c, &u)| {
        u128::from(c)
            .checked_mul(u128::from(u))
            .and_then(|t| sum.checked_add(t))
            .ok_or(ModelError::Overflow(what))
    })
}
