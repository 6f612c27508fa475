//! Same seed, same bytes; any --jobs; different seeds differ.

use super::{fsmeta, temp_dir};
use std::collections::BTreeSet;

fn run_csvs(seed: u64, jobs: usize, tag: &str) -> (String, String) {
    let out = temp_dir(&format!("det-{tag}"));
    let o = fsmeta(&[
        "run",
        "scenarios/queue-theory.toml",
        "--quick",
        "--silent",
        "--seed",
        &seed.to_string(),
        "--jobs",
        &jobs.to_string(),
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = out.join("queue-theory");
    let read = |n: &str| std::fs::read_to_string(dir.join(n)).expect("output exists");
    (read("runs.csv"), read("summary.csv"))
}

#[test]
fn jobs_1_and_2_give_identical_bytes() {
    let a = run_csvs(3, 1, "j1");
    let b = run_csvs(3, 2, "j2");
    assert_eq!(a, b);
}

#[test]
fn seeds_0_0_1_1_give_exactly_two_outputs() {
    let outs: BTreeSet<(String, String)> = [0u64, 0, 1, 1]
        .iter()
        .enumerate()
        .map(|(i, &s)| run_csvs(s, 2, &format!("s{i}")))
        .collect();
    assert_eq!(outs.len(), 2);
}
