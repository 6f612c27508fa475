//! `fsmeta run`: load every scenario first, check the outputs can be
//! written, then run each study with a progress bar and write its outputs
//! (or its shard file).

use super::{CliError, Format, Status, preflight, report};
use fsmeta::Study;
use fsmeta::scenario::LoadOptions;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How `run` runs its studies.
pub(super) struct How<'a> {
    pub(super) jobs: usize,
    pub(super) silent: bool,
    pub(super) format: Format,
    pub(super) shard: Option<fsmeta::plan::Shard>,
    pub(super) cache: Option<&'a fsmeta::runner::cache::RunCache>,
}

/// [`run`], and when it fails: the `--out` folder it created removed if
/// it is still empty (a run that fails writes nothing, not even that).
pub(super) fn run_leaving_no_empty_out(
    files: &[PathBuf],
    out: &std::path::Path,
    opts: &LoadOptions,
    how: &How<'_>,
) -> Result<Status, CliError> {
    let existed = out.exists();
    let r = run(files, out, opts, how);
    if r.is_err() && !existed {
        // `remove_dir` refuses a folder with anything in it.
        let _ = std::fs::remove_dir(out);
    }
    r
}

fn run(files: &[PathBuf], out: &std::path::Path, opts: &LoadOptions, how: &How<'_>) -> Result<Status, CliError> {
    // Validate everything first: a bad file anywhere means nothing is written.
    let studies = files.iter().map(|f| Study::load(f, opts)).collect::<Result<Vec<_>, _>>()?;
    preflight::distinct_names(&studies)?;
    preflight::writable_out(out)?;
    // Held until every output is written: a second run into the same
    // entries is refused before any work.
    let _locks = preflight::lock_outputs(out, &studies, how.shard)?;
    if opts.quick {
        for study in &studies {
            if study.scenario.doc.scenario.quick.is_none() {
                errln!(
                    "fsmeta: warning: {} declares no `quick` settings; --quick runs it at full scale (write `quick = {{}}` to say that is intended)",
                    study.scenario.file.display()
                );
            }
        }
    }
    let silent = how.silent;
    let mut status = Status::Ok;
    for (study, file) in studies.iter().zip(files) {
        let s = &study.scenario;
        let total = match how.shard {
            Some(sh) => (0..study.plan().len()).filter(|i| sh.owns(*i)).count(),
            None => study.plan().len(),
        };
        let bar = if silent {
            None
        } else {
            progress(total as u64, &s.doc.scenario.name)
        };
        let done = AtomicUsize::new(0);
        let tick = || {
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            match &bar {
                Some(b) => b.inc(1),
                None if !silent && total >= 20 && n.is_multiple_of(total.div_ceil(10)) => {
                    errln!("fsmeta: {}: {n}/{total} runs", s.doc.scenario.name)
                }
                None => {}
            }
        };
        let before = how.cache.map(|c| c.stats()).unwrap_or_default();
        // No more threads than runs.
        let results = study.run_with(how.jobs.min(total.max(1)), &tick, how.shard, how.cache)?;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        // Untrusted cache entries were computed again: said even when
        // --silent, since what was in the cache folder was not what fsmeta
        // wrote there.
        for w in how.cache.map(|c| c.take_warnings()).unwrap_or_default() {
            errln!("fsmeta: warning: {w}");
        }
        if let (Some(c), false) = (how.cache, silent) {
            let after = c.stats();
            errln!(
                "fsmeta: {}: cache: {} runs read, {} computed",
                s.doc.scenario.name,
                after.hits - before.hits,
                after.misses - before.misses
            );
        }
        if let Some(sh) = how.shard {
            let path = study.shard_file(file, opts, sh, &results).write(out)?;
            if !silent {
                outln!(
                    "shard {sh}: {} of {} runs written to {}",
                    results.runs.len(),
                    study.plan().len(),
                    path.display()
                );
            }
            continue;
        }
        let outcome = study.write(&results, out)?;
        status = status.and(report(&outcome, &s.doc.scenario.name, silent, how.format));
    }
    Ok(status)
}

/// A progress bar on a terminal; `None` elsewhere.
fn progress(len: u64, name: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} runs, {elapsed} (eta {eta})").ok()?;
    bar.set_style(style.progress_chars("=> "));
    bar.set_message(name.to_string());
    Some(bar)
}
