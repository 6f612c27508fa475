//! Hostile input, round two (issue 33): what a run writes stays sound
//! when the input is odd (no NaN or inf in the tables), and what it writes
//! into is checked before the work.

use super::{fsmeta, temp_dir, write};

/// A path scenario with two identical variants: every zero metric of the
/// first variant (an uncontended lock's wait) has no ratio.
const TWO_VARIANTS: &str = r#"[scenario]
name = "two"
ops = 100

[workload]
kind = "path"
threads = 1

[locks.l]
kind = "queued"

[[path]]
work = { dist = "exp", mean_ns = 100.0 }
[[path]]
lock = "l"
[[path]]
unlock = "l"

[[variant]]
name = "a"
[[variant]]
name = "b"
"#;

/// `ratio_vs_first` against a first variant whose mean is 0 is left empty;
/// it used to be NaN (0/0) or inf.
#[test]
fn ratio_against_a_zero_mean_is_empty_in_summary_csv_issue33() {
    let dir = temp_dir("hostile-ratio");
    let f = write(&dir, "s.toml", TWO_VARIANTS);
    let out = dir.join("out");
    let o = fsmeta(&["run", f.to_str().expect("utf8"), "--out", out.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("two/summary.csv")).expect("summary.csv");
    let json = std::fs::read_to_string(out.join("two/summary.json")).expect("summary.json");
    for text in [&csv, &json] {
        assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    }
    // The wait of an uncontended lock is 0 for both: no ratio, a diff of 0.
    let row = csv.lines().find(|l| l.starts_with("two,b,l.wait_mean_ns,"));
    assert_eq!(row, Some("two,b,l.wait_mean_ns,0,0,0,0,1,0,0,0,"), "{csv}");
}
