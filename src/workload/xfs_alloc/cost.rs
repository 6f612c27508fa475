//! Time of one `xfs_alloc_ag_vextent_size` call from what the model
//! counted, priced by the machine profile.
//!
//! Each counted event stands for a stretch of kernel code (6.12, read for
//! this purpose); its work is written as the cache lines it misses, the
//! locked operations it makes and the L1-resident loads of its instruction
//! path, and priced with the profile's `memory_ns`, `atomic_ns` and
//! `hit_ns`. Two costs are not derived this way: the per-record cost, when
//! a scenario gives it as `record_ns` (the one fitted knob of case 4
//! `lt`, see `XfsAllocParams::record_ns`; with `record_ns = "counted"` it
//! is [`RECORD`] priced like the rest), and `work_scale`, the ns per
//! counted instruction-path load as a multiple of `hit_ns` (1 unless a
//! host's one knob is fitted there), which inner loops do not pay
//! ([`Work::iterated`]: records walked, probes, the busy walk); those
//! whose turns overlap ([`Work::overlapped`]: the walk's record steps and
//! busy search) are priced at the profile's measured
//! `levels.loop_load_ns` where it has one.
//!
//! Where lines come from between calls (`between_calls`): `cold` prices
//! every line a call touches first at `memory_ns` (case 4's single call);
//! `l2` / `llc` price the lines an earlier call of the run touched at the
//! profile's `levels.l2_hit_ns` / `levels.llc_hit_ns` (a loop of calls on
//! one AG, as the lab makes).
//!
//! The timed window (`timed_from`): `xfs_alloc_ag_vextent_size` alone, or
//! from the `xfs_alloc_read_agf` tracepoint in `xfs_alloc_fix_freelist`
//! to `xfs_alloc_size_done`, which adds the AGF and AGFL reads and the
//! fix-up's checks ([`HEADER_READ`], [`FIX_FREELIST`]). Tracepoints the
//! measurement enabled (`probes`) cost [`TRACE_EVENT`] each time they fire
//! inside the window.
//!
//! What is not modelled (named so a gap can be read against it): the
//! ftrace function-graph hook of a measured call, a busy-extent flush
//! (`xfs_extent_busy_flush` when every candidate is busy: the model fails
//! the call instead), and the host's instruction cache.

use crate::kernel::xfs::freespace::BtreeStats;
use crate::machine::{MachineProfile, ns_to_ps};

use crate::kernel::work::Tally;
pub use crate::kernel::work::Work;

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
    ..Work::ZERO
};

/// One probe of the binary search in `xfs_btree_lookup`:
/// `xfs_lookup_get_search_key`, the indirect compare
/// (`xfs_cntbt_cmp_key_with_cur` since 6.15, `xfs_cntbt_key_diff`
/// before: two `be32_to_cpu` and a subtraction), the branch. About 4 L1
/// loads (key, ops pointer, return address, search key); the probed line
/// itself is counted apart, and the indirect calls in
/// [`BtreeStats::indirect_calls`]. Returns: `xfs_lookup_get_search_key`
/// and the compare, both frames in `perf` call chains of the lab's
/// lookups on 6.18: 2. A leaf probe's third, `xfs_allocbt_init_key_from_rec`
/// (also a frame there), is not counted: this one price serves node and
/// leaf probes alike, though the cursor tells them apart for their
/// indirect calls.
pub const KEY_COMPARE: Work = Work {
    hits: 4.0,
    iterated: true,
    returns: 2.0,
    ..Work::ZERO
};

/// A cursor made and deleted: `xfs_btree_alloc_cursor` (slab allocation,
/// ~250 bytes zeroed: 4 lines), `xfs_perag_hold`, the field set-up of
/// `xfs_allocbt_init_cursor`; `xfs_btree_del_cursor` (`xfs_perag_put`,
/// slab free; the buffers it drops are in [`BUFFER_READ`]). Four locked
/// operations (two slab, two reference counts), about 30 L1 loads/stores.
pub const CURSOR: Work = Work {
    atomics: 4.0,
    hits: 30.0,
    ..Work::ZERO
};

/// One record deleted, inserted or rewritten in a leaf
/// (`xfs_btree_delrec` / `xfs_btree_insrec` / `xfs_btree_update`): the
/// memmove of the records after the slot (half a 75%-full 4 KiB leaf,
/// ~1.5 KiB, 24 lines, in cache after the lookup), `xfs_btree_log_recs` and
/// `xfs_btree_log_block` (two `xfs_trans_log_buf`: bitmap update,
/// `XFS_LI_DIRTY` set with a locked bit operation each), the delrec/insrec
/// bookkeeping. Two locked operations, about 94 L1 loads.
pub const UPDATE: Work = Work {
    atomics: 2.0,
    hits: 94.0,
    ..Work::ZERO
};

/// `xfs_alloc_log_agf`: `xfs_btree_offsets` over the AGF field table and
/// one `xfs_trans_log_buf` of the (hot) AGF buffer. One locked operation,
/// about 40 L1 loads.
pub const AGF_LOG: Work = Work {
    atomics: 1.0,
    hits: 40.0,
    ..Work::ZERO
};

/// One record step of the by-size walk, counted
/// (`record_ns = "counted"`): `xfs_btree_decrement` inside a leaf (the
/// level's `ptr` decremented and checked, about 8 loads),
/// `xfs_alloc_get_rec` -> `xfs_btree_get_rec` (block from the cursor,
/// `ptr` against `bb_numrecs`, the record's address: about 10 loads),
/// `xfs_alloc_btrec_to_irec` and `xfs_alloc_check_irec` (two `be32` loads,
/// the AG-bounds check against `pag->block_count`: about 8), the cutoff
/// compare, and `xfs_alloc_compute_aligned` (the alignment arithmetic,
/// the `rlen > bestrlen` update: about 14); an 8-byte record is an
/// eighth of a line the walk streams through. `xfs_alloc_compute_aligned`
/// calls
/// `xfs_extent_busy_trim` on every record, busy extents or none: 6.x has
/// no empty-tree test before `spin_lock(&eb_lock)`, so every record pays
/// the call, the lock and its release and the look at the tree's root,
/// about 6 loads more; what a non-empty tree adds is [`BUSY_SEARCH`].
/// About 46 L1 loads and two locked operations: the lock's, and the
/// unlock's `lock cmpxchg` in `__raw_callee_save___pv_queued_spin_unlock`
/// (`PV_UNLOCK_ASM`, arch/x86/include/asm/qspinlock_paravirt.h) on a KVM
/// guest with paravirt spinlocks, every lab host so far (on bare metal
/// the unlock is a plain store).
/// Returns, each a frame in `perf` call chains of the lab's walk on 6.18
/// (`fsmeta lab xfs-alloc`, `perf record -a -g`): `xfs_btree_decrement`,
/// `xfs_btree_readahead` (called every turn, returning at once),
/// `xfs_alloc_get_rec`, `xfs_btree_get_rec`, `xfs_btree_rec_offset`,
/// `xfs_alloc_check_irec`, `xfs_alloc_compute_aligned`,
/// `xfs_extent_busy_trim`, `_raw_spin_lock`, `_raw_spin_unlock` and, on a
/// KVM guest with paravirt spinlocks (every lab host so far),
/// `__raw_callee_save___pv_queued_spin_unlock`: 11
/// (`xfs_btree_get_block`, `xfs_btree_rec_addr` and
/// `xfs_alloc_btrec_to_irec` are inlined: never a frame).
///
/// The walk's turns overlap ([`Work::overlapped`]): a turn's record comes
/// from the cursor's `ptr` (decremented, a register and a store the next
/// turn's load forwards), not from the last record's data; a record
/// trimmed to nothing only sends the loop on (`flen` 0, the next
/// decrement). So do the busy walk's [`BUSY_SEARCH`], [`BUSY_NODE`] and
/// [`BUSY_TRIM`]: each record's descent starts again from the tree's
/// root. Live on the family 23 model 1 host (session 64,
/// `le-busy-quiet` less `le` at 10^4 extents, 9 runs each): 99, 93, 94,
/// 105 and 112 ns a busy record with 16, 64, 256, 1024 and 4096 of them:
/// from 64 to 256 (about two levels more, the objects still in L1) about
/// 1 ns more a record, where [`BUSY_NODE`]'s loads one after another
/// would add 2 x 6 x `hit_ns`, 25 ns at that host's 2.10
/// (docs/lab-hosts.md).
pub const RECORD: Work = Work {
    cold_lines: 0.125,
    atomics: 2.0,
    hits: 46.0,
    iterated: true,
    overlapped: true,
    returns: 11.0,
    ..Work::ZERO
};

/// An AG header read inside the window (`xfs_alloc_read_agf` ->
/// `xfs_read_agf`, and `xfs_alloc_read_agfl`, each `xfs_trans_read_buf`
/// of a cached one-sector buffer): a [`BUFFER_READ`] plus the wrapper's
/// per-AG checks (`xfs_perag_initialised_agf`, the AGF's counters read
/// into the perag on the first read only), about 20 loads more.
pub const HEADER_READ: Work = Work {
    cold_lines: BUFFER_READ.cold_lines,
    atomics: BUFFER_READ.atomics,
    hits: BUFFER_READ.hits + 20.0,
    ..Work::ZERO
};

/// AG header reads in the lab's window: the AGF (`xfs_alloc_read_agf`)
/// and the AGFL (`xfs_alloc_read_agfl`, unconditional in
/// `xfs_alloc_fix_freelist` once the shrink loop is done).
pub const WINDOW_HEADER_READS: u64 = 2;

/// `xfs_alloc_fix_freelist` between the AGF read and the allocation,
/// with a freelist that needs no change: `xfs_alloc_min_freelist` (the
/// two btree heights, about 12 loads), `xfs_alloc_space_available`
/// (reservations, `pagf_freeblks`, `pagf_flcount`, longest: about 30),
/// the shrink and grow loop tests, `xfs_trans_brelse` of the AGFL
/// (counted in [`HEADER_READ`]), then `xfs_alloc_vextent_prepare_ag` and
/// the entry of `xfs_alloc_ag_vextent_size` (about 20). About 62 loads,
/// no locked operation.
pub const FIX_FREELIST: Work = Work { hits: 62.0, ..Work::ZERO };

/// What a non-empty busy tree adds to `xfs_extent_busy_trim` (whose
/// call and lock every record pays, in [`RECORD`]): the loop set-up and
/// exit, the `busy_gen` read: about 12 loads. The nodes it compares
/// against are [`BUSY_NODE`] each, their lines counted apart. No call:
/// no return.
pub const BUSY_SEARCH: Work = Work {
    hits: 12.0,
    iterated: true,
    overlapped: true,
    ..Work::ZERO
};

/// One node of the busy-tree descent: `rb_entry`, `bno` and `length`
/// loads, the two compares, the child pointer: about 6 loads.
pub const BUSY_NODE: Work = Work {
    hits: 6.0,
    iterated: true,
    overlapped: true,
    ..Work::ZERO
};

/// A trimmed candidate: the overlap case analysis and the result stores
/// of `xfs_extent_busy_trim` (about 14 loads); the tracepoint it fires is
/// [`TRACE_EVENT`] when enabled.
pub const BUSY_TRIM: Work = Work {
    hits: 14.0,
    iterated: true,
    overlapped: true,
    ..Work::ZERO
};

/// One enabled tracepoint firing with a filter, into a private
/// instance's ring buffer ([`crate::kernel::tracing::TRACE_EVENT_LOADS`]
/// loads and stores, no locked operation).
pub const TRACE_EVENT: Work = Work {
    hits: crate::kernel::tracing::TRACE_EVENT_LOADS,
    ..Work::ZERO
};

/// [`TRACE_EVENT`] fired once per turn of an inner loop
/// (`xfs_extent_busy_trim` per busy record walked): [`Work::iterated`],
/// its counted loads at `hit_ns`; where the profile has a measured
/// tracepoint cost, at most that
/// ([`crate::kernel::tracing::looped_ps`]). The measured cost is one
/// firing per `prctl` syscall, the event's code cold after each kernel
/// entry: an upper bound for the same event fired hot, turn after turn, in
/// the kernel's own loop. The lab's `le-busy-quiet` pass (the same walk
/// with the event off) showed the walk's firings at 0.06 us each on the
/// AMD lab host, against 0.32 us measured one per syscall; those passes
/// also ran an earlier pass's event at each record, left enabled until the
/// lab fix of 267492c, so 0.06 us is a kept firing less that one
/// (docs/lab-hosts.md).
///
/// Fired hot alone the event is not always cheaper: on the family 23
/// model 49 host (session 58) `io_uring_complete`, fired once per NOP
/// request in one `io_uring_enter`'s completion loop (256 a call), cost
/// 120 ns a kept record, against 123.5 measured per `prctl`; on the
/// family 23 model 1 host (session 64, after the fix) the walk's kept
/// firing cost 146 ns, against 120-136 per `prctl` unfiltered and 164-176
/// through a filter (`passed_ns`, the price there).
pub const TRACE_EVENT_ITERATED: Work = Work {
    iterated: true,
    overlapped: false,
    indirect_calls: 0.0,
    new_lines: 0.0,
    returns: 0.0,
    ..TRACE_EVENT
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
    /// A line an earlier call touched (`between_calls` `l2` / `llc`).
    pub line_recent_ps: u64,
    /// [`BUSY_SEARCH`].
    pub busy_search_ps: u64,
    /// [`BUSY_NODE`].
    pub busy_node_ps: u64,
    /// [`BUSY_TRIM`].
    pub busy_trim_ps: u64,
    /// [`HEADER_READ`] times the header reads of the window (0 or 2),
    /// plus [`FIX_FREELIST`] when the window starts at the AGF read.
    pub window_ps: u64,
    /// AG header reads inside the window (0, or
    /// [`WINDOW_HEADER_READS`]), each firing `xfs_trans_read_buf`.
    pub header_reads: u64,
    /// [`TRACE_EVENT`].
    pub trace_event_ps: u64,
    /// [`TRACE_EVENT_ITERATED`], at most the profile's measured cost.
    pub trace_event_iterated_ps: u64,
    /// One call through `cur->bc_ops` ([`BtreeStats::indirect_calls`]):
    /// the profile's `mitigation.indirect_call_ns`, 0 without it.
    pub indirect_call_ps: u64,
    /// Which tracepoints fire inside the window.
    pub probes: Probes,
}

/// Where the lines a call touches first come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BetweenCalls {
    /// Every call starts with every line in DRAM (`memory_ns`).
    #[default]
    Cold,
    /// Lines an earlier call touched hit in L2 (`levels.l2_hit_ns`).
    L2,
    /// Lines an earlier call touched hit in the LLC (`levels.llc_hit_ns`).
    Llc,
}

/// Where the timed window of a call starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimedFrom {
    /// `xfs_alloc_ag_vextent_size` entry to return.
    #[default]
    XfsAllocAgVextentSize,
    /// The `xfs_alloc_read_agf` tracepoint in `xfs_alloc_fix_freelist`
    /// (the AGF and AGFL reads and the fix-up inside) to the
    /// `xfs_alloc_size_done` tracepoint.
    XfsAllocReadAgf,
}

/// The tracepoints enabled while a call is timed, by the kernel's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Probes {
    /// `xfs_trans_read_buf`: fires per header and btree buffer read.
    pub trans_read_buf: bool,
    /// `xfs_extent_busy_trim`: fires per trimmed candidate.
    pub busy_trim: bool,
    /// The window's two boundary events (`xfs_alloc_read_agf` /
    /// `xfs_alloc_size_done`): the part of the first after its clock
    /// read and the part of the second before it, about one event.
    pub bounds: bool,
}

/// The tracepoint names `probes` accepts.
pub const PROBE_NAMES: &[&str] = &[
    "xfs_alloc_read_agf",
    "xfs_alloc_size_done",
    "xfs_extent_busy_trim",
    "xfs_trans_read_buf",
];

impl Probes {
    /// From tracepoint names; the unknown name, if any, as the error.
    pub fn from_names(names: &[String]) -> Result<Probes, String> {
        let mut p = Probes::default();
        for n in names {
            match n.as_str() {
                "xfs_trans_read_buf" => p.trans_read_buf = true,
                "xfs_extent_busy_trim" => p.busy_trim = true,
                "xfs_alloc_read_agf" | "xfs_alloc_size_done" => p.bounds = true,
                _ => return Err(n.clone()),
            }
        }
        Ok(p)
    }
}

/// How a study prices its calls, beyond the machine profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Pricing {
    /// The per-record cost in ns, `None` for [`RECORD`] counted.
    pub record_ns: Option<f64>,
    /// ns per counted instruction-path load, as a multiple of `hit_ns`.
    pub work_scale: f64,
    /// Where a call's lines come from.
    pub between_calls: BetweenCalls,
    /// Where the timed window starts.
    pub timed_from: TimedFrom,
    /// Tracepoints enabled in the window.
    pub probes: Probes,
}

impl Default for Pricing {
    fn default() -> Self {
        Pricing {
            record_ns: None,
            work_scale: 1.0,
            between_calls: BetweenCalls::Cold,
            timed_from: TimedFrom::XfsAllocAgVextentSize,
            probes: Probes::default(),
        }
    }
}

impl EventPrices {
    /// Prices on machine `m` with the fitted per-record cost `record_ns`,
    /// every call cold, the window `xfs_alloc_ag_vextent_size`, nothing
    /// traced (case 4).
    pub fn new(m: &MachineProfile, record_ns: f64) -> Self {
        let p = Pricing {
            record_ns: Some(record_ns),
            ..Pricing::default()
        };
        Self::with(m, &p).unwrap_or_default()
    }

    /// Prices on machine `m` as `p` says. Fails (a message for field
    /// `between_calls`) if `p` asks for a cache level the profile does not
    /// give.
    pub fn with(m: &MachineProfile, p: &Pricing) -> Result<Self, String> {
        let recent_ns = match p.between_calls {
            BetweenCalls::Cold => m.memory_ns,
            level => {
                let l = m.levels.as_ref().ok_or_else(|| {
                    format!(
                        "`{}` needs the profile's [levels] hit latencies (`fsmeta calibrate` measures them); profile `{}` has none",
                        if level == BetweenCalls::L2 { "l2" } else { "llc" },
                        m.name
                    )
                })?;
                if level == BetweenCalls::L2 { l.l2_hit_ns } else { l.llc_hit_ns }
            }
        };
        // Work whose lines an earlier call touched is priced like them
        // (with `cold`, `recent_ns` is `memory_ns`).
        let price = |w: Work| {
            let mut t = Tally::default();
            t.add(w, 1.0);
            ns_to_ps(t.ns_cold_at(m, p.work_scale, recent_ns))
        };
        let (header_reads, window) = match p.timed_from {
            TimedFrom::XfsAllocAgVextentSize => (0, 0),
            TimedFrom::XfsAllocReadAgf => (WINDOW_HEADER_READS, WINDOW_HEADER_READS * price(HEADER_READ) + price(FIX_FREELIST)),
        };
        Ok(EventPrices {
            record_ps: p.record_ns.map_or_else(|| price(RECORD), ns_to_ps),
            buffer_read_ps: price(BUFFER_READ),
            line_cold_ps: ns_to_ps(m.memory_ns),
            line_warm_ps: ns_to_ps(m.hit_ns),
            key_compare_ps: price(KEY_COMPARE),
            cursor_ps: price(CURSOR),
            update_ps: price(UPDATE),
            agf_log_ps: price(AGF_LOG),
            line_recent_ps: ns_to_ps(recent_ns),
            busy_search_ps: price(BUSY_SEARCH),
            busy_node_ps: price(BUSY_NODE),
            busy_trim_ps: price(BUSY_TRIM),
            window_ps: window,
            header_reads,
            // Measured by fsmeta calibrate when the profile has it (a
            // record its filter passes, as the lab's are; else one with no
            // filter), else the counted loads. Calibrate fires one event
            // per syscall; an event fired per turn of the kernel's own
            // loop runs hot: the loop's price for its loads
            // (TRACE_EVENT_ITERATED), at most the measured cold firing.
            trace_event_ps: crate::kernel::tracing::kept_ps(m, price(TRACE_EVENT)),
            trace_event_iterated_ps: crate::kernel::tracing::looped_ps(m, price(TRACE_EVENT_ITERATED)),
            indirect_call_ps: ns_to_ps(m.indirect_call_ns()),
            probes: match p.timed_from {
                // Header reads are outside the vextent_size window; its
                // buffer reads still fire the probe.
                TimedFrom::XfsAllocAgVextentSize => Probes { bounds: false, ..p.probes },
                TimedFrom::XfsAllocReadAgf => p.probes,
            },
        })
    }

    /// Tracepoints that fire inside the window of a call with counts `s`.
    pub fn trace_events(&self, s: &BtreeStats) -> u64 {
        self.trace_events_once(s) + self.trace_events_iterated(s)
    }

    /// Of [`Self::trace_events`], those fired by per-call or per-level
    /// code (buffer reads, the window's bounds).
    pub fn trace_events_once(&self, s: &BtreeStats) -> u64 {
        let p = self.probes;
        u64::from(p.trans_read_buf) * (s.buffer_reads + self.header_reads) + u64::from(p.bounds)
    }

    /// Of [`Self::trace_events`], those fired in the walk's loop (one
    /// `xfs_extent_busy_trim` per trimmed record).
    pub fn trace_events_iterated(&self, s: &BtreeStats) -> u64 {
        u64::from(self.probes.busy_trim) * s.busy_trims
    }

    /// Pairs of (count, price in ps) for one call's counters, in a fixed
    /// order: records, buffer reads, cold lines, warm lines, key compares,
    /// cursors, updates, AGF logs, lines an earlier call touched, busy
    /// searches, busy nodes, busy trims, the window's fixed work (once),
    /// tracepoints fired by per-call code and in the walk's loop, the
    /// btree code's indirect calls.
    pub fn terms(&self, s: &BtreeStats) -> [(u64, u64); 16] {
        [
            (s.records_examined, self.record_ps),
            (s.buffer_reads, self.buffer_read_ps),
            (s.lines_cold, self.line_cold_ps),
            (s.lines_warm, self.line_warm_ps),
            (s.keys_compared, self.key_compare_ps),
            (s.cursors, self.cursor_ps),
            (s.updates, self.update_ps),
            (s.agf_logs, self.agf_log_ps),
            (s.lines_recent, self.line_recent_ps),
            (s.busy_searches, self.busy_search_ps),
            (s.busy_nodes, self.busy_node_ps),
            (s.busy_trims, self.busy_trim_ps),
            (1, self.window_ps),
            (self.trace_events_once(s), self.trace_event_ps),
            (self.trace_events_iterated(s), self.trace_event_iterated_ps),
            (s.indirect_calls, self.indirect_call_ps),
        ]
    }

    /// Sum of count x price over [`EventPrices::terms`], in `u128` ps.
    pub fn call_ps(&self, s: &BtreeStats) -> u128 {
        self.terms(s).iter().map(|&(n, p)| u128::from(n) * u128::from(p)).sum()
    }
}
