//! `btrfs-delayed`: case 3's script on the live kernel. New btrfs
//! (nodesize from the parameters), `mkdir testdir`, create `file_1 ..
//! file_N` (empty), unlink every k-th from `file_1`, `sync`, `rm -fr
//! testdir` (files in creation order, which is btrfs's readdir order by
//! DIR_INDEX, then the directory), unmount.
//!
//! Counted from `btrfs_space_reservation` events of type `delayed_item`:
//! each delayed-item batch releases its items' reservation in one event
//! (`btrfs_delayed_item_release_leaves` for an insertion batch,
//! `btrfs_delete_delayed_items` -> `btrfs_block_rsv_release` for a
//! deletion batch; fs/btrfs/delayed-inode.c), whose bytes divided by one
//! item's reservation (`btrfs_calc_insert_metadata_size(fs_info, 1)` =
//! nodesize x BTRFS_MAX_LEVEL (8) x 2; fs/btrfs/fs.h) give the batch's
//! items. Which batch it was comes from the kernel stack recorded with
//! the event; items dropped when testdir is evicted are releases under
//! `__btrfs_kill_delayed_node`. Phases are separated by trace markers.

use super::host::{self, Fs, FsType, Host};
use super::trace::{self, EventSpec, Instance, Record};
use super::{Experiment, LabError, Metrics, Params, Trial};
use std::time::Instant;

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "btrfs-delayed",
    about: "case 3's script: delayed dir-index insertion and deletion batches per phase",
    params: &[
        ("files", 1000, 1, 200_000),
        ("delete_every", 2, 1, 1_000_000),
        ("nodesize", 16384, 4096, 65536),
    ],
    run,
    twin_param: None,
};

/// The phases of the script, in order, as the twin names them.
pub const PHASES: [&str; 4] = ["create", "unlink", "sync", "rm_fr"];

fn run(host: &Host, p: &Params, _rep: u32) -> Result<Trial, LabError> {
    let (n, k, nodesize) = (p.get("files"), p.get("delete_every"), p.get("nodesize"));
    if !nodesize.is_power_of_two() {
        return Err(LabError::Param(format!("nodesize = {nodesize}: expected a power of two")));
    }
    let ns = nodesize.to_string();
    let mut fs = Fs::create(host, FsType::Btrfs, 1 << 30, &["-f", "-q", "-n", &ns], "")?;
    let fsid = fsid(&fs)?;
    let base = fs.base()?;
    let dir = base.join("testdir");
    std::fs::create_dir(&dir).map_err(|e| LabError::step("mkdir testdir", e))?;
    host::syncfs(&base)?;
    let ev = EventSpec {
        event: "btrfs/btrfs_space_reservation",
        filter: Some("type == \"delayed_item\"".into()),
        stack: true,
    };
    let tr = Instance::create(&mut fs, &[ev], 32768)?;
    let mut m = Metrics::new();
    let timed = |m: &mut Metrics, phase: &str, f: &mut dyn FnMut() -> Result<(), LabError>| {
        tr.mark(phase)?;
        let t = Instant::now();
        f()?;
        m.insert(format!("phase.{phase}.wall_us"), t.elapsed().as_secs_f64() * 1e6);
        Ok::<(), LabError>(())
    };
    timed(&mut m, "create", &mut || {
        host::create_files(&fs.base()?.join("testdir"), "file_", n)
    })?;
    let mut deleted = 0;
    timed(&mut m, "unlink", &mut || {
        deleted = host::unlink_files(&fs.base()?.join("testdir"), "file_", (1..=n).step_by(k as usize))?;
        Ok(())
    })?;
    timed(&mut m, "sync", &mut || host::syncfs(&fs.base()?))?;
    tr.mark("rm_fr")?;
    let t = Instant::now();
    let left = (1..=n).filter(|i| (i - 1) % k != 0);
    host::unlink_files(&fs.base()?.join("testdir"), "file_", left)?;
    std::fs::remove_dir(fs.base()?.join("testdir")).map_err(|e| LabError::step("rmdir testdir", e))?;
    fs.unmount()?;
    m.insert("phase.rm_fr.wall_us".into(), t.elapsed().as_secs_f64() * 1e6);
    tr.mark("end")?;
    let text = tr.finish()?;
    let mut setup = fs.setup.clone();
    setup.extend(tr.describe());
    setup.push(format!("fsid {fsid}; one item's reservation {} bytes", item_bytes(nodesize)));
    m.insert("files_deleted".into(), deleted as f64);
    m.extend(analyse(&text, &fsid, nodesize)?);

    Ok(Trial {
        variants: vec![("leaf-match".into(), m)],
        setup,
        files: super::keep("trace.txt", text),
    })
}

/// One item's metadata reservation: `btrfs_calc_insert_metadata_size(fs_info,
/// 1)` = nodesize x BTRFS_MAX_LEVEL x 2 (fs/btrfs/fs.h).
pub fn item_bytes(nodesize: u64) -> u64 {
    nodesize * 8 * 2
}

fn fsid(fs: &Fs) -> Result<String, LabError> {
    let img = fs.image().to_string_lossy().into_owned();
    let sb = host::cmd("read the superblock", "btrfs", &["inspect-internal", "dump-super", &img])?;
    sb.lines()
        .find_map(|l| l.strip_prefix("fsid").map(|v| v.trim().to_string()))
        .ok_or_else(|| LabError::step("read the superblock", "no fsid line"))
}

/// What kind of delayed-item release a record is, from its stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// An insertion batch (`btrfs_insert_delayed_item`).
    Insert,
    /// A deletion batch (`btrfs_delete_delayed_items`).
    Delete,
    /// Items dropped at eviction (`__btrfs_kill_delayed_node`).
    Killed,
    /// Anything else (a release the lab does not classify).
    Other,
}

/// Classifies a `btrfs_space_reservation` release by its kernel stack.
pub fn classify(r: &Record) -> Release {
    for f in &r.stack {
        if f.contains("kill_delayed") {
            return Release::Killed;
        }
        if f.starts_with("btrfs_delete_delayed_items") || f.starts_with("btrfs_batch_delete_items") {
            return Release::Delete;
        }
        if f.starts_with("btrfs_insert_delayed_item") || f.starts_with("btrfs_delayed_item_release_leaves") {
            return Release::Insert;
        }
    }
    Release::Other
}

/// The metrics of one run from its trace text: batches and items per
/// phase, by the twin's names, plus the lab's own (gaps, wall times).
pub fn analyse(text: &str, fsid: &str, nodesize: u64) -> Result<Metrics, LabError> {
    let recs = trace::parse(text);
    let phases = trace::phases(&recs);
    let per_item = item_bytes(nodesize) as f64;
    let mut m = Metrics::new();
    let mut gaps = Vec::new();
    let mut last_del: Option<(u32, u64, String)> = None;
    let mut other = 0.0;
    let put = |m: &mut Metrics, k: String, v: f64| *m.entry(k).or_insert(0.0) += v;
    for p in PHASES.iter().chain(["script"].iter()) {
        m.insert(format!("phase.{p}.batches"), 0.0);
        m.insert(format!("phase.{p}.insert_batches"), 0.0);
    }
    for (r, ph) in recs.iter().zip(&phases) {
        if r.event != "btrfs_space_reservation" || !r.body.starts_with(fsid) {
            continue;
        }
        let words: Vec<&str> = r.body.split_whitespace().collect();
        if words.get(1) != Some(&"delayed_item:") || words.get(3) != Some(&"release") {
            continue;
        }
        let bytes: f64 = words
            .get(4)
            .and_then(|b| b.parse().ok())
            .ok_or_else(|| LabError::step("trace", format!("bad release line: {}", super::short(&r.body))))?;
        let items = bytes / per_item;
        let phase = ph.clone().unwrap_or_else(|| "before".into());
        match classify(r) {
            Release::Delete => {
                put(&mut m, "batches".into(), 1.0);
                put(&mut m, "items_released".into(), items);
                put(&mut m, format!("phase.{phase}.batches"), 1.0);
                put(&mut m, "phase.script.batches".into(), 1.0);
                if let Some((pid, ts, lp)) = &last_del
                    && *pid == r.pid
                    && *lp == phase
                    && r.ts_ns.saturating_sub(*ts) < 1_000_000
                {
                    gaps.push(r.ts_ns.saturating_sub(*ts) as f64 / 1e3);
                }
                last_del = Some((r.pid, r.ts_ns, phase));
            }
            Release::Insert => {
                put(&mut m, "insert_batches".into(), 1.0);
                put(&mut m, "insert_leaves_released".into(), items);
                put(&mut m, format!("phase.{phase}.insert_batches"), 1.0);
                put(&mut m, "phase.script.insert_batches".into(), 1.0);
            }
            Release::Killed => put(&mut m, "killed_at_evict".into(), items),
            Release::Other => other += 1.0,
        }
    }
    for k in [
        "batches",
        "items_released",
        "insert_batches",
        "insert_leaves_released",
        "killed_at_evict",
    ] {
        m.entry(k.into()).or_insert(0.0);
    }
    m.insert("releases_unclassified".into(), other);
    let b = m["batches"];
    m.insert("items_per_delete_batch".into(), if b > 0.0 { m["items_released"] / b } else { 0.0 });
    gaps.sort_by(f64::total_cmp);
    m.insert("delete_batch_gap_us_p50".into(), gaps.get(gaps.len() / 2).copied().unwrap_or(0.0));
    Ok(m)
}
