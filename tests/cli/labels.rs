//! Issue 32: `labels = [...]` names the points of a sweep axis in plot
//! ticks, the CSV files, `summary.json`, reports and `patch.txt`; lists of
//! lists or tables get a short distinguishing default label; bad labels
//! are located errors; labels never change what a point is (its values,
//! its random numbers, how `compare` pairs it).

use super::{fsmeta, temp_dir, write};
use fsmeta::report::model::{RunsTable, SummaryTable};
use std::path::{Path, PathBuf};

/// Two variants over a labelled list (the first step's work) and a
/// labelled zip group (threads with ops).
const LABELLED: &str = r#"[scenario]
name = "labelled"
ops = 4_000
replications = 2

[machine]
profile = "ideal"

[workload]
kind = "path"

[lines.hot]

[[path]]
work = { dist = "exp", mean_ns = 200.0 }
[[path]]
atomic = "hot"

[[variant]]
name = "before"

[[variant]]
name = "after"
"path[0]".work.dist = "fixed"

[sweep]
"path[0].work.mean_ns" = { values = [50.0, 500.0], labels = ["hot-loop", "cold-loop"] }

[[sweep.zip]]
"workload.threads" = [1, 4]
"scenario.ops" = [2_000, 8_000]
labels = ["solo", "quad"]

[[plot]]
name = "rate"
x = "path[0].work.mean_ns"
y = "ops_per_sec"
at = { "workload.threads" = 4 }
"#;

fn run(tag: &str, file_name: &str, text: &str, extra: &[&str]) -> PathBuf {
    let dir = temp_dir(tag);
    let file = write(&dir, file_name, text);
    let out = dir.join("out");
    let mut args = vec!["run", "--silent", "--out", out.to_str().expect("utf8")];
    args.extend_from_slice(extra);
    args.push(file.to_str().expect("utf8"));
    let o = fsmeta(&args);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

#[test]
fn labels_name_the_points_in_every_output() {
    let out = run("labels-every", "l.toml", LABELLED, &[]).join("labelled");
    let summary = SummaryTable::from_csv(&read(&out, "summary.csv")).expect("summary.csv reads back");
    assert_eq!(
        summary.params,
        [
            "path[0].work.mean_ns",
            "path[0].work.mean_ns:label",
            "scenario.ops",
            "workload.threads",
            "scenario.ops:label"
        ]
    );
    let points: std::collections::BTreeSet<Vec<String>> = summary.rows.iter().map(|r| r.point.clone()).collect();
    let want: std::collections::BTreeSet<Vec<String>> = [
        ["50.0", "hot-loop", "2000", "1", "solo"],
        ["50.0", "hot-loop", "8000", "4", "quad"],
        ["500.0", "cold-loop", "2000", "1", "solo"],
        ["500.0", "cold-loop", "8000", "4", "quad"],
    ]
    .iter()
    .map(|r| r.iter().map(|c| c.to_string()).collect())
    .collect();
    assert_eq!(points, want, "the value columns keep the values, the label columns the labels");
    let runs = RunsTable::from_csv(&read(&out, "runs.csv")).expect("runs.csv reads back");
    assert_eq!(runs.params, summary.params);
    let json = read(&out, "summary.json");
    assert!(json.contains("\"path[0].work.mean_ns:label\": \"cold-loop\""), "{json}");
    let report = read(&out, "report.txt");
    assert!(report.contains("== path[0].work.mean_ns=hot-loop quad =="), "{report}");
    let patch = read(&out, "patch.txt");
    assert!(patch.contains("mean_ns=cold-loop solo"), "{patch}");
    let svg = read(&out, "rate.svg");
    for tick in ["hot-loop", "cold-loop"] {
        assert!(svg.contains(&format!("\n{tick}\n")), "tick {tick} in rate.svg");
    }
    assert!(svg.contains("(at threads=quad)"), "the slice's title names its label");
    let resolved: toml::Table = toml::from_str(&read(&out, "points.resolved.toml")).expect("points.resolved.toml");
    let first = &resolved["point"].as_array().expect("points")[0];
    assert_eq!(first["labels"]["path[0].work.mean_ns"].as_str(), Some("hot-loop"));
    assert_eq!(first["labels"]["scenario.ops"].as_str(), Some("solo"));
    assert_eq!(first["set"]["path[0].work.mean_ns"].as_float(), Some(50.0));
}

#[test]
fn labels_change_no_number() {
    let plain = LABELLED
        .replace(
            "{ values = [50.0, 500.0], labels = [\"hot-loop\", \"cold-loop\"] }",
            "[50.0, 500.0]",
        )
        .replace("labels = [\"solo\", \"quad\"]\n", "");
    assert_ne!(plain, LABELLED);
    let with = RunsTable::from_csv(&read(&run("labels-with", "l.toml", LABELLED, &[]).join("labelled"), "runs.csv")).expect("runs");
    let without = RunsTable::from_csv(&read(&run("labels-without", "l.toml", &plain, &[]).join("labelled"), "runs.csv")).expect("runs");
    assert_eq!(with.metrics, without.metrics);
    assert_eq!(with.rows.len(), without.rows.len());
    for (a, b) in with.rows.iter().zip(&without.rows) {
        assert_eq!((a.seed, &a.metrics), (b.seed, &b.metrics), "a label is a name, not a parameter");
        assert_eq!(a.point.len(), b.point.len() + 2);
    }
}

/// Three free-space histograms that differ in one bucket's count.
const LISTS: &str = r#"[scenario]
name = "lists"

[workload]
kind = "xfs-alloc"

[xfs_alloc]
source = "histogram"
agblocks = 1_000_000
maxlen = 4
calls = 10

[sweep]
"xfs_alloc.histogram" = [
  [{ from = 1, to = 1, extents = 1000 }, { from = 2, to = 7, extents = 200 }],
  [{ from = 1, to = 1, extents = 1000 }, { from = 2, to = 7, extents = 20 }],
]
"xfs_alloc.calls" = [10, 20]

[[plot]]
name = "alloc"
kind = "bars"
x = "xfs_alloc.histogram"
y = "alloc_us"
"#;

#[test]
fn list_values_are_named_by_what_tells_them_apart() {
    let out = run("labels-lists", "x.toml", LISTS, &[]).join("lists");
    let summary = SummaryTable::from_csv(&read(&out, "summary.csv")).expect("summary.csv");
    assert_eq!(
        summary.params,
        ["xfs_alloc.calls", "xfs_alloc.histogram", "xfs_alloc.histogram:label"]
    );
    let labels: std::collections::BTreeSet<&str> = summary.rows.iter().map(|r| r.point[2].as_str()).collect();
    assert_eq!(labels, ["[1].extents=20", "[1].extents=200"].into_iter().collect());
    // The full value stays in the value column and in points.resolved.toml.
    assert!(
        summary.rows[0].point[1].starts_with("[{ extents = 1000, from = 1, to = 1 }"),
        "{:?}",
        summary.rows[0].point
    );
    assert!(read(&out, "points.resolved.toml").contains("\"xfs_alloc.histogram\" = \"[1].extents=200\""));
    let svg = read(&out, "alloc.svg");
    assert!(
        svg.contains("\n[1].extents=200\n") && svg.contains("\n[1].extents=20\n"),
        "ticks name the lists"
    );
    let report = read(&out, "report.txt");
    assert!(report.contains("xfs_alloc.histogram=[1].extents=20 =="), "{report}");
    // More differences than a short label holds: the place in the list.
    let many = LISTS.replace("{ from = 2, to = 7, extents = 20 }]", "{ from = 3, to = 8, extents = 20 }]");
    let out = run("labels-lists-many", "x.toml", &many, &[]).join("lists");
    let summary = SummaryTable::from_csv(&read(&out, "summary.csv")).expect("summary.csv");
    let labels: std::collections::BTreeSet<&str> = summary.rows.iter().map(|r| r.point[2].as_str()).collect();
    assert_eq!(labels, ["#1", "#2"].into_iter().collect());
}

/// `fsmeta check` on `text`: exit 2 and the message, which must name the
/// place.
fn refused(tag: &str, text: &str) -> String {
    let dir = temp_dir(tag);
    let file = write(&dir, "bad.toml", text);
    let o = fsmeta(&["check", file.to_str().expect("utf8")]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn bad_labels_are_located_errors() {
    let labels = "labels = [\"hot-loop\", \"cold-loop\"]";
    let cases: &[(&str, &str, &str)] = &[
        ("labels = [\"hot-loop\"]", "mean_ns.labels:", "1 label(s) for 2 value(s)"),
        (
            "labels = [\"x\", \"x\"]",
            "mean_ns.labels[1]",
            "label `x` names value 1 and value 2",
        ),
        ("labels = [\"\", \"x\"]", "mean_ns.labels[0]", "cannot be empty"),
        ("labels = [\"a/b\", \"x\"]", "mean_ns.labels[0]", "usable as a file name"),
        ("labels = [\".a\", \"x\"]", "mean_ns.labels[0]", "starts with `.`"),
        ("labels = [1, \"x\"]", "mean_ns.labels[0]", "expected a text label"),
        (
            "label = [\"a\", \"b\"]",
            "did you mean `sweep.path[0].work.mean_ns.labels`",
            "unknown key `label`",
        ),
    ];
    // The line of the labelled list, from 1.
    let line = LABELLED.lines().position(|l| l.contains(labels)).expect("the labelled list") + 1;
    for (i, (with, place, why)) in cases.iter().enumerate() {
        let err = refused(&format!("labels-bad-{i}"), &LABELLED.replace(labels, with));
        assert!(err.contains(why), "{with}: {err}");
        assert!(
            err.contains(&format!("bad.toml:{line}:")),
            "{with} is located on line {line}: {err}"
        );
        assert!(err.contains(place), "{with} is located ({place}): {err}");
    }
    let err = refused(
        "labels-bad-no-values",
        &LABELLED.replace("{ values = [50.0, 500.0], labels", "{ labels"),
    );
    assert!(
        err.contains(&format!("bad.toml:{line}:1")) && err.contains("needs `values = [...]`"),
        "{err}"
    );
    let err = refused(
        "labels-bad-zip",
        &LABELLED.replace("labels = [\"solo\", \"quad\"]", "label = [\"solo\", \"quad\"]"),
    );
    assert!(err.contains("sweep.zip[0].label") && err.contains("did you mean `labels`"), "{err}");
    let err = refused(
        "labels-bad-zip-n",
        &LABELLED.replace("labels = [\"solo\", \"quad\"]", "labels = [\"solo\"]"),
    );
    assert!(
        err.contains("sweep.zip[0].labels") && err.contains("1 label(s) for 2 value(s)"),
        "{err}"
    );
    // A labelled x is drawn as categories: a log x would be ignored.
    let err = refused(
        "labels-bad-log",
        &LABELLED.replace("y = \"ops_per_sec\"", "y = \"ops_per_sec\"\nx_log = true"),
    );
    assert!(err.contains("plot[0].x_log") && err.contains("shown by its labels"), "{err}");
}

#[test]
fn quick_lists_keep_their_labels() {
    let quick = LABELLED.replace(
        "replications = 2",
        "replications = 2\nquick = { \"sweep.path[0].work.mean_ns\" = [500.0] }",
    );
    let out = run("labels-quick", "l.toml", &quick, &["--quick"]).join("labelled");
    let summary = SummaryTable::from_csv(&read(&out, "summary.csv")).expect("summary.csv");
    assert!(
        summary.rows.iter().all(|r| r.point[..2] == ["500.0", "cold-loop"]),
        "{:?}",
        summary.rows[0]
    );
    let unnamed = quick.replace("= [500.0] }", "= [5000.0] }");
    let dir = temp_dir("labels-quick-unnamed");
    let file = write(&dir, "l.toml", &unnamed);
    let out = dir.join("out");
    let o = fsmeta(&[
        "run",
        "--quick",
        "--silent",
        "--out",
        out.to_str().expect("utf8"),
        file.to_str().expect("utf8"),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let line = unnamed.lines().position(|l| l.starts_with("quick =")).expect("quick") + 1;
    assert!(
        err.contains(&format!("l.toml:{line}:")) && err.contains("5000.0 is not one of them, so it has no label"),
        "{err}"
    );
    assert!(!out.join("labelled").exists(), "nothing written");
}

#[test]
fn compare_pairs_points_by_their_values_not_their_labels() {
    let dir = temp_dir("labels-compare");
    let a = write(&dir, "a.toml", LABELLED);
    let b = write(
        &dir,
        "b.toml",
        &LABELLED.replace("\"hot-loop\", \"cold-loop\"", "\"fast\", \"slow\""),
    );
    let o = fsmeta(&["compare", a.to_str().expect("utf8"), b.to_str().expect("utf8")]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("mean_ns=hot-loop"), "{text}");
}
