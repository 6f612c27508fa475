//! The text outputs of the golden scenario equal the committed files byte
//! for byte. After an intended change, regenerate them with
//! `FSMETA_BLESS=1 cargo test --release --test report` and review the diff.

use super::{fsmeta, root, run_golden, temp_dir};

fn same_as_committed(produced: &str, name: &str) {
    let path = root().join("tests/report/golden").join(name);
    if std::env::var_os("FSMETA_BLESS").is_some() {
        std::fs::write(&path, produced).expect("bless");
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        produced == expected,
        "{name} differs from {}:\n--- produced\n{produced}\n--- expected\n{expected}",
        path.display()
    );
}

#[test]
fn report_and_patch_text_match_golden_files() {
    let dir = run_golden(&temp_dir("golden"));
    for name in ["report.txt", "patch.txt"] {
        let text = std::fs::read_to_string(dir.join(name)).expect(name);
        same_as_committed(&text, name);
    }
}

/// The fsmark workload's text reports (the insert function's summary,
/// log2 histogram and fs_mark loop table, per variant) and the report of a
/// small fixed run of it.
#[test]
fn fsmark_text_reports_match_golden_files() {
    let out = temp_dir("fsmark-golden");
    let o = fsmeta(&[
        "run",
        "tests/report/golden/fsmark.toml",
        "--out",
        out.to_str().expect("utf-8"),
        "--silent",
        "--jobs",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for name in ["report.txt", "rbtree.txt", "xarray.txt"] {
        let text = std::fs::read_to_string(out.join("fsmark-golden").join(name)).expect(name);
        same_as_committed(&text, &format!("fsmark-{name}"));
    }
}

#[test]
fn patch_lines_fit_a_patch_description() {
    let dir = run_golden(&temp_dir("width"));
    let text = std::fs::read_to_string(dir.join("patch.txt")).expect("patch.txt");
    assert!(text.contains("Before") && text.contains("After"));
    for line in text.lines() {
        assert!(line.chars().count() <= 72, "{} columns: {line}", line.chars().count());
    }
}

#[test]
fn run_format_patch_prints_the_patch_tables() {
    let out = temp_dir("format");
    let o = fsmeta(&[
        "run",
        super::GOLDEN,
        "--out",
        out.to_str().expect("utf-8"),
        "--format",
        "patch",
        "--jobs",
        "2",
    ]);
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    let patch = std::fs::read_to_string(out.join("golden/patch.txt")).expect("patch.txt");
    assert!(stdout.starts_with(&patch), "{stdout}");
}

#[test]
fn speed_ups_are_in_words() {
    let dir = run_golden(&temp_dir("words"));
    let report = std::fs::read_to_string(dir.join("report.txt")).expect("report.txt");
    assert!(report.contains("x faster") || report.contains("x slower"), "{report}");
}

#[test]
fn compare_variants_pairs_the_same_runs() {
    let o = fsmeta(&["compare", super::GOLDEN, "--variants", "ticket,ticket", "--jobs", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    // A variant against itself with the same random numbers: every paired
    // difference is exactly zero.
    assert!(text.contains("diff +0 [+0, +0]"), "{text}");
    assert!(text.contains("same"));
}

#[test]
fn compare_two_files_with_common_random_numbers() {
    let o = fsmeta(&["compare", super::GOLDEN, super::GOLDEN, "--jobs", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("diff +0 [+0, +0]"), "{text}");
    assert!(!text.contains("faster") && !text.contains("slower"), "{text}");
}

#[test]
fn compare_rejects_a_missing_variant() {
    let o = fsmeta(&["compare", super::GOLDEN, "--variants", "ticket,mcs"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no variant `mcs`"));
}

#[test]
fn validate_lists_published_figures() {
    let out = temp_dir("validate");
    let doc = out.join("validation.md");
    let o = fsmeta(&[
        "validate",
        super::GOLDEN,
        "--quick",
        "--doc",
        doc.to_str().expect("utf-8"),
        "--jobs",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&doc).expect("validation.md");
    // The golden scenario's one ratio expectation is a row; it is predicted.
    assert!(
        text.contains("| - | golden | ops_per_sec queued/ticket | mean_ns=500.0 threads=16 |"),
        "{text}"
    );
    assert!(text.contains("| predicted | pass |"), "{text}");
    assert!(text.contains("Quick scale"));
}
