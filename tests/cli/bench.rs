//! `fsmeta bench`: what it prints, and that the two M/M/1//N runs it
//! compares are the same model.

use super::fsmeta;

/// The value of `key: value` in `out`.
fn field(out: &str, key: &str) -> f64 {
    let line = out.lines().find(|l| l.starts_with(&format!("{key}: ")));
    let value = line.and_then(|l| l.split(": ").nth(1)).and_then(|v| v.parse().ok());
    value.unwrap_or_else(|| panic!("no {key} in:\n{out}"))
}

#[test]
fn bench_prints_the_comparison_and_ends_with_events_per_sec() {
    let out = fsmeta(&["bench", "--ops", "20000", "--completions", "20000", "--repeat", "3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(field(&text, "repeat"), 3.0);
    // 20,000 operations of the engine path are 2.6 to 2.8 events each
    // (one per work step, one per contended hand-off).
    let events = field(&text, "events");
    assert!((52_000.0..56_000.0).contains(&events), "{events}");
    for key in [
        "mm1n_bare_heap_completions_per_sec",
        "mm1n_fsmeta_completions_per_sec",
        "mm1n_ratio",
        "mm1n_ratio_same_sampler",
    ] {
        assert!(field(&text, key) > 0.0, "{key} in:\n{text}");
    }
    assert!(field(&text, "cache_accesses_per_sec") > 0.0, "{text}");
    assert!(field(&text, "events_per_sec_best") >= field(&text, "events_per_sec"));
    let last = text.lines().last().unwrap_or_default();
    assert!(last.starts_with("events_per_sec: "), "{last}");
}

#[test]
fn bench_without_completions_skips_the_comparison() {
    let out = fsmeta(&["bench", "--ops", "10000", "--completions", "0", "--repeat", "1"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("mm1n"), "{text}");
}

#[test]
fn bench_refuses_runs_too_short_to_time() {
    for args in [
        &["bench", "--repeat", "0"][..],
        &["bench", "--ops", "9999"],
        &["bench", "--completions", "5"],
    ] {
        let out = fsmeta(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// An executable shell script in a fresh temporary folder, standing in for
/// the Python interpreter of `--simpy` (it ignores `-c SCRIPT N SEED`).
fn fake_python(name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let path = super::temp_dir(name).join("python");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write the fake interpreter");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.to_string_lossy().into_owned()
}

/// One short `fsmeta bench` with `--simpy python`.
fn bench_with_simpy(python: &str) -> std::process::Output {
    let args = [
        "bench",
        "--ops",
        "10000",
        "--completions",
        "20000",
        "--repeat",
        "1",
        "--simpy",
        python,
    ];
    fsmeta(&args)
}

#[test]
fn bench_divides_fsmetas_rate_by_the_simpy_scripts_rate() {
    // The fake reference claims 1,000 completions per CPU second, so the
    // ratio printed is fsmeta's rate over 1,000 (each pair's ratio is
    // fsmeta's run over the same 1,000; with one repeat, the median is it).
    let python = fake_python("bench-simpy-ratio", "echo completions_per_cpu_sec 1000.0");
    let out = bench_with_simpy(&python);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(field(&text, "mm1n_simpy_completions_per_sec"), 1000.0, "{text}");
    let fsmeta_rate = field(&text, "mm1n_fsmeta_completions_per_sec");
    let ratio = field(&text, "mm1n_simpy_ratio");
    assert!(
        (ratio - fsmeta_rate / 1000.0).abs() <= 0.06 + 1e-3 * ratio,
        "{ratio} vs {fsmeta_rate}"
    );
}

#[test]
fn bench_says_why_the_simpy_reference_failed() {
    for (name, body, says) in [
        (
            "bench-simpy-missing",
            "echo 'ModuleNotFoundError: No module named simpy' >&2; exit 1",
            "No module named simpy",
        ),
        (
            "bench-simpy-silent",
            "echo nothing useful",
            "printed no `completions_per_cpu_sec` line",
        ),
    ] {
        let python = fake_python(name, body);
        let out = bench_with_simpy(&python);
        assert_eq!(out.status.code(), Some(2), "{body}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{body}: {err}");
    }
    let out = fsmeta(&["bench", "--completions", "0", "--simpy", "python3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs --completions above 0"));
}
