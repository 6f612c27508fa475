//! The deletion batches' windows in the trace (the module docs of
//! [`super`]): each from its task's last root lock before a deletion
//! batch's release to that release, with what happened inside it (lock
//! calls and their waits, copies on write, folios added, extents freed,
//! time switched out), per phase and over the script.

use super::trace::{self, Record};
use super::{Metrics, Release, classify, release, shift, switch, upper_median};
use std::collections::{BTreeMap, BTreeSet};

/// Puts each phase's deletion-batch windows into `m` ([`windows`]): the
/// median window, the windows' sum per item, the copies on write, the
/// lock time and count, the time off the CPU, the tree blocks made and
/// freed.
pub(super) fn put_windows(m: &mut Metrics, recs: &[Record], phases: &[Option<String>], fsid: &str, per_item: f64, delete_every: u64) {
    let per = |v: f64, n: f64| if n > 0.0 { v / n } else { 0.0 };
    for (phase, mut w) in windows(recs, phases, fsid, per_item, delete_every) {
        let shift = shift::shift_ns_per_item(&w.batches);
        m.insert(format!("phase.{phase}.shift_ns_per_item"), shift.unwrap_or(0.0));
        // The median sorts the windows; they are summed in that order.
        m.insert(format!("phase.{phase}.us_per_batch"), upper_median(&mut w.us));
        let sum: f64 = w.us.iter().sum();
        m.insert(format!("phase.{phase}.us_per_item"), per(sum, w.items));
        m.insert(format!("phase.{phase}.cow_blocks"), w.cows);
        m.insert(format!("phase.{phase}.lock_us_per_item"), per(w.lock_ns / 1e3, w.items));
        m.insert(format!("phase.{phase}.locks_per_batch"), per(w.locks, w.us.len() as f64));
        m.insert(format!("phase.{phase}.contended_locks"), w.contended);
        m.insert(format!("phase.{phase}.offcpu_us_per_item"), per(w.offcpu_ns / 1e3, w.items));
        m.insert(format!("phase.{phase}.offcpu_batches"), w.offcpu_batches);
        m.insert(format!("phase.{phase}.blocked_batches"), w.blocked_batches);
        m.insert(format!("phase.{phase}.eb_folios"), w.folios);
        m.insert(format!("phase.{phase}.leaves_freed"), w.freed);
    }
}

/// A lock call of 1 us or more (`diff_ns`) waited for another holder.
const CONTENDED_NS: u64 = 1_000;

/// A lock tracepoint's `diff_ns` (0 when absent).
fn lock_diff_ns(r: &Record) -> u64 {
    trace::assigned(&r.body, "diff_ns=").and_then(trace::number).unwrap_or(0)
}

/// Whether `r` is a lock tracepoint of this filesystem; its block if so.
pub(super) fn lock_block(r: &Record, fsid: &str) -> Option<u64> {
    if !matches!(r.event.as_str(), "btrfs_tree_lock" | "btrfs_tree_read_lock") || !r.body.starts_with(fsid) {
        return None;
    }
    trace::assigned(&r.body, "block=").and_then(trace::number)
}

/// The deletion batches' windows of one phase.
#[derive(Debug, Default)]
struct Windows {
    /// Each batch's window, us.
    us: Vec<f64>,
    /// Each batch in trace order, with its items and leaf.
    batches: Vec<shift::Batch>,
    /// Items the batches deleted.
    items: f64,
    /// Fs-tree blocks copied on write inside the windows.
    cows: f64,
    /// The windows' lock calls after their root lock: `diff_ns` summed.
    lock_ns: f64,
    /// Those lock calls.
    locks: f64,
    /// Those of [`CONTENDED_NS`] or more.
    contended: f64,
    /// Time the windows' tasks spent switched out inside them, ns.
    offcpu_ns: f64,
    /// Windows with time off the CPU.
    offcpu_batches: f64,
    /// Windows in which the task slept (switched out not runnable).
    blocked_batches: f64,
    /// Folios of new tree blocks added to the btree inode's page cache.
    folios: f64,
    /// Blocks of this transaction given back (`btrfs_reserved_extent_free`).
    freed: f64,
}

/// One task's open window: its root lock's time, then what happened since.
#[derive(Debug, Default, Clone, Copy)]
struct Open {
    t0: u64,
    cows: f64,
    lock_ns: f64,
    locks: f64,
    contended: f64,
    /// When the task was switched out, if it is now (ns).
    out_since: Option<u64>,
    offcpu_ns: f64,
    blocked: bool,
    folios: f64,
    freed: f64,
    /// The last block the task write-locked since its root lock.
    leaf: Option<u64>,
    /// The blocks it write-locked since its root lock.
    write_locks: u32,
}

/// The windows of the deletion batches (see the module docs), per phase
/// and for the whole script. A batch whose task took no root lock since
/// its previous release has no window.
fn windows(recs: &[Record], phases: &[Option<String>], fsid: &str, per_item: f64, delete_every: u64) -> BTreeMap<String, Windows> {
    let roots = window_roots(recs, fsid);
    let mut out: BTreeMap<String, Windows> = BTreeMap::new();
    // Per task: its last root lock since its last release, and the COWs
    // and lock calls since that lock.
    let mut root_lock: BTreeMap<u32, Open> = BTreeMap::new();
    for (r, ph) in recs.iter().zip(phases) {
        if note_in_window(&mut root_lock, &roots, r, fsid) {
            continue;
        }
        let Some(bytes) = release(r, fsid) else {
            continue;
        };
        let start = root_lock.remove(&r.pid);
        if classify(r) != Release::Delete {
            continue;
        }
        let phase = ph.clone().unwrap_or_else(|| "before".into());
        // rm -fr deletes every file left, in dir-index order.
        let step = if phase == "rm_fr" { 1 } else { delete_every };
        let keys = [phase, "script".to_string()];
        let (Some(o), Some(bytes)) = (start, bytes) else {
            // A deletion without its window: it breaks a run of windows.
            for key in keys {
                if let Some(e) = out.get_mut(&key) {
                    e.batches.push(shift::Batch::UNTIMED);
                }
            }
            continue;
        };
        for key in keys {
            out.entry(key).or_default().close(&o, r.ts_ns, bytes / per_item, step);
        }
    }
    out
}

/// The windows' roots: the first block each task locks after each of its
/// releases.
fn window_roots(recs: &[Record], fsid: &str) -> BTreeSet<u64> {
    let mut roots = BTreeSet::new();
    let mut after_release: BTreeSet<u32> = BTreeSet::new();
    for r in recs {
        if release(r, fsid).is_some() {
            after_release.insert(r.pid);
        } else if let Some(b) = lock_block(r, fsid)
            && after_release.remove(&r.pid)
        {
            roots.insert(b);
        }
    }
    roots
}

/// Takes `r` into the open window of its task (`root_lock`): a switch
/// out or in, a root lock (which opens a window), another tree lock, a
/// copy on write, a folio added, an extent freed. False when `r` is none
/// of those (a release, or an event no window counts).
fn note_in_window(root_lock: &mut BTreeMap<u32, Open>, roots: &BTreeSet<u64>, r: &Record, fsid: &str) -> bool {
    if let Some((prev, state, next)) = switch(r) {
        if let Some(o) = root_lock.get_mut(&prev) {
            o.out_since = Some(r.ts_ns);
            o.blocked |= !state.starts_with('R');
        }
        if let Some(o) = root_lock.get_mut(&next)
            && let Some(t) = o.out_since.take()
        {
            o.offcpu_ns += r.ts_ns.saturating_sub(t) as f64;
        }
        return true;
    }
    if let Some(b) = lock_block(r, fsid) {
        if roots.contains(&b) {
            let open = Open {
                t0: r.ts_ns,
                ..Open::default()
            };
            root_lock.insert(r.pid, open);
        } else if let Some(o) = root_lock.get_mut(&r.pid) {
            if r.event == "btrfs_tree_lock" {
                o.leaf = Some(b);
                o.write_locks += 1;
            }
            let d = lock_diff_ns(r);
            o.lock_ns += d as f64;
            o.locks += 1.0;
            o.contended += f64::from(u8::from(d >= CONTENDED_NS));
        }
        return true;
    }
    let counter = match r.event.as_str() {
        "btrfs_cow_block" if r.body.starts_with(fsid) => |o: &mut Open| o.cows += 1.0,
        "mm_filemap_add_to_page_cache" => |o: &mut Open| o.folios += 1.0,
        "btrfs_reserved_extent_free" if r.body.starts_with(fsid) => |o: &mut Open| o.freed += 1.0,
        _ => return false,
    };
    if let Some(o) = root_lock.get_mut(&r.pid) {
        counter(o);
    }
    true
}

impl Windows {
    /// Closes the window `o`, which a deletion batch of `items` items
    /// released at `end_ns` (`step`: the files between its deletions).
    fn close(&mut self, o: &Open, end_ns: u64, items: f64, step: u64) {
        let us = end_ns.saturating_sub(o.t0) as f64 / 1e3;
        self.us.push(us);
        self.batches.push(shift::Batch {
            us,
            items,
            leaf: o.leaf,
            write_locks: o.write_locks,
            copied: o.cows > 0.0,
            step,
        });
        self.items += items;
        self.cows += o.cows;
        self.lock_ns += o.lock_ns;
        self.locks += o.locks;
        self.contended += o.contended;
        self.offcpu_ns += o.offcpu_ns;
        self.offcpu_batches += f64::from(u8::from(o.offcpu_ns > 0.0));
        self.blocked_batches += f64::from(u8::from(o.blocked && o.offcpu_ns > 0.0));
        self.folios += o.folios;
        self.freed += o.freed;
    }
}
