//! The sibling entries of `OUT/<name>`, what `OUT/<name>` currently is, and
//! the clean-up of what dead runs left behind.
//!
//! Every entry a run creates beside `OUT/<name>` is called
//! `.<name>.<kind>-<pid>-<n>`: `pid` is the process that made it and `n`
//! tells apart the sets one process writes. An entry is removed only when
//! its process is gone (`/proc/<pid>` does not exist) and it is not the set
//! `OUT/<name>` currently names.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Component, Path};

/// What a sibling entry of `OUT/<name>` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A set being written.
    Tmp,
    /// A complete set (the target of the link `OUT/<name>` once committed).
    Version,
    /// A new link, about to be renamed over `OUT/<name>`.
    Link,
    /// The previous set, moved aside because `OUT/<name>` was a folder.
    Old,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Tmp, Kind::Version, Kind::Link, Kind::Old];

    fn word(self) -> &'static str {
        match self {
            Kind::Tmp => "tmp",
            Kind::Version => "v",
            Kind::Link => "link",
            Kind::Old => "old",
        }
    }
}

/// One sibling entry of `OUT/<name>` made by a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    /// The file name in `OUT`.
    pub file: String,
    /// What it is.
    pub kind: Kind,
    /// The process that made it.
    pub pid: u32,
}

/// The file name of the `kind` entry of set `n` of process `pid`.
pub(super) fn sibling(name: &str, kind: Kind, pid: u32, n: u64) -> String {
    format!(".{name}.{}-{pid}-{n}", kind.word())
}

fn digits<T: std::str::FromStr>(s: &str) -> Option<T> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Reads `file` as a sibling entry of `<name>`, or `None` if it is not one.
pub(super) fn parse(name: &str, file: &str) -> Option<Entry> {
    let rest = file.strip_prefix('.')?.strip_prefix(name)?.strip_prefix('.')?;
    let (word, ids) = rest.split_once('-')?;
    let kind = Kind::ALL.into_iter().find(|k| k.word() == word)?;
    let (pid, n) = ids.split_once('-')?;
    digits::<u64>(n)?;
    Some(Entry {
        file: file.to_string(),
        kind,
        pid: digits(pid)?,
    })
}

/// Whether any entry of set `n` of process `pid` exists in `out`.
pub(super) fn any_exists(out: &Path, name: &str, pid: u32, n: u64) -> bool {
    Kind::ALL
        .into_iter()
        .any(|k| fs::symlink_metadata(out.join(sibling(name, k, pid, n))).is_ok())
}

/// What `OUT/<name>` is right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Current {
    /// Nothing.
    Missing,
    /// A link; to the named sibling entry, or `None` when it points
    /// anywhere else (a link fsmeta did not make).
    Link(Option<String>),
    /// A real folder (written by an older fsmeta, or on a file system
    /// without symbolic links).
    Folder,
}

/// What `OUT/<name>` is right now; an error if it is a file.
pub(super) fn current(out: &Path, name: &str) -> io::Result<Current> {
    let path = out.join(name);
    let meta = match fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Current::Missing),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        let target = fs::read_link(&path)?;
        let mut parts = target.components();
        let ours = match (parts.next(), parts.next()) {
            (Some(Component::Normal(t)), None) => t.to_str().and_then(|t| parse(name, t)).map(|e| e.file),
            _ => None,
        };
        return Ok(Current::Link(ours));
    }
    if meta.is_dir() {
        return Ok(Current::Folder);
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, "exists and is not a folder"))
}

/// Whether process `pid` may still be running. Without `/proc` nobody can
/// tell, so every process counts as alive and nothing is removed.
pub fn alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    pid == std::process::id() || !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

/// The sibling entries of `<name>` in `out`, sorted by file name.
fn entries(out: &Path, name: &str) -> io::Result<Vec<Entry>> {
    let mut found = Vec::new();
    for item in fs::read_dir(out)? {
        let item = item?;
        if let Some(e) = item.file_name().to_str().and_then(|f| parse(name, f)) {
            found.push(e);
        }
    }
    found.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(found)
}

/// Puts back the set a dead run moved aside (`old`) when `OUT/<name>` is
/// missing, then removes every entry dead runs left that is not in use.
pub(super) fn recover(out: &Path, name: &str) -> io::Result<()> {
    let found = entries(out, name)?;
    if current(out, name)? == Current::Missing {
        let moved = found.iter().rev().find(|e| e.kind == Kind::Old && !alive(e.pid));
        if let Some(e) = moved
            && let Err(err) = fs::rename(out.join(&e.file), out.join(name))
            && current(out, name)? == Current::Missing
        {
            return Err(err);
        }
    }
    for e in found.iter().filter(|e| !alive(e.pid)) {
        remove_if_unused(out, name, e)?;
    }
    Ok(())
}

/// Removes entry `e`, whose process is dead, unless `OUT/<name>` uses it.
/// The owner being dead, `e` cannot become the target after this check.
fn remove_if_unused(out: &Path, name: &str, e: &Entry) -> io::Result<()> {
    match current(out, name)? {
        Current::Link(Some(t)) if t == e.file => return Ok(()),
        Current::Missing if e.kind == Kind::Old => return Ok(()),
        _ => {}
    }
    remove(&out.join(&e.file));
    Ok(())
}

/// Removes a file, link or folder tree, ignoring failures: what cannot be
/// removed now is retried by the next run.
pub(super) fn remove(path: &Path) {
    let _ = match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(_) => Ok(()),
    };
}

/// The file name of `path` as text (empty if it has none).
pub(super) fn file_name(path: &Path) -> &str {
    path.file_name().and_then(OsStr::to_str).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_ignored() {
        let f = sibling("a.b", Kind::Version, 42, 7);
        assert_eq!(f, ".a.b.v-42-7");
        let e = parse("a.b", &f).expect("parses");
        assert_eq!((e.kind, e.pid), (Kind::Version, 42));
        for other in [
            ".a.b.v-42",
            ".a.b.v-+4-1",
            ".a.b.x-1-2",
            ".a.b.tmp-1-2.tmp-3-4",
            "a.b",
            ".a.bc.v-1-2",
            ".a.v-1-2",
        ] {
            assert_eq!(parse("a.b", other), None, "{other}");
        }
        assert_eq!(parse("a", ".a.b.v-42-7"), None);
    }

    /// A pid no process can have (Linux caps pids at 2^22).
    const DEAD: u32 = 4_000_000_000;

    fn scratch(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("fsmeta-stale-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).expect("scratch dir");
        d
    }

    fn mkdir(out: &Path, kind: Kind, pid: u32) -> String {
        let f = sibling("x", kind, pid, 0);
        fs::create_dir(out.join(&f)).expect("mkdir");
        fs::write(out.join(&f).join("runs.csv"), &f).expect("write");
        f
    }

    #[test]
    fn this_process_is_alive_and_an_impossible_pid_is_not() {
        assert!(alive(std::process::id()));
        if Path::new("/proc/self").exists() {
            assert!(!alive(DEAD));
        }
    }

    #[test]
    fn a_set_moved_aside_by_a_dead_run_is_put_back() {
        let out = scratch("restore");
        let old = mkdir(&out, Kind::Old, DEAD);
        mkdir(&out, Kind::Tmp, DEAD);
        recover(&out, "x").expect("recover");
        assert_eq!(current(&out, "x").expect("current"), Current::Folder);
        assert_eq!(fs::read_to_string(out.join("x/runs.csv")).expect("read"), old);
        assert_eq!(entries(&out, "x").expect("entries"), vec![]);
        let _ = fs::remove_dir_all(&out);
    }

    #[cfg(unix)]
    #[test]
    fn only_dead_unused_entries_are_removed() {
        let out = scratch("clean");
        let live_pid = std::process::id();
        let target = mkdir(&out, Kind::Version, DEAD);
        std::os::unix::fs::symlink(&target, out.join("x")).expect("symlink");
        let kept = [mkdir(&out, Kind::Tmp, live_pid), target.clone(), mkdir(&out, Kind::Old, live_pid)];
        for kind in Kind::ALL {
            fs::write(out.join(sibling("x", kind, DEAD, 1)), "stale").expect("write");
        }
        fs::write(out.join(".y.tmp-4000000000-0"), "another scenario").expect("write");
        recover(&out, "x").expect("recover");
        let mut left: Vec<String> = entries(&out, "x").expect("entries").into_iter().map(|e| e.file).collect();
        left.sort();
        let mut want = kept.to_vec();
        want.sort();
        assert_eq!(left, want);
        assert!(out.join(".y.tmp-4000000000-0").exists());
        assert_eq!(current(&out, "x").expect("current"), Current::Link(Some(target)));
        let _ = fs::remove_dir_all(&out);
    }
}
