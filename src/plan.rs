//! Scenario -> the list of runs: every sweep point x variant x replication,
//! in a fixed order that every output follows.

use crate::engine::rng::{RunKey, point_id};
use crate::scenario::sweep::value_text;
use crate::scenario::{Point, Scenario};

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
        let id = point_id(&coordinates(s, point));
        for (vi, config) in point.configs.iter().enumerate() {
            let doc = &config.doc;
            for r in 0..doc.scenario.replications {
                let key = RunKey {
                    seed: doc.scenario.seed,
                    point: id,
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

/// A point's swept values as `path=value;...` in sweep order
/// ([`value_text`]): what [`point_id`] hashes.
pub fn coordinates(s: &Scenario, point: &Point) -> String {
    s.sweep
        .iter()
        .zip(&point.values)
        .map(|((path, _), v)| format!("{path}={}", value_text(v)))
        .collect::<Vec<_>>()
        .join(";")
}

/// A slice of a plan: shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, from 1.
    pub index: u32,
    /// How many shards.
    pub count: u32,
}

/// A `K/N` text that is not a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid shard `{0}`: expected K/N with 1 <= K <= N, e.g. 2/8")]
pub struct ShardError(pub String);

impl std::str::FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// True when plan entry `i` belongs to this shard: every `count`-th
    /// run, starting at `index - 1`, so the shards of a sweep whose points
    /// differ in cost get a share of each point.
    pub fn owns(&self, i: usize) -> bool {
        i % self.count as usize == (self.index - 1) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_partition_the_plan() {
        let s: Shard = "2/3".parse().expect("shard");
        assert_eq!(s, Shard { index: 2, count: 3 });
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        for n in 1..6u32 {
            for i in 0..20 {
                let owners = (1..=n).filter(|&k| Shard { index: k, count: n }.owns(i)).count();
                assert_eq!(owners, 1, "run {i} of {n} shards");
            }
        }
    }
}
