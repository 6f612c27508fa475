//! The live side of the btrfs script: a new filesystem made for it
//! ([`fresh`]) and case 3's script run on it ([`script`]), its phases'
//! wall times and `unlink(2)` calls timed, their trace marked.

use super::IMAGE_BYTES;
use crate::lab::host::{self, Fs, FsType, Host};
use crate::lab::{LabError, Metrics};
use std::time::Instant;

/// Puts a phase's `unlink(2)` calls into `m`: `phase.P.unlink_us`, the
/// median call, and `phase.P.unlinks_us`, their sum (both us; nothing when
/// the phase made no call).
fn put_calls(m: &mut Metrics, phase: &str, ns: &[u64]) {
    if ns.is_empty() {
        return;
    }
    let mut sorted = ns.to_vec();
    sorted.sort_unstable();
    let mid = sorted.len() / 2;
    let median = if sorted.len() % 2 == 1 {
        sorted[mid] as f64
    } else {
        (sorted[mid - 1] as f64 + sorted[mid] as f64) / 2.0
    };
    m.insert(format!("phase.{phase}.unlink_us"), median / 1e3);
    m.insert(format!("phase.{phase}.unlinks_us"), ns.iter().sum::<u64>() as f64 / 1e3);
}

/// Case 3's script on `fs` (testdir made and synced): the creates, every
/// `k`-th file unlinked, `syncfs`, the rest unlinked, testdir removed,
/// the filesystem unmounted; `mark` is called with each phase's name as
/// it starts and with `end`, `note` with `umount2` and `umounted` around
/// the unmount's call ([`Fs::unmount_noted`]). Puts each phase's wall
/// time and the unlink phases' call times into `m`; returns the files the
/// unlink phase deleted.
pub(super) fn script(fs: &mut Fs, n: u64, k: u64, m: &mut Metrics, marks: Marks<'_>) -> Result<usize, LabError> {
    let Marks { mark, note } = marks;
    let timed = |m: &mut Metrics, phase: &str, f: &mut dyn FnMut() -> Result<(), LabError>| {
        mark(phase)?;
        let t = Instant::now();
        f()?;
        m.insert(format!("phase.{phase}.wall_us"), t.elapsed().as_secs_f64() * 1e6);
        Ok::<(), LabError>(())
    };
    // Each phase's folder is checked (`Fs::base`) before its clock
    // starts: the check reads the mount table and the loop devices, the
    // lab's work, not the kernel's.
    let dir = fs.base()?.join("testdir");
    timed(m, "create", &mut || host::create_files(&dir, "file_", n))?;
    let mut calls = Vec::new();
    let dir = fs.base()?.join("testdir");
    timed(m, "unlink", &mut || {
        calls = host::unlink_files_timed(&dir, "file_", (1..=n).step_by(k as usize))?;
        Ok(())
    })?;
    put_calls(m, "unlink", &calls);
    let base = fs.base()?;
    timed(m, "sync", &mut || host::syncfs(&base))?;
    let dir = fs.base()?.join("testdir");
    mark("rm_fr")?;
    let t = Instant::now();
    let left = (1..=n).filter(|i| (i - 1) % k != 0);
    let rm = host::unlink_files_timed(&dir, "file_", left)?;
    put_calls(m, "rm_fr", &rm);
    let t_rmdir = Instant::now();
    std::fs::remove_dir(&dir).map_err(|e| LabError::step("rmdir testdir", e))?;
    let rmdir_end = Instant::now();
    m.insert("phase.rm_fr.rmdir_us".into(), (rmdir_end - t_rmdir).as_secs_f64() * 1e6);
    // The unmount's check of the mount is the lab's: the wall is the
    // calls up to the rmdir, then the umount2 call.
    let umount = fs.unmount_noted(note)?;
    m.insert("phase.rm_fr.umount_us".into(), umount.as_secs_f64() * 1e6);
    m.insert("phase.rm_fr.wall_us".into(), ((rmdir_end - t) + umount).as_secs_f64() * 1e6);
    mark("end")?;
    Ok(calls.len())
}

/// What the script writes into its trace: `mark`, a phase's name as it
/// starts ([`crate::lab::trace::Instance::mark`]); `note`, a point inside one
/// ([`crate::lab::trace::Instance::note`]).
#[derive(Clone, Copy)]
pub(super) struct Marks<'a> {
    pub(super) mark: &'a dyn Fn(&str) -> Result<(), LabError>,
    pub(super) note: &'a dyn Fn(&str) -> Result<(), LabError>,
}

/// A new btrfs of `nodesize` mounted, with `testdir` made and synced.
pub(super) fn fresh(host: &Host, nodesize: u64) -> Result<Fs, LabError> {
    // Two copies of each tree block (io.rs counts blocks by them) and the
    // free space tree (the twin counts its leaf in each commit): the
    // defaults of btrfs-progs 5.15 on, said explicitly.
    let args = ["-f", "-q", "-m", "dup", "-R", "free-space-tree", "-n", &nodesize.to_string()];
    let fs = Fs::create(host, FsType::Btrfs, IMAGE_BYTES, &args, "")?;
    std::fs::create_dir(fs.base()?.join("testdir")).map_err(|e| LabError::step("mkdir testdir", e))?;
    host::syncfs(&fs.base()?)?;
    Ok(fs)
}
