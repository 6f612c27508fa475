//! `fsmeta compare`: two scenarios, or two variants of one, run with the
//! same random numbers (same seed, so every run key matches), printed as
//! before / after tables with paired differences.

use super::{CliError, Limits, Status};
use fsmeta::Study;
use fsmeta::report::compare::{Pair, file_pairs, patch_text, variant_pairs};
use fsmeta::report::compare_out::write_compare;
use fsmeta::scenario::LoadOptions;
use std::path::{Path, PathBuf};

/// What `fsmeta compare` was asked.
#[derive(Debug, Clone)]
pub struct CompareArgs {
    /// One file (with `variants`) or two (before, after).
    pub files: Vec<PathBuf>,
    /// `[before, after]` variant names of one file.
    pub variants: Vec<String>,
    /// Runs in flight.
    pub jobs: usize,
    /// A seed for both sides (default: the first file's).
    pub seed: Option<u64>,
    /// `[scenario.quick]` scale.
    pub quick: bool,
    /// Where to write the comparison's files, if anywhere.
    pub out: Option<PathBuf>,
    /// `--set PATH=VALUE` values, applied to both sides.
    pub sets: Vec<(String, toml::Value)>,
    /// Limits on the runs.
    pub limits: Limits,
}

fn other(msg: String) -> CliError {
    CliError::msg(msg)
}

/// What to say when one of two paths is an output folder and `missing`
/// does not exist: it was meant as the other output folder (a lab run's
/// `lab-NAME` or its twin's `NAME`), so name the folders beside it that
/// it may have meant: those whose name starts with it, else the closest.
fn missing_folder(missing: &Path) -> String {
    let parent = match missing.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = missing.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let mut folders: Vec<String> = std::fs::read_dir(parent)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    folders.sort();
    let mut like: Vec<String> = folders
        .iter()
        .filter(|f| !name.is_empty() && f.starts_with(name))
        .cloned()
        .collect();
    if like.is_empty() {
        like.extend(fsmeta::text::closest(name, folders.iter().map(String::as_str)));
    }
    let hint = match like.as_slice() {
        [] => String::new(),
        names => format!(
            "; in {} there is {}",
            parent.display(),
            names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
        ),
    };
    format!(
        "{}: no such file or folder (the other path is an output folder, so this one was read as an output folder too: a lab run's OUT/lab-NAME or its twin's OUT/NAME/NAME){hint}",
        missing.display()
    )
}

/// Runs the comparison and prints it. Two output folders (a lab run and
/// its twin's run) are read back and printed side by side instead.
pub fn compare(a: &CompareArgs) -> Result<Status, CliError> {
    if let [x, y] = a.files.as_slice() {
        if x.is_dir() && y.is_dir() {
            return compare_dirs(x, y);
        }
        if let Some(missing) = [x, y].into_iter().find(|p| !p.exists())
            && (x.is_dir() || y.is_dir())
        {
            return Err(other(missing_folder(missing)));
        }
    }
    let opts = LoadOptions {
        quick: a.quick,
        seed: a.seed,
        sets: a.sets.clone(),
        ..a.limits.options()
    };
    match (a.files.as_slice(), a.variants.as_slice()) {
        ([file], [before, after]) => {
            let study = Study::load(file, &opts)?;
            let s = &study.scenario;
            let index = |name: &str| {
                s.variants.iter().position(|v| v.name == name).ok_or_else(|| {
                    let names: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
                    other(format!(
                        "{}: no variant `{name}`; variants are: {}",
                        file.display(),
                        names.join(", ")
                    ))
                })
            };
            let (ia, ib) = (index(before)?, index(after)?);
            let results = study.run(a.jobs, &|| {})?;
            let heading = format!(
                "{}: {before} (before) vs {after} (after)\nfsmeta {}, seed {}, {} run(s) per side, same random numbers",
                s.doc.scenario.name,
                env!("CARGO_PKG_VERSION"),
                s.doc.scenario.seed,
                s.doc.scenario.replications
            );
            let pairs = variant_pairs(s, &results.runs, ia, ib);
            let text = patch_text(&heading, before, after, &pairs);
            out!("{text}");
            let name = format!("{}-{before}-vs-{after}", s.doc.scenario.name);
            write_out(a, &name, (before, after), &text, &pairs)
        }
        ([fa, fb], []) => {
            let sa = Study::load(fa, &opts)?;
            // The same seed on both sides: every (point, replication) run key
            // matches, so the two sides draw the same random numbers.
            let seed = a.seed.unwrap_or(sa.scenario.doc.scenario.seed);
            let sb = Study::load(fb, &LoadOptions { seed: Some(seed), ..opts })?;
            let ra = sa.run(a.jobs, &|| {})?;
            let rb = sb.run(a.jobs, &|| {})?;
            let pairs = file_pairs(&sa.scenario, &ra.runs, &sb.scenario, &rb.runs).map_err(other)?;
            let (na, nb) = (&sa.scenario.doc.scenario.name, &sb.scenario.doc.scenario.name);
            let heading = format!(
                "{} (before) vs {} (after)\nfsmeta {}, seed {seed}, {} run(s) per side, same random numbers",
                fa.display(),
                fb.display(),
                env!("CARGO_PKG_VERSION"),
                sa.scenario.doc.scenario.replications
            );
            let text = patch_text(&heading, na, nb, &pairs);
            out!("{text}");
            write_out(a, &format!("{na}-vs-{nb}"), (na, nb), &text, &pairs)
        }
        ([_], _) => Err(other("compare one file with --variants BEFORE,AFTER (two variant names)".into())),
        _ => Err(other(
            "compare takes two files (before, after), or one file with --variants BEFORE,AFTER".into(),
        )),
    }
}

/// `fsmeta compare LABDIR SIMDIR`: a lab run's outputs beside its twin's.
fn compare_dirs(live: &std::path::Path, twin: &std::path::Path) -> Result<Status, CliError> {
    use fsmeta::lab::twin::{Outputs, join, text_table};
    let (l, t) = (Outputs::read(live)?, Outputs::read(twin)?);
    let rows = join(&l, &t);
    if rows.is_empty() {
        return Err(other(format!(
            "{} and {} have no (variant, metric) in common: is one the lab run of the other's twin?",
            live.display(),
            twin.display()
        )));
    }
    let warnings = [
        fsmeta::lab::twin::host_mismatch(&l, &t),
        fsmeta::lab::twin::transfer_mismatch(&l, &t),
        fsmeta::lab::speed::speed_mismatch(&l, &t),
    ];
    for why in warnings.iter().flatten() {
        errln!("fsmeta compare: warning: {why}");
    }
    out!("{}", text_table(&l, &t, &rows));
    Ok(Status::Ok)
}

/// With `--out`, writes the comparison's files to `OUT/<name>/` (the
/// name made safe for a folder) and says where on stderr.
fn write_out(a: &CompareArgs, name: &str, sides: (&str, &str), text: &str, pairs: &[Pair]) -> Result<Status, CliError> {
    let Some(out) = &a.out else { return Ok(Status::Ok) };
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' })
        .collect();
    let _lock = fsmeta::report::write::OutputLock::acquire(out, &safe)?;
    let dir = write_compare(out, &safe, sides.0, sides.1, text, pairs)?;
    errln!("wrote {}", dir.display());
    Ok(Status::Ok)
}
