//! `fsmeta merge DIR...`: finds the shard files in the folders, groups
//! them by study, loads each study's scenario as the shards did, joins the
//! shards and writes the outputs an unsharded run writes.

use super::{CliError, Status, report};
use fsmeta::Study;
use fsmeta::runner::shard::{SUFFIX, ShardFile};
use fsmeta::scenario::LoadOptions;
use fsmeta::study::MergeError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Shard files named by `paths`: a file as given, a folder's `*.runs`
/// files in name order.
fn shard_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let entries = std::fs::read_dir(p).map_err(|e| CliError::Other(anyhow::anyhow!("cannot read {}: {e}", p.display())))?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|f| {
                f.is_file()
                    && f.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.ends_with(SUFFIX) && !n.starts_with('.'))
            })
            .collect();
        if found.is_empty() {
            return Err(MergeError::NoShards(p.clone()).into());
        }
        found.sort();
        out.append(&mut found);
    }
    Ok(out)
}

/// Merges the shards under `dirs` into `out`.
pub(super) fn merge(dirs: &[PathBuf], out: &Path, limits: &LoadOptions, silent: bool) -> Result<Status, CliError> {
    // One group per study: same scenario file, quick mode and seed.
    let mut groups: BTreeMap<(PathBuf, bool, Option<u64>), Vec<ShardFile>> = BTreeMap::new();
    for p in shard_paths(dirs)? {
        let f = ShardFile::read(&p)?;
        groups.entry((f.file.clone(), f.quick, f.seed)).or_default().push(f);
    }
    // Load and join everything before writing anything.
    let mut joined = Vec::new();
    for ((file, quick, seed), shards) in &groups {
        let opts = LoadOptions {
            quick: *quick,
            seed: *seed,
            ..limits.clone()
        };
        let study = Study::load(file, &opts)?;
        let results = study.merge(shards)?;
        joined.push((study, results));
    }
    let _locks = joined
        .iter()
        .map(|(s, _)| fsmeta::report::write::OutputLock::acquire(out, &s.scenario.doc.scenario.name))
        .collect::<Result<Vec<_>, _>>()?;
    let mut status = Status::Ok;
    for (study, results) in &joined {
        let outcome = study.write(results, out)?;
        status = status.and(report(&outcome, &study.scenario.doc.scenario.name, silent, super::Format::Text));
    }
    Ok(status)
}
