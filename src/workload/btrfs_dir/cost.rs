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
//! make about one more, counted as the root's), and the lab's other
//! tracepoints inside the window fire too: `btrfs_cow_block` and one
//! `mm_filemap_add_to_page_cache` per folio of each copy on write, and
//! `btrfs_reserved_extent_free` per leaf freed.
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
use crate::kernel::btrfs::ctree::TreeStats;
use crate::kernel::btrfs::delayed::{DeleteRunStats, InsertRunStats};
use crate::kernel::tracing;
use crate::machine::MachineProfile;

mod events;
mod refs;
pub use events::*;
pub use refs::*;

/// Prices of one cache-line access of each kind, ps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinePrices {
    /// A load or store hitting L1 in per-call or per-level code
    /// (`hit_ns x work_scale`).
    pub hit_ps: u64,
    /// A load or store hitting L1 in an inner loop's body (`hit_ns`; see
    /// [`Lines::iterated`]).
    pub loop_hit_ps: u64,
    /// A load in the body of an inner loop whose turns overlap
    /// ([`Lines::overlapped`]): the profile's measured
    /// `levels.loop_load_ns`, else `hit_ns`.
    pub overlapped_ps: u64,
    /// A line last written by another core of the same LLC
    /// (`same_llc_ns`).
    pub xfer_ps: u64,
    /// A line from local DRAM (`memory_ns`).
    pub miss_ps: u64,
    /// A locked read-modify-write on a held line (`atomic_ns`).
    pub atomic_ps: u64,
    /// One enabled tracepoint whose record its filter passes: the
    /// profile's measured `tracepoint.passed_ns`, else its `event_ns`,
    /// else [`TRACE_EVENT`]'s loads (`hit_ns x work_scale` each)
    /// ([`tracing::kept_ps`]).
    pub trace_event_ps: u64,
    /// One enabled tracepoint with no filter, its record kept (the lab's
    /// `btrfs_reserved_extent_free`): the profile's `tracepoint.event_ns`,
    /// else [`TRACE_EVENT`]'s loads.
    pub trace_unfiltered_ps: u64,
    /// One enabled tracepoint whose record the filter rejects: the
    /// profile's `tracepoint.discard_ns`, else
    /// [`crate::kernel::tracing::TRACE_DISCARD_LOADS`] loads.
    pub trace_discard_ps: u64,
    /// One indirect call's extra under the host's Spectre v2 mitigation
    /// (`mitigation.indirect_call_ns`, 0 without it).
    pub indirect_ps: u64,
    /// One return's extra under the host's return mitigation
    /// (`mitigation.return_ns`, 0 without it).
    pub return_ps: u64,
    /// The kernel's `memmove` per 64 bytes of `btrfs_del_items`' two
    /// moves, ps: `[backward, forward near, forward far]` (the profile's
    /// `[memmove]`, [`crate::machine::MemmovePrices`]); `None` without it
    /// or without a measured `levels.loop_load_ns`: then every moved line
    /// is a [`MOVE_LINE`] and the rewrite [`ITEM_SHIFT_ESTIMATE`].
    pub memmove_ps: Option<[u64; 3]>,
}

impl LinePrices {
    /// The prices of a machine profile, L1 hits scaled by `work_scale`
    /// (validated finite and positive).
    pub fn from_profile(p: &MachineProfile, work_scale: f64) -> Self {
        let ps = crate::machine::ns_to_ps;
        let hit_ps = ps(p.hit_ns * work_scale);
        let counted = |loads: f64| loads as u64 * hit_ps;
        LinePrices {
            hit_ps,
            loop_hit_ps: ps(p.hit_ns),
            overlapped_ps: ps(p.loop_load_ns()),
            xfer_ps: ps(p.same_llc_ns),
            miss_ps: ps(p.memory_ns),
            atomic_ps: ps(p.atomic_ns),
            trace_event_ps: tracing::kept_ps(p, counted(tracing::TRACE_EVENT_LOADS)),
            trace_unfiltered_ps: tracing::unfiltered_ps(p, counted(tracing::TRACE_EVENT_LOADS)),
            trace_discard_ps: tracing::discarded_ps(p, counted(tracing::TRACE_DISCARD_LOADS)),
            indirect_ps: ps(p.indirect_call_ns()),
            return_ps: ps(p.return_ns()),
            // The moves' prices come with the rewrite's, which needs the
            // loop's measured price too (ITEM_SHIFT, item_shift_ps).
            memmove_ps: p
                .memmove
                .as_ref()
                .filter(|_| p.levels.as_ref().is_some_and(|l| l.loop_load_ns.is_some()))
                .map(|m| [ps(m.backward_ns), ps(m.forward_near_ns), ps(m.forward_far_ns)]),
        }
    }

    /// One item's offset rewritten after a deleted range or a push, ps:
    /// [`ITEM_SHIFT`] on a profile with `[memmove]`, else
    /// [`ITEM_SHIFT_ESTIMATE`] (see there).
    pub fn item_shift_ps(&self) -> u64 {
        match self.memmove_ps {
            Some(_) => ITEM_SHIFT.price(self),
            None => ITEM_SHIFT_ESTIMATE.price(self),
        }
    }

    /// The bytes memmoved inside leaves, ps: on a profile with
    /// `[memmove]`, `btrfs_del_items`' data moved up and headers moved
    /// down at the kernel's `memmove` prices per 64 bytes (rounded down to
    /// the ps), every other byte as [`MOVE_LINE`]s; without it every byte
    /// as [`MOVE_LINE`]s, whole lines.
    pub fn moved_ps(&self, m: &Moved) -> u64 {
        let line = MOVE_LINE.price(self);
        let Some([back, near, far]) = self.memmove_ps else {
            return m.total.div_ceil(64) * line;
        };
        let del = m.data_up + m.headers_near + m.headers_far;
        let per = |bytes: u64, ps: u64| u128::from(bytes) * u128::from(ps) / 64;
        let sum = u128::from(m.total.saturating_sub(del).div_ceil(64)) * u128::from(line)
            + per(m.data_up, back)
            + per(m.headers_near, near)
            + per(m.headers_far, far);
        // Past u64 ps (half a year of moves) the window's checked sum
        // reports the overflow.
        u64::try_from(sum).unwrap_or(u64::MAX)
    }
}

/// Bytes memmoved inside leaves, and of them `btrfs_del_items`' two moves
/// by kind (6.18 fs/btrfs/ctree.c: `memmove_leaf_data` up,
/// `memmove_leaf_items` down).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Moved {
    /// Every byte moved or copied inside leaves.
    pub total: u64,
    /// Item data moved up over deleted items' data.
    pub data_up: u64,
    /// Item headers moved down by under 64 bytes.
    pub headers_near: u64,
    /// Item headers moved down by 64 bytes or more.
    pub headers_far: u64,
}

impl Moved {
    /// The moves a tree's counts `d` record.
    pub fn of_tree(d: &crate::kernel::btrfs::ctree::TreeStats) -> Moved {
        Moved {
            total: d.bytes_moved,
            data_up: d.del_data_moved,
            headers_near: d.del_headers_near,
            headers_far: d.del_headers_far,
        }
    }

    /// The moves of a deletion run's counts `s`.
    pub fn of_deletes(s: &DeleteRunStats) -> Moved {
        Moved {
            total: s.bytes_moved,
            data_up: s.del_data_moved,
            headers_near: s.del_headers_near,
            headers_far: s.del_headers_far,
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
    /// For an inner loop ([`Lines::iterated`]): whether its turns carry no
    /// dependency from one to the next, so that the core overlaps them
    /// turn over turn; its hits are then priced at the profile's
    /// `levels.loop_load_ns` (`hit_ns` without it), as
    /// [`crate::kernel::work::Work::overlapped`].
    pub overlapped: bool,
    /// Calls through a function pointer, each at the profile's
    /// `mitigation.indirect_call_ns` (0 without it).
    pub indirect_calls: u64,
    /// Returns through the host's return thunk, counted in inner loops
    /// (`iterated`) only, as [`crate::kernel::work::Work::returns`]: each
    /// at the profile's `mitigation.return_ns` (0 without it).
    pub returns: u64,
}

impl Lines {
    /// No access of any kind, outside an inner loop: the base the counted
    /// events fill in (`..Lines::NONE`).
    pub const NONE: Lines = Lines {
        hits: 0,
        xfers: 0,
        misses: 0,
        atomics: 0,
        iterated: false,
        overlapped: false,
        indirect_calls: 0,
        returns: 0,
    };

    /// The same event run by the task that wrote its lines (its
    /// transfers are hits in that task's cache, not counted).
    pub const fn local(self) -> Lines {
        Lines { xfers: 0, ..self }
    }

    /// The event's price, ps.
    pub fn price(&self, p: &LinePrices) -> u64 {
        let hit = match (self.iterated, self.overlapped) {
            (true, true) => p.overlapped_ps,
            (true, false) => p.loop_hit_ps,
            (false, _) => p.hit_ps,
        };
        self.hits * hit
            + self.xfers * p.xfer_ps
            + self.misses * p.miss_ps
            + self.atomics * p.atomic_ps
            + self.indirect_calls * p.indirect_ps
            + self.returns * p.return_ps
    }
}

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
    /// Whether the lab's tracepoints are enabled: `btrfs_tree_lock` /
    /// `btrfs_tree_read_lock` (one [`TRACE_EVENT`] per block visited or
    /// sibling locked), `btrfs_cow_block` and `mm_filemap_add_to_page_cache`
    /// (1 + folios per copy on write), `btrfs_reserved_extent_free` (one per
    /// leaf freed).
    pub lock_tracepoints: bool,
    /// Per batch, outside the lab's window, the release's
    /// `btrfs_space_reservation` event (`delayed_item`: per deletion batch
    /// in `btrfs_batch_delete_items`, per leaf of insertions in
    /// `btrfs_delayed_item_release_leaves`) when the lab traces it with
    /// its stack (`reservation_tracepoints`); all 0 otherwise.
    pub release_events: ReleaseEvents,
}

impl DelayedCost {
    /// Folios of one extent buffer (`nodesize / PAGE_SIZE`, at least 1).
    pub fn folios(&self) -> u32 {
        (self.nodesize / PAGE_BYTES).max(1)
    }

    /// One copy on write (`btrfs_cow_block` -> `btrfs_force_cow_block`),
    /// ps: the new block ([`TREE_BLOCK_ALLOC`], a [`EB_FOLIO_ADD`] and a
    /// [`EB_FOLIO_DIRTY`] per folio, [`EB_DIRTY`]), the copy of `nodesize`
    /// bytes, the old block's side ([`COW_SWAP`]) and two delayed refs (ADD
    /// for the new block, DROP for the old). A block a split allocates is
    /// priced the same (its one delayed ref and no copy make about the
    /// same).
    pub fn cow_price(&self) -> u64 {
        let p = &self.prices;
        let copy = u64::from(self.nodesize / 64) * MOVE_LINE.price(p);
        let folios = u64::from(self.folios()) * (EB_FOLIO_ADD.price(p) + EB_FOLIO_DIRTY.price(p));
        TREE_BLOCK_ALLOC.price(p) + folios + EB_DIRTY.price(p) + copy + COW_SWAP.price(p) + 2 * DELAYED_TREE_REF.price(p)
    }

    /// One empty leaf freed by `btrfs_del_items` (a leaf copied in this
    /// transaction), ps: its folios cleaned ([`EB_FOLIO_CLEAN`] each),
    /// [`LEAF_FREE`], its DROP ref and [`TREE_BLOCK_UNALLOC`].
    pub fn leaf_free_price(&self) -> u64 {
        let p = &self.prices;
        u64::from(self.folios()) * EB_FOLIO_CLEAN.price(p) + LEAF_FREE.price(p) + DELAYED_TREE_REF.price(p) + TREE_BLOCK_UNALLOC.price(p)
    }

    /// Time of the lab's window summed over the batches of `s`, ps: the
    /// search from its root lock, the batch's collection and
    /// `btrfs_del_items`, up to the release tracepoint.
    pub fn window_ps(&self, s: &DeleteRunStats) -> Result<u128, ModelError> {
        let p = &self.prices;
        let visits = s.node_visits + s.leaf_visits;
        let collected = s.items_released - s.not_found.min(s.items_released);
        let trace = if self.lock_tracepoints { p.trace_event_ps } else { 0 };
        let freed_event = if self.lock_tracepoints { p.trace_unfiltered_ps } else { 0 };
        let trace_alloc = trace * (1 + u64::from(self.folios()));
        let terms = [
            (visits, BLOCK_VISIT.price(p) + trace),
            (s.key_compares, KEY_COMPARE.price(p)),
            (s.transfers, p.xfer_ps),
            (1, p.moved_ps(&Moved::of_deletes(s))),
            (s.cow_blocks, self.cow_price() + trace_alloc),
            (s.leaves_freed, self.leaf_free_price() + freed_event),
            (s.batches, DEL_ITEMS.price(p)),
            (collected.saturating_sub(s.own_collected), ITEM_COLLECT.price(p)),
            (s.own_collected, ITEM_COLLECT.local().price(p)),
            (s.items_shifted + s.push_offsets, p.item_shift_ps()),
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
        let (worker, commit) = (self.release_events.worker_delete_ps, self.release_events.commit_delete_ps);
        let terms = [
            (
                s.batches.saturating_sub(s.own_batches),
                BATCH_FIXED.price(p) + self.batch_overhead_ps + worker,
            ),
            (s.own_batches, BATCH_FIXED.local().price(p) + self.batch_overhead_ps + commit),
            (s.items_released.saturating_sub(s.own_released), ITEM_RELEASE.price(p)),
            (s.own_released, ITEM_RELEASE.local().price(p)),
            (s.rsv_releases.saturating_sub(s.own_rsv_releases), RSV_RELEASE.price(p)),
            (s.own_rsv_releases, RSV_RELEASE.local().price(p)),
        ];
        total(&terms, "btrfs_dir: time of the delayed-deletion function in ps")?
            .checked_add(window)
            .ok_or(ModelError::Overflow("btrfs_dir: time of the delayed-deletion function in ps"))
    }

    /// Time in `btrfs_insert_delayed_items` for these counts, ps; the
    /// bytes written for the new items are priced as moved lines.
    pub fn insert_ps(&self, s: &InsertRunStats) -> Result<u128, ModelError> {
        let p = &self.prices;
        let per_batch = self.batch_overhead_ps + self.release_events.insert_ps;
        let terms = [
            (s.node_visits + s.leaf_visits, BLOCK_VISIT.price(p)),
            (s.key_compares, KEY_COMPARE.price(p)),
            (s.transfers, p.xfer_ps),
            ((s.bytes_moved + s.bytes_inserted).div_ceil(64), MOVE_LINE.price(p)),
            (s.cow_blocks, self.cow_price()),
            (s.batches.saturating_sub(s.own_batches), BATCH_FIXED.price(p) + per_batch),
            (s.own_batches, BATCH_FIXED.local().price(p) + per_batch),
            (s.items.saturating_sub(s.own_items), ITEM_INSERT.price(p) + ITEM_RELEASE.price(p)),
            (s.own_items, ITEM_INSERT.local().price(p) + ITEM_RELEASE.local().price(p)),
            (s.rsv_releases.saturating_sub(s.own_rsv_releases), RSV_RELEASE.price(p)),
            (s.own_rsv_releases, RSV_RELEASE.local().price(p)),
        ];
        total(&terms, "btrfs_dir: time of the delayed-insertion function in ps")
    }
}

/// The lab's tracepoints a tree's work fires, ps each (0 untraced): they
/// differ by tree, as the lab's filters keep the fs tree's lock and copy
/// events only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TreeEvents {
    /// Per block locked (a search's level, a sibling read) and per search
    /// (the root's read lock before its write lock): `btrfs_tree_lock` /
    /// `btrfs_tree_read_lock`.
    pub lock_ps: u64,
    /// Per copy on write, besides its lock's: `btrfs_cow_block`, a
    /// `mm_filemap_add_to_page_cache` per folio, the reservation events.
    pub cow_ps: u64,
    /// Per leaf freed: `btrfs_reserved_extent_free`.
    pub freed_ps: u64,
}

impl DelayedCost {
    /// Tree work that counted `d` (searches, probes, item edits, copies on
    /// write), with the lab's `events` when traced, ps.
    pub fn tree_work_ps(&self, d: &TreeStats, events: &TreeEvents) -> Result<u64, ModelError> {
        let p = &self.prices;
        let terms = [
            (d.node_visits + d.leaf_visits, BLOCK_VISIT.price(p) + events.lock_ps),
            (d.searches, ROOT_TRADE.price(p) + events.lock_ps),
            (d.key_compares, KEY_COMPARE.price(p)),
            (d.transfers(), p.xfer_ps),
            (1, p.moved_ps(&Moved::of_tree(d))),
            (d.cow_blocks, self.cow_price() + events.cow_ps),
            (d.leaves_freed, self.leaf_free_price() + events.freed_ps),
            (d.del_items_calls, DEL_ITEMS.price(p)),
            (d.items_shifted + d.push_offsets, p.item_shift_ps()),
            (d.sibling_reads, SIBLING_LOCK.price(p) + events.lock_ps),
            (d.leaf_pushes, PUSH_FIXED.price(p)),
            (d.items_pushed, PUSH_ITEM.price(p)),
        ];
        let what = "btrfs_dir: time of tree work in ps";
        terms.iter().try_fold(0u64, |sum, &(c, u)| {
            c.checked_mul(u).and_then(|t| sum.checked_add(t)).ok_or(ModelError::Overflow(what))
        })
    }
}

/// The lab's reservation release event with its stack, ps, by who makes
/// it: each a kept record ([`LinePrices::trace_event_ps`]) and a stack of
/// that context's frames ([`crate::kernel::tracing::stack_ps`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReleaseEvents {
    /// A deletion batch of the flush worker
    /// ([`crate::kernel::btrfs::delayed::WORKER_DELETE_RELEASE_FRAMES`]).
    pub worker_delete_ps: u64,
    /// A deletion batch of a commit on the syscall's thread
    /// ([`crate::kernel::btrfs::delayed::COMMIT_DELETE_RELEASE_FRAMES`]).
    pub commit_delete_ps: u64,
    /// A leaf of insertions
    /// ([`crate::kernel::btrfs::delayed::WORKER_INSERT_RELEASE_FRAMES`]:
    /// the worker's; the script's insertion batches are all the worker's).
    pub insert_ps: u64,
}

impl ReleaseEvents {
    /// The three on `machine`, kept records at `prices`' price.
    pub fn priced(machine: &MachineProfile, prices: &LinePrices, work_scale: f64) -> Self {
        use crate::kernel::btrfs::delayed::{COMMIT_DELETE_RELEASE_FRAMES, WORKER_DELETE_RELEASE_FRAMES, WORKER_INSERT_RELEASE_FRAMES};
        let event = |frames| prices.trace_event_ps + tracing::stack_ps(machine, frames, work_scale);
        ReleaseEvents {
            worker_delete_ps: event(WORKER_DELETE_RELEASE_FRAMES),
            commit_delete_ps: event(COMMIT_DELETE_RELEASE_FRAMES),
            insert_ps: event(WORKER_INSERT_RELEASE_FRAMES),
        }
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
