//! The XFS allocation workload: build one AG's free space from a source
//! (an `xfs_db -c freesp` file, a bucket histogram, a fragmentation level
//! or aging), then time a series of `xfs_alloc_ag_vextent_size` calls,
//! optionally freeing earlier allocations between calls.
//!
//! Time of a call, in integer picoseconds, is what the model counted times
//! per-unit costs: blocks visited x `block_visit_ns` + records examined x
//! `record_ns` + tree updates x `tree_update_ns` + `call_ns`.

mod keys;

use std::collections::BTreeMap;
use std::path::Path;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::engine::Metrics;
use crate::engine::rng::RunKey;
use crate::kernel::ModelError;
use crate::kernel::xfs::aging::{AgingParams, age};
use crate::kernel::xfs::alloc::{AllocArgs, CutoffStrategy, xfs_alloc_ag_vextent_size, xfs_free_ag_extent};
use crate::kernel::xfs::freespace::source::{
    HistogramBucket, lay_out, lengths_from_buckets, lengths_from_fragmentation, lengths_from_freesp,
};
use crate::kernel::xfs::freespace::{AllocRec, BtreeGeometry, FreeSpace, FreespHistogram};
use crate::param::ParamError;
use crate::workload::{Input, MetricSpec, Prepared, RunFailure, Sections, Workload};

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
    /// half-full blocks that splits leave and full blocks.
    pub btree_fill: f64,
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
    /// Cost of reading one btree block (a cached `xfs_buf` lookup, lock
    /// and first lines), ns. Default 100: an estimate, not calibrated.
    pub block_visit_ns: f64,
    /// Cost of examining one record in the walk (`get_rec`, compare, the
    /// `decrement` step), ns. Default 15.4, calibrated on case 4 `lt` (the
    /// walk over ~1M equal-length records dominates that call): the
    /// published time minus the counted block visits (at the default
    /// `block_visit_ns` and `btree_fill`), updates and `call_ns`, divided
    /// by the records examined, rounded to 0.1 ns. docs/reference/kernel.md 4.5 gets
    /// ~15.7 ns by plain division.
    pub record_ns: f64,
    /// Cost of one record insert/delete/update in a tree (memmove in the
    /// leaf, key update, `xfs_trans_log_buf`), ns. Default 250: an
    /// estimate, not calibrated.
    pub tree_update_ns: f64,
    /// Fixed cost of one call (cursor setup and teardown, AGF and
    /// transaction work, ftrace function-graph overhead on every nested
    /// call), ns. Default 17,450, calibrated on case 4 `le`, whose call
    /// examines 2 records: the published time minus the counted block
    /// visits, records and updates, rounded to 50 ns.
    pub call_ns: f64,
}

impl Default for XfsAllocParams {
    fn default() -> Self {
        Self {
            agblocks: 16_777_216,
            block_size: 4096,
            btree_header_bytes: BtreeGeometry::V5_HEADER_LEN,
            btree_fill: 0.75,
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
            block_visit_ns: 100.0,
            record_ns: 15.4,
            tree_update_ns: 250.0,
            call_ns: 17_450.0,
        }
    }
}

/// An `InvalidParam` error for `field`.
fn invalid(field: &str, message: impl Into<String>) -> ParamError {
    ParamError::new(field, message)
}

impl XfsAllocParams {
    /// Checks ranges and that the chosen source has what it needs.
    pub fn validate(&self) -> Result<(), ParamError> {
        BtreeGeometry::new(self.block_size, self.btree_header_bytes)?;
        if self.agblocks < 2 {
            return Err(invalid("agblocks", "must be >= 2"));
        }
        if !(0.5..=1.0).contains(&self.btree_fill) {
            return Err(invalid("btree_fill", "must be in [0.5, 1]"));
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
        if !(0.0..=1.0).contains(&self.free_prob) {
            return Err(invalid("free_prob", "must be in [0, 1]"));
        }
        let costs = [
            ("block_visit_ns", self.block_visit_ns),
            ("record_ns", self.record_ns),
            ("tree_update_ns", self.tree_update_ns),
            ("call_ns", self.call_ns),
        ];
        for (name, v) in costs {
            if !(v.is_finite() && v >= 0.0) {
                return Err(invalid(name, "must be a finite number >= 0"));
            }
        }
        Ok(())
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
                Ok(())
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
                Ok(())
            }
            FreeSpaceSource::Aging => self.aging.validate("aging."),
            FreeSpaceSource::FreespFile => Ok(()),
        }
    }

    /// Builds the AG's free space from the configured source.
    pub fn build_free_space(&self, base_dir: &Path, rng: &mut ChaCha8Rng) -> Result<FreeSpace, ModelError> {
        let geo = BtreeGeometry::new(self.block_size, self.btree_header_bytes)?;
        let lengths = match self.source {
            FreeSpaceSource::FreespFile => {
                let h = FreespHistogram::read_file(&base_dir.join(&self.freesp_file))?;
                lengths_from_freesp(&h, rng)
            }
            FreeSpaceSource::Histogram => lengths_from_buckets(&self.histogram, rng),
            FreeSpaceSource::Fragmentation => lengths_from_fragmentation(self.fragmentation, self.free_blocks, self.small_extent_blocks),
            FreeSpaceSource::Aging => {
                let whole = [AllocRec::new(0, self.agblocks)];
                let mut fs = FreeSpace::from_extents(self.agblocks, geo, &whole, self.btree_fill)?;
                age(&mut fs, &self.aging, rng)?;
                return Ok(fs);
            }
        };
        let extents = lay_out(lengths, self.agblocks, rng)?;
        FreeSpace::from_extents(self.agblocks, geo, &extents, self.btree_fill)
    }
}

/// Converts a cost in ns to integer picoseconds, rounding to the nearest.
fn ns_to_ps(ns: f64) -> u64 {
    crate::machine::ns_to_ps(ns)
}

/// Runs the workload: validate, build the free space, then `calls` timed
/// `xfs_alloc_ag_vextent_size` calls with `strategy`, freeing an earlier
/// allocation with probability `free_prob` after each. Metrics:
/// `alloc_us` (mean per call, µs), `alloc_us_p50`, `alloc_us_p99`,
/// `records_walked` and `blocks_visited` (means per call), `alloc_len`
/// (mean blocks allocated, 0 for a failed call), `free_extents` and
/// `largest_free` (after the run, blocks), `calls`.
pub fn run_xfs_alloc(p: &XfsAllocParams, base_dir: &Path, rng: &mut ChaCha8Rng) -> Result<BTreeMap<String, f64>, ModelError> {
    p.validate()?;
    let mut fs = p.build_free_space(base_dir, rng)?;
    let (block_ps, rec_ps) = (ns_to_ps(p.block_visit_ns), ns_to_ps(p.record_ns));
    let (upd_ps, call_ps) = (ns_to_ps(p.tree_update_ns), ns_to_ps(p.call_ns));
    let args = AllocArgs {
        alignment: p.alignment,
        ..AllocArgs::new(p.minlen, p.maxlen)
    };
    let mut times_ps = Vec::with_capacity(p.calls as usize);
    let (mut records, mut blocks, mut len_sum) = (0u64, 0u64, 0u64);
    let mut live: Vec<(u32, u32)> = Vec::new();
    for _ in 0..p.calls {
        fs.reset_stats();
        let got = xfs_alloc_ag_vextent_size(&mut fs, &args, p.strategy, None);
        let s = fs.stats();
        times_ps.push(s.blocks_visited * block_ps + s.records_examined * rec_ps + s.updates * upd_ps + call_ps);
        records += s.records_examined;
        blocks += s.blocks_visited;
        if let Some(r) = got {
            len_sum += u64::from(r.len);
            live.push((r.agbno, r.len));
        }
        if !live.is_empty() && rng.random_bool(p.free_prob) {
            let (bno, len) = live.swap_remove(rng.random_range(0..live.len()));
            xfs_free_ag_extent(&mut fs, bno, len);
        }
    }
    let n = p.calls as f64;
    times_ps.sort_unstable();
    let pct = |q: f64| {
        let rank = ((q * times_ps.len() as f64).ceil() as usize).clamp(1, times_ps.len());
        times_ps[rank - 1] as f64 / 1e6
    };
    let mut m = BTreeMap::new();
    m.insert("alloc_us".into(), times_ps.iter().sum::<u64>() as f64 / 1e6 / n);
    m.insert("alloc_us_p50".into(), pct(0.50));
    m.insert("alloc_us_p99".into(), pct(0.99));
    m.insert("records_walked".into(), records as f64 / n);
    m.insert("blocks_visited".into(), blocks as f64 / n);
    m.insert("alloc_len".into(), len_sum as f64 / n);
    m.insert("free_extents".into(), fs.extent_count() as f64);
    m.insert("largest_free".into(), f64::from(fs.longest()));
    m.insert("calls".into(), n);
    Ok(m)
}

/// The metrics [`run_xfs_alloc`] reports: (name, unit, meaning).
pub const METRICS: &[(&str, &str, &str)] = &[
    ("alloc_us", "us", "mean time of one xfs_alloc_ag_vextent_size call"),
    ("alloc_us_p50", "us", "median call time"),
    ("alloc_us_p99", "us", "99th percentile call time"),
    ("records_walked", "count", "by-size btree records examined per call (mean)"),
    ("blocks_visited", "count", "btree blocks visited per call (mean)"),
    ("alloc_len", "blocks", "blocks allocated per call (mean; 0 for a failed call)"),
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

    fn params(&self) -> Vec<crate::workload::ParamSpec> {
        keys::PARAMS.to_vec()
    }

    fn metric_docs(&self) -> Vec<MetricSpec> {
        METRICS.iter().map(|&(n, u, m)| MetricSpec::new(n, u, m)).collect()
    }

    fn resolved_toml(&self, sections: &Sections<'_>) -> Result<String, ParamError> {
        sections.resolved::<XfsAllocParams>("xfs_alloc")
    }

    fn prepare(&self, input: &Input<'_>) -> Result<Box<dyn Prepared>, ParamError> {
        let params: XfsAllocParams = input.sections.get("xfs_alloc")?;
        params.validate().map_err(|e| e.under("xfs_alloc"))?;
        Ok(Box::new(PreparedXfsAlloc {
            params,
            dir: input.dir.to_path_buf(),
        }))
    }
}

/// An `xfs-alloc` study ready to run.
#[derive(Debug)]
struct PreparedXfsAlloc {
    params: XfsAllocParams,
    dir: std::path::PathBuf,
}

impl Prepared for PreparedXfsAlloc {
    fn metrics(&self) -> Vec<MetricSpec> {
        METRICS.iter().map(|&(n, u, m)| MetricSpec::new(n, u, m)).collect()
    }

    fn key_metrics(&self) -> &'static [&'static str] {
        &["alloc_us", "records_walked", "blocks_visited", "alloc_len"]
    }

    fn run(&self, key: RunKey) -> Result<Metrics, RunFailure> {
        Ok(run_xfs_alloc(&self.params, &self.dir, &mut key.stream("xfs_alloc"))?)
    }
}
