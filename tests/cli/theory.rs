//! M/M/1//N (finite-source single server) against its exact formulas.

use fsmeta::scenario::{LoadOptions, load};

/// Exact throughput of M/M/1//N with mean service `s` and think `z`:
/// X = (1 - p0) / s, p0 = 1 / sum_k N!/(N-k)! (s/z)^k.
pub fn exact_throughput(n: u32, s: f64, z: f64) -> f64 {
    let rho = s / z;
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..=n {
        term *= f64::from(n - k + 1) * rho;
        sum += term;
    }
    (1.0 - 1.0 / sum) / s
}

#[test]
fn mm1n_throughput_and_response_time_match_exact_formulas_within_99ci() {
    let path = super::root().join("scenarios/queue-theory.toml");
    let s = load(
        &path,
        &LoadOptions {
            quick: true,
            seed: Some(7),
            ..LoadOptions::default()
        },
    )
    .expect("scenario loads");
    let plan = fsmeta::plan::plan(&s);
    let results = fsmeta::runner::run_all(&s, &plan, 2, &|| {}).expect("runs");
    let rows = fsmeta::report::stats::summarise(&s, &results);
    let (svc, think) = (100e-9, 1000e-9);
    for (pi, point) in s.points.iter().enumerate() {
        let n = point.values[0].as_integer().expect("threads") as u32;
        let xs: Vec<f64> = results
            .iter()
            .filter(|r| r.plan.point == pi)
            .map(|r| r.metrics["ops_per_sec"])
            .collect();
        let (mean, _sd, half) = fsmeta::report::stats::mean_ci(&xs, 0.99);
        let exact = exact_throughput(n, svc, think);
        // The 99 % CI of the replications' mean, widened by the histogram-free
        // start-up transient (all threads start thinking at t = 0): 0.5 %.
        let tol = half + 0.005 * exact;
        assert!(
            (mean - exact).abs() <= tol,
            "N={n}: simulated {mean:.0}/s, exact {exact:.0}/s, 99% CI ±{half:.0}"
        );
        // Response time R = N/X - Z: lock wait + hold, from the lock metrics.
        let wait = fsmeta::report::stats::find(&rows, pi, 0, "server.wait_mean_ns").expect("wait").mean;
        let r_exact = f64::from(n) / exact - think;
        let r_sim = wait * 1e-9 + svc;
        assert!(
            (r_sim - r_exact).abs() <= 0.03 * r_exact + 2e-9,
            "N={n}: R simulated {r_sim:e}, exact {r_exact:e}"
        );
        // Little's law: N = X * (mean operation latency), every thread is
        // always inside an operation.
        let lat = fsmeta::report::stats::find(&rows, pi, 0, "latency_mean_ns").expect("latency").mean * 1e-9;
        let little = mean * lat;
        assert!((little - f64::from(n)).abs() <= 0.02 * f64::from(n), "N={n}: X*T = {little}");
    }
}

#[test]
fn exact_formula_limits_are_right() {
    assert!((exact_throughput(1, 1.0, 9.0) - 0.1).abs() < 1e-12);
    assert!((exact_throughput(64, 1.0, 9.0) - 1.0).abs() < 1e-9);
}
