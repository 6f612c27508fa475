//! One writer per output entry (issue 33: two concurrent `fsmeta run`s
//! into one `--out` both exited 0 and the later commit silently discarded
//! the other's results).
//!
//! A run that will write `OUT/<entry>` first takes an exclusive advisory
//! lock (`flock(2)` through [`File::try_lock`]) on `OUT/.<entry>.lock`,
//! before any work, and holds it until its outputs are committed. A second
//! run finds the lock taken and is refused, naming the holder's process id
//! (written into the lock file). The lock file is removed when the holder
//! drops it; since a waiter may have opened the file just before that,
//! a lock is only trusted once the path still names the locked file.
//! A killed holder's lock is released by the kernel; its file is reused.

use std::fs::{self, File, OpenOptions};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

/// An exclusive lock on writing `OUT/<entry>`, released (and its file
/// removed) when dropped.
#[derive(Debug)]
pub struct OutputLock {
    path: PathBuf,
    file: File,
}

/// Why an output lock was not taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another live process holds the lock.
    #[error(
        "{} is being written by another fsmeta ({}; lock file {}): nothing was run; wait for it to finish or give another --out",
        target.display(),
        holder.map_or_else(|| "process id unknown".to_string(), |p| format!("pid {p}")),
        path.display()
    )]
    Busy {
        /// The output entry, `OUT/<entry>`.
        target: PathBuf,
        /// The lock file.
        path: PathBuf,
        /// The process id the holder wrote into the lock file, if readable.
        holder: Option<u32>,
    },
    /// The lock file could not be created, locked or written.
    #[error("cannot lock {}: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The lock file of `out/<entry>`: `out/.<entry>.lock`.
pub fn lock_path(out: &Path, entry: &str) -> PathBuf {
    out.join(format!(".{entry}.lock"))
}

impl OutputLock {
    /// Takes the lock on writing `out/<entry>` without waiting: creates
    /// `out` if needed, refuses with [`LockError::Busy`] when another
    /// process holds it.
    pub fn acquire(out: &Path, entry: &str) -> Result<OutputLock, LockError> {
        let path = lock_path(out, entry);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        fs::create_dir_all(out).map_err(io)?;
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    let holder = file.read_to_string(&mut text).ok().and_then(|_| text.trim().parse().ok());
                    return Err(LockError::Busy {
                        target: out.join(entry),
                        path,
                        holder,
                    });
                }
                Err(fs::TryLockError::Error(e)) => return Err(io(e)),
            }
            // The holder before us may have removed the file after we
            // opened it: then our lock is on a file nobody else sees.
            if !same_file(&file, &path) {
                continue;
            }
            file.set_len(0).map_err(io)?;
            file.rewind().map_err(io)?;
            writeln!(file, "{}", std::process::id()).map_err(io)?;
            return Ok(OutputLock { path, file });
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still held, so that nobody locks it in between;
        // closing the file then releases the lock.
        let _ = fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_one_entry_is_refused_and_names_the_holder() {
        let dir = std::env::temp_dir().join(format!("fsmeta-lock-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let a = OutputLock::acquire(&dir, "s").expect("first lock");
        // A second open file description in this process conflicts too.
        match OutputLock::acquire(&dir, "s") {
            Err(LockError::Busy { holder, .. }) => assert_eq!(holder, Some(std::process::id())),
            other => panic!("expected Busy, got {other:?}"),
        }
        // Another entry of the same folder is free.
        let b = OutputLock::acquire(&dir, "t").expect("other entry");
        drop(a);
        assert!(!lock_path(&dir, "s").exists(), "the lock file is removed");
        let _again = OutputLock::acquire(&dir, "s").expect("free again");
        drop(b);
        let _ = fs::remove_dir_all(&dir);
    }
}
