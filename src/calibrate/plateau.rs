//! Plateaus of a latency curve (ns per load against working-set size):
//! the flat stretches where the working set fits one cache level, and the
//! knee at the end of each, which estimates that level's size without
//! asking sysfs.
//!
//! Rule: walking from the smallest size, a plateau goes on while each step
//! rises by at most [`STEP`] (relative) and the latency stays within
//! [`SPAN`] times the plateau's lowest point; a steeper step ends it. The
//! sizes that follow are a transition until the curve is flat again (a
//! step within [`STEP`]), where the next plateau starts. A stretch of
//! fewer than [`MIN_POINTS`] sizes is a transition, not a plateau: two
//! sizes that happen to agree inside a smooth rise (noise does that) would
//! otherwise pass for a cache level.

/// Largest relative rise between neighbouring sizes inside a plateau.
pub const STEP: f64 = 0.2;
/// Largest ratio of a plateau's highest point to its lowest.
pub const SPAN: f64 = 1.6;
/// Fewest sizes on a plateau (an octave and a half of the chase's grid).
pub const MIN_POINTS: usize = 3;

/// One flat stretch of the curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    /// Smallest working set on it, bytes.
    pub first_bytes: usize,
    /// Largest working set on it (the knee), bytes.
    pub knee_bytes: usize,
    /// Median of its points' latencies, ns.
    pub ns: f64,
    /// Points on it.
    pub points: usize,
}

/// The plateaus of `curve` (`(bytes, ns)`, ascending in bytes), smallest
/// sizes first.
pub fn plateaus(curve: &[(usize, f64)]) -> Vec<Plateau> {
    let flat = |a: f64, b: f64| b <= a * (1.0 + STEP);
    let mut out = Vec::new();
    let mut i = 0;
    while i < curve.len() {
        let mut j = i;
        let mut low = curve[i].1;
        while j + 1 < curve.len() && flat(curve[j].1, curve[j + 1].1) && curve[j + 1].1 <= low * SPAN {
            j += 1;
            low = low.min(curve[j].1);
        }
        if j + 1 - i >= MIN_POINTS {
            let mut ns: Vec<f64> = curve[i..=j].iter().map(|p| p.1).collect();
            ns.sort_by(f64::total_cmp);
            let mid = ns.len() / 2;
            let median = if ns.len() % 2 == 1 {
                ns[mid]
            } else {
                (ns[mid - 1] + ns[mid]) / 2.0
            };
            out.push(Plateau {
                first_bytes: curve[i].0,
                knee_bytes: curve[j].0,
                ns: median,
                points: j - i + 1,
            });
            i = j + 1;
        } else {
            // A transition: move on until the curve flattens.
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_points_are_not_a_plateau() {
        assert!(plateaus(&[]).is_empty());
        assert!(plateaus(&[(4096, 1.0)]).is_empty());
        assert!(plateaus(&[(4096, 1.0), (8192, 1.1)]).is_empty());
        let p = plateaus(&[(4096, 1.0), (8192, 1.1), (16384, 1.2), (32768, 9.0)]);
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].first_bytes, p[0].knee_bytes, p[0].points, p[0].ns), (4096, 16384, 3, 1.1));
    }
}
