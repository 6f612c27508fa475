//! The host side of the lab: requirements, commands, signals, and the
//! one filesystem a run makes ([`Fs`]), undone on every exit path.

use super::LabError;
use super::ledger::{self, Entry, Ledger};

mod cleanup;

use cleanup::mounts;
pub use cleanup::{MountLine, UndoOnDrop, loops_backed_by, loops_under, parse_mountinfo, undo};
use std::fs::{self, File};
use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where tracefs is mounted.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// The largest image the lab makes (bytes): images are sparse, but a bug
/// must not be able to fill the host's disk.
pub const MAX_IMAGE_BYTES: u64 = 64 << 30;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static NEXT_FS: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Stops the lab with [`LabError::Interrupted`] once SIGINT or SIGTERM
/// arrived (checked between steps and every few hundred file operations).
pub fn check_interrupt() -> Result<(), LabError> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        Err(LabError::Interrupted)
    } else {
        Ok(())
    }
}

fn install_signal_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is
        // async-signal-safe; sigaction is given a zeroed, valid struct.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// A checked host: root, loop devices, tracefs, the tools; dead labs'
/// leftovers removed.
#[derive(Debug)]
pub struct Host {
    verbose: bool,
    /// Where images are made (the temporary folder).
    pub tmp: PathBuf,
}

/// A tool the lab runs and the Debian package that provides it.
const TOOLS: &[(&str, &str)] = &[
    ("mkfs.xfs", "xfsprogs"),
    ("xfs_db", "xfsprogs"),
    ("xfs_io", "xfsprogs"),
    ("mkfs.btrfs", "btrfs-progs"),
    ("btrfs", "btrfs-progs"),
    ("losetup", "mount (util-linux)"),
    ("mount", "mount (util-linux)"),
    ("umount", "mount (util-linux)"),
];

/// The full path of `tool` on PATH or in the sbin folders, if any.
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file())
}

/// What the lab needs and this host lacks (empty: all there), each with
/// the package or command that provides it.
pub fn missing_requirements() -> Vec<(String, String)> {
    let mut out = Vec::new();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        out.push(("root".into(), "run as root: the lab attaches loop devices and mounts".into()));
    }
    if !Path::new("/dev/loop-control").exists() {
        out.push(("loop devices (/dev/loop-control)".into(), "modprobe loop".into()));
    }
    if !Path::new(TRACEFS).join("instances").is_dir() || !Path::new(TRACEFS).join("events/xfs").is_dir() {
        out.push((
            format!("tracefs with the xfs and btrfs events at {TRACEFS}"),
            format!("mount -t tracefs nodev {TRACEFS}"),
        ));
    }
    let fss = fs::read_to_string("/proc/filesystems").unwrap_or_default();
    for fsname in ["xfs", "btrfs"] {
        if !fss.split_whitespace().any(|w| w == fsname) {
            out.push((format!("{fsname} in the running kernel"), format!("modprobe {fsname}")));
        }
    }
    for (tool, pkg) in TOOLS {
        if which(tool).is_none() {
            out.push((format!("the `{tool}` command"), format!("apt-get install {pkg}")));
        }
    }
    out
}

impl Host {
    /// Checks the requirements (nothing is set up if one is missing),
    /// undoes what dead labs left, and installs the signal handlers.
    pub fn prepare(verbose: bool) -> Result<Host, LabError> {
        let missing = missing_requirements();
        if !missing.is_empty() {
            let what = missing.iter().map(|m| m.0.clone()).collect::<Vec<_>>().join(", ");
            let hints = missing.iter().map(|m| m.1.clone()).collect::<Vec<_>>().join("; ");
            return Err(LabError::Missing { what, hint: Some(hints) });
        }
        install_signal_handlers();
        let host = Host {
            verbose,
            tmp: std::env::temp_dir(),
        };
        for (file, entries) in ledger::dead_ledgers() {
            host.progress(&format!(
                "undoing what a dead lab left ({}: {} entries)",
                file.display(),
                entries.len()
            ));
            undo(&entries);
            let _ = fs::remove_file(&file);
        }
        Ok(host)
    }

    /// A warning on stderr, always.
    pub fn warn(&self, msg: &str) {
        // Said even with --silent: it is about what the figures mean.
        let _ = writeln!(std::io::stderr(), "{}", message_line(&format!("warning: {msg}")));
    }

    /// A progress message on stderr, unless silent.
    pub fn progress(&self, msg: &str) {
        if self.verbose {
            // A closed or full stderr must not stop the lab (or panic).
            let _ = writeln!(std::io::stderr(), "{}", message_line(msg));
        }
    }
}

/// A lab message as stderr shows it: control characters escaped (a path
/// or a tool's output may hold them), as every fsmeta message.
pub(crate) fn message_line(msg: &str) -> String {
    format!("fsmeta lab: {}", crate::text::escape_controls(msg))
}

/// Runs `tool args`, returning its stdout; a non-zero exit is a failed
/// `step` carrying the tool's stderr.
pub fn cmd(step: &str, tool: &str, args: &[&str]) -> Result<String, LabError> {
    check_interrupt()?;
    let exe = which(tool).ok_or_else(|| LabError::step(step, format!("`{tool}` not found")))?;
    let out = Command::new(&exe)
        .args(args)
        .output()
        .map_err(|e| LabError::step(step, format!("{}: {e}", exe.display())))?;
    if !out.status.success() {
        return Err(LabError::step(
            step,
            format!(
                "`{tool} {}` exited with {}: {}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A filesystem type the lab makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsType {
    /// XFS.
    Xfs,
    /// btrfs.
    Btrfs,
}

impl FsType {
    /// The superblock magic `statfs(2)` reports (XFS_SUPER_MAGIC,
    /// BTRFS_SUPER_MAGIC; include/uapi/linux/magic.h).
    fn magic(self) -> i64 {
        match self {
            FsType::Xfs => 0x5846_5342,
            FsType::Btrfs => 0x9123_683E,
        }
    }

    fn name(self) -> &'static str {
        match self {
            FsType::Xfs => "xfs",
            FsType::Btrfs => "btrfs",
        }
    }
}

/// One filesystem of a lab run: temporary folder, image, loop device,
/// mount (and the run's tracefs instance, see [`super::trace::Instance`]).
/// Dropping it undoes all of them, newest first.
#[derive(Debug)]
pub struct Fs {
    ledger: Option<Ledger>,
    fstype: FsType,
    dir: PathBuf,
    image: PathBuf,
    mnt: PathBuf,
    loopdev: String,
    root: Option<File>,
    /// `mkfs` and `mount` as run, for `lab.txt`.
    pub setup: Vec<String>,
}

/// Refuses a folder the lab would make whose path holds blanks, escapes
/// or control characters (the ledger keeps one path per line, and the
/// tools are given it as one argument).
pub(crate) fn plain_dir(dir: &Path) -> Result<(), LabError> {
    let text = dir.to_string_lossy();
    if text.chars().any(|c| c.is_whitespace() || c == '\\' || c.is_control()) {
        return Err(LabError::Unsafe(format!(
            "the temporary folder {text:?} holds blanks or escapes; set TMPDIR to a plain path"
        )));
    }
    Ok(())
}

/// Bytes free to an unprivileged writer in the filesystem of `dir`
/// (`statvfs`), or `None` where it cannot be read.
pub(crate) fn free_bytes(dir: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: c is a valid NUL-terminated path; st is a valid out-pointer.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        Some(st.f_bavail as u64 * st.f_frsize as u64)
    }
}

impl Fs {
    /// Makes an image of `bytes` in a new temporary folder, runs `mkfs`
    /// with `mkfs_args` on the image file, attaches it to a loop device and
    /// mounts it with `mount_opts`, then checks that the mount point is
    /// mounted from that loop device.
    pub fn create(host: &Host, fstype: FsType, bytes: u64, mkfs_args: &[&str], mount_opts: &str) -> Result<Fs, LabError> {
        check_interrupt()?;
        if bytes > MAX_IMAGE_BYTES {
            return Err(LabError::Param(format!(
                "an image of {bytes} bytes is over the lab's bound of {MAX_IMAGE_BYTES}"
            )));
        }
        let free = free_bytes(&host.tmp).unwrap_or(0);
        if free < bytes + (1 << 30) {
            return Err(LabError::Missing {
                what: format!(
                    "free space in {}: {} MiB needed (the image's size and 1 GiB), {} MiB free",
                    host.tmp.display(),
                    (bytes >> 20) + 1024,
                    free >> 20
                ),
                hint: Some("set TMPDIR to a folder with more room".into()),
            });
        }
        let mut ledger = Ledger::open()?;
        let n = NEXT_FS.fetch_add(1, Ordering::Relaxed);
        let dir = host.tmp.join(format!("fsmeta-lab-{}-{n}", std::process::id()));
        plain_dir(&dir)?;
        ledger.record(Entry::Dir(dir.clone()))?;
        let mut me = Fs {
            ledger: Some(ledger),
            fstype,
            image: dir.join("image"),
            mnt: dir.join("mnt"),
            dir,
            loopdev: String::new(),
            root: None,
            setup: Vec::new(),
        };
        fs::create_dir(&me.dir).map_err(|e| LabError::step(format!("mkdir {}", me.dir.display()), e))?;
        fs::create_dir(&me.mnt).map_err(|e| LabError::step(format!("mkdir {}", me.mnt.display()), e))?;
        me.record(Entry::Image(me.image.clone()))?;
        let f = File::create_new(&me.image).map_err(|e| LabError::step("create the image", e))?;
        f.set_len(bytes).map_err(|e| LabError::step("size the image", e))?;
        drop(f);
        let image = me.image.to_string_lossy().into_owned();
        let mut args: Vec<&str> = mkfs_args.to_vec();
        args.push(&image);
        let mkfs = format!("mkfs.{}", fstype.name());
        cmd(&mkfs, &mkfs, &args)?;
        me.setup
            .push(format!("{mkfs} {} IMAGE ({} MiB image)", mkfs_args.join(" "), bytes >> 20));
        me.record(Entry::Loop(me.image.clone()))?;
        me.loopdev = cmd("attach a loop device", "losetup", &["--find", "--show", &image])?
            .trim()
            .to_string();
        if !me.loopdev.starts_with("/dev/loop") || loops_backed_by(&me.image) != [me.loopdev.clone()] {
            return Err(LabError::Unsafe(format!(
                "losetup gave `{}`, which is not the one loop device backed by the lab's image",
                super::short(&me.loopdev)
            )));
        }
        me.mount(mount_opts)?;
        Ok(me)
    }

    fn record(&mut self, e: Entry) -> Result<(), LabError> {
        match &mut self.ledger {
            Some(l) => l.record(e),
            None => Err(LabError::step("ledger", "closed")),
        }
    }

    /// Records a tracefs instance in the ledger before it is made.
    pub fn record_instance(&mut self, dir: &Path) -> Result<(), LabError> {
        self.record(Entry::Instance(dir.to_path_buf()))
    }

    /// Mounts the loop device (again) and checks it.
    pub fn mount(&mut self, opts: &str) -> Result<(), LabError> {
        let mnt = self.mnt.to_string_lossy().into_owned();
        self.record(Entry::Mount(self.mnt.clone()))?;
        let mut args = vec!["-t", self.fstype.name()];
        if !opts.is_empty() {
            args.extend(["-o", opts]);
        }
        let dev = self.loopdev.clone();
        args.extend([dev.as_str(), mnt.as_str()]);
        cmd("mount", "mount", &args)?;
        let line = format!("mount {}", args.join(" ").replace(&mnt, "MNT").replace(&dev, "LOOPDEV"));
        if !self.setup.contains(&line) {
            self.setup.push(line);
        }
        self.verify()?;
        let root = File::open(&self.mnt).map_err(|e| LabError::step("open the mount point", e))?;
        let (want, got) = (fs::metadata(&self.mnt).map(|m| m.dev()).ok(), root.metadata().map(|m| m.dev()).ok());
        // btrfs reports a subvolume's anonymous device in st_dev, XFS the
        // block device's, which mountinfo prints.
        let dev_ok = self.fstype == FsType::Btrfs || self.mount_line()?.dev == dev_text(got.unwrap_or(0));
        if want.is_none() || want != got || !dev_ok || fs_magic(&root) != Some(self.fstype.magic()) {
            return Err(LabError::Unsafe(format!(
                "{} changed between the check and the open",
                self.mnt.display()
            )));
        }
        self.root = Some(root);
        Ok(())
    }

    fn mount_line(&self) -> Result<MountLine, LabError> {
        let all = mounts();
        let here: Vec<&MountLine> = all.iter().filter(|m| m.point == self.mnt).collect();
        match here.last() {
            Some(m) => Ok((*m).clone()),
            None => Err(LabError::Unsafe(format!("{} is not a mount point", self.mnt.display()))),
        }
    }

    /// Checks that the mount point is mounted, last, from the lab's loop
    /// device with the expected type, and that the loop device is backed by
    /// the lab's image. Called before every phase that writes.
    pub fn verify(&self) -> Result<(), LabError> {
        let m = self.mount_line()?;
        if m.source != self.loopdev || m.fstype != self.fstype.name() {
            return Err(LabError::Unsafe(format!(
                "{} is mounted from {} ({}), not from the lab's {} ({})",
                self.mnt.display(),
                super::short(&m.source),
                super::short(&m.fstype),
                self.loopdev,
                self.fstype.name()
            )));
        }
        if loops_backed_by(&self.image) != [self.loopdev.clone()] {
            return Err(LabError::Unsafe(format!("{} is no longer backed by the lab's image", self.loopdev)));
        }
        Ok(())
    }

    /// The folder every write goes through: `/proc/self/fd/N` of the
    /// mount's root opened after the check, so a path under it can only
    /// reach the lab's filesystem. Checks the mount again first.
    pub fn base(&self) -> Result<PathBuf, LabError> {
        self.verify()?;
        use std::os::fd::AsRawFd as _;
        match &self.root {
            Some(f) => Ok(PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd()))),
            None => Err(LabError::Unsafe("the filesystem is not mounted".into())),
        }
    }

    /// The mount point, for tools run in child processes (checked first).
    pub fn mount_point(&self) -> Result<&Path, LabError> {
        self.verify()?;
        Ok(&self.mnt)
    }

    /// Unmounts (for tools that read the image: dump-tree, xfs_db; and
    /// as the last step of a timed script) with `umount2(2)`, after
    /// checking the mount is still the lab's ([`Fs::verify`]). Returns
    /// the `umount2` call's own time: the checks before and after it
    /// (the mount table and the loop devices read) are the lab's, not
    /// the kernel's unmount.
    ///
    /// Not by `umount(8)`: a script's phase that ends in the unmount
    /// times the kernel's unmount, and util-linux's process (its start
    /// from this one, `libmount` reading the mount table and the
    /// folder, its exit) is not the kernel's. By hand on the Xeon 6 VM
    /// (session 68, 10 alternating pairs after the btrfs script):
    /// `umount(8)` took 3,844 us (median), `umount2` 1,721; `umount(8)` of
    /// a folder that is not mounted, 1,176.
    pub fn unmount(&mut self) -> Result<Duration, LabError> {
        self.unmount_noted(&|_| Ok(()))
    }

    /// [`Fs::unmount`], calling `note("umount2")` just before the
    /// `umount2` call (after the checks) and `note("umounted")` just after
    /// it returns (before the check that follows), outside the time it
    /// returns: a traced script marks the call's span in its trace
    /// ([`super::trace::Instance::note`]).
    pub fn unmount_noted(&mut self, note: &dyn Fn(&str) -> Result<(), LabError>) -> Result<Duration, LabError> {
        self.verify()?;
        self.root = None;
        let mnt = self.mnt.to_string_lossy().into_owned();
        let path = std::ffi::CString::new(self.mnt.as_os_str().as_encoded_bytes())
            .map_err(|_| LabError::step("umount", format!("{mnt} holds a NUL byte")))?;
        note("umount2")?;
        let t0 = Instant::now();
        // UMOUNT_NOFOLLOW: a symlink put at the mount point is not followed.
        // SAFETY: `path` is a NUL-terminated string that outlives the call.
        let rc = unsafe { libc::umount2(path.as_ptr(), libc::UMOUNT_NOFOLLOW) };
        let took = t0.elapsed();
        if rc != 0 {
            return Err(LabError::step(
                "umount",
                format!("umount2({mnt}): {}", std::io::Error::last_os_error()),
            ));
        }
        note("umounted")?;
        if mounts().iter().any(|m| m.point == self.mnt) {
            return Err(LabError::step("umount", format!("{mnt} is still mounted")));
        }
        Ok(took)
    }

    /// The image file (for read-only tools, after [`Fs::unmount`]).
    pub fn image(&self) -> &Path {
        &self.image
    }

    /// The loop device's `major:minor` and the kernel's dev_t for it
    /// (`major << 20 | minor`, as the XFS events print and filter it).
    pub fn dev(&self) -> Result<(String, u64), LabError> {
        let name = self.loopdev.trim_start_matches("/dev/");
        let text = fs::read_to_string(format!("/sys/block/{name}/dev")).map_err(|e| LabError::step("read the loop device's number", e))?;
        let text = text.trim().to_string();
        let (ma, mi) = text.split_once(':').ok_or_else(|| LabError::step("loop device number", &text))?;
        let (ma, mi): (u64, u64) = (
            ma.parse().map_err(|_| LabError::step("loop device number", &text))?,
            mi.parse().map_err(|_| LabError::step("loop device number", &text))?,
        );
        Ok((text, ma << 20 | mi))
    }
}

/// `syncfs(2)` on the filesystem holding `dir`.
pub fn syncfs(dir: &Path) -> Result<(), LabError> {
    let f = File::open(dir).map_err(|e| LabError::step("open for syncfs", e))?;
    use std::os::fd::AsRawFd as _;
    // SAFETY: the descriptor is open for the duration of the call.
    if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
        return Err(LabError::step("syncfs", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Creates empty files `dir/<prefix>1 ..= dir/<prefix>n` (as `touch` does:
/// open with O_CREAT, close), checking for interrupts as it goes.
pub fn create_files(dir: &Path, prefix: &str, n: u64) -> Result<(), LabError> {
    for i in 1..=n {
        if i % 256 == 0 {
            check_interrupt()?;
        }
        let p = dir.join(format!("{prefix}{i}"));
        File::create_new(&p).map_err(|e| LabError::step(format!("create {prefix}{i}"), e))?;
    }
    Ok(())
}

/// Unlinks `dir/<prefix>i` for each `i` of `which`.
pub fn unlink_files(dir: &Path, prefix: &str, which: impl IntoIterator<Item = u64>) -> Result<u64, LabError> {
    Ok(unlink_files_timed(dir, prefix, which)?.len() as u64)
}

/// Unlinks `dir/<prefix>i` for each `i` of `which`, timing each
/// `unlink(2)` alone (the path is built before the clock starts): the
/// wall time of each call, ns, in order.
pub fn unlink_files_timed(dir: &Path, prefix: &str, which: impl IntoIterator<Item = u64>) -> Result<Vec<u64>, LabError> {
    let mut ns = Vec::new();
    for i in which {
        if (ns.len() + 1) % 256 == 0 {
            check_interrupt()?;
        }
        let p = dir.join(format!("{prefix}{i}"));
        let t = std::time::Instant::now();
        fs::remove_file(&p).map_err(|e| LabError::step(format!("unlink {prefix}{i}"), e))?;
        ns.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    Ok(ns)
}

fn fs_magic(f: &File) -> Option<i64> {
    use std::os::fd::AsRawFd as _;
    // SAFETY: the descriptor is open; st is a valid out-pointer.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        if libc::fstatfs(f.as_raw_fd(), &mut st) != 0 {
            return None;
        }
        Some(st.f_type as i64)
    }
}

fn dev_text(dev: u64) -> String {
    format!("{}:{}", libc::major(dev), libc::minor(dev))
}

impl Drop for Fs {
    fn drop(&mut self) {
        self.root = None;
        if let Some(l) = self.ledger.take() {
            undo(l.entries());
            l.close();
        }
    }
}
