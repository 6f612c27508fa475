//! The machine model in whole runs: saturation of one hot line, and
//! determinism with the machine model on.

use fsmeta::scenario::{LoadOptions, load_str};
use std::path::Path;

fn run(text: &str) -> Vec<fsmeta::runner::RunResult> {
    let s = load_str(&super::root().join("scenarios/x.toml"), text, &LoadOptions::default()).expect("loads");
    let plan = fsmeta::plan::plan(&s);
    fsmeta::runner::run_all(&s, &plan, 2, &|| {}).expect("runs")
}

#[test]
fn hot_atomic_saturates_at_one_over_transfer_time() {
    // 32 threads on one socket of the scaling profile (51 ns transfers,
    // atomic_ns 5.7 ns on a held line); each operation is one atomic on
    // one line and nothing else, so the line is always busy: throughput
    // must be 1 / (transfer) within 5 %.
    let text = r#"
[scenario]
name = "sat"
ops = 200000
[machine]
profile = "machines/scaling-1s.toml"
[workload]
kind = "path"
threads = 32
[lines.hot]
[[path]]
atomic = "hot"
"#;
    let r = run(text);
    let x = r[0].metrics["ops_per_sec"];
    let expect = 1.0 / 51e-9;
    assert!((x / expect - 1.0).abs() < 0.05, "throughput {x}, expected {expect}");
    assert!(r[0].metrics["hot.utilisation"] > 0.95);
}

#[test]
fn machine_model_runs_are_deterministic_for_any_jobs() {
    let path = super::root().join("scenarios/counter-scaling.toml");
    let opts = LoadOptions {
        quick: true,
        seed: Some(5),
        ..LoadOptions::default()
    };
    let s = fsmeta::scenario::load(&path, &opts).expect("loads");
    let plan = fsmeta::plan::plan(&s);
    let a = fsmeta::runner::run_all(&s, &plan, 1, &|| {}).expect("runs");
    let b = fsmeta::runner::run_all(&s, &plan, 2, &|| {}).expect("runs");
    let csv = |r: &[fsmeta::runner::RunResult]| fsmeta::report::csv::runs_csv(&s, r).expect("serializes");
    assert_eq!(csv(&a), csv(&b));
    let _ = Path::new(".");
}
