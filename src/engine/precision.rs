//! Precision-targeted stopping: batch means over simulated time, a warm-up
//! cut chosen by MSER-5, and a stop once the 95 % confidence interval of
//! the throughput is narrow enough (or a cap is reached).
//!
//! Operations completed are counted in batches of equal simulated width.
//! When the batches reach `2 * MAX_BATCHES`, neighbours are merged and the
//! width doubles, so memory stays bounded and batches grow long enough to
//! be nearly independent. At each batch boundary the warm-up cut is chosen
//! by MSER-5 (White, "An effective truncation heuristic for bias reduction
//! in simulation output", Simulation 69(6), 1997): batches are grouped by
//! five, and the cut `d` (in groups) minimises the squared standard error
//! `sum_{i>=d} (z_i - mean_d)^2 / (n - d)^2` over `d <= n / 2`. The
//! throughput is the mean of the kept groups, and its 95 % half-width is
//! Student's t with `n - d - 1` degrees of freedom times their standard
//! error. Every decision is taken at a batch boundary in simulated time,
//! so the same seed stops at the same point for any `--jobs`.

use super::time::SimTimePs;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Batches kept before neighbours are merged (the count then halves).
pub const MAX_BATCHES: usize = 160;

/// Groups of five batches kept after the cut before the interval is
/// trusted.
pub const MIN_GROUPS: usize = 20;

/// The estimate at a batch boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Mean throughput after the warm-up cut, operations per second.
    pub ops_per_sec: f64,
    /// 95 % half-width of it, operations per second.
    pub half_width: f64,
    /// Simulated time cut as warm-up, ps.
    pub warmup_ps: u64,
    /// Groups of five batches after the cut.
    pub groups: usize,
}

impl Estimate {
    /// Half-width relative to the mean, percent.
    pub fn half_width_pct(&self) -> f64 {
        100.0 * self.half_width / self.ops_per_sec
    }
}

/// Counts completions in time batches and decides when to stop.
#[derive(Debug, Clone)]
pub struct PrecisionStop {
    target_pct: f64,
    width_ps: u64,
    batches: Vec<u64>,
    current: u64,
    /// End of the open batch.
    boundary: u64,
    last: Option<Estimate>,
}

impl PrecisionStop {
    /// Stops once the half-width is at most `target_pct` percent of the
    /// mean; batches start `width` wide (a small multiple of one
    /// operation's time is enough: the width doubles as the run grows).
    pub fn new(target_pct: f64, width: SimTimePs) -> PrecisionStop {
        let width_ps = width.0.max(1);
        PrecisionStop {
            target_pct,
            width_ps,
            batches: Vec::with_capacity(2 * MAX_BATCHES),
            current: 0,
            boundary: width_ps,
            last: None,
        }
    }

    /// One operation completed at `now`; true when the run should stop.
    /// Checked only when the batches are merged (each time the run has
    /// doubled in length): few looks keep the bias of stopping on a
    /// lucky-narrow interval small.
    pub fn record(&mut self, now: SimTimePs) -> bool {
        let mut merged = false;
        while now.0 >= self.boundary {
            self.batches.push(std::mem::take(&mut self.current));
            self.boundary = self.boundary.saturating_add(self.width_ps);
            if self.batches.len() == 2 * MAX_BATCHES {
                self.merge_pairs();
                merged = true;
            }
        }
        self.current += 1;
        merged && self.check()
    }

    fn merge_pairs(&mut self) {
        let merged: Vec<u64> = self.batches.chunks(2).map(|c| c.iter().sum()).collect();
        self.batches = merged;
        // The open batch began where the merged ones end: it becomes as
        // wide as they are.
        self.boundary = self.boundary.saturating_add(self.width_ps);
        self.width_ps = self.width_ps.saturating_mul(2);
    }

    fn check(&mut self) -> bool {
        self.last = estimate(&self.batches, self.width_ps);
        self.last
            .is_some_and(|e| e.groups >= MIN_GROUPS && e.half_width_pct() <= self.target_pct)
    }

    /// The latest estimate (`None` before two groups of batches).
    pub fn estimate(&self) -> Option<Estimate> {
        self.last
    }
}

/// MSER-5 cut (in groups of five) of the group means `z`.
pub fn mser5_cut(z: &[f64]) -> usize {
    let n = z.len();
    let mut best = (f64::INFINITY, 0);
    for d in 0..=n / 2 {
        let kept = &z[d..];
        let k = kept.len() as f64;
        let mean = kept.iter().sum::<f64>() / k;
        let ss: f64 = kept.iter().map(|x| (x - mean).powi(2)).sum();
        let stat = ss / (k * k);
        if stat < best.0 {
            best = (stat, d);
        }
    }
    best.1
}

/// The estimate from batch counts of width `width_ps`.
fn estimate(batches: &[u64], width_ps: u64) -> Option<Estimate> {
    let per_sec = 1e12 / (5.0 * width_ps as f64);
    let z: Vec<f64> = batches.chunks_exact(5).map(|c| c.iter().sum::<u64>() as f64 * per_sec).collect();
    if z.len() < 2 {
        return None;
    }
    let d = mser5_cut(&z);
    let kept = &z[d..];
    let k = kept.len();
    if k < 2 {
        return None;
    }
    let mean = kept.iter().sum::<f64>() / k as f64;
    let var = kept.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, (k - 1) as f64).map_or(1.96, |d| d.inverse_cdf(0.975));
    Some(Estimate {
        ops_per_sec: mean,
        half_width: t * (var / k as f64).sqrt(),
        warmup_ps: (d as u64) * 5 * width_ps,
        groups: k,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::distr::Distribution;
    use rand_chacha::ChaCha8Rng;
    use statrs::distribution::Exp;
    use std::collections::{BinaryHeap, VecDeque};

    #[test]
    fn mser5_cuts_a_transient_and_keeps_a_stationary_series() {
        let mut z: Vec<f64> = (0..10).map(|i| 100.0 - 10.0 * f64::from(i)).collect();
        z.extend((0..40).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }));
        let d = mser5_cut(&z);
        assert!((9..=11).contains(&d), "cut {d}");
        let flat: Vec<f64> = (0..40).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        assert!(mser5_cut(&flat) <= 1);
    }

    /// Exact throughput of M/M/1//N (Kleinrock vol. 1, 3.10), per ps.
    fn exact(n: u32, s: f64, z: f64) -> f64 {
        let (mut term, mut sum) = (1.0, 1.0);
        for k in 1..=n {
            term *= f64::from(n - k + 1) * s / z;
            sum += term;
        }
        (1.0 - 1.0 / sum) / s
    }

    /// M/M/1//N (N = 16, think 10 us, service 1 us) in a minimal loop,
    /// stopped by [`PrecisionStop`]; returns the estimate and completions.
    fn mm1n_until_precise(seed: u64, target_pct: f64) -> (Estimate, u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (think, service) = (Exp::new(1.0 / 10_000_000.0).unwrap(), Exp::new(1.0 / 1_000_000.0).unwrap());
        let mut heap = BinaryHeap::new();
        let mut seq = 0u64;
        for who in 0..16u32 {
            heap.push(std::cmp::Reverse(((think.sample(&mut rng) as u64), seq, who, false)));
            seq += 1;
        }
        let (mut fifo, mut busy, mut done) = (VecDeque::new(), false, 0u64);
        let mut stop = PrecisionStop::new(target_pct, SimTimePs(20_000_000));
        while let Some(std::cmp::Reverse((now, _, who, depart))) = heap.pop() {
            let mut push = |t: u64, w: u32, d: bool| {
                heap.push(std::cmp::Reverse((t, seq, w, d)));
                seq += 1;
            };
            if !depart {
                if busy {
                    fifo.push_back(who);
                } else {
                    busy = true;
                    push(now + service.sample(&mut rng) as u64, who, true);
                }
                continue;
            }
            done += 1;
            if stop.record(SimTimePs(now)) || done >= 50_000_000 {
                break;
            }
            push(now + think.sample(&mut rng) as u64, who, false);
            match fifo.pop_front() {
                Some(next) => push(now + service.sample(&mut rng) as u64, next, true),
                None => busy = false,
            }
        }
        (stop.estimate().expect("an estimate"), done)
    }

    const TARGET_PCT: f64 = 0.5;

    #[test]
    fn the_interval_covers_the_exact_mm1n_throughput_in_at_least_93_of_100_seeds() {
        let x = exact(16, 1_000_000.0, 10_000_000.0) * 1e12;
        let mut covered = 0;
        for seed in 0..100 {
            let (e, _) = mm1n_until_precise(seed, TARGET_PCT);
            assert!(e.half_width_pct() <= TARGET_PCT);
            if (e.ops_per_sec - x).abs() <= e.half_width {
                covered += 1;
            }
        }
        eprintln!("precision stop at {TARGET_PCT} %: the interval covered the exact throughput in {covered} of 100 seeds");
        assert!(covered >= 93, "covered in {covered} of 100 seeds (exact {x:.0}/s)");
    }
}
