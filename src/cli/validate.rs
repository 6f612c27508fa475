//! `fsmeta validate`: runs every case scenario and prints (and writes to
//! `docs/validation.md`) one row per published figure.

use super::{CliError, Limits, Status};
use fsmeta::Study;
use fsmeta::report::validation::{CASES, markdown, rows};
use fsmeta::scenario::LoadOptions;
use std::path::{Path, PathBuf};

/// What `fsmeta validate` was asked.
#[derive(Debug, Clone)]
pub struct ValidateArgs {
    /// Scenario files (default: the case list).
    pub files: Vec<PathBuf>,
    /// `[scenario.quick]` scale.
    pub quick: bool,
    /// Runs in flight.
    pub jobs: usize,
    /// Where to write the table (None: docs/validation.md at full scale,
    /// nowhere with --quick).
    pub doc: Option<PathBuf>,
    /// `--set PATH=VALUE` values for every case scenario.
    pub sets: Vec<(String, toml::Value)>,
    /// Limits on the runs.
    pub limits: Limits,
}

/// Runs the case scenarios and prints / writes the table.
pub fn validate(a: &ValidateArgs) -> Result<Status, CliError> {
    let opts = LoadOptions {
        quick: a.quick,
        sets: a.sets.clone(),
        ..a.limits.options()
    };
    let case_of = |f: &Path| {
        CASES
            .iter()
            .find(|(_, p)| f.ends_with(p) || Path::new(p).file_name() == f.file_name())
            .map_or(0, |c| c.0)
    };
    let mut files: Vec<(u32, PathBuf)> = a.files.iter().map(|f| (case_of(f), f.clone())).collect();
    let mut missing = Vec::new();
    if files.is_empty() {
        for &(case, p) in CASES {
            if Path::new(p).exists() {
                files.push((case, PathBuf::from(p)));
            } else {
                missing.push(format!("case {case}: {p}"));
            }
        }
    }
    let studies = files
        .iter()
        .map(|(c, f)| Study::load(f, &opts).map(|s| (*c, s)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut all = Vec::new();
    for (case, study) in &studies {
        errln!("fsmeta: validate: running {}", study.scenario.file.display());
        let results = study.run(a.jobs, &|| {})?;
        all.extend(rows(*case, &study.scenario, &results.runs));
    }
    let text = markdown(&all, a.quick, &missing);
    out!("{text}");
    // The shipped table is of the shipped scenarios: not rewritten at a
    // reduced scale or with values set.
    let doc = a
        .doc
        .clone()
        .or_else(|| (!a.quick && a.sets.is_empty()).then(|| PathBuf::from("docs/validation.md")));
    if let Some(path) = doc {
        std::fs::write(&path, &text).map_err(|e| CliError::Other(anyhow::anyhow!("cannot write {}: {e}", path.display())))?;
        errln!("fsmeta: validate: wrote {}", path.display());
    }
    Ok(if all.iter().any(|r| r.verdict == "FAIL") {
        Status::ExpectationFailed
    } else {
        Status::Ok
    })
}

/// `fsmeta validate --lab DIR`: each lab run in DIR beside a fresh run of
/// its twin, printed and written to `doc` (default docs/lab.md).
pub fn validate_lab(
    dir: &Path,
    doc: Option<&Path>,
    sets: &[(String, toml::Value)],
    jobs: usize,
    limits: Limits,
) -> Result<Status, CliError> {
    use fsmeta::lab::{self, twin::Outputs};
    let other = |m: String| CliError::Other(anyhow::anyhow!(m));
    let tmp = std::env::temp_dir().join(format!("fsmeta-validate-lab-{}", std::process::id()));
    let mut entries = Vec::new();
    for ldir in lab_folders(dir, "fsmeta validate --lab").map_err(other)? {
        let live = Outputs::read(&ldir)?;
        let field = |k: &str| live.lab_txt.as_deref().and_then(|t| lab::twin::lab_field(t, k)).map(str::to_string);
        let (Some(exp), Some(twin_path)) = (field("experiment:"), field("twin:")) else {
            errln!(
                "fsmeta: validate --lab: {} has no lab.txt naming its experiment and twin",
                ldir.display()
            );
            continue;
        };
        let e = lab::find(&exp)?;
        warn_if_sampled(&ldir, live.lab_txt.as_deref());
        let t = super::twin::run_twin(&live, Path::new(&twin_path), &tmp, sets, jobs, limits)?;
        errln!("fsmeta validate --lab: {}: {}", ldir.display(), t.pricing);
        for why in t.warnings() {
            errln!("fsmeta validate --lab: warning: {}: {why}", ldir.display());
        }
        let twin = t.outputs;
        outln!("{}", lab::twin::text_table(&live, &twin, &lab::twin::join(&live, &twin)));
        entries.push((e, live, twin));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    if entries.is_empty() {
        return Err(other(format!("{}: no lab run (lab-NAME folder) found", dir.display())));
    }
    let Some(path) = doc
        .map(Path::to_path_buf)
        .or_else(|| sets.is_empty().then(|| PathBuf::from("docs/lab.md")))
    else {
        errln!("fsmeta validate --lab: with --set, the table is written only where --doc says");
        return Ok(Status::Ok);
    };
    let fresh = lab::markdown(&entries, &|name| std::fs::read_to_string(format!("docs/lab-notes/{name}.md")).ok());
    // The sections of experiments DIR has no run of are kept.
    let text = match std::fs::read_to_string(&path) {
        Ok(old) => lab::merge_markdown(&old, &fresh),
        Err(_) => fresh,
    };
    std::fs::write(&path, text).map_err(|e| other(format!("cannot write {}: {e}", path.display())))?;
    outln!("written: {}", path.display());
    Ok(Status::Ok)
}

/// The `lab-NAME` folders in `dir`, sorted.
pub(super) fn lab_folders(dir: &Path, who: &str) -> Result<Vec<PathBuf>, String> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("lab-")))
        .collect();
    dirs.sort();
    dirs.retain(|p| is_lab_folder(p, who));
    Ok(dirs)
}

/// Whether `p` (a `lab-NAME` entry) is a folder. `fsmeta lab` writes
/// OUT/lab-NAME as a link to its versioned folder: a copy of the link
/// alone dangles, and is said, not skipped quietly.
fn is_lab_folder(p: &Path, who: &str) -> bool {
    let ok = p.is_dir();
    if !ok && p.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        errln!(
            "{who}: warning: {} links to {}, which is not a folder: skipped",
            p.display(),
            std::fs::read_link(p).map(|t| t.display().to_string()).unwrap_or_default()
        );
    }
    ok
}

/// Warns when the lab run in `dir` was sampled (`fsmeta lab
/// --sample-kernel`): its times include the sampling's interrupts.
fn warn_if_sampled(dir: &Path, lab_txt: Option<&str>) {
    if lab_txt.is_some_and(|t| t.lines().any(fsmeta::lab::pool::is_sampled_line)) {
        errln!(
            "fsmeta validate --lab: warning: {} was sampled (fsmeta lab --sample-kernel): its times include the sampling's interrupts",
            dir.display()
        );
    }
}
