//! Reading the host's mounts and loop devices, and undoing what a lab
//! set up (ledger entries), each step only if it is still there and still
//! the lab's.

use super::{Entry, which};
use crate::lab::ledger::Ledger;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One line of `/proc/self/mountinfo`: mount point, major:minor, fs type,
/// source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountLine {
    /// The mount point (octal escapes decoded).
    pub point: PathBuf,
    /// `major:minor` of the filesystem.
    pub dev: String,
    /// The filesystem type.
    pub fstype: String,
    /// The mount source (e.g. `/dev/loop3`).
    pub source: String,
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4).filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses mountinfo text (see proc(5)).
pub fn parse_mountinfo(text: &str) -> Vec<MountLine> {
    text.lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let f: Vec<&str> = pre.split(' ').collect();
            let g: Vec<&str> = post.split(' ').collect();
            Some(MountLine {
                point: PathBuf::from(unescape(f.get(4)?)),
                dev: (*f.get(2)?).to_string(),
                fstype: (*g.first()?).to_string(),
                source: unescape(g.get(1)?),
            })
        })
        .collect()
}

/// The current mounts of this process's namespace.
pub(super) fn mounts() -> Vec<MountLine> {
    parse_mountinfo(&fs::read_to_string("/proc/self/mountinfo").unwrap_or_default())
}

/// A ledger undone and closed when dropped: what a measurement set up
/// (its instance, its folder) goes away on every exit path but a kill,
/// after which the next lab run undoes the dead ledger.
#[derive(Debug)]
pub struct UndoOnDrop(Option<Ledger>);

impl UndoOnDrop {
    /// Takes charge of `ledger`.
    pub fn new(ledger: Ledger) -> Self {
        UndoOnDrop(Some(ledger))
    }

    /// Records `e` in the ledger before what it names is made.
    pub fn record(&mut self, e: Entry) -> Result<(), crate::lab::LabError> {
        match &mut self.0 {
            Some(l) => l.record(e),
            None => Err(crate::lab::LabError::step("ledger", "closed")),
        }
    }
}

impl Drop for UndoOnDrop {
    fn drop(&mut self) {
        if let Some(l) = self.0.take() {
            undo(l.entries());
            l.close();
        }
    }
}

/// Undoes ledger entries, newest first, each only if it is still there
/// and still the lab's; errors are printed, not returned (cleanup goes on).
pub fn undo(entries: &[Entry]) {
    for e in entries.iter().rev() {
        if let Err(msg) = undo_one(e) {
            let _ = writeln!(std::io::stderr(), "{}", super::message_line(&format!("cleanup: {msg}")));
        }
    }
}

fn undo_one(e: &Entry) -> Result<(), String> {
    match e {
        Entry::Instance(dir) => {
            if dir.is_dir() {
                let _ = fs::write(dir.join("tracing_on"), "0");
                let _ = fs::write(dir.join("events/enable"), "0");
                clear_triggers(dir);
                fs::remove_dir(dir).map_err(|err| format!("rmdir {}: {err}", dir.display()))?;
            }
        }
        Entry::Mount(mnt) => {
            for _ in 0..50 {
                if !mounts().iter().any(|m| &m.point == mnt) {
                    return Ok(());
                }
                let ok = which("umount")
                    .and_then(|u| Command::new(u).arg(mnt).output().ok())
                    .is_some_and(|o| o.status.success());
                if !ok {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            }
            if mounts().iter().any(|m| &m.point == mnt) {
                let _ = which("umount").map(|u| Command::new(u).arg("-l").arg(mnt).output());
                return Err(format!("{} was busy: lazily unmounted", mnt.display()));
            }
        }
        Entry::Loop(image) => {
            for dev in loops_backed_by(image) {
                let ok = which("losetup")
                    .and_then(|l| Command::new(l).arg("-d").arg(&dev).output().ok())
                    .is_some_and(|o| o.status.success());
                if !ok {
                    return Err(format!("losetup -d {dev} failed"));
                }
            }
        }
        Entry::Image(p) => {
            // Removed under a device still attached, the image could no
            // longer be found by its path: leave both.
            if let Some(dev) = loops_backed_by(p).first() {
                return Err(format!("{dev} is still attached to {}: left in place", p.display()));
            }
            if p.is_file() {
                fs::remove_file(p).map_err(|err| format!("rm {}: {err}", p.display()))?;
            }
        }
        Entry::Dir(d) => {
            if mounts().iter().any(|m| m.point.starts_with(d)) {
                return Err(format!("{} still has a mount under it: left in place", d.display()));
            }
            if let Some(dev) = loops_under(d).first() {
                return Err(format!("{dev} is still attached to a file in {}: left in place", d.display()));
            }
            if d.is_dir() {
                fs::remove_dir_all(d).map_err(|err| format!("rm -r {}: {err}", d.display()))?;
            }
        }
    }
    Ok(())
}

fn clear_triggers(instance: &Path) {
    let Ok(systems) = fs::read_dir(instance.join("events")) else {
        return;
    };
    for sys in systems.flatten() {
        let Ok(evs) = fs::read_dir(sys.path()) else {
            continue;
        };
        for ev in evs.flatten() {
            let trig = ev.path().join("trigger");
            let Ok(text) = fs::read_to_string(&trig) else {
                continue;
            };
            for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
                let t = line.split(':').next().unwrap_or("").trim();
                let cond = line.split_once(" if ").map(|(_, c)| c.trim_end_matches(" [unlimited]").trim());
                let undo = match cond {
                    Some(c) => format!("!{t} if {c}"),
                    None => format!("!{t}"),
                };
                let _ = fs::write(&trig, undo);
            }
        }
    }
}

/// Loop devices whose backing file is `image`.
pub fn loops_backed_by(image: &Path) -> Vec<String> {
    loops_where(|backing| backing == image)
}

/// Loop devices whose backing file lies under `dir`, removed or not (a
/// removed file reads `PATH (deleted)`).
pub fn loops_under(dir: &Path) -> Vec<String> {
    loops_where(|backing| backing.starts_with(dir))
}

/// Loop devices whose backing file's path passes `keep`.
fn loops_where(keep: impl Fn(&Path) -> bool) -> Vec<String> {
    let Ok(rd) = fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for ent in rd.flatten() {
        let name = ent.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(b) = fs::read_to_string(ent.path().join("loop/backing_file")) else {
            continue;
        };
        if keep(Path::new(b.trim())) {
            out.push(format!("/dev/{name}"));
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_are_parsed_with_escapes() {
        let text = "36 35 98:0 / /mnt1 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n\
                    40 22 7:3 / /tmp/fsmeta-lab-1-0/mnt rw,relatime shared:5 - xfs /dev/loop3 rw,attr2\n\
                    41 22 0:52 / /tmp/a\\040b rw - btrfs /dev/loop4 rw\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].point, PathBuf::from("/tmp/fsmeta-lab-1-0/mnt"));
        assert_eq!(
            (m[1].dev.as_str(), m[1].fstype.as_str(), m[1].source.as_str()),
            ("7:3", "xfs", "/dev/loop3")
        );
        assert_eq!(m[2].point, PathBuf::from("/tmp/a b"));
        assert_eq!(m[2].fstype, "btrfs");
    }

    /// A lab message (progress or cleanup) quoting a path with control
    /// characters reaches stderr escaped (issue 33).
    #[test]
    fn lab_messages_escape_control_characters() {
        let line = super::super::message_line("cleanup: rmdir /tmp/a\u{1b}]0;title\u{7}b: busy");
        assert_eq!(line, "fsmeta lab: cleanup: rmdir /tmp/a\\u{1b}]0;title\\u{7}b: busy");
        assert!(!line.chars().any(char::is_control), "{line:?}");
    }
}
