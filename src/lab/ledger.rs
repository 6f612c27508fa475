//! The lab's ledger: what a lab process set up, written before it is set
//! up, so that a lab killed by SIGKILL can be cleaned up by the next one.
//!
//! One file per filesystem a process sets up,
//! `/run/fsmeta-lab/<pid>-<start>-<n>.ledger` (`<start>` is the process's
//! start time in clock ticks, field 22 of `/proc/<pid>/stat`, so a reused
//! pid is not taken for the dead lab; `<n>` counts the process's ledgers,
//! so closing one never removes another's file).
//! Each line is `KIND<TAB>PATH`; the kinds are [`Entry`]'s. A line is
//! written and flushed to disk before the thing it names is made; undoing a
//! line whose thing was never made does nothing.

use super::LabError;
use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Where ledgers live (a tmpfs: a reboot, which removes loop devices and
/// mounts, removes the ledgers too).
pub const LEDGER_DIR: &str = "/run/fsmeta-lab";

/// One thing the lab set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A temporary folder the lab created (removed with its content once
    /// nothing is mounted under it).
    Dir(PathBuf),
    /// An image file (removed).
    Image(PathBuf),
    /// Loop devices backed by this image (detached).
    Loop(PathBuf),
    /// A mount at this mount point (unmounted).
    Mount(PathBuf),
    /// A tracefs instance, by its folder (removed).
    Instance(PathBuf),
}

impl Entry {
    fn line(&self) -> String {
        let (k, p) = match self {
            Entry::Dir(p) => ("dir", p),
            Entry::Image(p) => ("image", p),
            Entry::Loop(p) => ("loop", p),
            Entry::Mount(p) => ("mount", p),
            Entry::Instance(p) => ("instance", p),
        };
        format!("{k}\t{}\n", p.display())
    }

    /// Parses one ledger line; `None` for a line that is not one.
    pub fn parse(line: &str) -> Option<Entry> {
        let (k, p) = line.split_once('\t')?;
        let p = PathBuf::from(p);
        if !p.is_absolute() {
            return None;
        }
        Some(match k {
            "dir" => Entry::Dir(p),
            "image" => Entry::Image(p),
            "loop" => Entry::Loop(p),
            "mount" => Entry::Mount(p),
            "instance" => Entry::Instance(p),
            _ => return None,
        })
    }
}

/// This process's ledger.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    file: File,
    entries: Vec<Entry>,
}

/// Process `pid`'s name and the fields of `/proc/PID/stat` after it (the
/// state first), if it exists.
pub fn proc_stat(pid: u32) -> Option<(String, String)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: it runs
    // from the first '(' to the last ')', the other fields after it.
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let name = stat.get(open + 1..close)?.to_string();
    Some((name, stat[close + 1..].to_string()))
}

/// The start time of process `pid` in clock ticks, if it exists.
pub fn start_time(pid: u32) -> Option<u64> {
    let (_, rest) = proc_stat(pid)?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

impl Ledger {
    /// Opens this process's ledger (created empty).
    pub fn open() -> Result<Ledger, LabError> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = Path::new(LEDGER_DIR);
        fs::create_dir_all(dir).map_err(|e| LabError::step(format!("create {LEDGER_DIR}"), e))?;
        let pid = std::process::id();
        let start = start_time(pid).unwrap_or(0);
        let path = dir.join(format!("{pid}-{start}-{n}.ledger"));
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| LabError::step(format!("open {}", path.display()), e))?;
        Ok(Ledger {
            path,
            file,
            entries: Vec::new(),
        })
    }

    /// Records `e` on disk before it is set up.
    pub fn record(&mut self, e: Entry) -> Result<(), LabError> {
        self.file
            .write_all(e.line().as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|err| LabError::step(format!("write {}", self.path.display()), err))?;
        self.entries.push(e);
        Ok(())
    }

    /// What was recorded, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Forgets everything (after it was undone) and removes the file.
    pub fn close(self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// The pid and start time a ledger's file stem (`<pid>-<start>-<n>`)
/// names, if it is one.
pub fn owner(stem: &str) -> Option<(u32, u64)> {
    let mut it = stem.split('-');
    let (pid, start, n) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some() || n.parse::<u64>().is_err() {
        return None;
    }
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// Ledgers of lab processes that are gone: (file, entries).
pub fn dead_ledgers() -> Vec<(PathBuf, Vec<Entry>)> {
    let Ok(rd) = fs::read_dir(LEDGER_DIR) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for ent in rd.flatten() {
        let path = ent.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".ledger") else {
            continue;
        };
        let Some((pid, start)) = owner(stem) else {
            continue;
        };
        if start_time(pid) == Some(start) {
            continue; // that lab is alive
        }
        let text = fs::read_to_string(&path).unwrap_or_default();
        out.push((path, text.lines().filter_map(Entry::parse).collect()));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_junk_is_ignored() {
        for e in [
            Entry::Dir("/tmp/fsmeta-lab-1-0".into()),
            Entry::Image("/tmp/x/img".into()),
            Entry::Loop("/tmp/x/img".into()),
            Entry::Mount("/tmp/x/mnt".into()),
            Entry::Instance("/sys/kernel/tracing/instances/fsmeta-1".into()),
        ] {
            let line = e.line();
            assert_eq!(Entry::parse(line.trim_end_matches('\n')), Some(e));
        }
        assert_eq!(Entry::parse("dir\trelative/path"), None);
        assert_eq!(Entry::parse("bogus\t/x"), None);
        assert_eq!(Entry::parse("no tab"), None);
    }

    #[test]
    fn ledger_names_give_their_owner() {
        assert_eq!(owner("123-456-0"), Some((123, 456)));
        assert_eq!(owner("123-456-17"), Some((123, 456)));
        assert_eq!(owner("123-456"), None);
        assert_eq!(owner("123-456-x"), None);
        assert_eq!(owner("a-456-0"), None);
        assert_eq!(owner("1-2-3-4"), None);
    }

    #[test]
    fn this_process_has_a_start_time() {
        assert!(start_time(std::process::id()).is_some());
        assert_eq!(start_time(u32::MAX), None);
    }
}
