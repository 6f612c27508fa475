//! Reading the data files a scenario names (`xfs_db -c freesp` text,
//! machine profiles): regular files only, at most [`MAX_INPUT_BYTES`], so
//! that a path to `/dev/zero`, `/dev/urandom`, a pipe or a huge file is a
//! clear error instead of a read that never ends or exhausts memory.

use crate::param::InputError;
use std::io::{self, Read};
use std::path::Path;

/// Largest data file read, bytes (16 MiB): a freesp histogram is a few
/// kilobytes and a machine profile less; 16 MiB leaves room for any real
/// one while bounding what a wrong path can cost.
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Reads `path` as UTF-8 text: a regular file (after following symbolic
/// links) of at most [`MAX_INPUT_BYTES`]. Errors are [`InputError::Io`]
/// naming the path: not found, not a regular file, too large, not UTF-8.
pub fn read_text_file(path: &Path) -> Result<String, InputError> {
    read_text_file_capped(path, MAX_INPUT_BYTES)
}

/// [`read_text_file`] with a cap of `max_bytes`.
pub fn read_text_file_capped(path: &Path, max_bytes: u64) -> Result<String, InputError> {
    let fail = |source: io::Error| InputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let refuse = |kind: io::ErrorKind, message: String| fail(io::Error::new(kind, message));
    let check = |meta: &std::fs::Metadata| {
        if !meta.is_file() {
            let what = if meta.is_dir() { "a directory" } else { "a device, pipe or socket" };
            return Err(refuse(io::ErrorKind::InvalidInput, format!("not a regular file ({what})")));
        }
        if meta.len() > max_bytes {
            return Err(refuse(io::ErrorKind::InvalidData, too_large(max_bytes)));
        }
        Ok(())
    };
    // Checked before opening: opening a FIFO would wait for a writer.
    check(&std::fs::metadata(path).map_err(fail)?)?;
    let file = std::fs::File::open(path).map_err(fail)?;
    check(&file.metadata().map_err(fail)?)?;
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(fail)?;
    if bytes.len() as u64 > max_bytes {
        return Err(refuse(io::ErrorKind::InvalidData, too_large(max_bytes)));
    }
    String::from_utf8(bytes).map_err(|e| refuse(io::ErrorKind::InvalidData, format!("not UTF-8 text ({e})")))
}

fn too_large(max: u64) -> String {
    if max >= 1 << 20 && max.is_multiple_of(1 << 20) {
        format!("larger than the {} MiB limit for a data file", max >> 20)
    } else {
        format!("larger than the {max}-byte limit for a data file")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(r: Result<String, InputError>) -> String {
        match r {
            Err(e @ InputError::Io { .. }) => e.to_string(),
            other => panic!("expected an I/O error, got {other:?}"),
        }
    }

    #[test]
    fn devices_directories_and_large_files_are_refused() {
        for dev in ["/dev/null", "/dev/zero", "/dev/urandom"] {
            if Path::new(dev).exists() {
                let m = message(read_text_file(Path::new(dev)));
                assert!(m.contains(dev) && m.contains("not a regular file (a device"), "{m}");
            }
        }
        let m = message(read_text_file(&std::env::temp_dir()));
        assert!(m.contains("not a regular file (a directory)"), "{m}");
        let big = std::env::temp_dir().join(format!("fsmeta-input-{}.txt", std::process::id()));
        let made = std::fs::File::create(&big).and_then(|f| f.set_len(MAX_INPUT_BYTES + 1));
        assert!(made.is_ok(), "{made:?}");
        let m = message(read_text_file(&big));
        assert!(m.contains("16 MiB"), "{m}");
        let _ = std::fs::remove_file(&big);
    }

    #[test]
    fn small_text_files_are_read_and_the_cap_is_exact() {
        let f = std::env::temp_dir().join(format!("fsmeta-input-small-{}.txt", std::process::id()));
        assert!(std::fs::write(&f, "from to\n").is_ok());
        assert_eq!(read_text_file_capped(&f, 8).ok().as_deref(), Some("from to\n"));
        assert!(read_text_file_capped(&f, 7).is_err());
        assert!(std::fs::write(&f, [0xff, 0xfe]).is_ok());
        assert!(message(read_text_file(&f)).contains("not UTF-8"));
        let _ = std::fs::remove_file(&f);
    }

    #[test]
    fn machine_profiles_get_the_same_checks() {
        match crate::machine::load_profile(Path::new("/dev/null")) {
            Err(e) => assert!(e.to_string().contains("not a regular file"), "{e}"),
            Ok(p) => panic!("read a profile from /dev/null: {p:?}"),
        }
    }
}
