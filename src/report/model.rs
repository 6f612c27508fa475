//! The typed model of the result files: a row of `runs.csv`, a row of
//! `summary.csv` and the `summary.json` document, written and read back
//! through serde (the `csv` crate and `serde_json`), so that quoting,
//! escaping and number text are the crates' and every file read back
//! equals what was written.
//!
//! Numbers in the CSV files are Rust's shortest round-trip text of the
//! `f64` (`1000`, `0.1`, `0.0000001`: no exponent), as before the crates
//! took over; not-a-number and the infinities are written `NaN`, `inf`
//! and `-inf` (RFC 4180 says nothing of numbers; Rust's `str::parse`,
//! the `csv` crate's reader and pandas' `read_csv` read them back). JSON
//! has neither: in `summary.json` they are `null`, read back as `None`.

use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;

/// An `f64` in a CSV field: serialized with Rust's `Display` (shortest
/// text that reads back to the same value, never an exponent), read with
/// `str::parse`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct Num(pub f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// The fixed columns of `runs.csv` before the swept parameters.
pub const RUNS_HEAD: [&str; 2] = ["scenario", "variant"];
/// The fixed columns of `runs.csv` after the swept parameters.
pub const RUNS_MID: [&str; 2] = ["replication", "seed"];
/// The fixed columns of `summary.csv` after the swept parameters.
pub const SUMMARY_TAIL: [&str; 10] = [
    "metric",
    "mean",
    "stddev",
    "ci95_lo",
    "ci95_hi",
    "n",
    "diff_vs_first",
    "diff_ci95_lo",
    "diff_ci95_hi",
    "ratio_vs_first",
];

/// One row of `runs.csv`: one run. Columns: `scenario,variant`, the
/// swept parameters, `replication,seed`, then every metric (the union of
/// the runs' names, sorted; empty where a run has no such metric).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    /// The scenario's name.
    pub scenario: String,
    /// The variant's name.
    pub variant: String,
    /// The swept parameters' values, in sweep order.
    pub point: Vec<String>,
    /// The replication, from 0.
    pub replication: u32,
    /// The run's seed.
    pub seed: u64,
    /// The metrics, in the table's metric order.
    pub metrics: Vec<Option<Num>>,
}

/// `runs.csv` as a whole.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunsTable {
    /// Swept parameter paths, in sweep order.
    pub params: Vec<String>,
    /// Metric names, sorted.
    pub metrics: Vec<String>,
    /// One row per run, in plan order.
    pub rows: Vec<RunRow>,
}

/// A paired comparison with the first variant in `summary.csv` (empty
/// cells for the first variant itself).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedCells {
    /// `diff_vs_first`.
    pub diff: Option<Num>,
    /// `diff_ci95_lo`.
    pub diff_lo: Option<Num>,
    /// `diff_ci95_hi`.
    pub diff_hi: Option<Num>,
    /// `ratio_vs_first`.
    pub ratio: Option<Num>,
}

/// One row of `summary.csv`: one metric at one point for one variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// The scenario's name.
    pub scenario: String,
    /// The variant's name.
    pub variant: String,
    /// The swept parameters' values, in sweep order.
    pub point: Vec<String>,
    /// The metric.
    pub metric: String,
    /// Mean over the replications.
    pub mean: Num,
    /// Sample standard deviation.
    pub stddev: Num,
    /// Lower end of the mean's 95% CI.
    pub ci95_lo: Option<Num>,
    /// Upper end of the mean's 95% CI.
    pub ci95_hi: Option<Num>,
    /// Replications.
    pub n: usize,
    /// Against the first variant.
    pub paired: PairedCells,
}

/// `summary.csv` as a whole.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SummaryTable {
    /// Swept parameter paths, in sweep order.
    pub params: Vec<String>,
    /// The rows, by point, variant, metric.
    pub rows: Vec<SummaryRow>,
}

/// The `format` field of `summary.json`.
pub const SUMMARY_JSON_FORMAT: &str = "fsmeta-summary";
/// The version of `summary.json` this fsmeta writes and reads.
pub const SUMMARY_JSON_VERSION: u32 = 2;

/// `summary.json`: the summary rows with the scenario and its seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryJson {
    /// Always [`SUMMARY_JSON_FORMAT`].
    pub format: String,
    /// [`SUMMARY_JSON_VERSION`].
    pub version: u32,
    /// The scenario's name.
    pub scenario: String,
    /// The scenario's seed.
    pub seed: u64,
    /// The rows.
    pub rows: Vec<SummaryJsonRow>,
}

/// One row of `summary.json`; a statistic that is not a finite number is
/// `null` (JSON has no NaN), `None` here, and so is the CI of one
/// replication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryJsonRow {
    /// The variant's name.
    pub variant: String,
    /// Swept parameter path to value (paths sort as the sweep does).
    pub point: BTreeMap<String, String>,
    /// The metric.
    pub metric: String,
    /// Mean.
    pub mean: Option<f64>,
    /// Sample standard deviation.
    pub stddev: Option<f64>,
    /// Lower end of the 95% CI.
    pub ci95_lo: Option<f64>,
    /// Upper end of the 95% CI.
    pub ci95_hi: Option<f64>,
    /// Replications.
    pub n: usize,
}

/// A result file that cannot be read back as what fsmeta writes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A CSV file is malformed: its header, a field, or a row's length.
    #[error("line {line}: {message}")]
    Csv {
        /// Line number, from 1 (0 when unknown).
        line: u64,
        /// What was wrong.
        message: String,
    },
    /// `summary.json` is malformed.
    #[error("line {line}, column {column}: {message}")]
    Json {
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// What was wrong.
        message: String,
    },
    /// `summary.json` of another format or version.
    #[error("format {found}, this fsmeta reads {expected}")]
    Version {
        /// The format and version the file says.
        found: String,
        /// What this fsmeta reads.
        expected: String,
    },
}

fn csv_error(e: &csv::Error) -> ModelError {
    ModelError::Csv {
        line: e.position().map_or(0, csv::Position::line),
        message: crate::text::one_line(
            &match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => err.to_string(),
                _ => e.to_string(),
            },
            300,
        ),
    }
}

fn writer(out: &mut Vec<u8>) -> csv::Writer<&mut Vec<u8>> {
    csv::WriterBuilder::new()
        .has_headers(false)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out)
}

/// Writes a header and serialized rows as CSV text.
fn write_csv<R: Serialize>(header: &[&str], rows: &[R]) -> Result<String, ModelError> {
    let mut out = Vec::new();
    {
        let mut w = writer(&mut out);
        w.write_record(header).map_err(|e| csv_error(&e))?;
        for r in rows {
            w.serialize(r).map_err(|e| csv_error(&e))?;
        }
        w.flush().map_err(|e| ModelError::Csv {
            line: 0,
            message: e.to_string(),
        })?;
    }
    String::from_utf8(out).map_err(|e| ModelError::Csv {
        line: 0,
        message: e.to_string(),
    })
}

/// Reads CSV text: the header's fields and every record.
fn read_csv(text: &str) -> Result<(Vec<String>, Vec<csv::StringRecord>), ModelError> {
    let mut r = csv::ReaderBuilder::new().has_headers(true).from_reader(text.as_bytes());
    let header = r.headers().map_err(|e| csv_error(&e))?.iter().map(str::to_string).collect();
    let rows = r.records().collect::<Result<Vec<_>, _>>().map_err(|e| csv_error(&e))?;
    Ok((header, rows))
}

/// Fields `range` of `rec`, deserialized as `T` (errors name the line).
fn cells<T: serde::de::DeserializeOwned>(rec: &csv::StringRecord, range: std::ops::Range<usize>) -> Result<T, ModelError> {
    let sub: csv::StringRecord = rec.iter().skip(range.start).take(range.len()).collect();
    let line = rec.position().map_or(0, csv::Position::line);
    sub.deserialize::<T>(None).map_err(|e| ModelError::Csv {
        line,
        message: format!("{} (fields {}..{})", csv_error(&e), range.start + 1, range.end),
    })
}

/// The columns between the fixed ones of a header: `head`, then the swept
/// parameters, then `mid` (the first `mid` column ends the parameters).
fn split_header<'a>(header: &'a [String], head: &[&str], mid: &str) -> Result<(&'a [String], usize), ModelError> {
    let bad = |m: String| ModelError::Csv { line: 1, message: m };
    if header.len() < head.len() || header.iter().zip(head).any(|(a, b)| a != b) {
        return Err(bad(format!("expected a header starting `{}`", head.join(","))));
    }
    let end = header
        .iter()
        .skip(head.len())
        .position(|h| h == mid)
        .ok_or_else(|| bad(format!("no `{mid}` column")))?;
    Ok((&header[head.len()..head.len() + end], head.len() + end))
}

impl RunsTable {
    /// The header row.
    pub fn header(&self) -> Vec<&str> {
        let mut h: Vec<&str> = RUNS_HEAD.to_vec();
        h.extend(self.params.iter().map(String::as_str));
        h.extend(RUNS_MID);
        h.extend(self.metrics.iter().map(String::as_str));
        h
    }

    /// The table as CSV text.
    pub fn to_csv(&self) -> Result<String, ModelError> {
        write_csv(&self.header(), &self.rows)
    }

    /// Reads `runs.csv` text back.
    pub fn from_csv(text: &str) -> Result<RunsTable, ModelError> {
        let (header, recs) = read_csv(text)?;
        let (params, mid) = split_header(&header, &RUNS_HEAD, RUNS_MID[0])?;
        if header.get(mid + 1).map(String::as_str) != Some(RUNS_MID[1]) {
            return Err(ModelError::Csv {
                line: 1,
                message: "expected `seed` after `replication`".into(),
            });
        }
        let k = params.len();
        let m0 = mid + RUNS_MID.len();
        let mut rows = Vec::with_capacity(recs.len());
        for rec in &recs {
            let (scenario, variant): (String, String) = cells(rec, 0..2)?;
            let (replication, seed): (u32, u64) = cells(rec, mid..m0)?;
            rows.push(RunRow {
                scenario,
                variant,
                point: cells(rec, 2..2 + k)?,
                replication,
                seed,
                metrics: cells(rec, m0..header.len())?,
            });
        }
        Ok(RunsTable {
            params: params.to_vec(),
            metrics: header[m0..].to_vec(),
            rows,
        })
    }
}

impl SummaryTable {
    /// The header row.
    pub fn header(&self) -> Vec<&str> {
        let mut h: Vec<&str> = RUNS_HEAD.to_vec();
        h.extend(self.params.iter().map(String::as_str));
        h.extend(SUMMARY_TAIL);
        h
    }

    /// The table as CSV text.
    pub fn to_csv(&self) -> Result<String, ModelError> {
        write_csv(&self.header(), &self.rows)
    }

    /// Reads `summary.csv` text back.
    pub fn from_csv(text: &str) -> Result<SummaryTable, ModelError> {
        let (header, recs) = read_csv(text)?;
        let (params, mid) = split_header(&header, &RUNS_HEAD, SUMMARY_TAIL[0])?;
        if header[mid..] != SUMMARY_TAIL {
            return Err(ModelError::Csv {
                line: 1,
                message: format!("expected the header to end `{}`", SUMMARY_TAIL.join(",")),
            });
        }
        let k = params.len();
        let mut rows = Vec::with_capacity(recs.len());
        for rec in &recs {
            let (scenario, variant): (String, String) = cells(rec, 0..2)?;
            let (metric, mean, stddev, ci95_lo, ci95_hi, n): (String, Num, Num, Option<Num>, Option<Num>, usize) =
                cells(rec, mid..mid + 6)?;
            rows.push(SummaryRow {
                scenario,
                variant,
                point: cells(rec, 2..2 + k)?,
                metric,
                mean,
                stddev,
                ci95_lo,
                ci95_hi,
                n,
                paired: cells(rec, mid + 6..header.len())?,
            });
        }
        Ok(SummaryTable {
            params: params.to_vec(),
            rows,
        })
    }
}

impl SummaryJson {
    /// The document as pretty-printed JSON, ending in a newline.
    pub fn to_json(&self) -> Result<String, ModelError> {
        let mut s = serde_json::to_string_pretty(self).map_err(|e| ModelError::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        s.push('\n');
        Ok(s)
    }

    /// Reads `summary.json` text back; a document of another format or
    /// version is refused before its rows are read.
    pub fn from_json(text: &str) -> Result<SummaryJson, ModelError> {
        use crate::runner::store::{Refusal, read_versioned};
        read_versioned(text, SUMMARY_JSON_FORMAT, SUMMARY_JSON_VERSION).map_err(|r| match r {
            Refusal::Malformed { line, column, message } => ModelError::Json { line, column, message },
            Refusal::Version { found, expected } => ModelError::Version { found, expected },
        })
    }
}
