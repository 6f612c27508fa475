//! A lab run's outputs, through the report layer's all-or-nothing writer:
//! `runs.csv` and `summary.csv` in `fsmeta run`'s formats (one row per
//! run; the long format per variant and metric, with the twin's metric
//! names), `report.txt` (median and range per metric), `lab.txt` (the
//! setup), and the experiment's own files.

use super::twin::median;
use super::{LabError, LabRun};
use crate::report::model::{Num, PairedCells, RunRow, RunsTable, SummaryRow, SummaryTable};
use crate::report::stats::mean_ci;
use crate::report::write::Staging;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The `lab.txt` line of [`LabRun::transfer`]: the key, then the ns
/// before and after the runs.
pub const TRANSFER_KEY: &str = "line transfer:";

/// Samples of [`LabRun::transfer`]'s ping-pong (its median is the figure).
pub const TRANSFER_SAMPLES: usize = 15;

/// Round trips per sample of [`LabRun::transfer`]'s ping-pong.
pub const TRANSFER_ROUND_TRIPS: u64 = 2000;

/// The two figures (ns before and after the runs) of a `lab.txt` line
/// [`TRANSFER_KEY`]'s value `text`; `None` when it gives none (`not
/// measured: ...`).
pub fn transfer_figures(text: &str) -> Option<(f64, f64)> {
    let mut ns = text.split_whitespace().map(str::parse::<f64>);
    match (ns.next(), ns.next()) {
        (Some(Ok(before)), Some(Ok(after))) => Some((before, after)),
        _ => None,
    }
}

/// The kernel, CPU, tools and setup, for `lab.txt` and the report head.
pub fn header(run: &LabRun) -> String {
    let mut s = String::new();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let cpu = crate::hostinfo::HostInfo::read();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let _ = writeln!(s, "experiment: {}", run.experiment);
    let _ = writeln!(s, "twin: scenarios/lab/{}.toml", run.twin);
    let _ = writeln!(s, "fsmeta: {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(s, "kernel: Linux {}", kernel.trim());
    let _ = writeln!(s, "cpu: {} ({cpus} CPUs online)", cpu.model);
    if !cpu.family.contains('?') {
        // As `fsmeta calibrate` names a profile's CPU: the twin's host check.
        let _ = writeln!(s, "cpu model: {}", cpu.family);
    }
    if !cpu.mitigations.is_empty() {
        // What every kernel call and return pays on this host: the same
        // CPU model under other mitigations runs the paths at another speed.
        let _ = writeln!(s, "mitigations: {}", cpu.mitigations.join("; "));
    }
    for (tool, args) in [("mkfs.xfs", "-V"), ("btrfs", "--version")] {
        let v = super::host::cmd("tool version", tool, &[args]).unwrap_or_default();
        let _ = writeln!(s, "{tool}: {}", v.lines().next().unwrap_or("").trim());
    }
    let _ = writeln!(s, "parameters: {}", run.params);
    let _ = writeln!(s, "runs: {} (each on a fresh filesystem)", run.runs.first().map_or(0, Vec::len));
    let _ = writeln!(s, "wall time: {:.1} s", run.wall_s);
    let _ = writeln!(s, "load average at the start: {}", run.load.trim());
    match &run.transfer {
        Some(Ok((before, after))) => {
            let _ = writeln!(
                s,
                "{TRANSFER_KEY} {before:.2} {after:.2} (CPU 0 <-> CPU 1, one way, ns, just before and after the runs: CAS ping-pong as fsmeta calibrate's, median of {TRANSFER_SAMPLES} samples of {TRANSFER_ROUND_TRIPS} round trips)"
            );
        }
        Some(Err(why)) => {
            let _ = writeln!(s, "{TRANSFER_KEY} not measured: {why}");
        }
        None => {}
    }
    for l in &run.setup {
        let _ = writeln!(s, "setup: {l}");
    }
    s
}

fn metric_names(run: &LabRun, v: usize) -> BTreeSet<&str> {
    run.runs[v].iter().flat_map(|m| m.keys().map(String::as_str)).collect()
}

/// `runs.csv`: one row per (variant, run), every metric; the seed column
/// holds the run's number (a lab run has no seed).
pub fn runs_table(run: &LabRun) -> RunsTable {
    let metrics: Vec<String> = (0..run.variants.len())
        .flat_map(|v| metric_names(run, v))
        .collect::<BTreeSet<&str>>()
        .into_iter()
        .map(str::to_string)
        .collect();
    let name = super::out_name(&run.twin);
    let mut rows = Vec::new();
    for (v, vname) in run.variants.iter().enumerate() {
        for (r, m) in run.runs[v].iter().enumerate() {
            rows.push(RunRow {
                scenario: name.clone(),
                variant: vname.clone(),
                point: Vec::new(),
                replication: r as u32,
                seed: r as u64,
                metrics: metrics.iter().map(|n| m.get(n).map(|x| Num(*x))).collect(),
            });
        }
    }
    RunsTable {
        params: Vec::new(),
        metrics,
        rows,
    }
}

/// The values of `metric` for variant `v`, one per run that has it.
pub fn values(run: &LabRun, v: usize, metric: &str) -> Vec<f64> {
    run.runs[v].iter().filter_map(|m| m.get(metric).copied()).collect()
}

/// `summary.csv` in the long format of `fsmeta run` (no sweep columns; no
/// paired columns: lab variants are different operations, not treatments
/// of one).
pub fn summary_table(run: &LabRun) -> SummaryTable {
    let name = super::out_name(&run.twin);
    let mut rows = Vec::new();
    for (v, vname) in run.variants.iter().enumerate() {
        for metric in metric_names(run, v) {
            let xs = values(run, v, metric);
            let (mean, sd, half) = mean_ci(&xs, 0.95);
            rows.push(SummaryRow {
                scenario: name.clone(),
                variant: vname.clone(),
                point: Vec::new(),
                metric: metric.to_string(),
                mean: Num(mean),
                stddev: Num(sd),
                ci95_lo: (xs.len() > 1).then_some(Num(mean - half)),
                ci95_hi: (xs.len() > 1).then_some(Num(mean + half)),
                n: xs.len(),
                paired: PairedCells {
                    diff: None,
                    diff_lo: None,
                    diff_hi: None,
                    ratio: None,
                },
            });
        }
    }
    SummaryTable { params: Vec::new(), rows }
}

fn fmt(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.4}")
    }
}

/// `report.txt`: the header, then per variant each metric's median and
/// range over the runs.
pub fn report(run: &LabRun) -> String {
    report_with(run, &header(run))
}

/// [`report`] under a given header (a pooled set's: [`super::pool`]).
pub fn report_with(run: &LabRun, head: &str) -> String {
    let mut s = head.to_string();
    for (v, vname) in run.variants.iter().enumerate() {
        let _ = writeln!(s, "\n{} / {vname}:", run.experiment);
        let _ = writeln!(s, "  {:<40} {:>14} {:>24}", "metric", "median", "range over runs");
        for metric in metric_names(run, v) {
            let xs = values(run, v, metric);
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let range = if xs.len() > 1 {
                format!("{} .. {}", fmt(lo), fmt(hi))
            } else {
                "n/a (1 run)".into()
            };
            let _ = writeln!(s, "  {metric:<40} {:>14} {range:>24}", fmt(median(&xs)));
        }
    }
    s
}

/// Writes the outputs as the set `out/lab-<experiment>/`; returns it.
pub fn write(run: &LabRun, out: &Path) -> Result<(PathBuf, String), LabError> {
    write_with(run, out, &header(run))
}

/// [`write()`] with `head` as `lab.txt` and the report's head.
pub fn write_with(run: &LabRun, out: &Path, head: &str) -> Result<(PathBuf, String), LabError> {
    let text = report_with(run, head);
    let mut set = Staging::begin(out, &super::out_name(&run.twin))?;
    let csv_err = |e: crate::report::model::ModelError| LabError::step("write the CSV files", e);
    set.write("runs.csv", runs_table(run).to_csv().map_err(csv_err)?.as_bytes())?;
    set.write("summary.csv", summary_table(run).to_csv().map_err(csv_err)?.as_bytes())?;
    set.write("report.txt", text.as_bytes())?;
    set.write("lab.txt", head.as_bytes())?;
    for (name, bytes) in &run.files {
        set.write(name, bytes)?;
    }
    Ok((set.commit()?, text))
}
