//! The free-space histogram as `xfs_db -c freesp` prints it
//! (xfsprogs `db/freesp.c`): reading that text as it is, and writing a
//! tree's histogram back out in the same format.
//!
//! Format: a header `"%7s %7s %7s %7s %6s"` (from, to, extents, blocks,
//! pct), one row `"%7d %7d %7lld %7lld %6.2f"` per non-empty bin, and with
//! `-s` three summary lines. Default bins are powers of two: lows 1, 2, 4,
//! ... while below `agblocks`, each high one less than the next low, the
//! last high `agblocks`.

use std::fmt::Write as _;
use std::path::Path;

use crate::kernel::ModelError;

/// One row of the histogram: `extents` free extents of `from..=to` blocks
/// holding `blocks` blocks in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreespBin {
    /// Shortest length in the bin, blocks.
    pub from: u64,
    /// Longest length in the bin, blocks.
    pub to: u64,
    /// Number of free extents in the bin.
    pub extents: u64,
    /// Free blocks held by those extents.
    pub blocks: u64,
}

/// A free-space histogram: the non-empty bins in increasing order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FreespHistogram {
    /// Rows, ordered by `from`, non-overlapping.
    pub bins: Vec<FreespBin>,
}

impl FreespHistogram {
    /// Bins extent lengths into `db/freesp.c`'s default power-of-two bins
    /// for an AG of `agblocks` blocks, keeping only non-empty bins.
    pub fn from_lengths(lengths: impl Iterator<Item = u32>, agblocks: u32) -> Self {
        let mut lows = vec![1u64];
        while lows[lows.len() - 1] * 2 < u64::from(agblocks) {
            lows.push(lows[lows.len() - 1] * 2);
        }
        let mut bins: Vec<FreespBin> = lows
            .iter()
            .enumerate()
            .map(|(i, &from)| FreespBin {
                from,
                to: lows.get(i + 1).map_or(u64::from(agblocks).max(from), |n| n - 1),
                extents: 0,
                blocks: 0,
            })
            .collect();
        for len in lengths {
            let len = u64::from(len);
            let i = bins.partition_point(|b| b.to < len).min(bins.len() - 1);
            bins[i].extents += 1;
            bins[i].blocks += len;
        }
        bins.retain(|b| b.extents > 0);
        Self { bins }
    }

    /// Total free extents (saturating at `u64::MAX`; a parsed histogram
    /// never gets there).
    pub fn total_extents(&self) -> u64 {
        self.bins.iter().fold(0u64, |t, b| t.saturating_add(b.extents))
    }

    /// Total free blocks (saturating at `u64::MAX`; a parsed histogram
    /// never gets there).
    pub fn total_blocks(&self) -> u64 {
        self.bins.iter().fold(0u64, |t, b| t.saturating_add(b.blocks))
    }

    /// Bytes this histogram occupies in memory (for memory estimates).
    pub fn memory_bytes(&self) -> u64 {
        (self.bins.capacity() * std::mem::size_of::<FreespBin>()) as u64
    }

    /// The text `xfs_db -c freesp` prints (with `-s` if `summary`).
    pub fn to_text(&self, summary: bool) -> String {
        let total = self.total_blocks();
        let mut s = format!("{:>7} {:>7} {:>7} {:>7} {:>6}\n", "from", "to", "extents", "blocks", "pct");
        for b in &self.bins {
            let pct = if total == 0 { 0.0 } else { b.blocks as f64 * 100.0 / total as f64 };
            let _ = writeln!(s, "{:>7} {:>7} {:>7} {:>7} {:>6.2}", b.from, b.to, b.extents, b.blocks, pct);
        }
        if summary {
            let ext = self.total_extents();
            let _ = writeln!(s, "total free extents {ext}");
            let _ = writeln!(s, "total free blocks {total}");
            let avg = if ext == 0 { 0.0 } else { total as f64 / ext as f64 };
            let _ = writeln!(s, "average free extent size {}", format_g(avg));
        }
        s
    }

    /// Reads a freesp file (see [`FreespHistogram::parse`]): a regular
    /// file of at most 16 MiB ([`crate::engine::input::read_text_file`]).
    pub fn read_file(path: &Path) -> Result<Self, ModelError> {
        let text = crate::engine::input::read_text_file(path)?;
        Self::parse(&text, path)
    }

    /// Parses `xfs_db -c freesp` output as printed: blank lines are
    /// skipped, the first line must be the header, then at least one row
    /// of five fields, then optionally the three `-s` summary lines, all
    /// three in order and checked against the rows.
    ///
    /// A file cut short must not pass for a smaller free space, so every
    /// row's `pct` must match its share of the rows' blocks (to the 0.01
    /// that `%6.2f` prints): a missing row changes every other row's
    /// share. This is what catches a truncated file without summary lines
    /// (the published text in `scenarios/data/case4.freesp` has none); a
    /// lost row can only go unnoticed if it held under 0.005% of the free
    /// blocks. Rows with no extents are refused (`xfs_db` prints only
    /// non-empty bins), as is a header without rows.
    ///
    /// Errors name `path` and the 1-based line; so do rows whose extent or
    /// block totals would pass `u64::MAX`.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ModelError> {
        let err = |line: usize, message: String| -> ModelError { crate::param::InputError::malformed(path, line, message).into() };
        let mut header = false;
        let mut h = Self::default();
        let (mut extents, mut blocks) = (0u64, 0u64);
        // Each row's line and printed pct, checked once the total is known.
        let mut pcts: Vec<(usize, f64)> = Vec::new();
        // Summary lines read so far (0..=3), in `SUMMARY` order.
        let mut summary = 0usize;
        let mut last_line = 1;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let fields: Vec<&str> = raw.split_whitespace().collect();
            if fields.is_empty() {
                continue;
            }
            last_line = line;
            if !header {
                if fields != ["from", "to", "extents", "blocks", "pct"] {
                    return Err(err(line, "expected the header `from to extents blocks pct`".into()));
                }
                header = true;
            } else if fields[0] == "total" || fields[0] == "average" {
                if h.bins.is_empty() {
                    return Err(err(line, "a summary line before any row".into()));
                }
                h.check_summary(&fields, summary).map_err(|m| err(line, m))?;
                summary += 1;
            } else if summary > 0 {
                return Err(err(line, "a row after the summary lines".into()));
            } else {
                let (bin, pct) = parse_row(&fields).map_err(|m| err(line, m))?;
                if h.bins.last().is_some_and(|p| p.to >= bin.from) {
                    return Err(err(line, "bins out of order or overlapping".into()));
                }
                (extents, blocks) = extents
                    .checked_add(bin.extents)
                    .zip(blocks.checked_add(bin.blocks))
                    .ok_or_else(|| err(line, "the rows add up to more than 2^64 extents or blocks".into()))?;
                h.bins.push(bin);
                pcts.push((line, pct));
            }
        }
        if !header {
            return Err(err(
                text.lines().count().max(1),
                "no header line `from to extents blocks pct`".into(),
            ));
        }
        if h.bins.is_empty() {
            return Err(err(last_line, "no rows after the header (is the file cut short?)".into()));
        }
        if (1..SUMMARY.len()).contains(&summary) {
            return Err(err(
                last_line,
                format!("the summary stops before `{}` (is the file cut short?)", SUMMARY[summary].join(" ")),
            ));
        }
        for (bin, &(line, pct)) in h.bins.iter().zip(&pcts) {
            let share = bin.blocks as f64 * 100.0 / blocks as f64;
            // `%6.2f` rounds to 0.005; the slack covers f64 rounding.
            if (pct - share).abs() > 0.005 + 1e-9 {
                return Err(err(
                    line,
                    format!(
                        "pct says {pct:.2} but this row holds {share:.2}% of the rows' {blocks} blocks: \
                         rows are missing (is the file cut short?) or were edited"
                    ),
                ));
            }
        }
        Ok(h)
    }

    /// Checks summary line number `k` (0-based, in [`SUMMARY`] order)
    /// against the rows.
    fn check_summary(&self, f: &[&str], k: usize) -> Result<(), String> {
        let Some(want) = SUMMARY.get(k) else {
            return Err(format!("a line after the summary: `{}`", f.join(" ")));
        };
        let value = match f.split_last() {
            Some((v, words)) if words == *want => *v,
            _ => return Err(format!("expected `{} N`, found `{}`", want.join(" "), f.join(" "))),
        };
        let v: f64 = value.parse().map_err(|_| format!("summary value `{value}` is not a number"))?;
        let (ext, blocks) = (self.total_extents() as f64, self.total_blocks() as f64);
        let (name, rows) = match k {
            0 => ("extents", ext),
            1 => ("blocks", blocks),
            _ => ("average", blocks / ext),
        };
        // The average is printed with `%g` (six significant digits).
        let close = if k == 2 { (v - rows).abs() <= rows.abs() * 1e-5 } else { v == rows };
        if !close {
            return Err(format!("summary says {v} {name}, the rows add up to {rows}"));
        }
        Ok(())
    }
}

/// The words of the three `-s` summary lines, in the order printed, each
/// followed by its value.
const SUMMARY: [&[&str]; 3] = [
    &["total", "free", "extents"],
    &["total", "free", "blocks"],
    &["average", "free", "extent", "size"],
];

/// Parses one row `from to extents blocks pct`, returning the bin and its
/// printed pct.
fn parse_row(f: &[&str]) -> Result<(FreespBin, f64), String> {
    if f.len() != 5 {
        return Err(format!("expected 5 fields (from to extents blocks pct), found {}", f.len()));
    }
    let names = ["from", "to", "extents", "blocks"];
    let mut v = [0u64; 4];
    for (k, name) in names.iter().enumerate() {
        let n: i64 = f[k].parse().map_err(|_| format!("field `{name}` is not a number: `{}`", f[k]))?;
        v[k] = u64::try_from(n).map_err(|_| format!("field `{name}` is negative: {n}"))?;
    }
    let pct = f[4]
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=100.0).contains(p))
        .ok_or_else(|| format!("field `pct` is not a number from 0 to 100: `{}`", f[4]))?;
    let [from, to, extents, blocks] = v;
    if extents == 0 {
        return Err("a row with 0 extents (xfs_db prints only non-empty bins)".into());
    }
    if from == 0 || to < from || to > u64::from(u32::MAX) {
        return Err(format!("bad bin bounds {from}..{to}"));
    }
    // `to * extents` may pass u64::MAX (then any u64 block count is below
    // it); `from * extents` may not, as the blocks must reach it.
    let fits = from.checked_mul(extents).is_some_and(|lo| blocks >= lo) && to.checked_mul(extents).is_none_or(|hi| blocks <= hi);
    if !fits {
        return Err(format!("{extents} extents of {from}..{to} blocks cannot hold {blocks} blocks"));
    }
    Ok((FreespBin { from, to, extents, blocks }, pct))
}

/// C's `%g`: six significant digits, trailing zeros removed.
fn format_g(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let exp = v.abs().log10().floor() as i32;
    if !(-4..6).contains(&exp) {
        let s = format!("{:.5e}", v);
        return s;
    }
    let decimals = (5 - exp).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
