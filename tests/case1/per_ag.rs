//! Per-AG and per-directory locks (`per`, `[fs]`): hand-computed
//! serialisation on one AGI, the inode64 rotor's placement seen through
//! the busiest instance, the lock takes per create and per unlink of the
//! shipped case counted by hand from the 5.7 code, and case 1's one
//! fitted number per host.

use super::{run_text, shipped};
use fsmeta::engine::Metrics;
use fsmeta::{LoadOptions, Study};
use std::path::Path;

/// `threads` threads on the ideal machine, each taking its AG's `agi`
/// mutex around 10 us of fixed work, then 1 us outside it; `fs` is the
/// `[fs]` table.
fn agi_run(threads: u32, fs: &str) -> Metrics {
    let text = format!(
        r#"
[scenario]
name = "agi"
seed = 3
replications = 1
ops = 40_000
[machine]
profile = "ideal"
[workload]
kind = "path"
threads = {threads}
[locks.agi]
kind = "mutex"
per = "ag"
[fs]
{fs}
[[path]]
lock = "agi"
[[path]]
work = {{ dist = "fixed", mean_ns = 10_000.0 }}
[[path]]
unlock = "agi"
[[path]]
work = {{ dist = "fixed", mean_ns = 1_000.0 }}
"#
    );
    let study = Study::from_text(Path::new("agi.toml"), &text, &LoadOptions::default()).expect("loads");
    let results = study.run(1, &|| {}).expect("runs");
    results.runs[0].metrics.clone()
}

fn close(what: &str, got: f64, want: f64, rel: f64) {
    assert!((got / want - 1.0).abs() <= rel, "{what}: {got}, want {want} (+-{}%)", rel * 100.0);
}

#[test]
fn two_threads_in_one_ag_serialise_on_its_agi_and_in_two_do_not() {
    // One AG: both threads' directories in AG 0; the AGI admits one 10 us
    // hold at a time, so 1 / 10 us = 100k ops/s in all, the lock always
    // held; alone each would make 1 / 11 us.
    let one = agi_run(2, "agcount = 1\ndirs = \"per-thread\"");
    close("one AG: ops/s", one["ops_per_sec"], 100_000.0, 0.01);
    close("one AG: held", one["agi.utilisation"], 1.0, 0.01);
    assert!(one["agi.contended"] > 0.0);
    assert_eq!(one["agi.instances"], 1.0);
    // Two AGs: the rotor puts directory 0 in AG 0, directory 1 in AG 1;
    // nothing is shared: 2 / 11 us, each AGI held 10/11 of the time.
    let two = agi_run(2, "agcount = 2\ndirs = \"per-thread\"");
    close("two AGs: ops/s", two["ops_per_sec"], 2.0 / 11e-6, 0.01);
    close("two AGs: busiest held", two["agi.utilisation"], 10.0 / 11.0, 0.01);
    close("two AGs: sum held", two["agi.utilisation_sum"], 20.0 / 11.0, 0.01);
    assert_eq!(two["agi.contended"], 0.0);
    assert_eq!(two["agi.instances"], 2.0);
}

#[test]
fn the_rotor_puts_the_fifth_directory_back_in_the_first_ones_ag() {
    // 5 thread directories from rotor 3 on 4 AGs land in AGs 3 0 1 2 3:
    // threads 0 and 4 share AG 3 (100k ops/s between them), the other
    // three run alone (1 / 11 us each).
    let m = agi_run(5, "agcount = 4\ndirs = \"per-thread\"\nrotor = 3");
    assert_eq!(m["agi.busiest"], 3.0);
    assert!(m["agi.contended"] > 0.0);
    close("ops/s", m["ops_per_sec"], 100_000.0 + 3.0 / 11e-6, 0.01);
    // Round robin over 2 directories: 5 threads in dirs 0 1 0 1 0, dir 0
    // in AG 3 (3 threads), dir 1 in AG 0 (2): both AGIs saturated, the
    // other two never taken.
    let rr = agi_run(5, "agcount = 4\ndirs = 2\nrotor = 3");
    assert!([0.0, 3.0].contains(&rr["agi.busiest"]), "{}", rr["agi.busiest"]);
    close("round robin: sum held", rr["agi.utilisation_sum"], 2.0, 0.01);
    close("round robin ops/s", rr["ops_per_sec"], 200_000.0, 0.01);
}

/// Shipped `name` at `ops` with every thread in one directory in one AG,
/// so each lock's one instance counts every take.
fn one_directory(name: &str, ops: u64) -> Metrics {
    let (file, text) = shipped(name, ops);
    assert!(text.contains("agcount = 16\ndirs = \"per-thread\""), "{name}: [fs] as shipped");
    let text = text.replace("agcount = 16\ndirs = \"per-thread\"", "agcount = 1\ndirs = \"shared\"");
    let m = run_text(&file, &text);
    m.into_iter()
        .find(|((p, v), _)| v == "atomic" && p.contains("host-a") && !p.starts_with("0,"))
        .map(|(_, m)| m)
        .expect("host A atomic")
}

fn per_op(what: &str, m: &Metrics, metric: &str, want: f64) {
    let got = m[metric] / m["ops"];
    // 16 operations in flight at the stop, a partial 64-chunk per thread.
    assert!(
        (got - want).abs() * m["ops"] <= 16.0 * 3.0,
        "{what}: {got} {metric} per op, want {want}"
    );
}

#[test]
fn a_create_takes_each_directory_and_ag_lock_once_and_the_agf_per_chunk() {
    // Hand count per create (5.7, xfs-active-trans.toml's header): the
    // parent's i_rwsem (do_last) and ILOCK (xfs_create) once, the AGI once
    // (xfs_dialloc, held across the roll), pag_ici_lock once
    // (xfs_iget_cache_miss), the AGF once per 64-inode chunk
    // (xfs_ialloc_ag_alloc).
    let m = one_directory("xfs-active-trans.toml", 20_000);
    per_op("create", &m, "i_rwsem.write_acquisitions", 1.0);
    per_op("create", &m, "ilock.write_acquisitions", 1.0);
    per_op("create", &m, "agi.acquisitions", 1.0);
    per_op("create", &m, "pag_ici_lock.acquisitions", 1.0);
    per_op("create", &m, "agf.acquisitions", 1.0 / 64.0);
    // One directory: its i_rwsem, held over all but the create's last
    // 6.70%, is what limits, and threads wait on it.
    assert!(
        m["i_rwsem.contended"] > 0.0 && m["i_rwsem.utilisation"] > 0.95,
        "{}",
        m["i_rwsem.utilisation"]
    );
}

#[test]
fn an_unlink_takes_the_agi_twice_and_the_agf_per_freed_chunk() {
    // Hand count per unlink (5.7, xfs-active-trans-rm.toml's header):
    // i_rwsem (do_unlinkat) and the parent's ILOCK (xfs_lock_two_inodes)
    // once, the AGI in xfs_remove (xfs_iunlink) and in xfs_inactive_ifree
    // (xfs_ifree), the AGF once per freed chunk (xfs_free_extent).
    let m = one_directory("xfs-active-trans-rm.toml", 10_000);
    per_op("unlink", &m, "i_rwsem.write_acquisitions", 1.0);
    per_op("unlink", &m, "ilock.write_acquisitions", 1.0);
    per_op("unlink", &m, "agi.acquisitions", 2.0);
    per_op("unlink", &m, "agf.acquisitions", 1.0 / 64.0);
}

#[test]
fn case_1_still_fits_one_number_per_host() {
    // The knob is work.create_tx.mean_ns, zipped with the host; the split
    // at the AGI comes from counted code (split_by), not from a number:
    // no [code] work_scale, no second zipped or fitted value.
    let (_, text) = shipped("xfs-active-trans.toml", 1_000);
    let doc: toml::Table = text.parse().expect("toml");
    let zips = doc["sweep"]["zip"].as_array().expect("zip");
    assert_eq!(zips.len(), 1);
    let keys: Vec<&String> = zips[0].as_table().expect("table").keys().collect();
    assert_eq!(keys, ["machine.profile", "work.create_tx.mean_ns"]);
    let fitted = doc["expect"]
        .as_array()
        .expect("expects")
        .iter()
        .filter(|e| e.get("role").and_then(|r| r.as_str()) == Some("fitted"))
        .count();
    assert_eq!(fitted, 2, "one fitted figure per host");
    assert!(
        doc["code"].get("work_scale").is_none(),
        "the share is priced at work_scale 1: no knob in [code]"
    );
    assert_eq!(doc["work"]["create_tx"]["split_by"].as_str(), Some("xfs_create"));
    assert!(doc["work"].as_table().expect("works").len() == 1, "one work, one knob");
}
