//! Writing an output set all-or-nothing.
//!
//! `OUT/<name>` is a symbolic link to a complete set `OUT/.<name>.v-<pid>-<n>`.
//! A run writes every file into `OUT/.<name>.tmp-<pid>-<n>`, fsyncs each file
//! and the folder, renames the folder to its `v-` name, fsyncs `OUT`, then
//! renames a new link over `OUT/<name>`: a rename over a link is atomic, so
//! at every instant `OUT/<name>` names the complete old set or the complete
//! new one. It then fsyncs `OUT` and removes the old set.
//!
//! A real folder `OUT/<name>` (from an older fsmeta) is moved aside to
//! `.<name>.old-<pid>-<n>` just before the link takes its place; a run killed
//! between the two renames leaves no `OUT/<name>`, and the next run puts the
//! old folder back first. On a file system without symbolic links the new
//! folder itself is renamed into place the same way.
//!
//! A link `OUT/<name>` that fsmeta did not make is replaced, and what it
//! pointed to is left alone.
//!
//! Each run first removes what dead runs left: every `.<name>.<kind>-<pid>-<n>`
//! entry whose process is gone (no `/proc/<pid>`) and that `OUT/<name>`
//! does not name; a live process's entries are never touched.
//!
//! Test hook: when the environment variable [`SLOW_COMMIT_ENV`] holds a
//! number of milliseconds, every step of the write and the commit is
//! followed by a sleep that long, so that tests can kill a run mid-commit.

mod lock;
mod stale;

pub use lock::{LockError, OutputLock, lock_path};
pub use stale::alive as process_alive;

use super::{ReportError, io};
use stale::{Current, Kind};
use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The environment variable of the test hook that slows every step of the
/// write and commit down by that many milliseconds (unset: no delay).
pub const SLOW_COMMIT_ENV: &str = "FSMETA_TEST_SLOW_COMMIT_MS";

/// Tells apart the sets one process writes.
static NEXT_SET: AtomicU64 = AtomicU64::new(0);

/// A new output set being written in a temporary sibling folder of its
/// final place `out/<name>`. Dropped without [`Staging::commit`], it is
/// removed and `out/<name>` is left as it was.
#[derive(Debug)]
pub struct Staging {
    out: PathBuf,
    name: String,
    pid: u32,
    n: u64,
    /// Where the set is: its `tmp-` folder, then its `v-` folder.
    dir: PathBuf,
    pause: Option<Duration>,
    committed: bool,
}

impl Staging {
    /// Starts a new set for `out/<name>`: creates `out` if needed, cleans
    /// up after dead runs and creates the temporary folder.
    pub fn begin(out: &Path, name: &str) -> Result<Staging, ReportError> {
        fs::create_dir_all(out).map_err(io(out))?;
        stale::recover(out, name).map_err(io(&out.join(name)))?;
        let pause = std::env::var(SLOW_COMMIT_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .map(Duration::from_millis);
        let pid = std::process::id();
        loop {
            let n = NEXT_SET.fetch_add(1, Ordering::Relaxed);
            if stale::any_exists(out, name, pid, n) {
                continue; // left by an earlier process that had our pid
            }
            let dir = out.join(stale::sibling(name, Kind::Tmp, pid, n));
            match fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io(&dir)(e)),
            }
            let set = Staging {
                out: out.to_path_buf(),
                name: name.to_string(),
                pid,
                n,
                dir,
                pause,
                committed: false,
            };
            set.pause();
            return Ok(set);
        }
    }

    /// Where `file` goes in the new set, for writers that need a path (the
    /// PNG renderer); call [`Staging::adopt`] once it is written.
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    /// Writes `bytes` as `file` of the new set and flushes it to disk.
    pub fn write(&mut self, file: &str, bytes: &[u8]) -> Result<(), ReportError> {
        let p = self.path(file);
        let mut f = File::create(&p).map_err(io(&p))?;
        f.write_all(bytes).and_then(|()| f.sync_all()).map_err(io(&p))?;
        self.pause();
        Ok(())
    }

    /// Flushes to disk `file`, which a writer produced at [`Staging::path`].
    pub fn adopt(&mut self, file: &str) -> Result<(), ReportError> {
        let p = self.path(file);
        File::open(&p).and_then(|f| f.sync_all()).map_err(io(&p))?;
        self.pause();
        Ok(())
    }

    /// Makes the new set `out/<name>` in one atomic step and removes the
    /// old one; returns `out/<name>`.
    pub fn commit(mut self) -> Result<PathBuf, ReportError> {
        sync_dir(&self.dir).map_err(io(&self.dir))?;
        self.pause();
        let version = self.sibling(Kind::Version);
        fs::rename(&self.dir, &version).map_err(io(&version))?;
        self.dir = version;
        sync_dir(&self.out).map_err(io(&self.out))?;
        self.pause();
        let dest = self.out.join(&self.name);
        let before = stale::current(&self.out, &self.name).map_err(io(&dest))?;
        let old = self.swap(&dest, &before)?;
        self.committed = true;
        sync_dir(&self.out).map_err(io(&self.out))?;
        self.pause();
        if let Some(old) = old {
            stale::remove(&old);
        }
        self.pause();
        Ok(dest)
    }

    /// Puts the new set at `dest` (which was `before`); returns the old set
    /// to remove, if there is one fsmeta made.
    fn swap(&mut self, dest: &Path, before: &Current) -> Result<Option<PathBuf>, ReportError> {
        let link = self.sibling(Kind::Link);
        stale::remove(&link);
        if let Err(e) = symlink(Path::new(stale::file_name(&self.dir)), &link) {
            return match before {
                Current::Link(_) => Err(io(&link)(e)),
                Current::Missing | Current::Folder => self.swap_folder(dest, before),
            };
        }
        self.pause();
        let old = match before {
            Current::Folder => Some(self.move_aside(dest)?),
            Current::Link(Some(t)) => Some(self.out.join(t)),
            Current::Link(None) | Current::Missing => None,
        };
        if let Err(e) = fs::rename(&link, dest) {
            stale::remove(&link);
            if let (Current::Folder, Some(old)) = (before, &old) {
                let _ = fs::rename(old, dest);
            }
            return Err(io(dest)(e));
        }
        Ok(old)
    }

    /// Without symbolic links: moves a folder `dest` aside and renames the
    /// new set to `dest`.
    fn swap_folder(&mut self, dest: &Path, before: &Current) -> Result<Option<PathBuf>, ReportError> {
        let old = match before {
            Current::Folder => Some(self.move_aside(dest)?),
            _ => None,
        };
        if let Err(e) = fs::rename(&self.dir, dest) {
            if let Some(old) = &old {
                let _ = fs::rename(old, dest);
            }
            return Err(io(dest)(e));
        }
        self.dir = dest.to_path_buf();
        Ok(old)
    }

    /// Renames the folder `dest` to this run's `old-` name.
    fn move_aside(&self, dest: &Path) -> Result<PathBuf, ReportError> {
        let old = self.sibling(Kind::Old);
        fs::rename(dest, &old).map_err(io(dest))?;
        self.pause();
        Ok(old)
    }

    fn sibling(&self, kind: Kind) -> PathBuf {
        self.out.join(stale::sibling(&self.name, kind, self.pid, self.n))
    }

    fn pause(&self) {
        if let Some(d) = self.pause {
            std::thread::sleep(d);
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            stale::remove(&self.dir);
        }
    }
}

/// Flushes a folder's entries to disk.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    if cfg!(unix) { File::open(dir)?.sync_all() } else { Ok(()) }
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &Path, _link: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}
