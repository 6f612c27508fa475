//! What `fsmeta run` checks before the first run, so that no work is
//! computed for outputs that cannot be written (issue 33): two scenarios
//! of one run with the same `scenario.name` (the second would replace the
//! first's outputs), an `--out` that is not a writable folder, and a
//! `--jobs` beyond what the machine or the plan can use; and the lock on
//! each output entry, so that two runs into one `--out` do not silently
//! replace each other's results.

use super::CliError;
use fsmeta::Study;
use fsmeta::plan::Shard;
use fsmeta::report::write::{OutputLock, process_alive};
use fsmeta::runner::shard::ShardFile;
use fsmeta::scenario::ScenarioError;
use fsmeta::scenario::spans::SpanIndex;
use std::path::{Path, PathBuf};

/// Refuses two studies with one name, at the second one's `scenario.name`.
pub(super) fn distinct_names(studies: &[Study]) -> Result<(), CliError> {
    for (i, s) in studies.iter().enumerate() {
        let name = &s.scenario.doc.scenario.name;
        let Some(first) = studies[..i].iter().find(|t| &t.scenario.doc.scenario.name == name) else {
            continue;
        };
        let file = &s.scenario.file;
        let location = fsmeta::scenario::source::read_scenario(file)
            .ok()
            .and_then(|text| SpanIndex::build(&text).locate(file, "scenario.name"));
        return Err(ScenarioError {
            location,
            file: file.clone(),
            field: "scenario.name".into(),
            message: format!(
                "`{}` is also the name of {}: both would write OUT/{}, the second replacing the first; give each scenario its own name",
                fsmeta::text::quote_short(name),
                first.scenario.file.display(),
                fsmeta::text::quote_short(name)
            ),
            suggestion: None,
        }
        .into());
    }
    Ok(())
}

/// Checks that `out` is, or can be created as, a folder fsmeta can write
/// in: creates and removes a temporary entry in `out` (or in its nearest
/// existing ancestor, when `out` does not exist yet; `out` itself is not
/// created here, so a refused run leaves nothing behind).
pub(super) fn writable_out(out: &Path) -> Result<(), CliError> {
    let fail = |what: String| CliError::Other(anyhow::anyhow!("--out {}: {what}; nothing was run", out.display()));
    let mut dir: PathBuf = out.to_path_buf();
    loop {
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => break,
            Ok(_) if dir == out => return Err(fail("exists and is not a folder".into())),
            Ok(_) => return Err(fail(format!("{} is not a folder", dir.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                dir = match dir.parent() {
                    Some(p) if p.as_os_str().is_empty() => PathBuf::from("."),
                    Some(p) => p.to_path_buf(),
                    None => return Err(fail("no existing folder above it".into())),
                };
            }
            Err(e) => return Err(fail(format!("cannot be read: {e}"))),
        }
    }
    remove_dead_probes(&dir);
    let probe = dir.join(format!("{PROBE}{}", std::process::id()));
    std::fs::create_dir(&probe).map_err(|e| fail(format!("cannot write in {}: {e}", dir.display())))?;
    let _ = std::fs::remove_dir(&probe);
    Ok(())
}

/// The name of the empty folder [`writable_out`] creates and removes,
/// followed by the process id.
const PROBE: &str = ".fsmeta-write-check-";

/// Removes the probe folders of processes that are gone: a run killed
/// between creating its probe and removing it leaves one behind. A live
/// process's probe is never touched; what is not an empty folder stays.
fn remove_dead_probes(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(PROBE))
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !process_alive(pid)) {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Takes the lock on each output entry the studies will write (`OUT/<name>`,
/// or with `--shard` their shard files), refusing when another fsmeta
/// holds one (see [`OutputLock`]).
pub(super) fn lock_outputs(out: &Path, studies: &[Study], shard: Option<Shard>) -> Result<Vec<OutputLock>, CliError> {
    let entry = |s: &Study| {
        let name = &s.scenario.doc.scenario.name;
        shard.map_or_else(|| name.clone(), |sh| ShardFile::file_name(name, sh))
    };
    Ok(studies
        .iter()
        .map(|s| OutputLock::acquire(out, &entry(s)))
        .collect::<Result<Vec<_>, _>>()?)
}

/// The most runs in flight per available CPU: more threads than that only
/// add memory and switching.
pub(super) const JOBS_PER_CPU: usize = 4;

/// `jobs` capped at [`JOBS_PER_CPU`] times the available CPUs, with a note
/// on stderr when the cap applies.
pub(super) fn cap_jobs(jobs: usize) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max = cpus.saturating_mul(JOBS_PER_CPU);
    if jobs > max {
        errln!("fsmeta: note: --jobs {jobs} capped at {max} ({JOBS_PER_CPU} per available CPU)");
        return max;
    }
    jobs.max(1)
}
