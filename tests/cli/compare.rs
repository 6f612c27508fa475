//! `fsmeta compare A B --out DIR`: compare.csv, the ratio plot, points
//! paired by their swept values (a reversed sweep pairs), and mismatch
//! errors that name the points that differ.

use super::{fsmeta, temp_dir, write};
use std::path::Path;

/// M/M/1//N at a small scale, swept over threads.
const BEFORE: &str = r#"[scenario]
name = "cmp-before"
seed = 3
replications = 3
ops = 20_000

[machine]
profile = "ideal"

[workload]
kind = "path"
threads = 1

[locks.server]
kind = "queued"

[[path]]
work = { dist = "exp", mean_ns = 1000.0 }
[[path]]
lock = "server"
[[path]]
work = { dist = "exp", mean_ns = 100.0 }
[[path]]
unlock = "server"

[sweep]
"workload.threads" = [1, 4]
"#;

fn run_compare(dir: &Path, a: &str, b: &str, jobs: &str) -> (i32, String, String) {
    let (fa, fb) = (write(dir, "a.toml", a), write(dir, "b.toml", b));
    let out = dir.join("out");
    let o = fsmeta(&[
        "compare",
        fa.to_str().expect("utf8"),
        fb.to_str().expect("utf8"),
        "--jobs",
        jobs,
        "--out",
        out.to_str().expect("utf8"),
    ]);
    let csv = std::fs::read_to_string(out.join("cmp-before-vs-cmp-after/compare.csv")).unwrap_or_default();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).to_string(), csv)
}

fn after(text: &str) -> String {
    text.replace("cmp-before", "cmp-after")
}

#[test]
fn compare_writes_a_csv_of_paired_differences_and_ratios_and_a_plot() {
    let dir = temp_dir("compare-out");
    // Service time halved: the lock wait shrinks, throughput rises (about 7%
    // at 4 threads), and the paired CI is clear of 1.
    let b = after(&BEFORE.replace("mean_ns = 100.0", "mean_ns = 50.0"));
    let (code, err, csv) = run_compare(&dir, BEFORE, &b, "2");
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        lines[0].join(","),
        "point,metric,unit,before,after,n,before_mean,after_mean,diff,diff_ci95_lo,diff_ci95_hi,ratio,ratio_ci95_lo,ratio_ci95_hi"
    );
    let row = lines
        .iter()
        .find(|r| r[0] == "threads=4" && r[1] == "ops_per_sec")
        .unwrap_or_else(|| panic!("{csv}"));
    let num = |i: usize| row[i].parse::<f64>().unwrap_or_else(|_| panic!("column {i}: {csv}"));
    assert_eq!((row[3], row[4], row[5]), ("cmp-before", "cmp-after", "3"));
    let (ratio, lo, hi) = (num(11), num(12), num(13));
    assert!(ratio > 1.03 && 1.0 < lo && lo <= ratio && ratio <= hi, "{row:?}");
    assert!((num(7) / num(6) - ratio).abs() < 1e-9, "ratio of means");
    assert!(num(9) <= num(8) && num(8) <= num(10), "the diff lies in its CI");
    let set = dir.join("out/cmp-before-vs-cmp-after");
    for f in ["ratios.svg", "ratios.png", "compare.txt"] {
        assert!(set.join(f).is_file(), "{f}");
    }
    let svg = std::fs::read_to_string(set.join("ratios.svg")).expect("svg");
    assert!(svg.contains("threads=4"), "the points are the ticks");
    // Same bytes for any --jobs.
    let again = temp_dir("compare-out-1");
    assert_eq!(run_compare(&again, BEFORE, &b, "1").2, csv);
}

#[test]
fn a_reversed_sweep_pairs_point_by_point() {
    let dir = temp_dir("compare-reversed");
    let b = after(&BEFORE.replace("[1, 4]", "[4, 1]"));
    let (code, err, csv) = run_compare(&dir, BEFORE, &b, "2");
    assert_eq!(code, 0, "{err}");
    // Same points, same random numbers: every difference is exactly 0.
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 6, "{csv}");
    for r in rows {
        let c: Vec<&str> = r.split(',').collect();
        assert_eq!((c[8], c[11]), ("0", "1"), "{r}");
    }
}

#[test]
fn different_points_are_named_in_the_error() {
    let dir = temp_dir("compare-mismatch");
    let b = after(&BEFORE.replace("[1, 4]", "[1, 8]"));
    let (code, err, csv) = run_compare(&dir, BEFORE, &b, "2");
    assert_eq!(code, 2, "{err}");
    assert!(csv.is_empty(), "nothing is written");
    assert!(
        err.contains("a.toml has 1 point(s)") && err.contains("b.toml lacks: `workload.threads=4`"),
        "{err}"
    );
    assert!(
        err.contains("b.toml has 1 point(s)") && err.contains("a.toml lacks: `workload.threads=8`"),
        "{err}"
    );
    assert!(!err.contains("has 2, "), "not a count of points: {err}");
}

#[test]
fn a_missing_output_folder_beside_an_existing_one_names_the_folders_it_may_mean() {
    // `fsmeta compare OUT/lab-xfs-alloc OUT/xfs-alloc-1000000`: the lab
    // folder of a run at 10^6 extents is `lab-xfs-alloc-1000000`.
    let dir = temp_dir("compare-missing-folder");
    for f in ["lab-xfs-alloc-1000000", "twin"] {
        std::fs::create_dir_all(dir.join(f)).expect("mkdir");
    }
    let (missing, twin) = (dir.join("lab-xfs-alloc"), dir.join("twin"));
    let o = fsmeta(&["compare", missing.to_str().expect("utf8"), twin.to_str().expect("utf8")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no such file or folder") && err.contains("`lab-xfs-alloc-1000000`"),
        "{err}"
    );
    assert!(!err.contains("scenario file"), "not read as a scenario: {err}");
    // Nothing alike beside it: the message says what was expected, no name.
    let far = dir.join("zzz");
    let o = fsmeta(&["compare", twin.to_str().expect("utf8"), far.to_str().expect("utf8")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("read as an output folder") && !err.contains("there is"), "{err}");
}
