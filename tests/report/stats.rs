//! Statistics against reference numbers computed independently of this
//! crate and of statrs: with mpmath (arbitrary precision; the t CDF as the
//! regularised incomplete beta function `I_{df/(df+t^2)}(df/2, 1/2)`,
//! quantiles by root finding), checked against the printed Student's t
//! table (NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2) and,
//! for Welch's test, against the worked example on Wikipedia ("Welch's
//! t-test", example 1: t = 2.46, df = 24.9, p = 0.021).

use fsmeta::report::stats::{mean_ci, t_quantile, welch, welch_samples};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn student_t_quantiles_match_tables() {
    // (samples n, 97.5% quantile with n - 1 df): mpmath values; the table
    // gives 12.706, 4.303, 2.776, 2.262, 2.045.
    for (n, q) in [
        (2, 12.706_204_736_174_7),
        (3, 4.302_652_729_749_46),
        (5, 2.776_445_105_197_79),
        (10, 2.262_157_162_798_21),
        (30, 2.045_229_642_132_7),
    ] {
        let t = t_quantile(0.95, n);
        assert!(close(t, q, 1e-6), "n = {n}: {t} vs {q}");
    }
    assert_eq!(t_quantile(0.95, 1), 0.0);
}

#[test]
fn ci_of_a_fixed_sample() {
    // By hand: mean 18.5 / 6 = 3.08333; sd 0.2316607; half-width
    // t(5 df) * sd / sqrt(6) = 2.5705818 * 0.2316607 / 2.4494897 = 0.2431130.
    let (m, sd, half) = mean_ci(&[3.1, 2.9, 3.4, 3.0, 3.3, 2.8], 0.95);
    assert!(close(m, 3.083_333_333_333_333, 1e-12));
    assert!(close(sd, 0.231_660_671_385_254, 1e-12));
    assert!(close(half, 0.243_112_964_913_918, 1e-7), "{half}");
}

#[test]
fn welch_test_on_the_published_example() {
    let a = [
        27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4,
    ];
    let b = [
        27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4,
    ];
    let (t, df, p) = welch_samples(&a, &b).expect("defined");
    // mpmath: t = 2.455356398286, df = 24.988529290231, p = 0.021378001463.
    assert!(close(t, 2.455_356_398_286, 1e-9), "{t}");
    assert!(close(df, 24.988_529_290_231, 1e-9), "{df}");
    assert!(close(p, 0.021_378_001_463, 1e-7), "{p}");
}

#[test]
fn welch_test_by_hand() {
    // a = 1..5 (mean 3, var 2.5), b = 2, 4, .., 10 (mean 6, var 10):
    // t = 3 / sqrt(0.5 + 2) = 1.8973666; df = 2.5^2 / (0.25/4 + 4/4) =
    // 5.8823529; p (mpmath) = 0.1075311949306.
    let (t, df, p) = welch(3.0, 2.5f64.sqrt(), 5, 6.0, 10f64.sqrt(), 5).expect("defined");
    assert!(close(t, 1.897_366_596_101, 1e-9));
    assert!(close(df, 5.882_352_941_176, 1e-9));
    assert!(close(p, 0.107_531_194_930_6, 1e-7), "{p}");
    // Undefined: one sample on a side, or no spread on either.
    assert!(welch(1.0, 0.0, 1, 2.0, 1.0, 5).is_none());
    assert!(welch(1.0, 0.0, 5, 2.0, 0.0, 5).is_none());
}
