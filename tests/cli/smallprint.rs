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
    let csv = std::fs::read_to_string(out.join("sat/summary.csv")).expect("summary.csv");
    csv.lines().map(|l| l.split(',').map(str::to_string).collect()).collect()
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
