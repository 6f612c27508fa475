//! The printed report: per point, a before/after table of the key metrics
//! for every variant, the bottleneck of each path run, and the
//! expectation checks. The same text is saved as `report.txt`.

use super::expect::{Check, point_label};
use super::stats::{Summary, find};
use crate::scenario::Scenario;
use std::fmt::Write;

/// Formats a number for people: 3 significant digits with k/M suffixes.
pub fn human(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    let (v, suffix) = if a >= 1e9 {
        (x / 1e9, "G")
    } else if a >= 1e6 {
        (x / 1e6, "M")
    } else if a >= 1e4 {
        (x / 1e3, "k")
    } else {
        (x, "")
    };
    let digits = if v.abs() >= 100.0 || v.fract() == 0.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{suffix}")
}

/// A signed human number (`+1.2k`, `-3.40`).
fn signed(x: f64) -> String {
    if x >= 0.0 { format!("+{}", human(x)) } else { human(x) }
}

/// The resource with the highest utilisation in a summary, if any. A
/// reader-writer lock counts by the share of time a writer held it
/// (`NAME.write_utilisation`): readers do not exclude each other, so time
/// held only by readers limits nobody (its count word is a line of its
/// own, `NAME.word`, and counts like any line). A lock with an instance
/// per AG or per directory (`NAME.instances`) counts only when its
/// busiest instance made someone wait (`NAME.contended`): an instance
/// only its own thread takes limits nobody, however long it is held.
fn bottleneck(rows: &[Summary], point: usize, variant: usize) -> Option<(String, f64)> {
    let here = |r: &&Summary| r.point == point && r.variant == variant;
    let metric = |name: &str, what: &str| {
        rows.iter()
            .filter(here)
            .find(|r| r.metric.strip_suffix(what).and_then(|m| m.strip_suffix('.')) == Some(name))
            .map(|r| r.mean)
    };
    rows.iter()
        .filter(here)
        .filter_map(|r| {
            let name = r.metric.strip_suffix(".utilisation")?;
            if metric(name, "instances").is_some() && metric(name, "contended").unwrap_or(0.0) == 0.0 {
                return None;
            }
            Some((name.to_string(), metric(name, "write_utilisation").unwrap_or(r.mean)))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The unit of `metric` as the workload declares it (empty if unknown).
pub fn unit_of(s: &Scenario, metric: &str) -> String {
    s.first()
        .and_then(|p| p.metrics().into_iter().find(|m| m.name == metric))
        .map_or(String::new(), |m| m.unit.to_string())
}

/// The whole report.
pub fn report(s: &Scenario, rows: &[Summary], checks: &[Check]) -> String {
    let mut out = String::new();
    let d = &s.doc.scenario;
    let _ = writeln!(out, "fsmeta: {} (seed {}, {} replication(s))", d.name, d.seed, d.replications);
    if d.replications > 1 {
        let _ = writeln!(
            out,
            "  ± is the 95% confidence half-width of the mean over replications (Student's t); variants share random numbers, so \"paired diff\" is the CI of the per-replication difference from the first variant"
        );
    }
    if !d.about.is_empty() {
        let _ = writeln!(out, "  {}", d.about);
    }
    let metrics = s.first().map_or(&[][..], |p| p.key_metrics());
    for point in 0..s.points.len() {
        let label = point_label(s, point);
        let _ = writeln!(out, "\n== {} ==", if label.is_empty() { "result".to_string() } else { label });
        let _ = write!(out, "{:<16}", "variant");
        for m in metrics {
            let _ = write!(out, " {:>24}", m);
        }
        let _ = writeln!(out, " {:>14} {:>28}", "vs first", "paired diff [95% CI]");
        for (vi, v) in s.variants.iter().enumerate() {
            let _ = write!(out, "{:<16}", v.name);
            for m in metrics {
                let cell = find(rows, point, vi, m).map_or("-".into(), |r| {
                    let half = (r.ci95_hi - r.mean).abs();
                    if r.n > 1 {
                        format!("{} ±{}", human(r.mean), human(half))
                    } else {
                        human(r.mean)
                    }
                });
                let _ = write!(out, " {cell:>24}");
            }
            let first = find(rows, point, 0, metrics[0]).map(|r| r.mean);
            let this = find(rows, point, vi, metrics[0]).map(|r| r.mean);
            let ratio = match (first, this) {
                (Some(a), Some(b)) if vi > 0 => {
                    let ci = find(rows, point, vi, metrics[0])
                        .and_then(|r| r.paired.filter(|_| r.n > 1))
                        .map(|p| (p.diff_lo, p.diff_hi));
                    super::speedup::words_ci(a, b, &unit_of(s, metrics[0]), ci)
                }
                _ => "-".into(),
            };
            let diff = match find(rows, point, vi, metrics[0]).and_then(|r| r.paired.map(|p| (p, r.n))) {
                Some((p, n)) if n > 1 => format!("{} [{}, {}]", signed(p.diff_mean), signed(p.diff_lo), signed(p.diff_hi)),
                // One replication: a difference, but no interval to put on it.
                Some((p, _)) => format!("{} [n/a, n=1]", signed(p.diff_mean)),
                None => "-".into(),
            };
            let _ = writeln!(out, " {ratio:>14} {diff:>28}");
        }
        for (vi, v) in s.variants.iter().enumerate() {
            if let Some((name, u)) = bottleneck(rows, point, vi) {
                if u < 0.05 {
                    let _ = writeln!(
                        out,
                        "  bottleneck [{}]: none (busiest shared resource {name} at {:.1}% utilisation; the CPUs bound the rate)",
                        v.name,
                        u * 100.0
                    );
                    continue;
                }
                let wait = find(rows, point, vi, &format!("{name}.wait_mean_ns")).map_or(0.0, |r| r.mean);
                let _ = writeln!(
                    out,
                    "  bottleneck [{}]: {name} (utilisation {:.1}%, mean wait {} ns)",
                    v.name,
                    u * 100.0,
                    human(wait)
                );
            }
        }
    }
    let warnings = super::warnings::warnings(s, rows);
    if !warnings.is_empty() {
        let _ = writeln!(out, "\nwarnings:");
        for w in &warnings {
            let _ = writeln!(out, "  warning: {w}");
        }
    }
    if !checks.is_empty() {
        let _ = writeln!(out, "\nexpectations:");
        for c in checks {
            let at = if c.at.is_empty() { String::new() } else { format!(" at {}", c.at) };
            // A metric only another host's profile reports has no value here.
            let actual = if c.actual.is_nan() {
                "not reported".to_string()
            } else {
                fmt_exact(c.actual)
            };
            let _ = writeln!(
                out,
                "  [{}] {}{}: {} in [{}, {}]",
                c.verdict(),
                c.what,
                at,
                actual,
                fmt_exact(c.lo),
                fmt_exact(c.hi)
            );
            if let Some(why) = &c.not_applicable {
                let _ = writeln!(out, "        not checked: {why}");
            } else if let Some(why) = &c.known_gap {
                let _ = writeln!(out, "        known gap: {why}");
            }
        }
        let na = checks.iter().filter(|c| c.not_applicable.is_some()).count();
        let failed = checks.iter().filter(|c| c.fails()).count();
        let gaps = checks
            .iter()
            .filter(|c| c.known_gap.is_some() && c.not_applicable.is_none())
            .count();
        let passed = checks.len() - failed - gaps - na;
        let other = if na > 0 {
            format!(", {na} not checked (another host's figures)")
        } else {
            String::new()
        };
        let _ = writeln!(out, "{passed} passed, {failed} failed, {gaps} known gap(s){other}");
    }
    out
}

fn fmt_exact(x: f64) -> String {
    if x.abs() >= 1000.0 { format!("{x:.0}") } else { format!("{x:.4}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(metric: &str, mean: f64) -> Summary {
        Summary {
            point: 0,
            variant: 0,
            metric: metric.to_string(),
            mean,
            stddev: 0.0,
            ci95_lo: mean,
            ci95_hi: mean,
            n: 1,
            paired: None,
        }
    }

    #[test]
    fn a_read_held_rwsem_is_not_the_bottleneck_but_a_written_one_is() {
        // Readers held the rwsem half the time, a writer never: the
        // busier line is the bottleneck.
        let mut rows = vec![
            row("sem.utilisation", 0.5),
            row("sem.write_utilisation", 0.0),
            row("line.utilisation", 0.1),
        ];
        assert_eq!(bottleneck(&rows, 0, 0), Some(("line".to_string(), 0.1)));
        // A writer held it 30% of the time: now it limits.
        rows[1].mean = 0.3;
        assert_eq!(bottleneck(&rows, 0, 0), Some(("sem".to_string(), 0.3)));
        // A spinlock counts by its whole hold time.
        rows.push(row("spin.utilisation", 0.4));
        assert_eq!(bottleneck(&rows, 0, 0), Some(("spin".to_string(), 0.4)));
        // A per-directory lock held 90% of the time by its own thread
        // only (no waits) limits nobody; once its busiest instance made
        // someone wait, it counts.
        rows.push(row("dir.utilisation", 0.9));
        rows.push(row("dir.instances", 16.0));
        rows.push(row("dir.contended", 0.0));
        assert_eq!(bottleneck(&rows, 0, 0), Some(("spin".to_string(), 0.4)));
        rows.last_mut().expect("row").mean = 3.0;
        assert_eq!(bottleneck(&rows, 0, 0), Some(("dir".to_string(), 0.9)));
    }
}
