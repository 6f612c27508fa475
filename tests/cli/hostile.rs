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
    // One replication: no CI cells (issue 32).
    assert_eq!(row, Some("two,b,l.wait_mean_ns,0,0,,,1,0,,,"), "{csv}");
}

/// Two scenarios of one `fsmeta run` with the same `scenario.name` would
/// write the same `OUT/<name>`, the second silently replacing the first:
/// refused at the second's `scenario.name`, before anything runs.
#[test]
fn two_scenarios_with_one_name_are_refused_before_running_issue33() {
    let dir = temp_dir("hostile-dup-name");
    let a = write(&dir, "a.toml", TWO_VARIANTS);
    let b = write(&dir, "b.toml", &TWO_VARIANTS.replacen("ops = 100", "ops = 200", 1));
    let out = dir.join("out");
    let o = fsmeta(&[
        "run",
        a.to_str().expect("utf8"),
        b.to_str().expect("utf8"),
        "--out",
        out.to_str().expect("utf8"),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("b.toml:2:") && err.contains("scenario.name") && err.contains("a.toml"),
        "{err}"
    );
    assert!(!out.exists(), "nothing may be written");
}

/// Entries of a cache folder (what was computed).
fn entries(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

/// An `--out` that cannot be written is refused before the first run (it
/// used to be found after all runs were computed): a file, `/dev/null`, a
/// path under a file. The cache shows that nothing was computed.
#[test]
fn an_unwritable_out_is_refused_before_the_first_run_issue33() {
    let dir = temp_dir("hostile-out");
    let f = write(&dir, "s.toml", TWO_VARIANTS);
    let file = write(&dir, "a-file", "not a folder");
    let cache = dir.join("cache");
    for out in [file.clone(), "/dev/null".into(), file.join("below")] {
        let o = fsmeta(&[
            "run",
            f.to_str().expect("utf8"),
            "--out",
            out.to_str().expect("utf8"),
            "--cache",
            cache.to_str().expect("utf8"),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", out.display());
        assert!(err.contains("--out") && err.contains("nothing was run"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(entries(&cache), 0, "{}: runs were computed", out.display());
    }
    assert_eq!(std::fs::read_to_string(&file).ok().as_deref(), Some("not a folder"));
}

/// `--jobs` beyond the machine is capped with a note (100,000 threads used
/// to be started for a 0.1 s job); the results are those of `--jobs 1`.
#[test]
fn jobs_are_capped_with_a_note_issue33() {
    let dir = temp_dir("hostile-jobs");
    let f = write(&dir, "s.toml", TWO_VARIANTS);
    let mut csv = Vec::new();
    for jobs in ["100000", "1"] {
        let out = dir.join(format!("out-{jobs}"));
        let o = fsmeta(&[
            "run",
            f.to_str().expect("utf8"),
            "--out",
            out.to_str().expect("utf8"),
            "--jobs",
            jobs,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert_eq!(err.contains("--jobs 100000 capped at"), jobs == "100000", "{err}");
        csv.push(std::fs::read_to_string(out.join("two/runs.csv")).expect("runs.csv"));
    }
    assert_eq!(csv[0], csv[1]);
}

/// Runs fsmeta with stdout or stderr sent to `/dev/full`.
fn to_full(args: &[&str], stdout: bool) -> std::process::Output {
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_fsmeta"));
    c.args(args).current_dir(super::root());
    if stdout {
        c.stdout(full()).stderr(std::process::Stdio::piped());
    } else {
        c.stderr(full()).stdout(std::process::Stdio::piped());
    }
    c.output().expect("fsmeta runs")
}

/// A full stdout or stderr is exit 2, never a panic (exit 101): `keys`
/// and `run` with stdout on `/dev/full`, `check` of a bad file with stderr
/// there. The run's outputs are written all the same.
#[test]
fn a_full_stdout_or_stderr_is_exit_2_not_a_panic_issue33() {
    let o = to_full(&["keys"], true);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    let dir = temp_dir("hostile-full");
    let bad = write(&dir, "bad.toml", "[scenario]\nname = 3\n");
    let o = to_full(&["check", bad.to_str().expect("utf8")], false);
    assert_eq!(o.status.code(), Some(2));
    let f = write(&dir, "s.toml", TWO_VARIANTS);
    let out = dir.join("out");
    let o = to_full(&["run", f.to_str().expect("utf8"), "--out", out.to_str().expect("utf8")], true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.join("two/summary.csv").is_file());
}

/// `run --quick` checks the values quick replaces as the file writes them
/// (they used to be checked by `check` only): `scenario.ops = 2e14`, a
/// profile `/dev/zero`, a negative mean, each hidden by a quick override,
/// are refused at their place before any run.
#[test]
fn run_quick_checks_the_values_quick_hides_issue33() {
    let dir = temp_dir("hostile-quick-hidden");
    let quick = |sets: &str, from: &str, to: &str| {
        TWO_VARIANTS
            .replacen("ops = 100\n", &format!("ops = 100\nquick = {{ {sets} }}\n"), 1)
            .replacen(from, to, 1)
    };
    let cases = [
        (quick("\"scenario.ops\" = 50", "ops = 100\n", "ops = 2e14\n"), "scenario.ops"),
        (
            quick(
                "\"machine.profile\" = \"ideal\"",
                "[workload]",
                "[machine]\nprofile = \"/dev/zero\"\n\n[workload]",
            ),
            "machine.profile",
        ),
        (
            quick("\"path[0].work.mean_ns\" = 10.0", "mean_ns = 100.0", "mean_ns = -100.0"),
            "path[0].work.mean_ns",
        ),
    ];
    for (i, (text, field)) in cases.iter().enumerate() {
        let f = write(&dir, &format!("q{i}.toml"), text);
        let line = text
            .lines()
            .position(|l| l.contains(&field[field.rfind('.').map_or(0, |d| d + 1)..]) && !l.starts_with("quick"));
        let out = dir.join(format!("out{i}"));
        let o = fsmeta(&["run", "--quick", f.to_str().expect("utf8"), "--out", out.to_str().expect("utf8")]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{field}: {err}");
        let at = format!("q{i}.toml:{}:", line.expect("line") + 1);
        assert!(err.contains(&at) && err.contains(field), "{field} at {at}: {err}");
        assert!(!out.exists(), "nothing may be written");
    }
}
