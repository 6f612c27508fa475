use super::*;
use crate::machine::lock::LockTable;
use rand::SeedableRng;
use std::sync::mpsc;

/// One thread on the ideal machine running `path`.
fn spec(path: Vec<Step>, stop: Stop) -> SimSpec {
    SimSpec {
        pricing: Pricing::ideal(1),
        slowdown_permille: vec![1000],
        rngs: vec![ChaCha8Rng::seed_from_u64(1)],
        path,
        every: Vec::new(),
        starts: Vec::new(),
        lines: LineTable::new(Vec::new(), 1),
        reported_lines: 0,
        locks: LockTable::default(),
        lock_names: Vec::new(),
        counters: Vec::new(),
        rwlocks: RwTable::default(),
        rwlock_names: Vec::new(),
        queues: Vec::new(),
        threads: 1,
        instances: Vec::new(),
        lock_arrays: Vec::new(),
        rwlock_arrays: Vec::new(),
        arrays: Vec::new(),
        stop,
    }
}

fn fixed_work(ns: f64) -> Step {
    Step::Work {
        dur: Duration::Fixed(SimTimePs::from_ns_f64(ns)),
        reads: None,
    }
}

fn time_stop(ms: f64) -> Stop {
    Stop {
        ops: None,
        time: Some(SimTimePs::from_ns_f64(ms * 1e6)),
        precision: None,
    }
}

/// Runs on another thread and fails the test (instead of hanging it)
/// if the run takes more than 20 s.
fn run_with_deadline(spec: SimSpec) -> Result<Metrics, SimError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(run(spec));
    });
    rx.recv_timeout(std::time::Duration::from_secs(20)).expect("the run hung")
}

/// Four threads on a machine where transfers cost 40 ns: exponential
/// think, a queued lock around exponential and fixed work and a write
/// of a line (a lean path).
fn lean_spec(seed: u64) -> SimSpec {
    let n = 4;
    let mut x = vec![40_000; n * n];
    for i in 0..n {
        x[i * n + i] = 0;
    }
    let mut locks = LockTable::default();
    let l = locks.add(crate::machine::lock::LockKind::Queued, 1);
    let exp = |mean: f64| Step::Work {
        dur: Duration::Exp(ExpDuration::from_mean_ns(mean).unwrap()),
        reads: None,
    };
    SimSpec {
        pricing: Pricing::from_matrix(n, x, vec![1; n * n], 1_000, 80_000),
        slowdown_permille: vec![1000, 1000, 1600, 1600],
        rngs: (0..n as u64).map(|i| ChaCha8Rng::seed_from_u64(seed * 16 + i)).collect(),
        path: vec![
            exp(900.0),
            Step::Lock(l),
            exp(50.0),
            fixed_work(7.0),
            Step::Write(0),
            Step::Unlock(l),
        ],
        every: vec![1, 1, 1, 2, 1, 1],
        starts: Vec::new(),
        lines: LineTable::new(vec!["data".into(), "lock".into()], n),
        reported_lines: 2,
        locks,
        lock_names: vec!["l".into()],
        counters: Vec::new(),
        rwlocks: RwTable::default(),
        rwlock_names: Vec::new(),
        queues: Vec::new(),
        threads: n,
        instances: Vec::new(),
        lock_arrays: Vec::new(),
        rwlock_arrays: Vec::new(),
        arrays: Vec::new(),
        stop: Stop {
            ops: Some(20_000),
            time: None,
            precision: None,
        },
    }
}

#[test]
fn lean_loop_gives_the_same_metrics_as_the_general_one() {
    let path: Vec<Op> = lean_spec(0).path.into_iter().map(|s| Op::new(s, 1)).collect();
    assert!(is_lean(&path));
    for seed in 0..4 {
        let fast = run_with(lean_spec(seed), true).unwrap();
        let general = run_with(lean_spec(seed), false).unwrap();
        assert_eq!(fast["ops"], 20_000.0);
        assert!(fast["l.contended"] > 0.0, "the lock is contended");
        assert_eq!(fast, general, "seed {seed}");
    }
}

#[test]
fn a_skipped_step_skips_the_run_of_steps_with_its_every() {
    let path: Vec<Op> = [1, 64, 64, 1, 2, 2, 64].into_iter().map(|e| Op::new(fixed_work(1.0), e)).collect();
    assert_eq!(skips(&path), vec![1, 3, 3, 4, 6, 6, 7]);
}

#[test]
fn fuzzer_reproducer_stops_with_an_error() {
    // time_ms = 1.85e10 saturates the stop time; a fixed 1e300 ns work
    // then saturated the clock too and the run never ended.
    let r = run_with_deadline(spec(vec![fixed_work(1e300)], time_stop(1.85e10)));
    assert!(matches!(r, Err(SimError::StopTimeOutOfRange)), "{r:?}");
}

#[test]
fn out_of_range_work_is_an_error() {
    for stop in [
        time_stop(1.8e10),
        Stop {
            ops: Some(10),
            time: None,
            precision: None,
        },
    ] {
        let r = run_with_deadline(spec(vec![fixed_work(1e300)], stop));
        assert!(matches!(r, Err(SimError::DurationOutOfRange { step: 0 })), "{r:?}");
    }
}

#[test]
fn clock_overflow_is_an_error_not_a_saturation() {
    // 1e15 ns = 1e18 ps per operation: the 19th passes 2^64 ps.
    let stop = Stop {
        ops: Some(100),
        time: None,
        precision: None,
    };
    let r = run_with_deadline(spec(vec![fixed_work(1e15)], stop));
    assert!(
        matches!(r, Err(SimError::TimeOverflow(t)) if t.0 == 18_000_000_000_000_000_000),
        "{r:?}"
    );
    let r = run_with_deadline(spec(vec![fixed_work(1e15)], time_stop(1.8e10)));
    assert!(matches!(r, Err(SimError::TimeOverflow(_))), "{r:?}");
    // Just inside the range, the same run stops at its limit.
    let m = run_with_deadline(spec(
        vec![fixed_work(1e15)],
        Stop {
            ops: Some(18),
            time: None,
            precision: None,
        },
    ))
    .unwrap();
    assert_eq!(m["ops"], 18.0);
}

#[test]
fn a_time_stop_with_a_free_path_is_an_error_not_a_hang() {
    let r = run_with_deadline(spec(vec![fixed_work(0.0)], time_stop(1.0)));
    assert!(matches!(r, Err(SimError::NoProgress { ops: NO_PROGRESS_OPS, .. })), "{r:?}");
    // With an operation limit the same path ends normally.
    let m = run_with_deadline(spec(
        vec![fixed_work(0.0)],
        Stop {
            ops: Some(1000),
            time: None,
            precision: None,
        },
    ))
    .unwrap();
    assert_eq!(m["ops"], 1000.0);
}

#[test]
fn study_with_the_reproducer_fails_quickly() {
    let text = r#"
[scenario]
name = "hang"
time_ms = 1.85e10
replications = 1
[workload]
kind = "path"
threads = 1
[[path]]
work = { dist = "fixed", mean_ns = 1e300 }
"#;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let opts = crate::scenario::LoadOptions::default();
        // Either the scenario layer refuses the stop time or the run does.
        let failed = match crate::Study::from_text(std::path::Path::new("hang.toml"), text, &opts) {
            Err(_) => true,
            Ok(study) => study.run(1, &|| {}).is_err(),
        };
        let _ = tx.send(failed);
    });
    let failed = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("the study hung");
    assert!(failed, "the study ran to completion");
}
