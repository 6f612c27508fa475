//! `fsmeta run --set PATH=VALUE`: a value given on the command line is
//! used as if written in the file, and every mistake gets a clear error
//! naming `--set PATH`, exit code 2, nothing written.

use super::{fsmeta, temp_dir, write};

const BASE: &str = r#"[scenario]
name = "set"
ops = 2000

[workload]
kind = "path"
threads = 2

[locks.l]
kind = "queued"

[[path]]
work = { dist = "exp", mean_ns = 100.0 }
[[path]]
lock = "l"
[[path]]
work = { dist = "exp", mean_ns = 50.0 }
[[path]]
unlock = "l"

[[variant]]
name = "a"
[[variant]]
name = "b"
workload.threads = 1

[sweep]
"locks.l.kind" = ["queued", "ticket"]
"#;

fn run(dir: &std::path::Path, sets: &[&str]) -> std::process::Output {
    let f = write(dir, "s.toml", BASE);
    let out = dir.join("out");
    let mut args = vec!["run", f.to_str().expect("utf8"), "--out", out.to_str().expect("utf8"), "--silent"];
    for s in sets {
        args.extend(["--set", s]);
    }
    fsmeta(&args)
}

#[test]
fn a_set_value_is_used_as_if_written_in_the_file() {
    let dir = temp_dir("set-used");
    let o = run(&dir, &["path[0].work.mean_ns=400.0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let resolved = std::fs::read_to_string(dir.join("out/set/scenario.resolved.toml")).expect("resolved");
    assert!(resolved.contains("mean_ns = 400.0"), "{resolved}");
    let set_runs = std::fs::read_to_string(dir.join("out/set/runs.csv")).expect("runs");
    // The same scenario without --set gives other runs: the value changed them.
    let plain = temp_dir("set-plain");
    assert!(run(&plain, &[]).status.success());
    let plain_runs = std::fs::read_to_string(plain.join("out/set/runs.csv")).expect("runs");
    assert_ne!(set_runs, plain_runs);
}

#[test]
fn mistakes_in_a_set_are_errors_that_name_it() {
    let cases = [
        ("path[0].work.mean_nz=400", "--set path[0].work.mean_nz", "mean_ns"),
        ("path[0].work.mean_ns=\"x\"", "--set path[0].work.mean_ns", ""),
        ("machine.profile=nosuch.toml", "--set machine.profile", "nosuch.toml"),
        ("locks.l.kind=ticket", "--set locks.l.kind", "the sweep sets"),
        ("workload.threads=4", "--set workload.threads", "variant `b` sets it"),
        ("sweep.x=1", "--set sweep.x", "write it in the scenario file"),
        ("scenario.seed=1.5", "--set scenario.seed", ""),
        ("workload.kind=fsmark", "--set workload.kind", "write it in the scenario file"),
        (
            "workload={kind=\"fsmark\"}",
            "--set workload",
            "`workload.kind` is not set from the command line",
        ),
        ("path[0].work.mean_ns=nan", "--set path[0].work.mean_ns", "finite"),
        ("path[9].work.mean_ns=1", "--set path[9].work.mean_ns", "out of range"),
    ];
    for (i, (set, names, says)) in cases.iter().enumerate() {
        let dir = temp_dir(&format!("set-bad-{i}"));
        let o = run(&dir, &[set]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{set}: {err}");
        assert!(err.contains(names), "{set}: {err}");
        assert!(err.contains(says), "{set}: {err}");
        assert!(!err.contains("panicked"), "{set}: {err}");
        assert!(!dir.join("out").exists(), "{set}: nothing may be written");
    }
    let dir = temp_dir("set-shape");
    let o = run(&dir, &["noequals"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected PATH=VALUE"));
}

#[test]
fn check_takes_the_same_sets() {
    let dir = temp_dir("set-check");
    let f = write(&dir, "s.toml", BASE);
    let file = f.to_str().expect("utf8");
    let o = fsmeta(&["check", file, "--set", "path[0].work.mean_ns=400.0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = fsmeta(&["check", file, "--set", "path[0].work.mean_nz=400.0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--set path[0].work.mean_nz"));
}

#[test]
fn compare_sets_both_sides() {
    let dir = temp_dir("set-compare");
    let f = write(&dir, "s.toml", BASE);
    let file = f.to_str().expect("utf8");
    let args = ["compare", file, "--variants", "a,b", "--quick"];
    let plain = fsmeta(&args);
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
    let set = fsmeta(&[&args[..], &["--set", "path[0].work.mean_ns=400.0"]].concat());
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    assert_ne!(plain.stdout, set.stdout, "the value reached the runs of both sides");
    let bad = fsmeta(&[&args[..], &["--set", "path[0].work.mean_nz=400.0"]].concat());
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--set path[0].work.mean_nz"));
}
