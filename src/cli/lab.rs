//! `fsmeta lab`: an experiment on the live kernel, the list of them, or
//! earlier sets joined (`--pool`).

use super::{CliError, Status};
use std::path::PathBuf;

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

/// `fsmeta lab`: one experiment on the live kernel, or the list.
pub(super) fn lab(experiment: Option<&str>, out: &std::path::Path, runs: u32, params: &[String], silent: bool) -> Result<Status, CliError> {
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
    };
    let run = lab::run(e, &opts)?;
    let (dir, text) = lab::output::write(&run, out)?;
    if !silent {
        outln!("{text}");
        outln!("outputs: {}", dir.display());
    }
    Ok(Status::Ok)
}
