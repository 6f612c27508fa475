//! `xfs-create-scaling`: creates and unlinks per second with 1 and 2 (up
//! to `threads`) threads on the live kernel. For each thread count T, a
//! fresh XFS (mkfs defaults), T threads each creating N empty files in
//! its own directory (timed from the start barrier to the last thread's
//! end), `syncfs`, then each unlinking its files (timed the same way).
//! On 6.18 the inodegc workers inactivate the unlinked inodes while the
//! unlinks go on, each on its thread's CPU (a trace, session 60: 502 of
//! the 503 worker runs of a 1-thread phase came before its last unlink,
//! on the unlinking thread's CPU), so an unlink's `ops_per_sec` is the
//! unlinks and the inactivations that ran with them, as the twin models
//! them. `drained_ops_per_sec` counts on until `syncfs` and a freeze/thaw
//! have drained the workers; that adds the CIL push of the whole phase,
//! the log's I/O and the freeze (its first log force came 30 ms after
//! the `FIFREEZE`), which the twin does not model (live only).
//!
//! Nothing is traced (a tracepoint costs time per event); the handles per
//! operation are `xfs-handles`'s. Variants are `create-T` and `unlink-T`,
//! as the twin names them.

use super::host::{self, Fs, FsType, Host};
use super::xfs_handles::freeze_thaw;
use super::{Experiment, LabError, Metrics, Params, Trial};
use std::path::Path;
use std::sync::Barrier;
use std::time::Instant;

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "xfs-create-scaling",
    about: "creates/s and unlinks/s with 1..T threads, each in its own directory (untraced)",
    params: &[("files", 20_000, 100, 1_000_000), ("threads", 2, 1, 64)],
    run,
    check: crate::lab::any_params,
    twin_param: None,
    sample_roots: &[
        "xfs_create",
        "xfs_remove",
        "xfs_inodegc_worker",
        "xlog_cil_push_work",
        "loop_process_work",
        "xfsaild",
        "do_syscall_64",
    ],
    twin_models: crate::lab::defaults_only,
};

/// Runs `op` on `threads` threads at once (after a barrier); returns the
/// seconds from the barrier to the last thread's end.
fn timed(threads: u64, op: &(dyn Fn(u64) -> Result<(), LabError> + Sync)) -> Result<f64, LabError> {
    let barrier = Barrier::new(threads as usize + 1);
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let b = &barrier;
                s.spawn(move || {
                    b.wait();
                    op(t)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let r: Result<Vec<()>, LabError> = hs
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(LabError::step("worker thread", "panicked"))))
            .collect();
        r.map(|_| start.elapsed().as_secs_f64())
    })
}

fn one(host: &Host, n: u64, threads: u64) -> Result<(Metrics, Metrics, Vec<String>), LabError> {
    let fs = Fs::create(host, FsType::Xfs, 2 << 30, &["-f", "-q"], "")?;
    let base = fs.base()?;
    for t in 0..threads {
        std::fs::create_dir(base.join(format!("d{t}"))).map_err(|e| LabError::step("mkdir", e))?;
    }
    host::syncfs(&base)?;
    // The folders checked (`Fs::base`: the mount table and the loop
    // devices read) before each phase's clock starts, not inside it.
    let dirs = || -> Result<Vec<std::path::PathBuf>, LabError> {
        let base = fs.base()?;
        Ok((0..threads).map(|t| base.join(format!("d{t}"))).collect())
    };
    let dir = dirs()?;
    let secs = timed(threads, &|t| host::create_files(&dir[t as usize], "f", n))?;
    let ops = (n * threads) as f64;
    let mut create = Metrics::new();
    create.insert("ops".into(), ops);
    create.insert("ops_per_sec".into(), ops / secs);
    create.insert("wall_s".into(), secs);
    host::syncfs(&fs.base()?)?;
    let dir = dirs()?;
    let start = Instant::now();
    let secs = timed(threads, &|t| host::unlink_files(&dir[t as usize], "f", 1..=n).map(|_| ()))?;
    let base = fs.base()?;
    host::syncfs(&base)?;
    freeze_thaw(Path::new(&base))?;
    let drained = start.elapsed().as_secs_f64();
    let mut unlink = Metrics::new();
    unlink.insert("ops".into(), ops);
    unlink.insert("ops_per_sec".into(), ops / secs);
    unlink.insert("wall_s".into(), secs);
    unlink.insert("drained_ops_per_sec".into(), ops / drained);
    unlink.insert("drained_wall_s".into(), drained);
    Ok((create, unlink, fs.setup.clone()))
}

fn run(host: &Host, p: &Params, _rep: u32) -> Result<Trial, LabError> {
    let (n, max) = (p.get("files"), p.get("threads"));
    let mut creates = Vec::new();
    let mut unlinks = Vec::new();
    let mut setup = Vec::new();
    for t in 1..=max {
        let (c, u, s) = one(host, n, t)?;
        creates.push((format!("create-{t}"), c));
        unlinks.push((format!("unlink-{t}"), u));
        setup = s;
    }
    setup.push(format!(
        "for T = 1..{max}: a fresh filesystem, T threads each creating {n} files in its own directory (timed), syncfs, then each unlinking them (timed from the start barrier to the last thread's last unlink: ops_per_sec, the unlinks and the inodegc inactivations that ran with them on their CPUs; drained_ops_per_sec: on until syncfs and FIFREEZE/FITHAW have drained the inodegc workers, live only); nothing traced"
    ));
    creates.extend(unlinks);
    Ok(Trial {
        variants: creates,
        setup,
        files: Vec::new(),
    })
}
