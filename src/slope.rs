//! The Theil-Sen slope (Theil 1950, Sen 1968): the median of the slopes
//! between pairs of points, robust to a few outlying points (a window
//! the task was switched out in). Every pair within a group is taken up
//! to [`MAX_PAIRS`], half a group apart beyond. The lab and the twins
//! estimate a cost per item
//! with it the same way (`phase.P.shift_ns_per_item`: the btrfs deletion
//! window's growth per item after the deleted one, [`crate::lab`]'s
//! `btrfs-delayed` and [`crate::workload::btrfs_dir`]).

/// Fewest points a cost per item is taken over, the lab's and the twins'
/// alike: a run of one-item windows on one leaf, a phase's one-item
/// batches.
pub const MIN_POINTS: usize = 8;

/// One point: `(x, y, weight)`; a weight of `n` stands for `n` equal
/// points.
pub type Point = (f64, f64, u64);

/// Most pairs [`theil_sen`] takes every pair of a group for (32 MiB of
/// slopes); beyond, each point is paired with the one half a group
/// further on only.
pub const MAX_PAIRS: usize = 1 << 20;

/// The weighted median of the slopes `(y_j - y_i) / (x_j - x_i)` over the
/// pairs of points within each group (never across groups) whose `x`
/// differ, each pair weighted by the product of its points' weights: the
/// lower median (the first slope at or past half the total weight).
/// Where the groups hold more than [`MAX_PAIRS`] pairs, only the pairs
/// half a group apart (`i` with `i + n / 2`), so memory stays linear.
/// `None` without such a pair or with a non-finite coordinate.
pub fn theil_sen(groups: &[Vec<Point>]) -> Option<f64> {
    if groups.iter().flatten().any(|p| !(p.0.is_finite() && p.1.is_finite())) {
        return None;
    }
    let all: usize = groups.iter().map(|g| g.len() * g.len().saturating_sub(1) / 2).sum();
    let mut slopes: Vec<(f64, u128)> = Vec::new();
    let mut pair = |a: &Point, b: &Point| {
        if a.0 != b.0 {
            slopes.push(((b.1 - a.1) / (b.0 - a.0), u128::from(a.2) * u128::from(b.2)));
        }
    };
    for g in groups {
        if all <= MAX_PAIRS {
            for (i, a) in g.iter().enumerate() {
                for b in &g[i + 1..] {
                    pair(a, b);
                }
            }
        } else {
            let half = g.len() / 2;
            for (a, b) in g.iter().zip(&g[half..]) {
                pair(a, b);
            }
        }
    }
    slopes.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let total: u128 = slopes.iter().map(|s| s.1).sum();
    if total == 0 {
        return None;
    }
    let mut below = 0;
    for &(s, w) in &slopes {
        below += w;
        if 2 * below >= total {
            return Some(s);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_gives_its_slope_and_an_outlier_does_not_move_it() {
        let line: Vec<Point> = (0..10).map(|i| (f64::from(i), 3.0 + 2.5 * f64::from(i), 1)).collect();
        assert_eq!(theil_sen(std::slice::from_ref(&line)), Some(2.5));
        let mut bent = line;
        bent[4].1 += 1000.0;
        assert_eq!(theil_sen(&[bent]), Some(2.5));
    }

    #[test]
    fn pairs_are_taken_within_groups_only() {
        // Two sawtooth runs with the same slope and far-apart intercepts:
        // across them the slope would be large.
        let a: Vec<Point> = (0..5).map(|i| (f64::from(i), 10.0 - f64::from(i), 1)).collect();
        let b: Vec<Point> = (0..5).map(|i| (f64::from(i) + 5.0, 100.0 - f64::from(i), 1)).collect();
        assert_eq!(theil_sen(&[a, b]), Some(-1.0));
    }

    #[test]
    fn weights_count_as_repeated_points() {
        // Pairs: (0,1) slope 1 weight 100, (0,2) slope 5 weight 10, (1,2)
        // slope 9 weight 10: the weighted median is 1 (unweighted, or
        // with weights added, 5).
        let g = vec![(0.0, 0.0, 10), (1.0, 1.0, 10), (2.0, 10.0, 1)];
        assert_eq!(theil_sen(&[g]), Some(1.0));
    }

    #[test]
    fn an_even_count_takes_the_lower_median() {
        // Four points on a convex curve: the six slopes sorted are 1,
        // 1.5, 2, 2, 2.5, 3, both middles 2.
        let g: Vec<Point> = [(0.0, 0.0), (1.0, 1.0), (2.0, 3.0), (3.0, 6.0)]
            .iter()
            .map(|&(x, y)| (x, y, 1))
            .collect();
        assert_eq!(theil_sen(&[g]), Some(2.0));
        // Two groups of two points: slopes 1 and 3, the lower is taken
        // (the upper median would be 3).
        let a = vec![(0.0, 0.0, 1), (1.0, 1.0, 1)];
        let b = vec![(0.0, 0.0, 1), (1.0, 3.0, 1)];
        assert_eq!(theil_sen(&[a, b]), Some(1.0));
    }

    #[test]
    fn many_points_are_paired_half_a_group_apart() {
        // 2,000 points: 1,999,000 pairs, over MAX_PAIRS; 1,000 are taken.
        let mut line: Vec<Point> = (0..2000).map(|i| (f64::from(i), 3.0 + 2.5 * f64::from(i), 1)).collect();
        assert!(line.len() * (line.len() - 1) / 2 > MAX_PAIRS);
        line[10].1 += 1e6;
        assert_eq!(theil_sen(&[line]), Some(2.5));
        // A point that is not finite anywhere refuses the slope.
        let mut bad: Vec<Point> = (0..2000).map(|i| (f64::from(i), 1.0, 1)).collect();
        bad[1999].0 = f64::INFINITY;
        assert_eq!(theil_sen(&[bad]), None);
    }

    #[test]
    fn no_pair_no_slope() {
        assert_eq!(theil_sen(&[]), None);
        assert_eq!(theil_sen(&[vec![(1.0, 2.0, 3)]]), None);
        assert_eq!(theil_sen(&[vec![(1.0, 2.0, 1), (1.0, 5.0, 1)]]), None);
        assert_eq!(theil_sen(&[vec![(1.0, f64::NAN, 1), (2.0, 5.0, 1)]]), None);
    }
}
