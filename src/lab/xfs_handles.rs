//! `xfs-handles`: transaction handles per namespace operation on the live
//! kernel. New XFS (mkfs defaults), T threads each in its own directory,
//! N operations per thread and phase: create, unlink, mkdir, rmdir, then
//! create again (not counted) for link and rename.
//!
//! Handles are `xfs_trans_alloc` (a new transaction; the event prints its
//! caller) plus `xfs_trans_dup` (a roll's new handle), filtered on the
//! lab's device. Unlink and rmdir free inodes in the inodegc workers after
//! the syscall returns (fs/xfs/xfs_icache.c, `xfs_inodegc_queue`), so
//! those phases end with `syncfs` and a freeze/thaw (FIFREEZE drains
//! inodegc: `xfs_fs_freeze` -> `xfs_inodegc_stop`); the freeze's own
//! `xfs_sync_sb` transactions, and the log worker's, are not counted
//! (their caller is listed in [`BACKGROUND`]).

use super::host::{self, Fs, FsType, Host, check_interrupt};
use super::trace::{self, EventSpec, Instance};
use super::{Experiment, LabError, Metrics, Params, Trial};
use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "xfs-handles",
    about: "XFS transaction handles per create, unlink, mkdir, rmdir, link, rename (by caller)",
    params: &[("files", 10_000, 1, 1_000_000), ("threads", 1, 1, 64)],
    run,
    check: crate::lab::any_params,
    twin_param: None,
    sample_roots: &["xfs_create", "xfs_remove"],
    twin_models: crate::lab::defaults_only,
};

/// Callers whose transactions are background work, not the operation's:
/// the superblock sync of a freeze and of the log worker.
pub const BACKGROUND: &[&str] = &["xfs_sync_sb", "xfs_log_cover", "xfs_fs_freeze"];

/// The counted phases, in order (the twin's variant names).
pub const PHASES: [&str; 6] = ["create", "unlink", "mkdir", "rmdir", "link", "rename"];

const FIFREEZE: libc::c_ulong = 0xC004_5877;
const FITHAW: libc::c_ulong = 0xC004_5878;

/// Freezes and thaws the filesystem holding `dir` (drains inodegc).
pub fn freeze_thaw(dir: &Path) -> Result<(), LabError> {
    use std::os::fd::AsRawFd as _;
    let f = File::open(dir).map_err(|e| LabError::step("open for freeze", e))?;
    // SAFETY: FIFREEZE and FITHAW take an int argument that is ignored;
    // the descriptor is open during the calls.
    unsafe {
        if libc::ioctl(f.as_raw_fd(), FIFREEZE, 0) != 0 {
            return Err(LabError::step("freeze", std::io::Error::last_os_error()));
        }
        if libc::ioctl(f.as_raw_fd(), FITHAW, 0) != 0 {
            return Err(LabError::step("thaw", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// Runs `op(thread, dir)` on every thread's directory in parallel.
fn each_thread(base: &Path, threads: u64, op: &(dyn Fn(&Path) -> Result<(), LabError> + Sync)) -> Result<(), LabError> {
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let dir = base.join(format!("d{t}"));
                s.spawn(move || op(&dir))
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(LabError::step("worker thread", "panicked"))))
            .collect::<Result<Vec<()>, LabError>>()
            .map(|_| ())
    })
}

fn run(host: &Host, p: &Params, _rep: u32) -> Result<Trial, LabError> {
    let (n, threads) = (p.get("files"), p.get("threads"));
    let mut fs = Fs::create(host, FsType::Xfs, 2 << 30, &["-f", "-q"], "")?;
    let base = fs.base()?;
    for t in 0..threads {
        std::fs::create_dir(base.join(format!("d{t}"))).map_err(|e| LabError::step("mkdir", e))?;
    }
    host::syncfs(&base)?;
    let (_, dev) = fs.dev()?;
    let filter = Some(format!("dev == {dev}"));
    let events = [
        EventSpec {
            event: "xfs/xfs_trans_alloc",
            filter: filter.clone(),
            stack: false,
        },
        EventSpec {
            event: "xfs/xfs_trans_dup",
            filter,
            stack: false,
        },
    ];
    let tr = Instance::create(&mut fs, &events, 65536)?;
    let names = |prefix: &'static str| move |d: &Path| host::create_files(d, prefix, n);
    let phase = |name: &str, op: &(dyn Fn(&Path) -> Result<(), LabError> + Sync), drain: bool| {
        check_interrupt()?;
        tr.mark(name)?;
        let base = fs.base()?;
        each_thread(&base, threads, op)?;
        host::syncfs(&base)?;
        if drain {
            freeze_thaw(&base)?;
        }
        Ok::<(), LabError>(())
    };
    phase("create", &names("f"), false)?;
    phase("unlink", &|d: &Path| host::unlink_files(d, "f", 1..=n).map(|_| ()), true)?;
    phase(
        "mkdir",
        &|d: &Path| (1..=n).try_for_each(|i| std::fs::create_dir(d.join(format!("m{i}"))).map_err(|e| LabError::step("mkdir", e))),
        false,
    )?;
    phase(
        "rmdir",
        &|d: &Path| (1..=n).try_for_each(|i| std::fs::remove_dir(d.join(format!("m{i}"))).map_err(|e| LabError::step("rmdir", e))),
        true,
    )?;
    phase("setup", &names("g"), false)?;
    phase(
        "link",
        &|d: &Path| {
            (1..=n).try_for_each(|i| {
                std::fs::hard_link(d.join(format!("g{i}")), d.join(format!("l{i}"))).map_err(|e| LabError::step("link", e))
            })
        },
        false,
    )?;
    phase(
        "rename",
        &|d: &Path| {
            (1..=n).try_for_each(|i| {
                std::fs::rename(d.join(format!("l{i}")), d.join(format!("r{i}"))).map_err(|e| LabError::step("rename", e))
            })
        },
        false,
    )?;
    tr.mark("end")?;
    let text = tr.finish()?;
    let mut setup = fs.setup.clone();
    setup.extend(tr.describe());
    setup.push(format!(
        "{threads} thread(s), each {n} operations per phase in its own directory; unlink and rmdir end with syncfs and FIFREEZE/FITHAW (inodegc drained); not counted: callers {}",
        BACKGROUND.join(", ")
    ));
    let ops = (n * threads) as f64;
    Ok(Trial {
        variants: analyse(&text, ops),
        setup,
        files: super::keep("trace.txt", text),
    })
}

/// Handles per operation in each phase (`xfs_trans.incs_per_op`, the
/// twin's metric), with `caller.FUNCTION` per operation for each caller
/// of `xfs_trans_alloc`, `rolls` (`xfs_trans_dup`) per operation, and
/// `background_handles` (a count: the [`BACKGROUND`] callers' handles in
/// the phase, not counted per operation).
pub fn analyse(text: &str, ops: f64) -> Vec<(String, Metrics)> {
    let recs = trace::parse(text);
    let phases = trace::phases(&recs);
    let mut per: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for (r, ph) in recs.iter().zip(&phases) {
        let Some(ph) = ph else { continue };
        let caller = trace::field(&r.body, "caller").map(|c| c.split('+').next().unwrap_or(c).to_string());
        let key = match (r.event.as_str(), caller) {
            ("xfs_trans_alloc", Some(c)) if BACKGROUND.contains(&c.as_str()) => "background".to_string(),
            ("xfs_trans_alloc", Some(c)) => format!("caller.{c}"),
            ("xfs_trans_dup", _) => "rolls".to_string(),
            _ => continue,
        };
        *per.entry(ph.clone()).or_default().entry(key).or_insert(0.0) += 1.0;
    }
    PHASES
        .iter()
        .map(|ph| {
            let counts = per.remove(*ph).unwrap_or_default();
            let mut m = Metrics::new();
            let mut handles = 0.0;
            for (k, v) in &counts {
                if k != "background" {
                    handles += v;
                }
                if k == "background" {
                    m.insert("background_handles".into(), *v);
                } else {
                    m.insert(k.clone(), v / ops);
                }
            }
            m.entry("rolls".into()).or_insert(0.0);
            m.insert("xfs_trans.incs_per_op".into(), handles / ops);
            m.insert("ops".into(), ops);
            (ph.to_string(), m)
        })
        .collect()
}
