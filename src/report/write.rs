//! Writing outputs safely: every file goes to a temporary name in the
//! output folder and is renamed into place only once all are written, so an
//! interrupted or failed run never leaves a half-written file.

use std::io;
use std::path::{Path, PathBuf};

/// A set of output files staged under temporary names.
#[derive(Debug, Default)]
pub struct Staged {
    files: Vec<(PathBuf, PathBuf)>,
}

/// The temporary name used for `path` (same folder, same extension so that
/// format-by-extension writers still work).
pub fn temp_name(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".tmp-{}-{name}", std::process::id()))
}

impl Staged {
    /// Writes `bytes` to the temporary name of `path`.
    pub fn write(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let tmp = temp_name(path);
        std::fs::write(&tmp, bytes)?;
        self.files.push((tmp, path.to_path_buf()));
        Ok(())
    }

    /// Registers a file a writer already produced at `temp_name(path)`.
    pub fn adopt(&mut self, path: &Path) {
        self.files.push((temp_name(path), path.to_path_buf()));
    }

    /// Renames every staged file into place.
    pub fn commit(self) -> io::Result<()> {
        for (tmp, dst) in &self.files {
            std::fs::rename(tmp, dst)?;
        }
        Ok(())
    }

    /// Removes every staged temporary file.
    pub fn abort(self) {
        for (tmp, _) in &self.files {
            let _ = std::fs::remove_file(tmp);
        }
    }
}
