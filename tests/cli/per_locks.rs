//! Locks with an instance per allocation group or per directory (`per`,
//! `[fs]`) and stretches of split works (`from`, `to`, `split_by`): every
//! key that cannot act, or would act on nothing, is refused at its field
//! with exit 2 and nothing written.

use super::{fsmeta, temp_dir, write};

const GOOD: &str = r#"[scenario]
name = "per"
ops = 200

[workload]
kind = "path"
threads = 2

[locks.agi]
kind = "mutex"
per = "ag"
[locks.dir]
kind = "rwsem"
per = "dir"

[fs]
agcount = 4
dirs = "per-thread"

[code]
dir_entries = 100

[work.tx]
dist = "exp"
mean_ns = 1000.0
split_by = "xfs_create"

[[path]]
lock = "dir"
[[path]]
work = "tx"
to = "xfs_dialloc"
[[path]]
lock = "agi"
[[path]]
work = "tx"
from = "xfs_dialloc"
to = "xfs_trans_commit"
[[path]]
unlock = "agi"
[[path]]
unlock = "dir"
[[path]]
work = "tx"
from = "xfs_trans_commit"
"#;

/// `fsmeta run` on GOOD with `good` replaced by `bad`: exit 2, nothing
/// written, no panic; returns stderr.
fn refused(tag: &str, good: &str, bad: &str) -> String {
    assert!(GOOD.contains(good), "test setup: {good}");
    let dir = temp_dir(&format!("per-{tag}"));
    let f = write(&dir, "s.toml", &GOOD.replacen(good, bad, 1));
    let out = dir.join("out");
    let o = fsmeta(&["run", f.to_str().expect("utf8"), "--out", out.to_str().expect("utf8")]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{tag}: {err}");
    assert!(!out.exists(), "{tag}: nothing may be written");
    assert!(!err.contains("panicked"), "{tag}: {err}");
    err
}

#[test]
fn the_good_scenario_runs_and_reports_each_array_once() {
    let dir = temp_dir("per-good");
    let f = write(&dir, "s.toml", GOOD);
    let out = dir.join("out");
    let o = fsmeta(&["run", f.to_str().expect("utf8"), "--out", out.to_str().expect("utf8"), "--silent"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("per/runs.csv")).expect("runs.csv");
    let header = csv.lines().next().expect("header");
    for col in [
        "agi.utilisation",
        "agi.instances",
        "agi.busiest",
        "agi.utilisation_sum",
        "dir.write_utilisation",
        "dir.instances",
    ] {
        assert!(header.split(',').any(|c| c == col), "no column {col}: {header}");
    }
    // No column per instance: the columns do not depend on [fs].
    assert!(!header.contains("agi[") && !header.contains("dir["), "{header}");
}

#[test]
fn fs_keys_that_would_change_nothing_are_refused() {
    let e = refused("no-per", "per = \"ag\"\n", "");
    assert!(e.contains("locks.agi.per") || e.contains("fs.agcount"), "{e}");
    let e = refused("rotor-range", "dirs = \"per-thread\"", "dirs = \"per-thread\"\nrotor = 4");
    assert!(e.contains("fs.rotor") && e.contains("0 to 3"), "{e}");
    let e = refused("agcount-zero", "agcount = 4", "agcount = 0");
    assert!(e.contains("fs.agcount"), "{e}");
    let e = refused("too-many-dirs", "dirs = \"per-thread\"", "dirs = 3");
    assert!(e.contains("fs.dirs") && e.contains("1 to 2"), "{e}");
    let e = refused("dirs-word", "dirs = \"per-thread\"", "dirs = \"per-cpu\"");
    assert!(e.contains("dirs") && e.contains("per-thread"), "{e}");
    let e = refused("unknown-fs-key", "agcount = 4", "agcount = 4\nag_count = 4");
    assert!(e.contains("ag_count") && e.contains("agcount"), "{e}");
}

#[test]
fn a_per_lock_needs_what_it_is_per() {
    let e = refused("no-agcount", "agcount = 4\n", "");
    assert!(e.contains("locks.agi.per") && e.contains("agcount"), "{e}");
    let e = refused("no-dirs", "dirs = \"per-thread\"\n", "");
    assert!(e.contains("locks.") && e.contains("dirs"), "{e}");
    let e = refused("no-fs", "[fs]\nagcount = 4\ndirs = \"per-thread\"\n", "");
    assert!(e.contains(".per") && e.contains("[fs]"), "{e}");
    let e = refused("per-word", "per = \"ag\"", "per = \"cpu\"");
    assert!(e.contains("per") && e.contains("ag"), "{e}");
    let e = refused("per-with-line", "per = \"ag\"", "per = \"ag\"\nline = \"x\"\n[lines.x]");
    assert!(e.contains("locks.agi.line"), "{e}");
}

#[test]
fn a_counter_cannot_be_per_ag() {
    let e = refused(
        "counter-per",
        "[[path]]\nunlock = \"dir\"",
        "[[path]]\nunlock = \"dir\"\n[[path]]\ncounter = \"c\"\nop = \"inc\"\n[counters.c]\nkind = \"atomic\"\nper = \"ag\"",
    );
    assert!(e.contains("counters.c.per"), "{e}");
}

#[test]
fn a_per_lock_in_an_unbound_queue_is_refused() {
    let e = refused(
        "unbound",
        "[[path]]\nunlock = \"dir\"",
        "[[path]]\nunlock = \"dir\"\n[[path]]\nqueue = \"q\"\n[workqueues.q]\nkind = \"unbound\"\npath = [{ lock = \"agi\" }, { unlock = \"agi\" }]",
    );
    assert!(e.contains("workqueues.q.path[0]") && e.contains("unbound"), "{e}");
}

#[test]
fn stretches_must_name_points_in_order_and_cover_the_work_once() {
    let e = refused("unknown-point", "to = \"xfs_dialloc\"", "to = \"xfs_dialoc\"");
    assert!(e.contains("path[1].to") && e.contains("xfs_dialloc"), "{e}");
    let e = refused(
        "backwards",
        "from = \"xfs_dialloc\"\nto = \"xfs_trans_commit\"",
        "from = \"xfs_trans_commit\"\nto = \"xfs_dialloc\"",
    );
    assert!(e.contains("path[3].to") && e.contains("order"), "{e}");
    // The last stretch left out: its work would be lost.
    let e = refused("gap", "[[path]]\nwork = \"tx\"\nfrom = \"xfs_trans_commit\"\n", "");
    assert!(e.contains("path[3].to") && e.contains("nothing runs it"), "{e}");
    // The whole work once more: it would run twice.
    let e = refused(
        "overlap",
        "[[path]]\nlock = \"agi\"",
        "[[path]]\nwork = \"tx\"\n[[path]]\nlock = \"agi\"",
    );
    assert!(e.contains("overlaps"), "{e}");
    let e = refused(
        "split-by-unused",
        "split_by = \"xfs_create\"",
        "split_by = \"xfs_create\"\n[work.other]\ndist = \"exp\"\nmean_ns = 5.0\nsplit_by = \"xfs_remove\"",
    );
    assert!(e.contains("work.other"), "{e}");
    let e = refused(
        "from-on-lock",
        "[[path]]\nlock = \"agi\"",
        "[[path]]\nlock = \"agi\"\nfrom = \"xfs_dialloc\"",
    );
    assert!(e.contains("path[2].from"), "{e}");
    let e = refused("no-split-by", "split_by = \"xfs_create\"\n", "");
    assert!(e.contains("path[1].to") && e.contains("split_by"), "{e}");
    let e = refused("no-code", "[code]\ndir_entries = 100\n", "");
    assert!(e.contains("[code]"), "{e}");
}
