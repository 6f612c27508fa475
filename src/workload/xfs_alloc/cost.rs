//! Time of one `xfs_alloc_ag_vextent_size` call from what the model
//! counted, priced by the machine profile.
//!
//! Each counted event stands for a stretch of kernel code (6.12, read for
//! this purpose); its work is written as the cache lines it misses, the
//! locked operations it makes and the L1-resident loads of its instruction
//! path, and priced with the profile's `memory_ns`, `atomic_ns` and
//! `hit_ns`. The only cost not derived this way is `record_ns`, the one
//! fitted knob (case 4 `lt`, see `XfsAllocParams::record_ns`).
//!
//! What is not modelled (named so a gap can be read against it): busy
//! extent trimming (`xfs_extent_busy_trim` takes `pagb_lock` and walks the
//! busy rb-tree on every `compute_aligned`; the model has no busy extents),
//! the ftrace function-graph hook of the measured call, and any cache state
//! other than "every btree line cold at the start of the call, warm after".

use crate::kernel::xfs::freespace::BtreeStats;
use crate::machine::{MachineProfile, ns_to_ps};

/// The work of one counted event: lines missed to DRAM, locked
/// read-modify-writes, and L1-resident loads standing for the instruction
/// path (one per load the code makes, roughly one per 3-5 instructions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Work {
    /// Cache lines not in any CPU cache (priced at `memory_ns`).
    pub cold_lines: f64,
    /// Locked operations on lines this CPU holds (priced at `atomic_ns`).
    pub atomics: f64,
    /// Loads that hit L1 (priced at `hit_ns`).
    pub hits: f64,
}

impl Work {
    /// Price in ns on `m`.
    pub fn ns(&self, m: &MachineProfile) -> f64 {
        self.cold_lines * m.memory_ns + self.atomics * m.atomic_ns + self.hits * m.hit_ns
    }
}

/// A cached buffer got by a cursor and released when the cursor leaves it.
/// Get (`xfs_btree_read_buf_block` -> `xfs_trans_read_buf_map`):
/// `xfs_trans_buf_item_match` over the transaction's few items, then
/// `xfs_buf_get_map` -> `xfs_buf_lookup` (rhashtable bucket line, the
/// `xfs_buf` key/hold line), `xfs_buf_try_hold` (`b_lock`), `xfs_buf_find_lock`
/// (`down_trylock` on `b_sema`, a third line), `b_addr`/`b_log_item` (a
/// fourth), `_xfs_trans_bjoin` -> `xfs_buf_item_init` (slab allocation and
/// zeroing of the log item, `xfs_trans_add_item`), `xfs_buf_set_ref`.
/// Release (`xfs_btree_setbuf` / `xfs_btree_del_cursor` ->
/// `xfs_trans_brelse` of a clean buffer): `xfs_trans_del_item`, log item
/// freed, `up(&b_sema)`, `xfs_buf_rele` (`b_lock`, LRU add). Four cold
/// lines (bucket and three of the `xfs_buf`), nine locked operations
/// (hold, trylock, slab alloc, item flag, item flag clear, slab free, up,
/// rele, LRU), about 80 L1 loads (hash, compares, ~240 bytes of log item
/// zeroed, item-list walk, flag tests). The block's own lines are counted
/// apart (`lines_cold`/`lines_warm`).
pub const BUFFER_READ: Work = Work {
    cold_lines: 4.0,
    atomics: 9.0,
    hits: 80.0,
};

/// One probe of the binary search in `xfs_btree_lookup`:
/// `xfs_lookup_get_search_key`, the indirect `key_diff` call
/// (`xfs_cntbt_key_diff`: two `be32_to_cpu` and a subtraction), the branch.
/// About 4 L1 loads (key, ops pointer, return address, search key); the
/// probed line itself is counted apart.
pub const KEY_COMPARE: Work = Work {
    cold_lines: 0.0,
    atomics: 0.0,
    hits: 4.0,
};

/// A cursor made and deleted: `xfs_btree_alloc_cursor` (slab allocation,
/// ~250 bytes zeroed: 4 lines), `xfs_perag_hold`, the field set-up of
/// `xfs_allocbt_init_cursor`; `xfs_btree_del_cursor` (`xfs_perag_put`,
/// slab free; the buffers it drops are in [`BUFFER_READ`]). Four locked
/// operations (two slab, two reference counts), about 30 L1 loads/stores.
pub const CURSOR: Work = Work {
    cold_lines: 0.0,
    atomics: 4.0,
    hits: 30.0,
};

/// One record deleted, inserted or rewritten in a leaf
/// (`xfs_btree_delrec` / `xfs_btree_insrec` / `xfs_btree_update`): the
/// memmove of the records after the slot (half a 75%-full 4 KiB leaf,
/// ~1.5 KiB, 24 lines, in cache after the lookup), `xfs_btree_log_recs` and
/// `xfs_btree_log_block` (two `xfs_trans_log_buf`: bitmap update,
/// `XFS_LI_DIRTY` set with a locked bit operation each), the delrec/insrec
/// bookkeeping. Two locked operations, about 94 L1 loads.
pub const UPDATE: Work = Work {
    cold_lines: 0.0,
    atomics: 2.0,
    hits: 94.0,
};

/// `xfs_alloc_log_agf`: `xfs_btree_offsets` over the AGF field table and
/// one `xfs_trans_log_buf` of the (hot) AGF buffer. One locked operation,
/// about 40 L1 loads.
pub const AGF_LOG: Work = Work {
    cold_lines: 0.0,
    atomics: 1.0,
    hits: 40.0,
};

/// Prices of the counted events in integer ps, fixed for one study.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct EventPrices {
    /// One record read by `xfs_alloc_get_rec` (with the walk's decrement
    /// and compare): the fitted `record_ns`.
    pub record_ps: u64,
    /// [`BUFFER_READ`].
    pub buffer_read_ps: u64,
    /// A btree line touched for the first time in the call (`memory_ns`).
    pub line_cold_ps: u64,
    /// A btree line touched again (`hit_ns`).
    pub line_warm_ps: u64,
    /// [`KEY_COMPARE`].
    pub key_compare_ps: u64,
    /// [`CURSOR`].
    pub cursor_ps: u64,
    /// [`UPDATE`].
    pub update_ps: u64,
    /// [`AGF_LOG`].
    pub agf_log_ps: u64,
}

impl EventPrices {
    /// Prices on machine `m` with the fitted per-record cost `record_ns`.
    pub fn new(m: &MachineProfile, record_ns: f64) -> Self {
        EventPrices {
            record_ps: ns_to_ps(record_ns),
            buffer_read_ps: ns_to_ps(BUFFER_READ.ns(m)),
            line_cold_ps: ns_to_ps(m.memory_ns),
            line_warm_ps: ns_to_ps(m.hit_ns),
            key_compare_ps: ns_to_ps(KEY_COMPARE.ns(m)),
            cursor_ps: ns_to_ps(CURSOR.ns(m)),
            update_ps: ns_to_ps(UPDATE.ns(m)),
            agf_log_ps: ns_to_ps(AGF_LOG.ns(m)),
        }
    }

    /// Pairs of (count, price in ps) for one call's counters, in a fixed
    /// order: records, buffer reads, cold lines, warm lines, key compares,
    /// cursors, updates, AGF logs.
    pub fn terms(&self, s: &BtreeStats) -> [(u64, u64); 8] {
        [
            (s.records_examined, self.record_ps),
            (s.buffer_reads, self.buffer_read_ps),
            (s.lines_cold, self.line_cold_ps),
            (s.lines_warm, self.line_warm_ps),
            (s.keys_compared, self.key_compare_ps),
            (s.cursors, self.cursor_ps),
            (s.updates, self.update_ps),
            (s.agf_logs, self.agf_log_ps),
        ]
    }

    /// Sum of count x price over [`EventPrices::terms`], in `u128` ps.
    pub fn call_ps(&self, s: &BtreeStats) -> u128 {
        self.terms(s).iter().map(|&(n, p)| u128::from(n) * u128::from(p)).sum()
    }
}
