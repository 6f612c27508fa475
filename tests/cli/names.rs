//! Names that become file names (issue 33): a scenario's, a plot's and a
//! variant's name are checked as file names by `check`, located, before
//! any run; they used to fail at write time, unlocated, after the
//! computation.

use super::{fsmeta, temp_dir, write};

const BASE: &str = r#"[scenario]
name = "named"
ops = 100

[workload]
kind = "path"
threads = 1

[[path]]
work = { dist = "exp", mean_ns = 100.0 }

[sweep]
"workload.threads" = [1, 2]

[[plot]]
name = "rate"
x = "workload.threads"
y = "ops_per_sec"

[[variant]]
name = "a"
[[variant]]
name = "b"
"#;

/// `(what is replaced, by what, what the message says)`.
fn cases() -> Vec<(&'static str, String, &'static str)> {
    vec![
        ("name = \"named\"", format!("name = \"{}\"", "s".repeat(256)), "256 bytes"),
        ("name = \"rate\"", "name = \".\"".into(), "start with '.'"),
        ("name = \"rate\"", "name = \"\"".into(), "non-empty"),
        ("name = \"rate\"", "name = \"a\\u0000b\"".into(), "\\u{0}"),
        ("name = \"rate\"", "name = \"a/b\"".into(), "'/'"),
        ("name = \"rate\"", format!("name = \"{}\"", "p".repeat(250)), "250 bytes"),
        ("name = \"rate\"", "name = \"a\\u001b[2Jb\"".into(), "\\u{1b}"),
        ("name = \"a\"", format!("name = \"{}\"", "v".repeat(250)), "250 bytes"),
        ("name = \"a\"", "name = \"x/y\"".into(), "'/'"),
        ("name = \"a\"", "name = \"..\"".into(), "start with '.'"),
        ("name = \"a\"", "name = \"\\t\"".into(), "\\u{9}"),
    ]
}

#[test]
fn names_that_cannot_be_file_names_are_refused_by_check_located_issue33() {
    let dir = temp_dir("names");
    for (i, (from, to, says)) in cases().into_iter().enumerate() {
        let text = BASE.replacen(from, &to, 1);
        let line = text.lines().position(|l| l == to).expect("replaced") + 1;
        let f = write(&dir, &format!("n{i}.toml"), &text);
        for cmd in ["check", "run"] {
            let out = dir.join(format!("out{i}"));
            let o = fsmeta(&[cmd, f.to_str().expect("utf8"), "--out", out.to_str().expect("utf8")][..if cmd == "check" { 2 } else { 4 }]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{cmd} {to}: {err}");
            assert!(
                err.contains(&format!("n{i}.toml:{line}:")) && err.contains(says),
                "{cmd} {to}: {err}"
            );
            assert!(!err.contains('\u{1b}') && !err.contains('\0'), "raw control characters: {err:?}");
            assert!(err.len() < 1000, "{err}");
            assert!(!out.exists(), "{cmd} {to}: nothing may be written");
        }
    }
}
