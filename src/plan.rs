//! Scenario -> the list of runs: every sweep point x variant x replication,
//! in a fixed order that every output follows.

use crate::engine::rng::RunKey;
use crate::scenario::Scenario;

/// One run: which point, variant and replication, and its random key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunPlan {
    /// Index into [`Scenario::points`].
    pub point: usize,
    /// Index into [`Scenario::variants`].
    pub variant: usize,
    /// Replication number, from 0.
    pub replication: u32,
    /// Seeds every random stream of the run.
    pub key: RunKey,
}

/// All runs of a scenario, point-major, then variant, then replication.
pub fn plan(s: &Scenario) -> Vec<RunPlan> {
    let mut out = Vec::new();
    for (pi, point) in s.points.iter().enumerate() {
        for (vi, config) in point.configs.iter().enumerate() {
            let doc = &config.doc;
            for r in 0..doc.scenario.replications {
                let key = RunKey {
                    seed: doc.scenario.seed,
                    point: pi as u64,
                    replication: u64::from(r),
                };
                out.push(RunPlan {
                    point: pi,
                    variant: vi,
                    replication: r,
                    key,
                });
            }
        }
    }
    out
}
