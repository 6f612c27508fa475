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
//!
//! Time of a deletion batch: the `btrfs_tree_lock` / `btrfs_tree_read_lock`
//! tracepoints of the fs tree (owner 5, no stack) are on too. Every search
//! starts by locking the root, so the first lock a task takes after one
//! of its releases is a root lock; a batch's window runs from its task's
//! last root lock before the release to the release (6.x
//! `btrfs_batch_delete_items` fires it after `btrfs_del_items`, before
//! `btrfs_block_rsv_release`), which leaves out the stack the release
//! records. Per phase: the median window (`us_per_batch`) and the windows'
//! sum per item deleted (`us_per_item`), and the fs-tree blocks copied on
//! write inside the windows (`btrfs_cow_block`, `cow_blocks`). Each
//! window's leaf (the last block its task write-locked) gives the growth
//! of one-item windows per item after the deleted one
//! (`shift_ns_per_item`, the `shift` module).
//!
//! Lock time inside the windows (live only): each lock tracepoint carries
//! `diff_ns`, the time its `btrfs_tree_lock` / `btrfs_tree_read_lock` call
//! spent from its first clock read to holding the lock (about 0.1 us
//! uncontended: the lock and one clock read; a wait behind another task's
//! holder is more). The task's own lock events after the window's root
//! lock (whose wait falls before the window) give per phase
//! `lock_us_per_item` (their `diff_ns` summed per item deleted),
//! `locks_per_batch` and `contended_locks` (those of 1 us or more).
//!
//! Time off the CPU inside the windows (live only): `sched_switch` is
//! traced too, so a window's task switched out (`prev_pid`) and back in
//! (`next_pid`) inside it gives per phase `offcpu_us_per_item` (that time
//! per item deleted), `offcpu_batches` (windows with any) and
//! `blocked_batches` (those in which the task slept, `prev_state` not
//! `R`/`R+`: a wait for I/O or a lock, not a preemption). The twin runs
//! every batch on its CPU without interruption.
//!
//! The syscalls' own time: every `unlink(2)` of the unlink and `rm -fr`
//! phases is timed alone in this process (the path built before the
//! clock starts): per phase `unlink_us` (the median call) and
//! `unlinks_us` (their sum); `rm -fr`'s wall time is split into its
//! unlinks, `rmdir_us` and `umount_us` (the final commit, its writes to
//! the loop device and their flush, and the teardown: the `umount2(2)`
//! call alone since session 68; before, `umount(8)`, whose own process
//! added about 2 ms, and the lab's check of the mount table after it:
//! [`super::host::Fs::unmount`]); `rm -fr`'s wall is its calls up to
//! the rmdir's return, then the `umount2` call. The flush worker's
//! batches run on the other CPU meanwhile. Traced, the script writes point
//! markers just before and after the `umount2` call, and the time from the
//! loop device's last completed request inside it (or from the task's
//! wake, when it slept through that request) to its return is
//! `teardown_us` (`io.rs`): the unmount after its commit's I/O; of it,
//! `teardown_offcpu_us` is the unmounting task's time switched out (its
//! waits for the kernel's helper threads).
//!
//! Variant `untraced`: the same script run again, on a second new
//! filesystem, with no tracepoint enabled: only its wall and call times
//! (same names), so the twin's untraced path and the tracing's own cost
//! (the two variants' difference) can each be compared.
//!
//! Tree blocks made and freed inside the windows (live only): the new
//! buffer's folios added to the btree inode's page cache
//! (`mm_filemap_add_to_page_cache`, filter `i_ino == 1`:
//! `alloc_extent_buffer` -> `attach_eb_folio_to_filemap`, one per folio,
//! four order-0 folios per 16 KiB block on 6.18) give per phase
//! `eb_folios`, and `btrfs_reserved_extent_free` (fired by
//! `btrfs_free_tree_block` when a block made in this transaction goes back
//! to the free-space cache: `btrfs_del_leaf` of a leaf emptied by a batch
//! or by its merge) gives `leaves_freed`. With `cow_blocks` they count
//! the steps that made the merging batches of rm -fr slow (docs/lab.md).
//! All the folios added over the trace give `btree_folios_added`: those
//! of every block the script's run instantiated, which the unmount
//! invalidates (`io.rs`).
//!
//! The commits' delayed refs: `run_delayed_tree_ref` (no filter, no
//! stack), fired once for each tree block ref `btrfs_run_delayed_refs`
//! runs (6.18 fs/btrfs/extent-tree.c: one ref a head here), gives per
//! phase `delayed_refs`, the twin's ref heads (`io.rs`).
//!
//! The loop device's requests ([`blockio`]; live only but for the flush
//! time, which the twin prices on a profile with `[storage]`): per phase the
//! writes, the flushes and their time, and the time with a write or flush
//! in flight, which shows how much of the sync's and the unmount's wall
//! time is the image file's writeback and fsync. From the writes, the tree
//! blocks each phase wrote (`tree_blocks_written`, as the twin counts
//! them) and the superblock writes (`super_writes`; `io.rs`).

use super::blockio;
use super::host::{self, Fs, Host};
use super::trace::{self, EventSpec, Instance, Record};
use super::{Experiment, LabError, Metrics, Params, Trial};
use std::collections::BTreeMap;

mod io;
mod script;
mod shift;
mod windows;
mod writeout;

use script::{Marks, fresh, script};
use windows::put_windows;

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
    check,
    twin_param: None,
    sample_roots: &[
        "btrfs_delete_delayed_items",
        "__btrfs_run_delayed_items",
        "btrfs_commit_transaction",
        "do_unlinkat",
        "btrfs_force_cow_block",
        "btrfs_del_leaf",
    ],
    twin_models: crate::lab::defaults_only,
};

/// Puts the gaps between consecutive deletion releases of one task in one
/// phase, under 1 ms apart (`gaps`, us, by phase), into `m`: per phase the
/// twin has (`phase.P.batch_gap_us`, the upper median; 0 without gaps: a
/// flush of one batch gives none) and over every gap of the script
/// (`phase.script.batch_gap_us`, also kept under its older name
/// `delete_batch_gap_us_p50`). A gap is the part of one batch after its
/// release and the next batch up to its own.
fn put_gaps(m: &mut Metrics, mut gaps: BTreeMap<String, Vec<f64>>) {
    let mut all: Vec<f64> = gaps.values().flatten().copied().collect();
    for phase in ["unlink", "sync", "rm_fr"] {
        let mut v = gaps.remove(phase).unwrap_or_default();
        m.insert(format!("phase.{phase}.batch_gap_us"), upper_median(&mut v));
    }
    let script = upper_median(&mut all);
    m.insert("phase.script.batch_gap_us".into(), script);
    m.insert("delete_batch_gap_us_p50".into(), script);
}

/// The value at 0-based rank n / 2 of the n values in `v` once sorted (the
/// upper one of an even count), as the lab takes its medians; 0 for none.
fn upper_median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// The phases of the script, in order, as the twin names them.
pub const PHASES: [&str; 4] = ["create", "unlink", "sync", "rm_fr"];

/// `nodesize` a power of two ([`super::btrfs_layout::check`]).
fn check(p: &Params) -> Result<(), LabError> {
    super::btrfs_layout::check(p)
}

fn run(host: &Host, p: &Params, _rep: u32) -> Result<Trial, LabError> {
    let (n, k, nodesize) = (p.get("files"), p.get("delete_every"), p.get("nodesize"));
    let mut fs = fresh(host, nodesize)?;
    let fsid = fsid(&fs)?;
    let ev = EventSpec {
        event: "btrfs/btrfs_space_reservation",
        filter: Some("type == \"delayed_item\"".into()),
        stack: true,
    };
    let plain = |event, filter: Option<String>| EventSpec {
        event,
        filter,
        stack: false,
    };
    let lock = |event| plain(event, Some(format!("owner == {FS_TREE}")));
    let cow = plain("btrfs/btrfs_cow_block", Some(format!("root_objectid == {FS_TREE}")));
    let switch = plain("sched/sched_switch", None);
    let folio = plain("filemap/mm_filemap_add_to_page_cache", Some(format!("i_ino == {BTREE_INODE}")));
    let freed = plain("btrfs/btrfs_reserved_extent_free", None);
    let refs = plain("btrfs/run_delayed_tree_ref", None);
    let (_, dev) = fs.dev()?;
    let [rq_issue, rq_complete] = blockio::events(dev);
    let events = [
        ev,
        lock("btrfs/btrfs_tree_lock"),
        lock("btrfs/btrfs_tree_read_lock"),
        cow,
        switch,
        folio,
        freed,
        refs,
        rq_issue,
        rq_complete,
    ];
    let tr = Instance::create(&mut fs, &events, 32768)?;
    let mut m = Metrics::new();
    let marks = Marks {
        mark: &|phase| tr.mark(phase),
        note: &|at| tr.note(at),
    };
    let deleted = script(&mut fs, n, k, &mut m, marks)?;
    let text = tr.finish()?;
    let mut setup = fs.setup.clone();
    setup.extend(tr.describe());
    setup.push(format!("fsid {fsid}; one item's reservation {} bytes", item_bytes(nodesize)));
    m.insert("files_deleted".into(), deleted as f64);
    m.extend(analyse_warned(host, &text, &fsid, nodesize, k)?);
    drop(fs);
    let mut quiet = fresh(host, nodesize)?;
    let mut untraced = Metrics::new();
    let none = Marks {
        mark: &|_| Ok(()),
        note: &|_| Ok(()),
    };
    script(&mut quiet, n, k, &mut untraced, none)?;
    setup.push("untraced: the same script again on a new filesystem with no tracepoint enabled, only its wall and call times".into());

    Ok(Trial {
        variants: vec![("leaf-match".into(), m), ("untraced".into(), untraced)],
        setup,
        files: super::keep("trace.txt", text),
    })
}

/// Size of the lab's btrfs image, bytes (1 GiB).
pub const IMAGE_BYTES: u64 = 1 << 30;

/// `btrfs_sb_offset(i)` of the superblock copies, bytes (64 KiB, 64 MiB
/// and 256 GiB; fs/btrfs/disk-io.h): `write_dev_supers` writes the
/// copies that fit on the device.
pub const SUPER_OFFSETS: [u64; 3] = [64 << 10, 64 << 20, 256 << 30];

/// `BTRFS_FS_TREE_OBJECTID`: the owner of the fs tree's blocks.
const FS_TREE: u64 = 5;

/// `BTRFS_BTREE_INODE_OBJECTID`: the inode whose page cache holds the
/// tree blocks' folios.
const BTREE_INODE: u64 = 1;

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

/// [`analyse`], warning on `host` of the releases it cannot classify
/// ([`unclassified_warning`]).
fn analyse_warned(host: &Host, text: &str, fsid: &str, nodesize: u64, delete_every: u64) -> Result<Metrics, LabError> {
    let m = analyse(text, fsid, nodesize, delete_every)?;
    if m.get("releases_unclassified").is_some_and(|&n| n > 0.0)
        && let Some(w) = unclassified_warning(text, fsid)
    {
        host.warn(&w);
    }
    Ok(m)
}

/// Most unclassified releases [`unclassified_warning`] shows.
const UNCLASSIFIED_SHOWN: usize = 3;

/// Innermost frames of each stack [`unclassified_warning`] shows.
const UNCLASSIFIED_FRAMES: usize = 8;

/// A warning naming the delayed-item releases of this filesystem in
/// `text` that [`classify`] cannot place (`releases_unclassified`), each
/// with its task and kernel stack (outermost frames cut), so that a new
/// caller or a stack the trace lost can be told apart; `None` when there
/// are none.
pub fn unclassified_warning(text: &str, fsid: &str) -> Option<String> {
    let recs = trace::parse(text);
    let other: Vec<&Record> = recs
        .iter()
        .filter(|r| release(r, fsid).is_some() && classify(r) == Release::Other)
        .collect();
    if other.is_empty() {
        return None;
    }
    let shown: Vec<String> = other
        .iter()
        .take(UNCLASSIFIED_SHOWN)
        .map(|r| {
            let stack = if r.stack.is_empty() {
                "no stack".to_string()
            } else {
                r.stack.iter().take(UNCLASSIFIED_FRAMES).cloned().collect::<Vec<_>>().join(" <- ")
            };
            format!("{}-{} at {} ns: {stack}", r.task, r.pid, r.ts_ns)
        })
        .collect();
    Some(format!(
        "{} delayed-item release(s) not classified as an insertion, a deletion or an eviction's (counted in releases_unclassified, in no batch): {}",
        other.len(),
        shown.join("; ")
    ))
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
/// `delete_every` is the script's k (every k-th file unlinked), for the
/// unlink phase's cost per item after the deleted one
/// (`shift_ns_per_item`, the `shift` module).
pub fn analyse(text: &str, fsid: &str, nodesize: u64, delete_every: u64) -> Result<Metrics, LabError> {
    let recs = trace::parse(text);
    let phases = trace::phases(&recs);
    let per_item = item_bytes(nodesize) as f64;
    let mut m = Metrics::new();
    put_releases(&mut m, &recs, &phases, fsid, per_item)?;
    put_stacks(&mut m, &recs, fsid);
    put_windows(&mut m, &recs, &phases, fsid, per_item, delete_every);
    blockio::put(&mut m, &recs, &phases, &PHASES);
    io::put_tree_writes(&mut m, &blockio::writes(&recs, &phases), nodesize);
    writeout::put_writeout(&mut m, &recs, &phases, fsid);
    io::put_teardown(&mut m, &recs);
    io::put_btree_folios(&mut m, &recs);
    io::put_delayed_refs(&mut m, &recs, &phases, fsid);
    Ok(m)
}

/// Puts the counts of the delayed-item releases into `m` (`recs` with
/// their `phases`): batches and items, deletions and insertions, by phase
/// and over the script, the items dropped at eviction, the releases left
/// unclassified, and the gaps between one task's deletion batches
/// ([`put_gaps`]).
fn put_releases(m: &mut Metrics, recs: &[Record], phases: &[Option<String>], fsid: &str, per_item: f64) -> Result<(), LabError> {
    let mut gaps: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    // Each task's last deletion release: (time, phase).
    let mut last_del: BTreeMap<u32, (u64, String)> = BTreeMap::new();
    let mut other = 0.0;
    let put = |m: &mut Metrics, k: String, v: f64| *m.entry(k).or_insert(0.0) += v;
    for p in PHASES.iter().chain(["script"].iter()) {
        m.insert(format!("phase.{p}.batches"), 0.0);
        m.insert(format!("phase.{p}.insert_batches"), 0.0);
    }
    for (r, ph) in recs.iter().zip(phases) {
        let Some(bytes) = release(r, fsid) else {
            continue;
        };
        let bytes = bytes.ok_or_else(|| LabError::step("trace", format!("bad release line: {}", super::short(&r.body))))?;
        let items = bytes / per_item;
        let phase = ph.clone().unwrap_or_else(|| "before".into());
        match classify(r) {
            Release::Delete => {
                put(m, "batches".into(), 1.0);
                put(m, "items_released".into(), items);
                put(m, format!("phase.{phase}.batches"), 1.0);
                put(m, "phase.script.batches".into(), 1.0);
                if let Some((ts, lp)) = last_del.get(&r.pid)
                    && *lp == phase
                    && r.ts_ns.saturating_sub(*ts) < 1_000_000
                {
                    gaps.entry(phase.clone())
                        .or_default()
                        .push(r.ts_ns.saturating_sub(*ts) as f64 / 1e3);
                }
                last_del.insert(r.pid, (r.ts_ns, phase));
            }
            Release::Insert => {
                put(m, "insert_batches".into(), 1.0);
                put(m, "insert_leaves_released".into(), items);
                put(m, format!("phase.{phase}.insert_batches"), 1.0);
                put(m, "phase.script.insert_batches".into(), 1.0);
            }
            Release::Killed => put(m, "killed_at_evict".into(), items),
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
    put_gaps(m, gaps);
    Ok(())
}

/// Puts the time of the stacks the lab's reservation events record into
/// `m`, ns (the median from an event's record to its `<stack trace>`
/// record, which `__ftrace_trace_stack` writes after unwinding; 0 with
/// none): `release_stack_ns` over the deletion batches' releases (the
/// flush worker's and the commits'), `reserve_stack_ns` over the
/// unlinks' dir-index deletion reserves
/// (`btrfs_delete_delayed_dir_index` in the stack). Near what the twins
/// price as `tracepoint.stack_ns` scaled by frames
/// ([`crate::kernel::tracing::stack_ps`]), not the same: a record is
/// stamped at its reserve, so this also holds the event's own fields,
/// filter and commit, and not the stack record's commit.
fn put_stacks(m: &mut Metrics, recs: &[Record], fsid: &str) {
    let (mut releases, mut reserves) = (Vec::new(), Vec::new());
    for r in recs {
        let Some(ts) = r.stack_ts_ns else { continue };
        let ns = ts.saturating_sub(r.ts_ns) as f64;
        if release(r, fsid).is_some() && classify(r) == Release::Delete {
            releases.push(ns);
        } else if is_unlink_reserve(r, fsid) {
            reserves.push(ns);
        }
    }
    m.insert("release_stack_ns".into(), upper_median(&mut releases));
    m.insert("reserve_stack_ns".into(), upper_median(&mut reserves));
}

/// Whether `r` is the reserve of an unlink's dir-index deletion on this
/// filesystem (`FSID: delayed_item: ROOT reserve BYTES`, its stack through
/// `btrfs_delete_delayed_dir_index`).
fn is_unlink_reserve(r: &Record, fsid: &str) -> bool {
    delayed_item(r, fsid, "reserve").is_some() && r.stack.iter().any(|f| f.starts_with("btrfs_delete_delayed_dir_index"))
}

/// A `sched_switch` record's `(prev_pid, prev_state, next_pid)`.
fn switch(r: &Record) -> Option<(u32, &str, u32)> {
    if r.event != "sched_switch" {
        return None;
    }
    let field = |name: &str| trace::assigned(&r.body, name);
    let prev = field("prev_pid=")?.parse().ok()?;
    let next = field("next_pid=")?.parse().ok()?;
    Some((prev, field("prev_state=").unwrap_or("R"), next))
}

/// `None` unless `r` is a delayed-item release of this filesystem
/// (`FSID: delayed_item: ROOT release BYTES`); then its bytes, `None` if
/// they do not parse.
fn release(r: &Record, fsid: &str) -> Option<Option<f64>> {
    delayed_item(r, fsid, "release")
}

/// `None` unless `r` is a delayed-item `op` (`reserve` or `release`) of
/// this filesystem (`FSID: delayed_item: ROOT OP BYTES`); then its bytes,
/// `None` if they do not parse.
fn delayed_item(r: &Record, fsid: &str, op: &str) -> Option<Option<f64>> {
    if r.event != "btrfs_space_reservation" || !r.body.starts_with(fsid) {
        return None;
    }
    let words: Vec<&str> = r.body.split_whitespace().collect();
    if words.get(1) != Some(&"delayed_item:") || words.get(3) != Some(&op) {
        return None;
    }
    Some(words.get(4).and_then(|b| b.parse().ok()))
}
