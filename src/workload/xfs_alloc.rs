//! The XFS allocation workload: build one AG's free space from a source
//! (an `xfs_db -c freesp` file, a bucket histogram, a fragmentation level
//! or aging), then time a series of `xfs_alloc_ag_vextent_size` calls,
//! optionally freeing earlier allocations between calls.
//!
//! Time of a call, in integer picoseconds, is what the model counted times
//! per-event prices ([`cost`]): records examined x `record_ns` (the one
//! fitted cost) plus buffer reads, btree lines touched cold and warm, key
//! comparisons, cursors, record updates and AGF logs, busy-extent trims,
//! and (by `timed_from` and `probes`) the AG header reads and tracepoints
//! of a measured window, each priced from the `[machine]` profile's
//! `memory_ns`, `atomic_ns`, `hit_ns` and, between calls, cache levels.

pub mod cost;
mod keys;
pub mod request;

use std::collections::BTreeMap;
use std::path::Path;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::engine::Metrics;
use crate::engine::rng::RunKey;
use crate::kernel::ModelError;
use crate::kernel::xfs::aging::{AgingParams, age};
use crate::kernel::xfs::alloc::{AllocArgs, CutoffStrategy, xfs_free_ag_extent};
use crate::kernel::xfs::freespace::source::{
    FragmentationShape, HistogramBucket, buckets_footprint, freesp_footprint, lay_out, lengths_from_buckets, lengths_from_fragmentation,
    lengths_from_freesp,
};
use crate::kernel::xfs::freespace::{AllocRec, BtreeGeometry, BtreeLayout, BtreeStats, FreeSpace, FreespHistogram};
use crate::machine::MachineProfile;
use crate::machine::build::resolve_profile;
use crate::param::ParamError;
use crate::workload::path::machine_param;
use crate::workload::work_scale::WorkScale;
use crate::workload::{Input, MetricSpec, Prepared, RunFailure, Sections, Workload};
use cost::{BetweenCalls, EventPrices, Pricing, Probes, TimedFrom};
use request::{Request, Step, make_call, replay};

/// The per-record cost of the walk: fitted (ns) or counted from the code.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RecordNs {
    /// A fitted cost in ns (case 4's knob).
    Fitted(f64),
    /// [`cost::RECORD`] priced by the profile like every other event.
    Counted,
}

impl Serialize for RecordNs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RecordNs::Fitted(ns) => s.serialize_f64(*ns),
            RecordNs::Counted => s.serialize_str("counted"),
        }
    }
}

impl<'de> Deserialize<'de> for RecordNs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = crate::param::number_or_word(d, "counted", "a cost in ns or \"counted\"")?;
        Ok(v.map_or(RecordNs::Counted, RecordNs::Fitted))
    }
}

/// How the two free-space btrees are built from the source's extents.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BtreeFill {
    /// Bulk-loaded with each block this share of its maximum
    /// (`xfs_btree_bload`, as `xfs_repair` rebuilds the trees).
    BulkLoad(f64),
    /// Grown by inserting the extents one by one in block order
    /// ([`FreeSpace::grown`]): the shape the lab's hole punching leaves.
    Inserted,
    /// The blocks of `btree_layout_file`, as `xfs_db` read them from the
    /// live AG the `freesp_file` came from ([`FreeSpace::from_layout`]).
    Layout,
}

impl Serialize for BtreeFill {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BtreeFill::BulkLoad(f) => s.serialize_f64(*f),
            BtreeFill::Inserted => s.serialize_str("inserted"),
            BtreeFill::Layout => s.serialize_str("layout"),
        }
    }
}

impl<'de> Deserialize<'de> for BtreeFill {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = crate::param::number_or_words(d, &["inserted", "layout"], "a fill in [0.5, 1], \"inserted\" or \"layout\"")?;
        Ok(match v {
            Ok(f) => BtreeFill::BulkLoad(f),
            Err("layout") => BtreeFill::Layout,
            Err(_) => BtreeFill::Inserted,
        })
    }
}

/// Where the AG's free space comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FreeSpaceSource {
    /// `freesp_file`: `xfs_db -c freesp` text; lengths fill each bin's
    /// extent count and block total exactly.
    FreespFile,
    /// `histogram`: buckets of extent counts, lengths uniform per bucket.
    Histogram,
    /// `fragmentation`: one level in [0, 1], see `fragmentation`.
    Fragmentation,
    /// `aging`: allocate/free/punch-hole streams from an empty AG.
    Aging,
}

/// The keys only one free-space source reads (the others ignore them):
/// written where no run has that source, they are refused.
pub const SOURCE_KEYS: crate::workload::selected::Selected = crate::workload::selected::Selected {
    section: "xfs_alloc",
    selector: "source",
    default: "fragmentation",
    owned: &[
        ("freesp_file", "freesp_file"),
        ("histogram", "histogram"),
        ("fragmentation", "fragmentation"),
        ("free_blocks", "fragmentation"),
        ("small_extent_blocks", "fragmentation"),
        ("aging", "aging"),
    ],
};

/// Parameters of the `xfs_alloc` workload section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XfsAllocParams {
    /// AG size in blocks (`sb_agblocks`). Default 16,777,216 (64 GiB of
    /// 4 KiB blocks).
    pub agblocks: u32,
    /// Filesystem block size, bytes; sets records per btree block.
    /// Default 4096.
    pub block_size: u32,
    /// Btree block header, bytes: 56 for v5 (CRC) filesystems, 16 for v4.
    /// Default 56 (505 records per leaf, 336 pointers per node at 4 KiB).
    pub btree_header_bytes: u32,
    /// Fill of the bulk-loaded btree blocks, as a share of the maximum
    /// (clamped to keep the minimum, half). Default 0.75: between the
    /// half-full blocks that random inserts' splits leave and full blocks.
    /// `"inserted"`: the trees grown by inserting the extents in block
    /// order (`xfs_free_ag_extent` as the lab punches holes). Extents of
    /// one length arrive in both trees' key order, and every block ends
    /// full but the last two of each level, as `xfs_btree_lshift` leaves
    /// them (the live trees' shape, `xfs_db`); extents of mixed lengths
    /// reach the by-size tree out of its order and fill it less.
    pub btree_fill: BtreeFill,
    /// The trees' block layout for `btree_fill = "layout"`, relative to
    /// the scenario's directory ([`BtreeLayout`]: the lab's `ag1.layout`).
    /// Default empty.
    pub btree_layout_file: String,
    /// Free-space source: `freesp_file`, `histogram`, `fragmentation` or
    /// `aging`. Default `fragmentation`.
    pub source: FreeSpaceSource,
    /// `xfs_db -c freesp` output, relative to the scenario's directory.
    /// Default empty (required when `source = "freesp_file"`).
    pub freesp_file: String,
    /// Buckets for `source = "histogram"`: `{ from, to, extents }`.
    /// Default empty.
    pub histogram: Vec<HistogramBucket>,
    /// Fragmentation level in [0, 1] for `source = "fragmentation"`: the
    /// share of the free blocks held in extents of `small_extent_blocks`
    /// blocks, the rest being one contiguous extent. 0 = one free extent;
    /// 1 = all free space in small extents (case 4's shape). Default 0.
    pub fragmentation: f64,
    /// Free blocks for `source = "fragmentation"`. Default 2,000,000.
    pub free_blocks: u64,
    /// Length of the small extents of `fragmentation`, blocks. Default 2.
    pub small_extent_blocks: u32,
    /// Aging streams for `source = "aging"`.
    pub aging: AgingParams,
    /// Request `minlen`, blocks. Default 1.
    pub minlen: u32,
    /// Request `maxlen`, blocks. Default 4.
    pub maxlen: u32,
    /// Request start alignment, blocks (1 = none). Default 1.
    pub alignment: u32,
    /// Number of timed `xfs_alloc_ag_vextent_size` calls. Default 1.
    pub calls: u64,
    /// After each call, the probability of freeing one extent allocated
    /// earlier in the run (`xfs_free_ag_extent`, not timed). Default 0.
    pub free_prob: f64,
    /// Backward-walk cutoff: `lt`, `le` or `budget:N`. Default `le`.
    pub strategy: CutoffStrategy,
    /// Cost of examining one record in the walk (`xfs_btree_decrement`
    /// inside a leaf, `xfs_alloc_get_rec`, the cutoff compare and, when
    /// the walk goes on, `xfs_alloc_compute_aligned` with its busy-extent
    /// check), ns, including the record lines the walk streams through.
    /// The one FITTED cost of this workload: default 14.0, fitted on case
    /// 4 `lt` (15,597.94 µs published) on the `cascadelake-gold-6242`
    /// profile: the published time minus every other counted term of that
    /// call, divided by its 994,477 records, rounded to 0.1 ns
    /// (scenarios/xfs-alloc-cutoff.toml shows the arithmetic).
    /// `"counted"`: [`cost::RECORD`] counted from the code and priced by
    /// the profile (a measured host's twins).
    pub record_ns: RecordNs,
    /// ns per counted instruction-path load as a multiple of the
    /// profile's `hit_ns`: the scale of CPU work that no microbenchmark
    /// gives. Default 1. A measured host's one fitted knob: `"host"`
    /// takes it from the profile ([`WorkScale`]).
    pub work_scale: WorkScale,
    /// Where a call's lines come from: `cold` (DRAM, case 4's one call;
    /// default), `l2` or `llc` (lines an earlier call touched hit there:
    /// a loop of calls, as the lab makes). See [`cost`].
    pub between_calls: BetweenCalls,
    /// Start of the timed window: `xfs_alloc_ag_vextent_size` (default)
    /// or `xfs_alloc_read_agf` (the lab's: from the AGF read in
    /// `xfs_alloc_fix_freelist` to `xfs_alloc_size_done`).
    pub timed_from: TimedFrom,
    /// Tracepoints enabled while timing (each firing costs
    /// [`cost::TRACE_EVENT`]): any of [`cost::PROBE_NAMES`]. Default none.
    pub probes: Vec<String>,
    /// Free extents that are busy when the calls start (freed by
    /// transactions not yet in the log): the last `busy_extents` records
    /// of the by-size tree, the first the walk meets
    /// (`xfs_extent_busy_trim` cuts them out). Default 0.
    pub busy_extents: u64,
    /// What a call allocates: `one` by-size allocation (default) or
    /// `fallocate` of maxlen blocks on an empty file, the by-size
    /// allocation then near ones for the rest ([`request`]).
    pub request: Request,
    /// Steps replayed before the timed calls, in order: `calls:N`
    /// (untimed calls, with no frees: `free_prob` applies to the timed
    /// ones) and `busy:N` (blocks taken by calls and freed at once: busy);
    /// see [`request`]. Not with `busy_extents`. Default none.
    pub before: Vec<Step>,
}

impl Default for XfsAllocParams {
    fn default() -> Self {
        Self {
            agblocks: 16_777_216,
            block_size: 4096,
            btree_header_bytes: BtreeGeometry::V5_HEADER_LEN,
            btree_fill: BtreeFill::BulkLoad(0.75),
            btree_layout_file: String::new(),
            source: FreeSpaceSource::Fragmentation,
            freesp_file: String::new(),
            histogram: Vec::new(),
            fragmentation: 0.0,
            free_blocks: 2_000_000,
            small_extent_blocks: 2,
            aging: AgingParams::default(),
            minlen: 1,
            maxlen: 4,
            alignment: 1,
            calls: 1,
            free_prob: 0.0,
            strategy: CutoffStrategy::Le,
            record_ns: RecordNs::Fitted(RECORD_NS_FITTED),
            work_scale: WorkScale::default(),
            between_calls: BetweenCalls::Cold,
            timed_from: TimedFrom::XfsAllocAgVextentSize,
            probes: Vec::new(),
            busy_extents: 0,
            request: Request::One,
            before: Vec::new(),
        }
    }
}

/// `record_ns` as fitted on case 4 `lt` (see [`XfsAllocParams::record_ns`]).
pub const RECORD_NS_FITTED: f64 = 14.0;

/// An `InvalidParam` error for `field`.
fn invalid(field: &str, message: impl Into<String>) -> ParamError {
    ParamError::new(field, message)
}

/// Largest accepted `record_ns`, ns (1 s). Prices of at most 1e12 ps (the
/// profile's latencies are at most 1 ms, times at most 100 per event)
/// times eight counts below 2^64 stay below 2^108, so a call's time is
/// computed in `u128` without overflow; a call longer than 2^64 ps (213
/// days) is an error ([`ModelError::Overflow`]).
pub const MAX_COST_NS: f64 = 1e9;

/// Upper bound on the bytes one free extent takes at the peak of building
/// the two btrees (lengths, layout, sorted copy, both trees), before the
/// per-leaf share: [`XfsAllocParams::memory_bytes`] charges
/// `EXTENT_BYTES + LEAF_BYTES / leaf_minrecs` per extent. Measured with
/// `/usr/bin/time -v` (maximum RSS, 1M against 5M extents from
/// `fragmentation = 1.0`): 32.5 bytes per extent with 4 KiB v5 blocks at
/// fill 0.75, 34.5 with 1 KiB blocks at fill 0.5, 153 with 104-byte blocks
/// at fill 0.5 (3 records per leaf); the formula gives 50, 56 and 218.
pub const EXTENT_BYTES: u64 = 48;

/// Upper bound on the bytes per btree leaf (block arena slot, record
/// vector header and allocator slack, the nodes above it, in both trees),
/// spread over the leaf's records; see [`EXTENT_BYTES`]. 512 measured,
/// plus 128 for the per-call set of touched lines (a walk touches at most
/// a few lines per leaf it steps into, ~24 bytes each in the set).
pub const LEAF_BYTES: u64 = 640;

/// Upper bound on the bytes per timed call: its time (8) and, for a call
/// that allocated, the live extent it may free later (8, doubled for
/// vector growth). Measured 16.1 bytes per call with every call
/// allocating and none freeing (1M against 5M calls), 8.9 when most fail.
pub const CALL_BYTES: u64 = 24;

/// Upper bound on the bytes per busy extent (its range in a map, its
/// rb-tree node in the arena, its line in the touched sets).
pub const BUSY_BYTES: u64 = 128;

/// Most steps `before` accepts.
pub const MAX_BEFORE_STEPS: usize = 16;

/// Fixed bytes of one run besides extents and calls (structures, stats).
pub const RUN_BASE_BYTES: u64 = 64 * 1024;

impl XfsAllocParams {
    /// Checks ranges and that the chosen source has what it needs.
    pub fn validate(&self) -> Result<(), ParamError> {
        BtreeGeometry::new(self.block_size, self.btree_header_bytes)?;
        if self.agblocks < 2 {
            return Err(invalid("agblocks", "must be >= 2"));
        }
        if let BtreeFill::BulkLoad(f) = self.btree_fill
            && !(0.5..=1.0).contains(&f)
        {
            return Err(invalid("btree_fill", "must be in [0.5, 1], \"inserted\" or \"layout\""));
        }
        if self.btree_fill == BtreeFill::Layout && self.source != FreeSpaceSource::FreespFile {
            return Err(invalid(
                "btree_fill",
                "\"layout\" needs source = \"freesp_file\": the layout and the free space are read from the same live AG",
            ));
        }
        if self.busy_extents > 0 && !self.before.is_empty() {
            return Err(invalid(
                "busy_extents",
                "not with `before`: the records it marks would not be the last ones when the calls start; make them with a busy:N step",
            ));
        }
        match (self.btree_fill == BtreeFill::Layout, self.btree_layout_file.is_empty()) {
            (true, true) => return Err(invalid("btree_layout_file", "required when btree_fill = \"layout\"")),
            (false, false) => return Err(invalid("btree_layout_file", "only read when btree_fill = \"layout\"")),
            _ => {}
        }
        self.validate_source()?;
        if self.minlen == 0 || self.maxlen < self.minlen {
            return Err(invalid("maxlen", "need 1 <= minlen <= maxlen"));
        }
        if self.alignment == 0 {
            return Err(invalid("alignment", "must be >= 1"));
        }
        if self.calls == 0 {
            return Err(invalid("calls", "must be >= 1"));
        }
        if !usize::try_from(self.calls).is_ok_and(|c| c <= isize::MAX as usize / 8) {
            return Err(invalid("calls", "too many calls to hold their times in memory"));
        }
        if !(0.0..=1.0).contains(&self.free_prob) {
            return Err(invalid("free_prob", "must be in [0, 1]"));
        }
        if self.before.len() > MAX_BEFORE_STEPS {
            return Err(invalid(
                "before",
                format!("at most {MAX_BEFORE_STEPS} steps, found {}", self.before.len()),
            ));
        }
        if let RecordNs::Fitted(ns) = self.record_ns
            && !(0.0..=MAX_COST_NS).contains(&ns)
        {
            return Err(invalid("record_ns", format!("must be a cost in 0..=1e9 ns (1 s), found {ns}")));
        }
        self.work_scale.check().map_err(|m| invalid("work_scale", m))?;
        if let Err(bad) = Probes::from_names(&self.probes) {
            return Err(invalid(
                "probes",
                format!("unknown tracepoint `{bad}`: expected one of {}", cost::PROBE_NAMES.join(", ")),
            )
            .suggest(crate::text::closest(&bad, cost::PROBE_NAMES.iter().copied())));
        }
        Ok(())
    }

    /// How the calls are priced on `profile` (see [`cost`]); an error
    /// when `work_scale = "host"` and the profile has no knob.
    pub fn pricing(&self, profile: &MachineProfile) -> Result<Pricing, ParamError> {
        Ok(Pricing {
            record_ns: match self.record_ns {
                RecordNs::Fitted(ns) => Some(ns),
                RecordNs::Counted => None,
            },
            work_scale: self.work_scale.resolve(profile).map_err(|m| invalid("work_scale", m))?,
            between_calls: self.between_calls,
            timed_from: self.timed_from,
            probes: Probes::from_names(&self.probes).unwrap_or_default(),
        })
    }

    fn validate_source(&self) -> Result<(), ParamError> {
        match self.source {
            FreeSpaceSource::FreespFile if self.freesp_file.is_empty() => {
                Err(invalid("freesp_file", "required when source = \"freesp_file\""))
            }
            FreeSpaceSource::Histogram => {
                if self.histogram.is_empty() {
                    return Err(invalid("histogram", "required when source = \"histogram\""));
                }
                if self.histogram.iter().any(|b| b.from == 0 || b.to < b.from) {
                    return Err(invalid("histogram", "each bucket needs 1 <= from <= to"));
                }
                let f = buckets_footprint(&self.histogram).ok_or_else(|| invalid("histogram", "extent counts overflow"))?;
                f.check(self.agblocks).map_err(|m| invalid("histogram", m))
            }
            FreeSpaceSource::Fragmentation => {
                if !(0.0..=1.0).contains(&self.fragmentation) {
                    return Err(invalid("fragmentation", "must be in [0, 1]"));
                }
                if self.small_extent_blocks == 0 {
                    return Err(invalid("small_extent_blocks", "must be >= 1"));
                }
                if self.free_blocks == 0 || self.free_blocks >= u64::from(self.agblocks) {
                    return Err(invalid("free_blocks", "must be in [1, agblocks)"));
                }
                let shape = FragmentationShape::new(self.fragmentation, self.free_blocks, self.small_extent_blocks);
                shape.footprint().check(self.agblocks).map_err(|m| invalid("free_blocks", m))
            }
            FreeSpaceSource::Aging => self.aging.validate("aging."),
            FreeSpaceSource::FreespFile => Ok(()),
        }
    }

    /// Reads `freesp_file` (relative to `base_dir`) when it is the
    /// source, and checks that its extents fit the AG; `None` for the
    /// other sources. Errors are on field `freesp_file`.
    pub fn read_freesp(&self, base_dir: &Path) -> Result<Option<FreespHistogram>, ParamError> {
        if self.source != FreeSpaceSource::FreespFile {
            return Ok(None);
        }
        let h = FreespHistogram::read_file(&base_dir.join(&self.freesp_file)).map_err(|e| invalid("freesp_file", e.to_string()))?;
        let f = freesp_footprint(&h).ok_or_else(|| invalid("freesp_file", "the histogram's totals overflow"))?;
        f.check(self.agblocks).map_err(|m| invalid("freesp_file", m))?;
        Ok(Some(h))
    }

    /// Reads `btree_layout_file` (relative to `base_dir`) when
    /// `btree_fill = "layout"`; `None` otherwise. Errors are on field
    /// `btree_layout_file`.
    pub fn read_layout(&self, base_dir: &Path) -> Result<Option<BtreeLayout>, ParamError> {
        if self.btree_fill != BtreeFill::Layout {
            return Ok(None);
        }
        let l = BtreeLayout::read_file(&base_dir.join(&self.btree_layout_file)).map_err(|e| invalid("btree_layout_file", e.to_string()))?;
        Ok(Some(l))
    }

    /// Builds the AG's free space from the configured source; `freesp` is
    /// the histogram [`XfsAllocParams::read_freesp`] returned.
    pub fn build_free_space(&self, freesp: Option<&FreespHistogram>, rng: &mut ChaCha8Rng) -> Result<FreeSpace, ModelError> {
        self.build_free_space_on(freesp, None, rng)
    }

    /// As [`XfsAllocParams::build_free_space`], with the trees' block
    /// layout [`XfsAllocParams::read_layout`] returned (required when
    /// `btree_fill = "layout"`).
    pub fn build_free_space_on(
        &self,
        freesp: Option<&FreespHistogram>,
        layout: Option<&BtreeLayout>,
        rng: &mut ChaCha8Rng,
    ) -> Result<FreeSpace, ModelError> {
        let geo = BtreeGeometry::new(self.block_size, self.btree_header_bytes)?;
        let lengths = match self.source {
            FreeSpaceSource::FreespFile => {
                let h = freesp.ok_or_else(|| invalid("freesp_file", "the freesp histogram was not read"))?;
                let mut lengths = lengths_from_freesp(h, self.agblocks, rng)?;
                if let Some(l) = layout {
                    drop_agfl_blocks(&mut lengths, l.records())?;
                }
                lengths
            }
            FreeSpaceSource::Histogram => lengths_from_buckets(&self.histogram, self.agblocks, rng)?,
            FreeSpaceSource::Fragmentation => {
                lengths_from_fragmentation(self.fragmentation, self.free_blocks, self.small_extent_blocks, self.agblocks)?
            }
            FreeSpaceSource::Aging => {
                let whole = [AllocRec::new(0, self.agblocks)];
                let mut fs = self.trees(geo, &whole, layout)?;
                age(&mut fs, &self.aging, rng)?;
                return Ok(fs);
            }
        };
        let extents = lay_out(lengths, self.agblocks, rng)?;
        self.trees(geo, &extents, layout)
    }

    /// Both trees over `extents` (sorted by startblock), built as
    /// `btree_fill` says.
    fn trees(&self, geo: BtreeGeometry, extents: &[AllocRec], layout: Option<&BtreeLayout>) -> Result<FreeSpace, ModelError> {
        match self.btree_fill {
            BtreeFill::BulkLoad(fill) => FreeSpace::from_extents(self.agblocks, geo, extents, fill),
            BtreeFill::Inserted => FreeSpace::grown(self.agblocks, geo, extents),
            BtreeFill::Layout => {
                let layout = layout.ok_or_else(|| invalid("btree_layout_file", "the layout was not read"))?;
                FreeSpace::from_layout(self.agblocks, geo, extents, layout)
            }
        }
    }

    /// Upper bound on the free extents of a run: those the source builds
    /// (for aging, one per step at most), plus per call one if
    /// `alignment > 1` (an aligned allocation may leave a remainder on
    /// each side; unaligned ones take the start of an extent) and one if
    /// `free_prob > 0` (a free adds at most one), never more than an AG
    /// can hold apart (`agblocks / 2 + 1`).
    pub fn extents_bound(&self, freesp: Option<&FreespHistogram>) -> u64 {
        let built = match self.source {
            FreeSpaceSource::FreespFile => freesp.map_or(0, FreespHistogram::total_extents),
            FreeSpaceSource::Histogram => buckets_footprint(&self.histogram).map_or(u64::MAX, |f| f.extents),
            FreeSpaceSource::Fragmentation => {
                FragmentationShape::new(self.fragmentation, self.free_blocks, self.small_extent_blocks)
                    .footprint()
                    .extents
            }
            FreeSpaceSource::Aging => self.aging.max_steps.saturating_add(1),
        };
        let most = u64::from(self.agblocks) / 2 + 1;
        let per_call = u64::from(self.alignment > 1) + u64::from(self.free_prob > 0.0);
        // Untimed calls before may leave remainders as the timed ones do;
        // each block a busy step frees adds at most one extent, and so do
        // each of its calls' remainders.
        let (before_calls, busy) = self.before_totals();
        let per_call = per_call.saturating_mul(self.allocations_per_call());
        built
            .saturating_add(self.calls.saturating_add(before_calls).saturating_mul(per_call))
            .saturating_add(busy.saturating_mul(2))
            .min(most)
    }

    /// Most allocations one call makes: 1, or maxlen for a fallocate (one
    /// block each at worst).
    fn allocations_per_call(&self) -> u64 {
        match self.request {
            Request::One => 1,
            Request::Fallocate => u64::from(self.maxlen),
        }
    }

    /// The untimed calls and the busy blocks of `before`.
    fn before_totals(&self) -> (u64, u64) {
        self.before.iter().fold((0u64, 0u64), |(c, b), s| match *s {
            Step::Calls(n) => (c.saturating_add(n), b),
            Step::Busy(n) => (c, b.saturating_add(n)),
        })
    }

    /// Upper bound on one run's peak memory, bytes: [`RUN_BASE_BYTES`],
    /// plus `extents_bound x (EXTENT_BYTES + LEAF_BYTES / leaf_minrecs)`,
    /// plus `calls x CALL_BYTES` (16 more per further allocation a
    /// fallocate call may make: its live extents); aging adds 8 bytes per extent (the record
    /// list it scans) and 16 per step for its live extents (at most one per
    /// step, and one per AG block).
    pub fn memory_bytes(&self, freesp: Option<&FreespHistogram>) -> u64 {
        let minrecs = BtreeGeometry::new(self.block_size, self.btree_header_bytes).map_or(1, |g| g.leaf_minrecs.max(1));
        let mut per_extent = EXTENT_BYTES + LEAF_BYTES / minrecs as u64;
        // A call's time, and each extent it took in the list of live ones.
        let per_call = CALL_BYTES.saturating_add(16u64.saturating_mul(self.allocations_per_call() - 1));
        let mut total = RUN_BASE_BYTES.saturating_add(self.calls.saturating_mul(per_call));
        if self.source == FreeSpaceSource::Aging {
            per_extent += 8;
            let live = self.aging.max_steps.min(u64::from(self.agblocks));
            total = total.saturating_add(live.saturating_mul(16));
        }
        if self.between_calls != BetweenCalls::Cold {
            // Every line of every block may stay in the set of lines
            // touched by earlier calls: 24 bytes per line, both trees.
            let lines_per_block = u64::from(self.block_size / 64).max(1);
            let blocks = self.extents_bound(freesp) / minrecs.max(1) as u64 + 1;
            total = total.saturating_add(blocks.saturating_mul(lines_per_block).saturating_mul(2 * 24));
        }
        // A busy extent: its range, its rb-tree node, its line in the set.
        let busy = self.busy_extents.saturating_add(self.before_totals().1);
        total = total.saturating_add(busy.min(self.extents_bound(freesp)).saturating_mul(BUSY_BYTES));
        total
            .saturating_add(self.extents_bound(freesp).saturating_mul(per_extent))
            .saturating_add(freesp.map_or(0, FreespHistogram::memory_bytes))
    }
}

/// Most blocks an AGFL holds (`xfs_agfl_size`: a 4096-byte sector less
/// its 36-byte header, in 4-byte slots).
pub const AGFL_MAX_BLOCKS: usize = 1015;

/// `xfs_db freesp` counts the AGFL's blocks as one-block free extents
/// (db/freesp.c scans the free list after the btree; on the lab's AG:
/// 3001 records in the trees, `flcount` 8, freesp 3009); the trees do not
/// hold them. Drops one-block lengths from `lengths` until `records` are
/// left, the trees' records in the layout read with the freesp text.
fn drop_agfl_blocks(lengths: &mut Vec<u32>, records: usize) -> Result<(), ModelError> {
    let extra = lengths.len().checked_sub(records).filter(|&d| d <= AGFL_MAX_BLOCKS).ok_or_else(|| {
        invalid(
            "btree_layout_file",
            format!(
                "its by-block leaves hold {records} records but freesp_file has {} free extents (the trees' records and at most {AGFL_MAX_BLOCKS} AGFL blocks): both must come from the same lab run",
                lengths.len()
            ),
        )
    })?;
    for _ in 0..extra {
        let i = lengths.iter().rposition(|&l| l == 1).ok_or_else(|| {
            invalid(
                "btree_layout_file",
                "freesp_file has fewer one-block extents than AGFL blocks to drop",
            )
        })?;
        lengths.swap_remove(i);
    }
    Ok(())
}

/// One call's time in ps: what it counted times the event prices; summed
/// in `u128`, an error past `u64::MAX` ps.
fn call_time_ps(s: &BtreeStats, prices: &EventPrices) -> Result<u64, ModelError> {
    u64::try_from(prices.call_ps(s)).map_err(|_| ModelError::Overflow("xfs_alloc: time of one call in ps (more than 213 days)"))
}

/// Runs the workload on machine `profile`: validate, read the free-space
/// file if that is the source, build the free space, then `calls` timed
/// `xfs_alloc_ag_vextent_size` calls (see [`PreparedXfsAlloc::simulate`]).
pub fn run_xfs_alloc(
    p: &XfsAllocParams,
    profile: &MachineProfile,
    base_dir: &Path,
    rng: &mut ChaCha8Rng,
) -> Result<BTreeMap<String, f64>, ModelError> {
    PreparedXfsAlloc::new_on(p.clone(), profile, base_dir)?.simulate(rng)
}

/// The metrics [`run_xfs_alloc`] reports: (name, unit, meaning).
pub const METRICS: &[(&str, &str, &str)] = &[
    ("alloc_us", "us", "mean time of one xfs_alloc_ag_vextent_size call"),
    ("alloc_us_p50", "us", "median call time"),
    ("alloc_us_p99", "us", "99th percentile call time"),
    ("records_walked", "count", "by-size btree records examined per call (mean)"),
    ("blocks_visited", "count", "btree blocks visited per call (mean)"),
    (
        "buffer_reads",
        "count",
        "btree blocks got through the buffer cache per call (mean; a lookup level the cursor already holds is not one)",
    ),
    (
        "lines_cold",
        "count",
        "btree cache lines touched for the first time in the call and by no earlier call (mean)",
    ),
    (
        "busy_trims",
        "count",
        "free extents xfs_extent_busy_trim cut busy parts from, per call (mean)",
    ),
    (
        "alloc_len",
        "blocks",
        "blocks the by-size allocation of a call took (mean; 0 for a failed call; a fallocate call's near allocations are not counted)",
    ),
    (
        "failed_calls",
        "count",
        "calls that found no extent (the AG ran out of space); their time and length are averaged in",
    ),
    (
        "btree_blocks",
        "count",
        "blocks of the two free-space btrees once the free space is built, before `before`'s steps and the calls (where the lab reads the AGF), as agf_btreeblks counts them (all but the two roots mkfs made)",
    ),
    ("free_extents", "count", "free extents in the AG after the run"),
    ("largest_free", "blocks", "longest free extent after the run"),
    ("calls", "count", "allocation calls made"),
];

/// The `xfs-alloc` workload (case 4).
#[derive(Debug, Clone, Copy)]
pub struct XfsAlloc;

impl Workload for XfsAlloc {
    fn kind(&self) -> &'static str {
        "xfs-alloc"
    }

    fn about(&self) -> &'static str {
        "XFS: by-size allocations in one allocation group's free-space btrees"
    }

    fn sections(&self) -> &'static [&'static str] {
        &["xfs_alloc"]
    }

    /// `machine.profile`: it prices the counted events ([`cost`]); the
    /// topology, placement and wake-up latency do not apply to one call.
    fn reads_shared(&self) -> &'static [&'static str] {
        &["machine.profile"]
    }

    fn params(&self) -> Vec<crate::workload::ParamSpec> {
        keys::PARAMS.to_vec()
    }

    fn metric_docs(&self) -> Vec<MetricSpec> {
        METRICS.iter().map(|&(n, u, m)| MetricSpec::new(n, u, m)).collect()
    }

    fn resolved_toml(&self, sections: &Sections<'_>) -> Result<String, ParamError> {
        let text = sections.resolved_selected::<XfsAllocParams>("xfs_alloc", &SOURCE_KEYS)?;
        sections.check_selected(&SOURCE_KEYS)?;
        Ok(text)
    }

    /// Validates `[xfs_alloc]`, resolves the `[machine]` profile and reads
    /// the freesp file, so that `fsmeta check` opens data files and a bad
    /// one is a parameter error on `xfs_alloc.freesp_file`.
    fn prepare(&self, input: &Input<'_>) -> Result<Box<dyn Prepared>, ParamError> {
        let params: XfsAllocParams = input.sections.get("xfs_alloc")?;
        let profile = resolve_profile(input.machine, input.dir).map_err(machine_param)?;
        let prepared = PreparedXfsAlloc::new_on(params, &profile, input.dir).map_err(|e| e.under("xfs_alloc"))?;
        Ok(Box::new(prepared))
    }
}

/// An `xfs-alloc` study ready to run: validated parameters and the freesp
/// histogram read once (when `source = "freesp_file"`), used by every run.
#[derive(Debug, Clone)]
pub struct PreparedXfsAlloc {
    params: XfsAllocParams,
    freesp: Option<FreespHistogram>,
    layout: Option<BtreeLayout>,
    prices: EventPrices,
}

impl PreparedXfsAlloc {
    /// Validates `params` and reads the freesp file (relative to
    /// `base_dir`) if it is the source; events are priced on `profile`.
    /// Field names are relative to `[xfs_alloc]`.
    pub fn new_on(params: XfsAllocParams, profile: &MachineProfile, base_dir: &Path) -> Result<Self, ParamError> {
        params.validate()?;
        let freesp = params.read_freesp(base_dir)?;
        let layout = params.read_layout(base_dir)?;
        if let Some(l) = &layout {
            let geo = BtreeGeometry::new(params.block_size, params.btree_header_bytes)?;
            l.check(&geo).map_err(|m| invalid("btree_layout_file", m))?;
        }
        if let (Some(l), Some(h)) = (&layout, &freesp)
            && !(l.records() as u64..=l.records() as u64 + AGFL_MAX_BLOCKS as u64).contains(&h.total_extents())
        {
            return Err(invalid(
                "btree_layout_file",
                format!(
                    "its by-block leaves hold {} records but freesp_file has {} free extents (the trees' records and at most {AGFL_MAX_BLOCKS} AGFL blocks): both must come from the same lab run",
                    l.records(),
                    h.total_extents()
                ),
            ));
        }
        let prices = EventPrices::with(profile, &params.pricing(profile)?).map_err(|m| invalid("between_calls", m))?;
        Ok(PreparedXfsAlloc {
            params,
            freesp,
            layout,
            prices,
        })
    }

    /// The event prices in ps.
    pub fn prices(&self) -> &EventPrices {
        &self.prices
    }

    /// The parameters.
    pub fn params(&self) -> &XfsAllocParams {
        &self.params
    }

    /// The freesp histogram read at preparation, if that is the source.
    pub fn freesp(&self) -> Option<&FreespHistogram> {
        self.freesp.as_ref()
    }

    /// One run: build the free space, then `calls` timed
    /// `xfs_alloc_ag_vextent_size` calls with `strategy`, freeing an
    /// earlier allocation with probability `free_prob` after each.
    /// Metrics: `alloc_us` (mean per call, µs), `alloc_us_p50`,
    /// `alloc_us_p99`, `records_walked` and `blocks_visited` (means per
    /// call), `alloc_len` (mean blocks allocated, 0 for a failed call),
    /// `free_extents` and `largest_free` (after the run, blocks), `calls`.
    pub fn simulate(&self, rng: &mut ChaCha8Rng) -> Result<BTreeMap<String, f64>, ModelError> {
        let p = &self.params;
        let mut fs = p.build_free_space_on(self.freesp.as_ref(), self.layout.as_ref(), rng)?;
        fs.keep_warm(p.between_calls != BetweenCalls::Cold);
        fs.mark_busy_last(p.busy_extents);
        let btree_blocks = fs.btree_blocks();
        let args = AllocArgs {
            alignment: p.alignment,
            ..AllocArgs::new(p.minlen, p.maxlen)
        };
        replay(&mut fs, &p.before, &args, p.strategy, p.request);
        let mut times_ps: Vec<u64> = Vec::new();
        // Exactly `calls` times (counted in `memory_bytes`); an error, not
        // an abort, if even that cannot be reserved.
        times_ps
            .try_reserve_exact(usize::try_from(p.calls).unwrap_or(usize::MAX))
            .map_err(|_| ModelError::OutOfMemory {
                what: "the per-call times",
                bytes: u128::from(p.calls) * 8,
            })?;
        let mut total = BtreeStats::default();
        let (mut len_sum, mut failed) = (0u64, 0u64);
        let mut live: Vec<(u32, u32)> = Vec::new();
        for _ in 0..p.calls {
            let call = make_call(&mut fs, &args, p.strategy, p.request);
            times_ps.push(call_time_ps(&call.stats, &self.prices)?);
            total = total.plus(call.stats);
            match call.first {
                Some(r) => len_sum = len_sum.saturating_add(u64::from(r.len)),
                None => failed += 1,
            }
            live.extend(call.extents);
            if !live.is_empty() && rng.random_bool(p.free_prob) {
                let (bno, len) = live.swap_remove(rng.random_range(0..live.len()));
                xfs_free_ag_extent(&mut fs, bno, len);
            }
        }
        let mut m = summarise(&mut times_ps, &total, len_sum, &fs);
        m.insert("failed_calls".into(), failed as f64);
        m.insert("btree_blocks".into(), btree_blocks as f64);
        Ok(m)
    }
}

/// The metrics of a run from its call times (sorted here) and totals.
fn summarise(times_ps: &mut [u64], counts: &BtreeStats, len_sum: u64, fs: &FreeSpace) -> BTreeMap<String, f64> {
    let n = times_ps.len().max(1) as f64;
    times_ps.sort_unstable();
    let pct = |q: f64| {
        let rank = ((q * times_ps.len() as f64).ceil() as usize).clamp(1, times_ps.len().max(1));
        times_ps.get(rank - 1).map_or(0.0, |&t| t as f64 / 1e6)
    };
    let total: u128 = times_ps.iter().map(|&t| u128::from(t)).sum();
    let mut m = BTreeMap::new();
    m.insert("alloc_us".into(), total as f64 / 1e6 / n);
    m.insert("alloc_us_p50".into(), pct(0.50));
    m.insert("alloc_us_p99".into(), pct(0.99));
    m.insert("records_walked".into(), counts.records_examined as f64 / n);
    m.insert("blocks_visited".into(), counts.blocks_visited as f64 / n);
    m.insert("buffer_reads".into(), counts.buffer_reads as f64 / n);
    m.insert("lines_cold".into(), counts.lines_cold as f64 / n);
    m.insert("busy_trims".into(), counts.busy_trims as f64 / n);
    m.insert("alloc_len".into(), len_sum as f64 / n);
    m.insert("free_extents".into(), fs.extent_count() as f64);
    m.insert("largest_free".into(), f64::from(fs.longest()));
    m.insert("calls".into(), n);
    m
}

impl Prepared for PreparedXfsAlloc {
    fn model_key(&self) -> Option<String> {
        // The level only matters through the shape it rounds to.
        let mut p = self.params.clone();
        let shape = (p.source == FreeSpaceSource::Fragmentation)
            .then(|| FragmentationShape::new(p.fragmentation, p.free_blocks, p.small_extent_blocks));
        if shape.is_some() {
            p.fragmentation = 0.0;
        }
        Some(format!("{p:?} {shape:?}"))
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        METRICS.iter().map(|&(n, u, m)| MetricSpec::new(n, u, m)).collect()
    }

    fn key_metrics(&self) -> &'static [&'static str] {
        &["alloc_us", "records_walked", "blocks_visited", "alloc_len"]
    }

    /// See [`XfsAllocParams::memory_bytes`].
    fn memory_bytes(&self) -> u64 {
        self.params.memory_bytes(self.freesp.as_ref())
    }

    fn run(&self, key: RunKey) -> Result<Metrics, RunFailure> {
        Ok(self.simulate(&mut key.stream("xfs_alloc"))?)
    }
}
