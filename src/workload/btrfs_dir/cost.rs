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
//! L1 hits stand for the instruction path (one per load the code makes),
//! so they are priced at `hit_ns x work_scale`: `work_scale` is 1 except
//! on a host whose one knob is fitted there (the lab host's, fitted on an
//! XFS allocation time, see scenarios/lab/xfs-alloc-100000.toml). The
//! hits of an inner loop's body ([`Lines::iterated`]: a batch's items,
//! shifted offsets, probes, moved lines) are priced at `hit_ns`.
//!
//! Two windows are priced. The whole `btrfs_delete_delayed_items` call
//! ([`DelayedCost::delete_ps`], what case 3's bpftrace timed), and the
//! lab's window of one deletion batch ([`DelayedCost::window_ps`]): from
//! the `btrfs_tree_lock` tracepoint of the search's root lock to the
//! `btrfs_space_reservation` release tracepoint in
//! `btrfs_batch_delete_items`, which fires after `btrfs_del_items` and
//! before `btrfs_block_rsv_release` and the items' release loop (6.x,
//! fs/btrfs/delayed-inode.c). With `lock_tracepoints` the lab's lock
//! tracepoints fire once per block visited ([`TRACE_EVENT`]; the root
//! lock's event after its timestamp and the release event before its own
//! make about one more, counted as the root's).
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
    /// A load or store hitting L1 in per-call or per-level code
    /// (`hit_ns x work_scale`).
    pub hit_ps: u64,
    /// A load or store hitting L1 in an inner loop's body (`hit_ns`; see
    /// [`Lines::iterated`]).
    pub loop_hit_ps: u64,
    /// A line last written by another core of the same LLC
    /// (`same_llc_ns`).
    pub xfer_ps: u64,
    /// A line from local DRAM (`memory_ns`).
    pub miss_ps: u64,
    /// A locked read-modify-write on a held line (`atomic_ns`).
    pub atomic_ps: u64,
}

impl LinePrices {
    /// The prices of a machine profile, L1 hits scaled by `work_scale`
    /// (validated finite and positive).
    pub fn from_profile(p: &MachineProfile, work_scale: f64) -> Self {
        let ps = crate::machine::ns_to_ps;
        LinePrices {
            hit_ps: ps(p.hit_ns * work_scale),
            loop_hit_ps: ps(p.hit_ns),
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
    /// Whether this is the body of an inner loop whose trip count grows
    /// with the data (a batch's items, a leaf's shifted offsets, the
    /// binary search's probes, memmoved lines): after its first turns its
    /// code runs from a hot instruction cache with trained branches, so
    /// its hits are priced at `hit_ns`, without `work_scale`. Per-batch
    /// and per-level work (a search's 2-4 levels) is not iterated.
    pub iterated: bool,
}

impl Lines {
    /// The event's price, ps.
    pub fn price(&self, p: &LinePrices) -> u64 {
        let hit = if self.iterated { p.loop_hit_ps } else { p.hit_ps };
        self.hits * hit + self.xfers * p.xfer_ps + self.misses * p.miss_ps + self.atomics * p.atomic_ps
    }
}

/// One tree block visited by `btrfs_search_slot`: `btrfs_tree_lock` and
/// the unlock at `btrfs_release_path` (rwsem: 2 atomics, the lock word
/// last taken by the syscall thread's own tree operations: 1 transfer);
/// `find_extent_buffer` (xarray walk, 3 hits, `atomic_inc_not_zero` on
/// the refs and `free_extent_buffer` at release: 2 atomics); the header
/// (`nritems`, `level`, `generation` for `should_cow_block`): 1 transfer.
/// The instruction path of the level (6.x fs/btrfs/ctree.c): the loop
/// body of `btrfs_search_slot` (`btrfs_header_level`, the `cow` and
/// `should_cow_block` tests on the transaction, generation and root
/// flags, about 15 loads), `search_for_key_slot` and the set-up of
/// `btrfs_bin_search` (about 8), for a node `setup_nodes_for_search`
/// (the `nritems` thresholds, about 6) and `read_block_for_search`
/// (`btrfs_node_blockptr` / `btrfs_node_ptr_generation`, the xarray
/// descent of `find_extent_buffer`, `btrfs_buffer_uptodate`,
/// `btrfs_verify_level_key`: about 16), `unlock_up` over the path's
/// levels (about 10): about 55 loads more.
pub const BLOCK_VISIT: Lines = Lines {
    hits: 3 + 55,
    xfers: 2,
    misses: 0,
    atomics: 2,
    iterated: false,
};

/// One key comparison of `btrfs_bin_search`: the key at the probed slot
/// (a different line per probe, written by whoever changed the block
/// last: 1 transfer) and the extent-buffer page lookup and key copy
/// (`read_extent_buffer` into a stack key: 2 hits); the probe's own
/// instructions (6.x: the slot's offset, `get_eb_folio_index` and
/// `get_eb_offset_in_folio`, the folio address, the boundary test,
/// `btrfs_comp_keys` over objectid, type and offset, the halving: about
/// 10 loads).
pub const KEY_COMPARE: Lines = Lines {
    hits: 2 + 10,
    xfers: 1,
    misses: 0,
    atomics: 0,
    iterated: true,
};

/// 64 bytes memmoved inside a leaf (`memmove_extent_buffer`, a prefetched
/// stream): one load and one store.
pub const MOVE_LINE: Lines = Lines {
    hits: 2,
    xfers: 0,
    misses: 0,
    atomics: 0,
    iterated: true,
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
    iterated: false,
};

/// `btrfs_del_leaf`: `btrfs_del_ptr` in the parent and
/// `btrfs_free_tree_block` (a delayed ref: about 10 lines and 4 atomics).
pub const LEAF_FREE: Lines = Lines {
    hits: 0,
    xfers: 0,
    misses: 10,
    atomics: 4,
    iterated: false,
};

/// Per batch, the lines of the delayed-item loop outside the lab's
/// window: `node->mutex` lock and unlock (2 atomics; the mutex line last
/// taken by the syscall thread queueing items: 1 transfer); the first
/// pending item (`rb_first_cached`, the item written by the syscall
/// thread: 1 transfer); `btrfs_mark_buffer_dirty` (2 atomics) and the
/// path's slots (4 hits); the instructions of the loop turn, the key set
/// up for the search, `btrfs_search_slot`'s entry before the root lock
/// and `btrfs_release_path` over the levels (about 36 loads).
pub const BATCH_FIXED: Lines = Lines {
    hits: 4 + 36,
    xfers: 2,
    misses: 0,
    atomics: 4,
    iterated: false,
};

/// Per batch, inside the lab's window: `btrfs_batch_delete_items`' set-up
/// (`btrfs_header_nritems`, the list head, the first reservation) and
/// `btrfs_del_items` without its per-item loops (`leaf_data_end`, the
/// last item's offset, two `memmove_extent_buffer` calls' set-up,
/// `btrfs_set_header_nritems`, `leaf_space_used`, the one-third test),
/// then the tracepoint's argument set-up: about 50 loads.
pub const DEL_ITEMS: Lines = Lines {
    hits: 50,
    xfers: 0,
    misses: 0,
    atomics: 0,
    iterated: false,
};

/// Per item of a batch, inside the lab's window: `__btrfs_next_delayed_item`
/// (`rb_next`) and the item's key (1 transfer: the item was written by the
/// syscall thread's CPU), `btrfs_item_key_to_cpu` of the leaf's next slot,
/// `btrfs_comp_cpu_keys`, `list_add_tail`, the reservation sum, and the
/// item's share of `btrfs_del_items`' size sum (`btrfs_item_size`): about
/// 22 loads.
pub const ITEM_COLLECT: Lines = Lines {
    hits: 22,
    xfers: 1,
    misses: 0,
    atomics: 0,
    iterated: true,
};

/// One item after the deleted range, whose data offset `btrfs_del_items`
/// rewrites (`btrfs_token_item_offset` and `btrfs_set_token_item_offset`,
/// each checking the token's folio): about 12 loads and stores.
pub const ITEM_SHIFT: Lines = Lines {
    hits: 12,
    xfers: 0,
    misses: 0,
    atomics: 0,
    iterated: true,
};

/// Per delayed item released, outside the lab's window:
/// `btrfs_delayed_item_release_metadata` -> `btrfs_block_rsv_release`
/// (the delayed and the global block-rsv spinlocks, both also taken by the
/// syscall thread: 2 atomics, 2 transfers); `rb_erase_cached` (the node,
/// parent and sibling lines: 3 transfers); `finish_one_item`
/// (`atomic_inc_return(items_seq)` and `atomic_dec_return(items)` on a
/// line the syscall thread increments: 2 atomics, 1 transfer, and the
/// waitqueue check: 1 hit); `refcount_dec_and_test` (1 atomic); `kfree`
/// of a 112-byte item allocated on the other CPU (SLUB `__slab_free`: the
/// slab's struct and freelist, 2 transfers, 1 `cmpxchg`); the instructions
/// of those calls and of `list_del` (about 48 loads).
pub const ITEM_RELEASE: Lines = Lines {
    hits: 1 + 48,
    xfers: 8,
    misses: 0,
    atomics: 6,
    iterated: true,
};

/// A sibling leaf read and locked by `push_leaf_left` / `push_leaf_right`
/// (the thin-leaf merge of `btrfs_del_items`, 6.x fs/btrfs/ctree.c),
/// whether or not items then move: `btrfs_read_node_slot` (the parent's
/// block pointer and generation, `read_tree_block` ->
/// `find_extent_buffer`: the buffer xarray walk and
/// `atomic_inc_not_zero` of its refs, `btrfs_buffer_uptodate`, the
/// level and first-key checks: about 40 loads, 1 atomic),
/// `__btrfs_tree_lock` (`down_write` on the buffer's rwsem: 1 atomic,
/// about 8 loads), `btrfs_leaf_free_space` (`leaf_space_used`: nritems
/// and two item offsets, about 10 loads), and on the way out
/// `btrfs_tree_unlock` (`up_write`: 1 atomic) and `free_extent_buffer`
/// (the refs `cmpxchg` loop: 1 atomic), about 12 loads. The sibling
/// was written by this CPU's earlier batches of the flush: no transfer.
/// Its copy on write is counted apart (`cow_blocks`). With the lab's
/// lock tracepoints, the lock fires one more event.
pub const SIBLING_LOCK: Lines = Lines {
    hits: 40 + 8 + 10 + 12,
    xfers: 0,
    misses: 0,
    atomics: 4,
    iterated: false,
};

/// A push that moves items, besides its sibling ([`SIBLING_LOCK`]), the
/// bytes it copies (priced as moved lines) and the offsets it rewrites
/// ([`ITEM_SHIFT`] each): `check_sibling_keys` (the last key of the left
/// and the first of the right leaf, a compare: about 20 loads), the set-up
/// of the two copies and two memmoves (`leaf_data_end`, item offsets and
/// sizes, `copy_leaf_items`/`copy_leaf_data`/`memmove_leaf_*` entries:
/// about 30 loads), `btrfs_set_header_nritems` twice,
/// `btrfs_mark_buffer_dirty` of both leaves (already dirty after their
/// copy on write: a flag test each) and the parent
/// (`btrfs_set_node_key`, or `fixup_low_keys` one level up for a left
/// push: about 25 loads), the path's slot updates: about 85 loads.
pub const PUSH_FIXED: Lines = Lines {
    hits: 20 + 30 + 6 + 25 + 4,
    xfers: 0,
    misses: 0,
    atomics: 0,
    iterated: false,
};

/// One item a push moves, in the loop that counts what fits
/// (`btrfs_item_size` through the buffer's folio, the free-space compare,
/// the slot tests): about 8 loads.
pub const PUSH_ITEM: Lines = Lines {
    hits: 8,
    xfers: 0,
    misses: 0,
    atomics: 0,
    iterated: true,
};

/// One enabled tracepoint firing ([`crate::kernel::tracing::TRACE_EVENT_LOADS`]).
pub const TRACE_EVENT: Lines = Lines {
    hits: crate::kernel::tracing::TRACE_EVENT_LOADS as u64,
    xfers: 0,
    misses: 0,
    atomics: 0,
    iterated: false,
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
    /// Whether the lab's `btrfs_tree_lock` / `btrfs_tree_read_lock`
    /// tracepoints are enabled (one [`TRACE_EVENT`] per block visited).
    pub lock_tracepoints: bool,
}

impl DelayedCost {
    /// Time of the lab's window summed over the batches of `s`, ps: the
    /// search from its root lock, the batch's collection and
    /// `btrfs_del_items`, up to the release tracepoint.
    pub fn window_ps(&self, s: &DeleteRunStats) -> Result<u128, ModelError> {
        let p = &self.prices;
        let visits = s.node_visits + s.leaf_visits;
        let copy = u64::from(self.nodesize / 64) * MOVE_LINE.price(p);
        let trace = if self.lock_tracepoints { TRACE_EVENT.price(p) } else { 0 };
        let terms = [
            (visits, BLOCK_VISIT.price(p) + trace),
            (s.key_compares, KEY_COMPARE.price(p)),
            (s.bytes_moved.div_ceil(64), MOVE_LINE.price(p)),
            (s.cow_blocks, copy + COW_ALLOC.price(p)),
            (s.leaves_freed, LEAF_FREE.price(p)),
            (s.batches, DEL_ITEMS.price(p)),
            (s.items_released - s.not_found.min(s.items_released), ITEM_COLLECT.price(p)),
            (s.items_shifted + s.push_offsets, ITEM_SHIFT.price(p)),
            (s.sibling_reads, SIBLING_LOCK.price(p) + trace),
            (s.leaf_pushes, PUSH_FIXED.price(p)),
            (s.items_pushed, PUSH_ITEM.price(p)),
        ];
        total(&terms, "btrfs_dir: time of the delayed-deletion batches' window in ps")
    }

    /// Time in `btrfs_delete_delayed_items` for these counts, ps: the
    /// batches' windows plus each batch's loop turn and the fitted
    /// per-batch cost, and each item's release.
    pub fn delete_ps(&self, s: &DeleteRunStats) -> Result<u128, ModelError> {
        let p = &self.prices;
        let window = self.window_ps(s)?;
        let terms = [
            (s.batches, BATCH_FIXED.price(p) + self.batch_overhead_ps),
            (s.items_released, ITEM_RELEASE.price(p)),
        ];
        total(&terms, "btrfs_dir: time of the delayed-deletion function in ps")?
            .checked_add(window)
            .ok_or(ModelError::Overflow("btrfs_dir: time of the delayed-deletion function in ps"))
    }

    /// Time in `btrfs_insert_delayed_items` for these counts, ps; the
    /// bytes written for the new items are priced as moved lines.
    pub fn insert_ps(&self, s: &InsertRunStats) -> Result<u128, ModelError> {
        let p = &self.prices;
        let copy = u64::from(self.nodesize / 64) * MOVE_LINE.price(p);
        let terms = [
            (s.node_visits + s.leaf_visits, BLOCK_VISIT.price(p)),
            (s.key_compares, KEY_COMPARE.price(p)),
            ((s.bytes_moved + s.bytes_inserted).div_ceil(64), MOVE_LINE.price(p)),
            (s.cow_blocks, copy + COW_ALLOC.price(p)),
            (s.batches, BATCH_FIXED.price(p) + self.batch_overhead_ps),
            (s.items, ITEM_COLLECT.price(p) + ITEM_RELEASE.price(p)),
        ];
        total(&terms, "btrfs_dir: time of the delayed-insertion function in ps")
    }
}

/// Sum of count x unit price in `u128`, failing on overflow.
fn total(terms: &[(u64, u64)], what: &'static str) -> Result<u128, ModelError> {
    terms.iter().try_fold(0u128, |sum, &(c, u)| {
        u128::from(c)
            .checked_mul(u128::from(u))
            .and_then(|t| sum.checked_add(t))
            .ok_or(ModelError::Overflow(what))
    })
}
