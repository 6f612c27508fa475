//! `fsmeta lab --pool DIR...`: earlier runs of one experiment, each set a
//! `lab-NAME` folder `fsmeta lab` wrote, joined into one set: `runs.csv`
//! and `report.txt` over all their runs, `summary.csv` recomputed, the
//! first set's `lab.txt` with the sets' runs, wall times and loads, and
//! the last set's own files (its traces). For runs made in several sets,
//! e.g. interleaved with other experiments so that each samples the same
//! stretch of a host whose speed drifts (docs/lab-hosts.md).
//!
//! The sets must agree on the experiment, its twin, its parameters, the
//! kernel and the CPU: a pool of runs of different setups would be no one
//! figure. A set is taken once: the same folder twice, a pooled set, or
//! the folder the pool would replace are refused, so no run is counted
//! twice.

use super::output::{TRANSFER_KEY, transfer_figures};
use super::twin::{Outputs, lab_field as field, read_text};
use super::{LabError, LabRun, Metrics};
use crate::report::model::RunsTable;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The files of a set that are not the experiment's own.
const OWN: [&str; 4] = ["runs.csv", "summary.csv", "report.txt", "lab.txt"];

/// The `lab.txt` lines that must agree between sets.
const SAME: [&str; 5] = ["experiment:", "twin:", "parameters:", "kernel:", "cpu model:"];

/// What a pooled set's `runs:` line says (a pool is not pooled again).
const POOLED: &str = "pooled by fsmeta lab --pool";

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
    let o = Outputs::read(dir).map_err(|e| bad(dir, e))?;
    let lab_txt = o
        .lab_txt
        .ok_or_else(|| bad(dir, "no readable lab.txt: not a folder `fsmeta lab` wrote"))?;
    if field(&lab_txt, "runs:").is_some_and(|r| r.contains(POOLED)) {
        return Err(bad(dir, "a pooled set: pool the sets it was made of"));
    }
    let text = read_text(&dir.join("runs.csv")).map_err(|e| bad(dir, e))?;
    let runs = RunsTable::from_csv(&text).map_err(|e| bad(dir, format!("runs.csv: {e}")))?;
    if runs.rows.is_empty() {
        return Err(bad(dir, "runs.csv holds no run"));
    }
    Ok(Set {
        dir: dir.to_path_buf(),
        lab_txt,
        runs,
    })
}

/// The sets of `dirs`, each once, none of them `out`'s folder for them.
fn read_sets(dirs: &[PathBuf], out: &Path) -> Result<Vec<Set>, LabError> {
    if dirs.len() < 2 {
        return Err(LabError::Param("--pool: give two or more lab-NAME folders".into()));
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let real = d.canonicalize().map_err(|e| bad(d, e))?;
        if seen.contains(&real) {
            return Err(bad(d, "given twice: each set is pooled once"));
        }
        seen.push(real);
    }
    let sets: Vec<Set> = dirs.iter().map(|d| read_set(d)).collect::<Result<_, _>>()?;
    agree(&sets)?;
    if let Some(twin) = twin_name(&sets[0]) {
        let target = out.join(super::out_name(&twin));
        if let Ok(t) = target.canonicalize()
            && seen.contains(&t)
        {
            return Err(bad(&target, "the pool would replace one of its own sets: give another --out"));
        }
    }
    Ok(sets)
}

/// Refuses sets whose [`SAME`] lines differ from the first set's.
fn agree(sets: &[Set]) -> Result<(), LabError> {
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
    Ok(())
}

/// The twin `scenarios/lab/NAME.toml` a set's `lab.txt` names: NAME.
fn twin_name(s: &Set) -> Option<String> {
    field(&s.lab_txt, "twin:")
        .and_then(|t| t.strip_prefix("scenarios/lab/"))
        .and_then(|t| t.strip_suffix(".toml"))
        .map(str::to_string)
}

/// The sets in `dirs` joined, and the pooled `lab.txt` text; `out` is
/// where the pool will be written (`OUT/lab-NAME/`).
pub fn pool(dirs: &[PathBuf], out: &Path) -> Result<(LabRun, String), LabError> {
    let sets = read_sets(dirs, out)?;
    let first = &sets[0];
    let e = super::find(field(&first.lab_txt, "experiment:").unwrap_or_default())?;
    let twin = twin_name(first).ok_or_else(|| bad(&first.dir, "lab.txt names no twin scenarios/lab/NAME.toml"))?;
    let mut run = LabRun {
        experiment: e.name,
        twin,
        variants: Vec::new(),
        runs: Vec::new(),
        setup: Vec::new(),
        params: field(&first.lab_txt, "parameters:").unwrap_or_default().to_string(),
        files: last_files(&sets[sets.len() - 1].dir)?,
        wall_s: 0.0,
        load: String::new(),
        transfer: None,
        kernel_samples: None,
    };
    let counts: Vec<usize> = sets.iter().map(|s| join_runs(&mut run, &s.runs)).collect();
    Ok((run, header(&sets, &counts)))
}

/// Appends `t`'s runs to `run` by variant; returns how many runs `t` has.
fn join_runs(run: &mut LabRun, t: &RunsTable) -> usize {
    let mut n = 0;
    for row in &t.rows {
        let v = match run.variants.iter().position(|v| *v == row.variant) {
            Some(v) => v,
            None => {
                run.variants.push(row.variant.clone());
                run.runs.push(Vec::new());
                run.variants.len() - 1
            }
        };
        let m: Metrics = t
            .metrics
            .iter()
            .zip(&row.metrics)
            .filter_map(|(k, x)| x.map(|x| (k.clone(), x.0)))
            .collect();
        run.runs[v].push(m);
        n = n.max(row.replication as usize + 1);
    }
    n
}

/// The experiment's own files of the set in `dir` (its traces), by name.
fn last_files(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, LabError> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| bad(dir, e))?
        .filter_map(Result::ok)
        .filter(|f| f.path().is_file())
        .filter_map(|f| f.file_name().to_str().map(str::to_string))
        .filter(|n| !OWN.contains(&n.as_str()) && !n.starts_with('.'))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).map_err(|e| bad(dir, format!("{n}: {e}")))?;
            Ok((n, bytes))
        })
        .collect()
}

/// The first set's `lab.txt` with its `runs:`, `wall time:` and `load
/// average` lines given for every set.
/// The pool's `line transfer:` line: the lowest and the highest of every
/// set's figures (before and after its runs) as the two figures, so that
/// the twin's table warns when any set ran in a placement its profile did
/// not price ([`super::twin::transfer_mismatch`]); each set's pair after
/// them. Where a set did not measure it, the line says so (no figures).
fn transfer_range(sets: &[Set]) -> String {
    let pairs: Vec<Option<(f64, f64)>> = sets
        .iter()
        .map(|s| field(&s.lab_txt, TRANSFER_KEY).and_then(transfer_figures))
        .collect();
    let each: Vec<String> = pairs
        .iter()
        .map(|p| p.map_or("?".to_string(), |(b, a)| format!("{b:.2} / {a:.2}")))
        .collect();
    let figures: Option<Vec<f64>> = pairs
        .iter()
        .map(|p| p.map(|(b, a)| [b, a]))
        .collect::<Option<Vec<_>>>()
        .map(|v| v.concat());
    match figures {
        Some(f) => {
            let (lo, hi) = f
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
            format!(
                "{TRANSFER_KEY} {lo:.2} {hi:.2} (CPU 0 <-> CPU 1, one way, ns: the lowest and highest of the sets' figures; each set before / after its runs: {})",
                each.join(", ")
            )
        }
        None => format!(
            "{TRANSFER_KEY} not measured in every set (each set before / after its runs: {})",
            each.join(", ")
        ),
    }
}

fn header(sets: &[Set], counts: &[usize]) -> String {
    // Each set's value (for the load, its first word: the 1-minute load).
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
                "runs: {total} ({} sets of {} runs, {POOLED}; each run on a fresh filesystem; the files besides the CSVs are the last set's)",
                sets.len(),
                sizes.join(" + ")
            );
        } else if l.starts_with("wall time:") {
            let _ = writeln!(s, "wall time: {} (the sets)", per_set("wall time:"));
        } else if l.starts_with(TRANSFER_KEY) {
            // Below, over every set.
        } else if l.starts_with("load average at the start:") {
            let _ = writeln!(
                s,
                "load average at the start: {} (1-minute, the sets)",
                per_set("load average at the start:")
            );
        } else if !is_sampled_line(l) {
            // A set's own `sampled:` line is replaced by the pool's below.
            let _ = writeln!(s, "{l}");
        }
    }
    if sets.iter().any(|x| field(&x.lab_txt, TRANSFER_KEY).is_some()) {
        let _ = writeln!(s, "{}", transfer_range(sets));
    }
    if let Some(line) = sampled_line(sets) {
        let _ = writeln!(s, "{line}");
    }
    s
}

/// Whether a `lab.txt` line is the setup line of a set `fsmeta lab
/// --sample-kernel` sampled.
pub fn is_sampled_line(line: &str) -> bool {
    line.strip_prefix("setup: ")
        .is_some_and(|rest| rest.starts_with(super::sample::SAMPLED))
}

/// The pool's line naming its sampled sets (slower times: the sampling's
/// interrupts), if it has any.
fn sampled_line(sets: &[Set]) -> Option<String> {
    let sampled: Vec<String> = sets
        .iter()
        .enumerate()
        .filter(|(_, x)| x.lab_txt.lines().any(is_sampled_line))
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    (!sampled.is_empty()).then(|| {
        format!(
            "setup: {} set(s) {} of {} (fsmeta lab --sample-kernel: their times include the sampling's interrupts; the pool keeps no kernel samples of its own)",
            super::sample::SAMPLED,
            sampled.join(", "),
            sets.len()
        )
    })
}
