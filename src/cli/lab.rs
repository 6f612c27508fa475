//! `fsmeta lab`: an experiment on the live kernel, the list of them, or
//! earlier sets joined (`--pool`).

use super::{CliError, Limits, Status};
use std::path::{Path, PathBuf};

/// `fsmeta lab --pool DIR...`: earlier sets of one experiment joined.
pub(super) fn lab_pool(dirs: &[PathBuf], out: &std::path::Path, silent: bool) -> Result<Status, CliError> {
    let (run, head) = fsmeta::lab::pool::pool(dirs, out)?;
    let (dir, text) = fsmeta::lab::output::write_with(&run, out, &head)?;
    if !silent {
        outln!("{text}");
        outln!("outputs: {}", dir.display());
    }
    Ok(Status::Ok)
}

/// What `fsmeta lab EXPERIMENT` was asked.
pub(super) struct LabArgs<'a> {
    /// The experiment, or `None` for the list.
    pub experiment: Option<&'a str>,
    /// The output folder.
    pub out: &'a std::path::Path,
    /// Repetitions.
    pub runs: u32,
    /// `-p NAME=VALUE` parameters.
    pub params: &'a [String],
    /// No report or progress.
    pub silent: bool,
    /// Run the twin after the live runs and print both (`--no-twin`
    /// clears it).
    pub twin: bool,
    /// `--sample-kernel`'s period, us.
    pub sample_us: Option<u32>,
}

/// `fsmeta lab`: one experiment on the live kernel, then its twin beside
/// it; or the list.
pub(super) fn lab(a: &LabArgs<'_>) -> Result<Status, CliError> {
    let LabArgs {
        experiment,
        out,
        runs,
        params,
        silent,
        twin,
        sample_us,
    } = *a;
    use fsmeta::lab;
    let Some(name) = experiment else {
        outln!("experiments (fsmeta lab NAME [-p PARAM=VALUE]...):");
        for e in lab::EXPERIMENTS {
            let ps: Vec<String> = e.params.iter().map(|p| format!("{}={} ({}..{})", p.0, p.1, p.2, p.3)).collect();
            outln!("  {:<20} {}\n  {:<20} params: {}", e.name, e.about, "", ps.join(", "));
        }
        return Ok(Status::Ok);
    };
    let e = lab::find(name)?;
    let mut map = std::collections::BTreeMap::new();
    for p in params {
        let Some((k, v)) = p.split_once('=') else {
            return Err(lab::LabError::Param(format!("`{}`: expected NAME=VALUE", lab::short(p))).into());
        };
        map.insert(k.trim().to_string(), v.trim().to_string());
    }
    let opts = lab::LabOptions {
        runs,
        params: map,
        verbose: !silent,
        sample_us,
    };
    // Every parameter checked before the host is probed or touched.
    let resolved = lab::resolve(e, &opts.params)?;
    let line_transfer = || fsmeta::lab::probe::line_transfer(fsmeta::lab::output::TRANSFER_SAMPLES);
    let before = line_transfer();
    let mut run = lab::run(e, &opts)?;
    run.transfer = Some(before.and_then(|b| line_transfer().map(|a| (b, a))));
    let (dir, text) = lab::output::write(&run, out)?;
    if !silent {
        outln!("{text}");
        if let Some(k) = &run.kernel_samples {
            outln!("{k}");
        }
        outln!("outputs: {}", dir.display());
    }
    if twin {
        beside_twin(e, &resolved, &run.twin, &dir, out, silent)?;
    }
    Ok(Status::Ok)
}

/// The twin of a lab run that wrote `dir`, run into `out` and printed
/// beside it, priced for this host where a shipped profile measured it
/// ([`super::twin::run_twin`]); says why not when the run's parameters
/// are not the twin's or there is no twin file.
fn beside_twin(
    e: &fsmeta::lab::Experiment,
    params: &fsmeta::lab::Params,
    name: &str,
    dir: &Path,
    out: &Path,
    silent: bool,
) -> Result<(), CliError> {
    use fsmeta::lab;
    let scenario = lab::twin_path(name);
    let off = lab::off_twin(e, params);
    if !off.is_empty() {
        errln!(
            "fsmeta lab: no twin run: {} models the default parameters, and this run set {}",
            scenario.display(),
            off.join(" ")
        );
        return Ok(());
    }
    if !scenario.is_file() {
        errln!(
            "fsmeta lab: no twin run: no {} here (run from the repository's folder)",
            scenario.display()
        );
        return Ok(());
    }
    let live = lab::twin::Outputs::read(dir)?;
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t = super::twin::run_twin(&live, &scenario, out, &[], jobs, Limits::default())?;
    errln!("fsmeta lab: {}", t.pricing);
    for why in t.warnings() {
        errln!("fsmeta lab: warning: {why}");
    }
    if !silent {
        let rows = lab::twin::join(&live, &t.outputs);
        outln!("{}", lab::twin::text_table(&live, &t.outputs, &rows));
    }
    Ok(())
}
