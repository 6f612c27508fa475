//! The README names everything a user meets: every subcommand (asked of
//! the binary's own `--help`, so a new one is caught), every shipped
//! scenario file, every output file a run writes, every test binary, and
//! a minimal example (`docs/examples/KIND.toml`) of every workload kind.

use super::{fsmeta, root, temp_dir, write};
use std::collections::BTreeSet;

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md")
}

/// The subcommands `fsmeta --help` lists (clap's own list), `help` aside.
fn subcommands() -> Vec<String> {
    let o = fsmeta(&["--help"]);
    let help = String::from_utf8_lossy(&o.stdout).to_string();
    let section = help.split_once("Commands:").map(|(_, rest)| rest).expect("a Commands: section");
    section
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_subcommand_is_in_the_readme() {
    let (text, commands) = (readme(), subcommands());
    assert!(commands.len() >= 8, "{commands:?}");
    let missing: Vec<&String> = commands.iter().filter(|c| !text.contains(&format!("fsmeta {c} "))).collect();
    assert!(missing.is_empty(), "README.md does not show `fsmeta NAME ...` for {missing:?}");
}

#[test]
fn every_shipped_scenario_file_is_in_the_readme() {
    let text = readme();
    let mut missing = Vec::new();
    let mut n = 0;
    for entry in std::fs::read_dir(root().join("scenarios")).expect("scenarios/") {
        let p = entry.expect("entry").path();
        if p.extension().is_some_and(|e| e == "toml") {
            n += 1;
            let name = p.file_name().and_then(|f| f.to_str()).expect("utf8").to_string();
            if !text.contains(&format!("`{name}`")) {
                missing.push(name);
            }
        }
    }
    assert!(n >= 17, "{n}");
    assert!(missing.is_empty(), "README.md's scenario table lacks {missing:?}");
}

#[test]
fn every_test_binary_is_in_the_readme() {
    let text = readme();
    let mut binaries = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("tests")).expect("tests/") {
        let p = entry.expect("entry").path();
        if p.join("main.rs").is_file() {
            binaries.insert(p.file_name().and_then(|f| f.to_str()).expect("utf8").to_string());
        }
    }
    let line = text
        .lines()
        .find(|l| l.contains("one test binary per subsystem"))
        .expect("the README names the test binaries");
    let missing: Vec<&String> = binaries.iter().filter(|b| !line.contains(&format!("`{b}`"))).collect();
    assert!(missing.is_empty(), "README.md's test binary list lacks {missing:?}: {line}");
    assert!(
        line.contains(&format!("{} binaries", binaries.len())),
        "the README gives the count, {}: {line}",
        binaries.len()
    );
}

#[test]
fn every_workload_kind_has_a_minimal_example() {
    let text = readme();
    for w in fsmeta::workload::registry::REGISTRY {
        let file = root().join("docs/examples").join(format!("{}.toml", w.kind()));
        let study = fsmeta::Study::load(&file, &fsmeta::LoadOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(study.scenario.workload.kind(), w.kind());
        assert!(
            text.contains(&format!("docs/examples/{}.toml", w.kind())),
            "README.md does not point at the {} example",
            w.kind()
        );
    }
}

#[test]
fn every_output_file_is_in_the_readme() {
    let text = readme();
    let dir = temp_dir("readme-outputs");
    let plotted = format!(
        "{}\n[sweep]\n\"workload.threads\" = [1, 2]\n\n[[plot]]\nname = \"rate\"\nx = \"workload.threads\"\ny = \"ops_per_sec\"\n",
        std::fs::read_to_string(root().join("docs/examples/path.toml"))
            .expect("example")
            .replace("threads = 2\n", "")
    );
    let files = [write(&dir, "plotted.toml", &plotted), root().join("docs/examples/fsmark.toml")];
    let out = dir.join("out");
    let mut seen = BTreeSet::new();
    for f in &files {
        let o = fsmeta(&["run", "--silent", "--out", out.to_str().expect("utf8"), f.to_str().expect("utf8")]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
    for set in std::fs::read_dir(&out).expect("out") {
        let set = set.expect("entry").path();
        if set.file_name().and_then(|f| f.to_str()).is_some_and(|f| f.starts_with('.')) {
            continue;
        }
        for f in std::fs::read_dir(&set).expect("set") {
            seen.insert(f.expect("file").file_name().to_str().expect("utf8").to_string());
        }
    }
    for required in ["rate.svg", "rate.png", "base.txt", "summary.csv"] {
        assert!(seen.contains(required), "{required} not written: {seen:?}");
    }
    // A plot is named by its [[plot]] name; a text output by its variant.
    let shown = |f: &str| match f {
        "rate.svg" | "rate.png" => text.contains("`.svg`") && text.contains("`.png`"),
        "base.txt" => text.contains("`VARIANT.txt`"),
        _ => text.contains(&format!("`{f}`")),
    };
    let missing: Vec<&String> = seen.iter().filter(|f| !shown(f)).collect();
    assert!(missing.is_empty(), "README.md's Outputs do not name {missing:?}");
}

#[test]
fn keys_help_names_every_workload_kind() {
    let o = fsmeta(&["keys", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout).to_string();
    for w in fsmeta::workload::registry::REGISTRY {
        assert!(help.contains(w.kind()), "`fsmeta keys --help` does not name {}: {help}", w.kind());
    }
}
