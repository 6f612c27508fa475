//! The small print: what the outputs say at their edges (one
//! replication, a saturated resource) is honest.

use super::{fsmeta, temp_dir, write};

/// Sixteen threads on one ticket lock with an empty critical section: the
/// lock's word is busy all the time.
const SATURATED: &str = r#"[scenario]
name = "sat"
ops = 20_000
replications = 1

[machine]
profile = "icelake-2s"

[workload]
kind = "path"
threads = 16

[lines.hot]

[locks.l]
kind = "ticket"

[[path]]
atomic = "hot"
[[path]]
lock = "l"
[[path]]
unlock = "l"
"#;

fn summary(tag: &str, text: &str) -> Vec<Vec<String>> {
    let csv = std::fs::read_to_string(outputs(tag, text).join("summary.csv")).expect("summary.csv");
    csv.lines().map(|l| l.split(',').map(str::to_string).collect()).collect()
}

/// Runs `text` (a scenario named `sat`) and returns its output folder.
fn outputs(tag: &str, text: &str) -> std::path::PathBuf {
    let dir = temp_dir(tag);
    let file = write(&dir, "s.toml", text);
    let out = dir.join("out");
    let o = fsmeta(&[
        "run",
        "--silent",
        "--out",
        out.to_str().expect("utf8"),
        file.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    out.join("sat")
}

#[test]
fn one_replication_leaves_the_ci_columns_empty() {
    let rows = summary("smallprint-n1", SATURATED);
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap_or_else(|| panic!("{name}"));
    let (lo, hi, n, mean) = (col("ci95_lo"), col("ci95_hi"), col("n"), col("mean"));
    for r in &rows[1..] {
        assert_eq!(r[n], "1");
        assert!(!r[mean].is_empty());
        assert_eq!((r[lo].as_str(), r[hi].as_str()), ("", ""), "no zero-width interval at n = 1: {r:?}");
    }
    let two = summary("smallprint-n2", &SATURATED.replace("replications = 1", "replications = 2"));
    assert!(two[1..].iter().all(|r| !r[lo].is_empty()), "n = 2 has its CI");
    // summary.json says the same: null, not a zero-width interval.
    let json = std::fs::read_to_string(outputs("smallprint-n1-json", SATURATED).join("summary.json")).expect("summary.json");
    let doc = fsmeta::report::model::SummaryJson::from_json(&json).expect("summary.json reads back");
    assert!(!doc.rows.is_empty());
    for r in &doc.rows {
        assert_eq!((r.n, r.ci95_lo, r.ci95_hi), (1, None, None), "{}: {r:?}", r.metric);
        assert!(r.mean.is_some(), "{}", r.metric);
    }
}

#[test]
fn a_saturated_lock_is_busy_at_most_all_the_time() {
    let rows = summary("smallprint-sat", SATURATED);
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap_or_else(|| panic!("{name}"));
    let (metric, mean) = (col("metric"), col("mean"));
    let util: Vec<(String, f64)> = rows[1..]
        .iter()
        .filter(|r| r[metric].ends_with(".utilisation"))
        .map(|r| (r[metric].clone(), r[mean].parse().expect("number")))
        .collect();
    assert!(util.len() >= 3, "{util:?}");
    for (m, u) in &util {
        assert!((0.0..=1.0).contains(u), "{m} = {u}");
    }
    // Not vacuous: the lock's word is saturated (1.00004 before the clamp).
    assert!(util.iter().any(|(_, u)| *u > 0.999), "{util:?}");
}

/// Fragmentation levels that round to the same number of extents.
const FRAG: &str = r#"[scenario]
name = "frag"
replications = 1

[workload]
kind = "xfs-alloc"

[xfs_alloc]
source = "fragmentation"
maxlen = 4
calls = 10

[sweep]
"xfs_alloc.fragmentation" = LEVELS
"#;

fn run_stderr(tag: &str, text: &str) -> String {
    let dir = temp_dir(tag);
    let file = write(&dir, "s.toml", text);
    let out = dir.join("out");
    let o = fsmeta(&["run", "--out", out.to_str().expect("utf8"), file.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn points_that_build_the_same_model_are_warned_about() {
    let err = run_stderr("smallprint-frag", &FRAG.replace("LEVELS", "[0.5, 0.9999985, 0.999998]"));
    assert!(
        err.contains("points xfs_alloc.fragmentation=0.9999985 and xfs_alloc.fragmentation=0.999998 of variant base build the same model"),
        "{err}"
    );
    assert!(!err.contains("fragmentation=0.5 and"), "{err}");
    let err = run_stderr("smallprint-frag-distinct", &FRAG.replace("LEVELS", "[0.5, 0.9]"));
    assert!(!err.contains("same model"), "{err}");
}

#[test]
fn log1m_spreads_levels_near_one_and_bad_scales_are_refused() {
    let plot = "\n[[plot]]\nname = \"levels\"\nx = \"xfs_alloc.fragmentation\"\ny = \"alloc_us\"\nx_scale = \"SCALE\"\n";
    let text = FRAG.replace("LEVELS", "[0.9, 0.99, 0.999, 0.9999]") + plot;
    let dir = temp_dir("smallprint-log1m");
    let file = write(&dir, "s.toml", &text.replace("SCALE", "log1m"));
    let out = dir.join("out");
    let o = fsmeta(&[
        "run",
        "--silent",
        "--out",
        out.to_str().expect("utf8"),
        file.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(out.join("frag/levels.svg")).expect("levels.svg");
    assert!(
        svg.contains("1 - xfs_alloc.fragmentation (log scale)"),
        "the axis says what it shows"
    );
    let refused = |scale: &str, levels: &str| -> String {
        let f = write(&dir, "bad.toml", &(FRAG.replace("LEVELS", levels) + &plot.replace("SCALE", scale)));
        let o = fsmeta(&["check", f.to_str().expect("utf8")]);
        assert_eq!(o.status.code(), Some(2));
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let e = refused("log1n", "[0.9, 0.99]");
    assert!(
        e.contains("plot[0].x_scale: expected one of linear, log, log1m, found `log1n` (did you mean `log1m`?)"),
        "{e}"
    );
    let e = refused("log1m", "[0.9, 1.0]");
    assert!(e.contains("every x must be a number below 1"), "{e}");
}
