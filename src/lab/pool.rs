//! `fsmeta lab --pool DIR...`: earlier runs of one experiment, each set a
//! `lab-NAME` folder `fsmeta lab` wrote, joined into one set: `runs.csv`
//! and `report.txt` over all their runs, `summary.csv` recomputed, the
//! first set's `lab.txt` with the sets' runs, wall times and loads, and
//! the last set's own files (its traces). For runs made in several sets,
//! e.g. interleaved with other experiments so that each samples the same
//! stretch of a host whose speed drifts (docs/lab-hosts.md).
//!
//! The sets must agree on the experiment, its twin, its parameters and
//! the CPU: a pool of runs of different setups would be no one figure.

use super::twin::Outputs;
use super::{LabError, LabRun, Metrics};
use crate::report::model::RunsTable;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The files of a set that are not the experiment's own.
const OWN: [&str; 4] = ["runs.csv", "summary.csv", "report.txt", "lab.txt"];

/// The `lab.txt` lines that must agree between sets.
const SAME: [&str; 4] = ["experiment:", "twin:", "parameters:", "cpu model:"];

/// The value of `lab.txt`'s line `key` (`None` if absent).
fn field<'a>(lab_txt: &'a str, key: &str) -> Option<&'a str> {
    lab_txt.lines().find_map(|l| l.strip_prefix(key)).map(str::trim)
}

fn bad(dir: &Path, what: impl std::fmt::Display) -> LabError {
    LabError::Param(format!("--pool {}: {what}", dir.display()))
}

/// One set read back: its `lab.txt` and its runs.
struct Set {
    dir: PathBuf,
    lab_txt: String,
    runs: RunsTable,
}

fn read_set(dir: &Path) -> Result<Set, LabError> {
    let o = Outputs::read(dir)?;
    let lab_txt = o.lab_txt.ok_or_else(|| bad(dir, "no lab.txt: not a folder `fsmeta lab` wrote"))?;
    let path = dir.join("runs.csv");
    let text = std::fs::read_to_string(&path).map_err(|e| bad(dir, format!("runs.csv: {e}")))?;
    let runs = RunsTable::from_csv(&text).map_err(|e| bad(dir, format!("runs.csv: {e}")))?;
    Ok(Set {
        dir: dir.to_path_buf(),
        lab_txt,
        runs,
    })
}

/// The sets in `dirs` joined, and the pooled `lab.txt` text.
pub fn pool(dirs: &[PathBuf]) -> Result<(LabRun, String), LabError> {
    if dirs.len() < 2 {
        return Err(LabError::Param("--pool: give two or more lab-NAME folders".into()));
    }
    let sets: Vec<Set> = dirs.iter().map(|d| read_set(d)).collect::<Result<_, _>>()?;
    let first = &sets[0];
    for s in &sets[1..] {
        for key in SAME {
            let (a, b) = (field(&first.lab_txt, key), field(&s.lab_txt, key));
            if a != b {
                return Err(bad(
                    &s.dir,
                    format!(
                        "`{key}` is `{}` here and `{}` in {}: only runs of one setup pool",
                        b.unwrap_or("(none)"),
                        a.unwrap_or("(none)"),
                        first.dir.display()
                    ),
                ));
            }
        }
    }
    let name = field(&first.lab_txt, "experiment:").unwrap_or_default();
    let e = super::find(name)?;
    let twin = field(&first.lab_txt, "twin:")
        .and_then(|t| t.strip_prefix("scenarios/lab/"))
        .and_then(|t| t.strip_suffix(".toml"))
        .ok_or_else(|| bad(&first.dir, "lab.txt names no twin scenarios/lab/NAME.toml"))?
        .to_string();
    let mut run = LabRun {
        experiment: e.name,
        twin,
        variants: Vec::new(),
        runs: Vec::new(),
        setup: Vec::new(),
        params: field(&first.lab_txt, "parameters:").unwrap_or_default().to_string(),
        files: Vec::new(),
        wall_s: 0.0,
        load: String::new(),
    };
    let mut counts = Vec::new();
    for s in &sets {
        let mut n = 0;
        for row in &s.runs.rows {
            let v = match run.variants.iter().position(|v| *v == row.variant) {
                Some(v) => v,
                None => {
                    run.variants.push(row.variant.clone());
                    run.runs.push(Vec::new());
                    run.variants.len() - 1
                }
            };
            let m: Metrics = s
                .runs
                .metrics
                .iter()
                .zip(&row.metrics)
                .filter_map(|(k, x)| x.map(|x| (k.clone(), x.0)))
                .collect();
            run.runs[v].push(m);
            n = n.max(row.replication as usize + 1);
        }
        counts.push(n);
    }
    let last = &sets[sets.len() - 1].dir;
    let mut names: Vec<String> = std::fs::read_dir(last)
        .map_err(|e| bad(last, e))?
        .filter_map(Result::ok)
        .filter(|f| f.path().is_file())
        .filter_map(|f| f.file_name().to_str().map(str::to_string))
        .filter(|n| !OWN.contains(&n.as_str()) && !n.starts_with('.'))
        .collect();
    names.sort();
    for n in names {
        let bytes = std::fs::read(last.join(&n)).map_err(|e| bad(last, format!("{n}: {e}")))?;
        run.files.push((n, bytes));
    }
    Ok((run, header(&sets, &counts)))
}

/// The first set's `lab.txt` with its `runs:`, `wall time:` and `load
/// average` lines given for every set.
fn header(sets: &[Set], counts: &[usize]) -> String {
    // Each set's value (its first word: the 1-minute load).
    let per_set = |key: &str| -> String {
        let vals: Vec<String> = sets
            .iter()
            .map(|s| {
                let v = field(&s.lab_txt, key).unwrap_or("?");
                if key.starts_with("load") {
                    v.split_whitespace().next().unwrap_or("?").to_string()
                } else {
                    v.to_string()
                }
            })
            .collect();
        vals.join(" / ")
    };
    let total: usize = counts.iter().sum();
    let sizes: Vec<String> = counts.iter().map(usize::to_string).collect();
    let mut s = String::new();
    for l in sets[0].lab_txt.lines() {
        if l.starts_with("runs:") {
            let _ = writeln!(
                s,
                "runs: {total} ({} sets of {} runs, pooled by fsmeta lab --pool; each run on a fresh filesystem; the files besides the CSVs are the last set's)",
                sets.len(),
                sizes.join(" + ")
            );
        } else if l.starts_with("wall time:") {
            let _ = writeln!(s, "wall time: {} (the sets)", per_set("wall time:"));
        } else if l.starts_with("load average at the start:") {
            let _ = writeln!(
                s,
                "load average at the start: {} (1-minute, the sets)",
                per_set("load average at the start:")
            );
        } else {
            let _ = writeln!(s, "{l}");
        }
    }
    s
}
