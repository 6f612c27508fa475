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
mod params;
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

use params::invalid;
pub use params::{
    AGFL_MAX_BLOCKS, BUSY_BYTES, BtreeFill, CALL_BYTES, EXTENT_BYTES, FreeSpaceSource, LEAF_BYTES, MAX_BEFORE_STEPS, MAX_COST_NS,
    RECORD_NS_FITTED, RUN_BASE_BYTES, RecordNs, SOURCE_KEYS, XfsAllocParams,
};

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
