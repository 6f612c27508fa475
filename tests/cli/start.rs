//! `[start] threads`: threads whose work is fixed keep their phase for the
//! whole run, so where they start decides how often their shared lines
//! move. Started together, two such threads run in lockstep and each of
//! an operation's three locked operations on a shared line finds the
//! other thread's write; staggered (the default for fixed work) the line
//! moves once per operation. Random work forgets its start: the default
//! there is to start together, as before.

use fsmeta::scenario::{LoadOptions, load_str};
use std::collections::BTreeMap;

fn run(text: &str) -> BTreeMap<String, f64> {
    let s = load_str(&super::root().join("scenarios/x.toml"), text, &LoadOptions::default()).expect("loads");
    let plan = fsmeta::plan::plan(&s);
    let r = fsmeta::runner::run_all(&s, &plan, 1, &|| {}).expect("runs");
    r[0].metrics.iter().map(|(k, v)| (k.clone(), *v)).collect()
}

/// Two threads on two cores of host A (transfers priced), each operation
/// three atomics on one shared line then `work` of CPU, with `start`.
fn scenario(work: &str, start: &str) -> String {
    format!(
        "[scenario]\nname = \"start\"\nops = 20000\nreplications = 1\n[machine]\nprofile = \"machines/host-a.toml\"\n[workload]\nkind = \"path\"\nthreads = 2\n{start}\n[lines]\ns = {{}}\n[[path]]\natomic = \"s\"\n[[path]]\natomic = \"s\"\n[[path]]\natomic = \"s\"\n[[path]]\nwork = {work}\n"
    )
}

const FIXED: &str = "{ dist = \"fixed\", mean_ns = 2000.0 }";
const EXP: &str = "{ dist = \"exp\", mean_ns = 2000.0 }";

#[test]
fn fixed_work_started_together_moves_the_line_at_every_access_and_staggered_once() {
    let together = run(&scenario(FIXED, "[start]\nthreads = \"together\""));
    let staggered = run(&scenario(FIXED, "[start]\nthreads = \"staggered\""));
    let default = run(&scenario(FIXED, ""));
    let per_op = |m: &BTreeMap<String, f64>| m["s.transfers"] / m["ops"];
    assert!(per_op(&together) > 2.5, "lockstep: {}", per_op(&together));
    assert!(per_op(&staggered) < 1.05, "staggered: {}", per_op(&staggered));
    assert!(per_op(&staggered) > 0.95, "the line still moves once: {}", per_op(&staggered));
    assert!(staggered["ops_per_sec"] > together["ops_per_sec"]);
    assert_eq!(default, staggered, "fixed work staggers by default");
}

#[test]
fn random_work_starts_together_by_default() {
    let together = run(&scenario(EXP, "[start]\nthreads = \"together\""));
    let default = run(&scenario(EXP, ""));
    assert_eq!(default, together);
    let staggered = run(&scenario(EXP, "[start]\nthreads = \"staggered\""));
    assert_ne!(staggered, together, "the key changes the run");
}
