//! Interrupted labs leave nothing behind; a lab without root does nothing.

use super::{fsmeta, leftovers, out_dir, require_lab, run_ok};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Starts a lab that runs for a while (an AG of 200,000 holes) and waits
/// until its filesystem is mounted; returns the child (the caller waits).
#[allow(clippy::zombie_processes)]
fn start_long_lab(name: &str) -> std::process::Child {
    let out = out_dir(name);
    let mut child = fsmeta()
        .args(["lab", "xfs-alloc", "--silent", "-p", "extents=200000", "--out"])
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fsmeta lab");
    let start = Instant::now();
    let tag = format!("fsmeta-lab-{}-", child.id());
    loop {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        if mounts.contains(&tag) {
            return child;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the lab never mounted its filesystem");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill has no memory preconditions.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
}

#[test]
#[ignore = "needs root, loop devices, tracefs, xfsprogs, btrfs-progs: run by .ci/run"]
fn a_lab_stopped_by_sigint_undoes_everything() {
    require_lab();
    let child = start_long_lab("sigint");
    let pid = child.id();
    std::thread::sleep(Duration::from_millis(300));
    signal(pid, libc::SIGINT);
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(leftovers(pid), Vec::<String>::new());
}

#[test]
#[ignore = "needs root, loop devices, tracefs, xfsprogs, btrfs-progs: run by .ci/run"]
fn a_lab_killed_by_sigkill_is_cleaned_up_by_the_next_lab() {
    require_lab();
    let mut child = start_long_lab("sigkill");
    let pid = child.id();
    std::thread::sleep(Duration::from_millis(300));
    signal(pid, libc::SIGKILL);
    let _ = child.wait();
    assert!(!leftovers(pid).is_empty(), "a SIGKILL cannot be caught: the mount is still there");
    let out = out_dir("after-sigkill");
    run_ok(&[
        "lab",
        "btrfs-layout",
        "--silent",
        "-p",
        "files=10",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(leftovers(pid), Vec::<String>::new());
}

#[test]
#[ignore = "needs root, loop devices, tracefs, xfsprogs, btrfs-progs: run by .ci/run"]
fn a_lab_without_root_refuses_before_doing_anything() {
    require_lab();
    let o = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_fsmeta")])
        .args(["lab", "btrfs-layout", "--silent", "--out", "/nonexistent"])
        .output()
        .expect("setpriv");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("root") && err.contains("cannot run here"), "{err}");
}

#[test]
#[ignore = "needs root, loop devices, tracefs, xfsprogs, btrfs-progs: run by .ci/run"]
fn a_filesystem_that_is_no_longer_mounted_is_never_written() {
    use fsmeta::lab::LabError;
    use fsmeta::lab::host::{Fs, FsType, Host};
    require_lab();
    let host = Host::prepare(false).expect("host");
    let mut fs = Fs::create(&host, FsType::Btrfs, 1 << 30, &["-f", "-q"], "").expect("a filesystem");
    assert!(fs.base().is_ok());
    fs.unmount().expect("unmount");
    match fs.base() {
        Err(LabError::Unsafe(m)) => assert!(m.contains("not a mount point"), "{m}"),
        other => panic!("a write path was given for an unmounted filesystem: {other:?}"),
    }
    drop(fs);
    assert_eq!(leftovers(std::process::id()), Vec::<String>::new());
}

#[test]
#[ignore = "needs root, loop devices, tracefs, xfsprogs, btrfs-progs: run by .ci/run"]
fn a_failed_mkfs_stops_the_lab_and_leaves_nothing() {
    use fsmeta::lab::LabError;
    use fsmeta::lab::host::{Fs, FsType, Host};
    require_lab();
    let host = Host::prepare(false).expect("host");
    // 3000 is not a valid nodesize: mkfs.btrfs refuses it.
    match Fs::create(&host, FsType::Btrfs, 1 << 30, &["-f", "-q", "-n", "3000"], "") {
        Err(LabError::Step { step, .. }) => assert_eq!(step, "mkfs.btrfs"),
        other => panic!("expected a failed mkfs step, got {other:?}"),
    }
    assert_eq!(leftovers(std::process::id()), Vec::<String>::new());
}
