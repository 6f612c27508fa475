//! The result cache (`--cache DIR`): one file per run, keyed by what fixes
//! the run's result, so a re-run of a sweep computes only runs it has not
//! computed before (added points, added replications, changed variants).
//!
//! The key of a run is the fingerprint of
//! - the build: the running executable's bytes (so a rebuilt fsmeta whose
//!   model changed never reads results of the old one) and the version;
//! - the resolved configuration of its point and variant: the prepared
//!   workload as it will run (every parameter after defaults, overrides
//!   and data files), through its `Debug` form, which every prepared
//!   workload derives;
//! - the run's seed ([`RunKey::run_seed`], from the scenario seed, the
//!   point index and the replication).
//!
//! The number of replications, the plots and the expectations are not
//! part of it: adding a replication or a plot reuses every run. A point
//! inserted before others shifts their index and so their seeds; those
//! runs are new runs and are computed.
//!
//! Entries are written to a temporary file and renamed, so concurrent
//! shards sharing one cache never read a partial entry. Opening the cache
//! removes the temporary files of processes that are gone (a full disk
//! leaves them behind). An entry that cannot be stored (a read-only or
//! full cache, a folder where the entry goes) does not stop the run: the
//! run's result is used and not stored, with one warning.
//!
//! An entry is JSON through serde: `format` (`fsmeta-run`), `version`,
//! the run's `key`, a `checksum` of its metrics and the metrics (exact,
//! see [`super::store`]). An entry that cannot be trusted (another
//! version, corrupted, cut short, edited so that the checksum disagrees,
//! stored under another key) is not used: the run is computed again and
//! the entry rewritten, with a one-line warning naming the file and what
//! was wrong ([`RunCache::take_warnings`]). `fsmeta merge` refuses such a
//! shard file instead: a shard holds runs that may not be computable
//! where it is merged, while a cache entry can always be recomputed.

use super::store::{Fingerprint, Refusal, build_id, checksum, exact, read_regular, read_versioned};
use crate::engine::Metrics;
use crate::engine::rng::RunKey;
use crate::scenario::Config;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Errors of the cache: its folder or the executable cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// The cache folder cannot be created or written.
    #[error("result cache {}: {error}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error (in the message, not a `source`: a source would
        /// be printed a second time after it).
        error: std::io::Error,
    },
}

/// The `format` of a cache entry.
pub const FORMAT: &str = "fsmeta-run";

/// The version of cache entries this fsmeta writes and reads (1 was the
/// line format before issue 34).
pub const VERSION: u32 = 2;

/// One cache entry as it is written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    format: String,
    version: u32,
    key: String,
    checksum: String,
    #[serde(with = "exact")]
    metrics: Metrics,
}

/// The metrics alone, for their checksum.
#[derive(Serialize)]
struct Checked<'a> {
    #[serde(with = "exact")]
    metrics: &'a Metrics,
}

/// A result cache in a folder, with hit and miss counters.
#[derive(Debug)]
pub struct RunCache {
    dir: PathBuf,
    build: String,
    hits: AtomicU64,
    misses: AtomicU64,
    warnings: Mutex<Vec<String>>,
    /// Whether an entry could not be stored (warned once).
    unstored: std::sync::atomic::AtomicBool,
}

/// Runs found in and added to the cache by one study.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Runs read from the cache.
    pub hits: u64,
    /// Runs computed (and stored).
    pub misses: u64,
}

impl RunCache {
    /// Opens (creating if needed) the cache in `dir`, for this build.
    pub fn open(dir: &Path) -> Result<RunCache, CacheError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |error| CacheError::Io { path, error }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        remove_dead_tmp(dir);
        let build = build_id().map_err(|e| io(dir)(std::io::Error::other(e)))?;
        Ok(RunCache {
            dir: dir.to_path_buf(),
            build: build.to_string(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            warnings: Mutex::new(Vec::new()),
            unstored: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The fingerprint of a resolved configuration (see the module
    /// documentation); computed once per point and variant.
    pub fn config_fingerprint(config: &Config) -> String {
        Fingerprint::default().update(format!("{:?}", config.prepared).as_bytes()).hex()
    }

    /// The key of one run of a configuration with fingerprint `config`.
    pub fn key(&self, config: &str, run: RunKey) -> String {
        let mut fp = Fingerprint::default();
        fp.update(self.build.as_bytes()).update(config.as_bytes()).u64(run.run_seed());
        fp.hex()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.run"))
    }

    /// The stored metrics of run `key`, if present and trusted. An entry
    /// that is there but cannot be trusted is a miss (the run is computed
    /// and the entry rewritten) and leaves a warning.
    pub fn get(&self, key: &str) -> Option<Metrics> {
        let path = self.path(key);
        if !path.exists() {
            return None;
        }
        match Self::read_entry(&path, key) {
            Ok(m) => Some(m),
            Err(why) => {
                let w = format!("cache entry {}: {why}; computing the run again", path.display());
                if let Ok(mut ws) = self.warnings.lock() {
                    ws.push(w);
                }
                None
            }
        }
    }

    /// Reads and checks the entry at `path` for run `key`.
    fn read_entry(path: &Path, key: &str) -> Result<Metrics, String> {
        let text = read_regular(path).map_err(|e| e.to_string())?;
        let e: Entry = read_versioned(&text, FORMAT, VERSION).map_err(|r| match r {
            Refusal::Malformed { line, column, message } => format!("line {line}, column {column}: {message}"),
            Refusal::Version { found, expected } => format!("format {found}, this fsmeta reads {expected}"),
        })?;
        if e.key != key {
            return Err(format!("stored under another key ({})", crate::text::quote_short(&e.key)));
        }
        let computed = checksum(&Checked { metrics: &e.metrics });
        if computed != e.checksum {
            return Err("the metrics do not match their checksum (the entry was changed after fsmeta wrote it)".into());
        }
        Ok(e.metrics)
    }

    /// The text of the entry of run `key` holding `m`.
    fn entry_text(key: &str, m: &Metrics) -> String {
        let e = Entry {
            format: FORMAT.into(),
            version: VERSION,
            key: key.into(),
            checksum: checksum(&Checked { metrics: m }),
            metrics: m.clone(),
        };
        // Plain data serializes into memory without failing.
        let mut text = serde_json::to_string_pretty(&e).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Stores the metrics of run `key`. A failure does not stop the run:
    /// the first one is kept as a warning ([`RunCache::take_warnings`]).
    pub fn put(&self, key: &str, m: &Metrics) {
        if let Err(e) = self.try_put(key, m)
            && !self.unstored.swap(true, Ordering::Relaxed)
            && let Ok(mut ws) = self.warnings.lock()
        {
            ws.push(format!("{e}; runs that cannot be stored are computed and not stored"));
        }
    }

    fn try_put(&self, key: &str, m: &Metrics) -> Result<(), CacheError> {
        let path = self.path(key);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |error| CacheError::Io { path, error }
        };
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let tmp = dir.join(format!(
            ".{key}.tmp-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let stored = std::fs::write(&tmp, Self::entry_text(key, m))
            .map_err(io(&tmp))
            .and_then(|()| std::fs::rename(&tmp, &path).map_err(io(&path)));
        if stored.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        stored
    }

    /// The warnings about untrusted entries so far, in file order (the
    /// order runs met them depends on `--jobs`), and forgets them.
    pub fn take_warnings(&self) -> Vec<String> {
        let mut ws = self.warnings.lock().map(|mut w| std::mem::take(&mut *w)).unwrap_or_default();
        ws.sort();
        ws
    }

    /// Counts a hit.
    pub(crate) fn hit(&self) {
        self.hits.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a miss.
    pub(crate) fn miss(&self) {
        self.misses.fetch_add(1, Ordering::Relaxed);
    }

    /// Hits and misses so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }
}

/// Removes `.<key>.tmp-<pid>-<n>` files in the cache's subfolders whose
/// process is gone (no `/proc/<pid>`); a live process's are left alone.
/// Best effort: what cannot be read or removed stays.
fn remove_dead_tmp(dir: &Path) {
    let Ok(subs) = std::fs::read_dir(dir) else { return };
    for sub in subs.flatten() {
        if !sub.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(files) = std::fs::read_dir(sub.path()) else { continue };
        for f in files.flatten() {
            let name = f.file_name();
            let Some(pid) = name.to_str().and_then(tmp_pid) else { continue };
            if !Path::new("/proc").join(pid.to_string()).exists() && f.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(f.path());
            }
        }
    }
}

/// The pid in a temporary entry's name `.<key>.tmp-<pid>-<n>`.
fn tmp_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (_, tail) = rest.rsplit_once(".tmp-")?;
    let (pid, n) = tail.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_entries_are_misses_with_a_warning() {
        let dir = std::env::temp_dir().join(format!("fsmeta-cache-unit-{}", std::process::id()));
        let c = RunCache::open(&dir).expect("opens");
        let key = c.key(
            "cfg",
            RunKey {
                seed: 1,
                point: 0,
                replication: 0,
            },
        );
        let mut m = Metrics::new();
        m.insert("ops".into(), 0.1 + 0.2);
        m.insert("gap".into(), f64::INFINITY);
        c.put(&key, &m);
        let back = c.get(&key).expect("a hit");
        assert_eq!(back["ops"].to_bits(), m["ops"].to_bits());
        assert_eq!(back["gap"], f64::INFINITY);
        assert!(c.take_warnings().is_empty());
        let text = std::fs::read_to_string(c.path(&key)).expect("entry");
        let damage = [
            (text.replacen("0.30000000000000004", "0.3", 1), "checksum"),
            (text[..text.len() / 2].to_string(), "line "),
            (text.replacen("\"version\": 2", "\"version\": 1", 1), "version 1"),
            ("fsmeta-run 1\n".to_string(), "line 1, column "),
            (text.replacen(&key, &"0".repeat(32), 1), "another key"),
        ];
        for (bad, why) in damage {
            std::fs::write(c.path(&key), &bad).expect("damage");
            assert_eq!(c.get(&key), None, "{bad}");
            let w = c.take_warnings();
            assert_eq!(w.len(), 1, "{w:?}");
            assert!(w[0].contains(why) && w[0].ends_with("computing the run again"), "{w:?}");
            assert!(!w[0].contains('\n'), "one line: {w:?}");
        }
        assert_eq!(c.get("ab00"), None, "absent: no warning");
        assert!(c.take_warnings().is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }
}
