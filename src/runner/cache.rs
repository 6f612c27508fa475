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
//! shards sharing one cache never read a partial entry.

use super::store::{Fingerprint, parse_metric, write_metrics};
use crate::engine::Metrics;
use crate::engine::rng::RunKey;
use crate::scenario::Config;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Errors of the cache: its folder or the executable cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// The cache folder cannot be created or written.
    #[error("result cache {}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// First line of every cache entry.
const MAGIC: &str = "fsmeta-run 1";

/// A result cache in a folder, with hit and miss counters.
#[derive(Debug)]
pub struct RunCache {
    dir: PathBuf,
    build: String,
    hits: AtomicU64,
    misses: AtomicU64,
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
            move |source| CacheError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut fp = Fingerprint::default();
        fp.update(env!("CARGO_PKG_VERSION").as_bytes());
        if let Ok(exe) = std::env::current_exe() {
            let mut f = std::fs::File::open(&exe).map_err(io(&exe))?;
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = f.read(&mut buf).map_err(io(&exe))?;
                if n == 0 {
                    break;
                }
                fp.update(&buf[..n]);
            }
        }
        Ok(RunCache {
            dir: dir.to_path_buf(),
            build: fp.hex(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
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

    /// The stored metrics of run `key`, if present and well-formed (a
    /// damaged entry is a miss and is rewritten).
    pub fn get(&self, key: &str) -> Option<Metrics> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let mut lines = text.lines();
        if lines.next() != Some(MAGIC) || lines.next() != Some(key) {
            return None;
        }
        let mut m = Metrics::new();
        let mut ended = false;
        for l in lines {
            if l == "end" {
                ended = true;
                break;
            }
            let (k, v) = parse_metric(l)?;
            m.insert(k, v);
        }
        ended.then_some(m)
    }

    /// Stores the metrics of run `key`.
    pub fn put(&self, key: &str, m: &Metrics) -> Result<(), CacheError> {
        let path = self.path(key);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CacheError::Io { path, source }
        };
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut text = format!("{MAGIC}\n{key}\n");
        write_metrics(&mut text, m);
        text.push_str("end\n");
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let tmp = dir.join(format!(
            ".{key}.tmp-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&tmp, text).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        Ok(())
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
