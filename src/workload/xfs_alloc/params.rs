//! The `[xfs_alloc]` section's parameters: the free space's source and
//! shape, the calls' requests, the per-record cost, the pricing of the
//! measured window; their checks, and the free space they build.

use super::*;

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
pub(super) fn invalid(field: &str, message: impl Into<String>) -> ParamError {
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
