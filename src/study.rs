//! The public entry point: load a scenario file into a [`Study`], run it,
//! write its outputs.
//!
//! ```
//! use fsmeta::{LoadOptions, Study};
//! let text = r#"
//! [scenario]
//! name = "doc"
//! ops = 1000
//! [workload]
//! kind = "path"
//! threads = 2
//! [locks.l]
//! kind = "queued"
//! [[path]]
//! work = { dist = "exp", mean_ns = 100.0 }
//! [[path]]
//! lock = "l"
//! [[path]]
//! unlock = "l"
//! "#;
//! let study = Study::from_text(std::path::Path::new("doc.toml"), text, &LoadOptions::default()).unwrap();
//! let results = study.run(1, &|| {}).unwrap();
//! assert_eq!(results.runs[0].metrics["ops"], 1000.0);
//! ```

use crate::plan::{RunPlan, Shard, plan};
use crate::report::{Outcome, ReportError, write_outputs};
use crate::runner::cache::RunCache;
use crate::runner::shard::ShardFile;
use crate::runner::store::Fingerprint;
use crate::runner::{RunError, RunResult, run_all, run_all_cached};
use crate::scenario::{LoadOptions, Scenario, ScenarioError, load, load_str};
use std::path::{Path, PathBuf};

/// Why shards cannot be merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// A shard file was written by a different study (another scenario
    /// text, seed, quick mode, data file or fsmeta build).
    #[error(
        "{scenario}: shard {shard} was written from a different study than the scenario file now gives (the file, a data file, --seed or --quick changed); rerun that shard"
    )]
    OtherStudy {
        /// The scenario's name.
        scenario: String,
        /// The shard.
        shard: Shard,
    },
    /// Shards of different `N` were given together.
    #[error("{scenario}: the shards were cut with different N (K/N); merge the shards of one sharding")]
    ShardCounts {
        /// The scenario's name.
        scenario: String,
    },
    /// A run is in two shard files, or in a shard that does not own it.
    #[error("{scenario}: run {run} appears twice or in the wrong shard (the same shard given twice?)")]
    Duplicate {
        /// The scenario's name.
        scenario: String,
        /// Its plan index.
        run: usize,
    },
    /// Shards are missing.
    #[error("{scenario}: missing shard(s) {shards}")]
    Missing {
        /// The scenario's name.
        scenario: String,
        /// The missing shards, `K/N`, comma-separated.
        shards: String,
    },
    /// No shard file was found.
    #[error("no shard files (*.runs) in {}", .0.display())]
    NoShards(PathBuf),
}

/// A validated scenario, ready to run.
#[derive(Debug, Clone)]
pub struct Study {
    /// The scenario, every point and variant resolved and prepared.
    pub scenario: Scenario,
}

/// The runs of a study, in plan order.
#[derive(Debug, Clone)]
pub struct Results {
    /// One result per planned run.
    pub runs: Vec<RunResult>,
}

impl Study {
    /// Reads and validates a scenario file.
    pub fn load(file: &Path, opts: &LoadOptions) -> Result<Study, ScenarioError> {
        Ok(Study {
            scenario: load(file, opts)?,
        })
    }

    /// Validates scenario `text` as if read from `file`.
    pub fn from_text(file: &Path, text: &str, opts: &LoadOptions) -> Result<Study, ScenarioError> {
        Ok(Study {
            scenario: load_str(file, text, opts)?,
        })
    }

    /// Every run: point x variant x replication, in output order.
    pub fn plan(&self) -> Vec<RunPlan> {
        plan(&self.scenario)
    }

    /// Runs every planned run on `jobs` threads (results do not depend on
    /// it); `done` is called after each run.
    pub fn run(&self, jobs: usize, done: &(dyn Fn() + Sync)) -> Result<Results, RunError> {
        let runs = run_all(&self.scenario, &self.plan(), jobs, done)?;
        Ok(Results { runs })
    }

    /// Runs the planned runs of `shard` (all of them when `None`) on `jobs`
    /// threads, through `cache` when given; results are in plan order.
    pub fn run_with(
        &self,
        jobs: usize,
        done: &(dyn Fn() + Sync),
        shard: Option<Shard>,
        cache: Option<&RunCache>,
    ) -> Result<Results, RunError> {
        let plan: Vec<RunPlan> = match shard {
            Some(sh) => self
                .plan()
                .into_iter()
                .enumerate()
                .filter(|(i, _)| sh.owns(*i))
                .map(|(_, p)| p)
                .collect(),
            None => self.plan(),
        };
        let runs = run_all_cached(&self.scenario, &plan, jobs, done, cache)?;
        Ok(Results { runs })
    }

    /// A fingerprint of every planned run: the scenario's name, and per
    /// run its point, variant, replication, seed and resolved
    /// configuration. Shards of one study share it; `merge` refuses
    /// shards whose study differs from the one it loads.
    pub fn fingerprint(&self) -> String {
        let s = &self.scenario;
        let configs: Vec<Vec<String>> = s
            .points
            .iter()
            .map(|p| p.configs.iter().map(RunCache::config_fingerprint).collect())
            .collect();
        let mut fp = Fingerprint::default();
        fp.update(s.doc.scenario.name.as_bytes());
        for p in self.plan() {
            fp.u64(p.point as u64)
                .u64(p.variant as u64)
                .u64(u64::from(p.replication))
                .u64(p.key.run_seed());
            fp.update(configs[p.point][p.variant].as_bytes());
        }
        fp.hex()
    }

    /// The shard file of `results`, the runs of `shard` as
    /// [`Study::run_with`] returns them; `file` and `opts`
    /// are how this study was loaded (merge loads it the same way).
    pub fn shard_file(&self, file: &Path, opts: &LoadOptions, shard: Shard, results: &Results) -> ShardFile {
        let plan = self.plan();
        let owned = (0..plan.len()).filter(|i| shard.owns(*i));
        ShardFile {
            scenario: self.scenario.doc.scenario.name.clone(),
            file: std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf()),
            quick: opts.quick,
            seed: opts.seed,
            study: self.fingerprint(),
            runs: plan.len(),
            shard,
            results: owned.zip(&results.runs).map(|(i, r)| (i, r.metrics.clone())).collect(),
        }
    }

    /// Joins the runs of `shards` (every shard of this study, each once)
    /// into the results an unsharded run gives, in plan order.
    pub fn merge(&self, shards: &[ShardFile]) -> Result<Results, MergeError> {
        let plan = self.plan();
        let study = self.fingerprint();
        let name = &self.scenario.doc.scenario.name;
        let mut slots: Vec<Option<&crate::engine::Metrics>> = vec![None; plan.len()];
        let mut count = None;
        for f in shards {
            if f.study != study || f.runs != plan.len() {
                return Err(MergeError::OtherStudy {
                    scenario: name.clone(),
                    shard: f.shard,
                });
            }
            if *count.get_or_insert(f.shard.count) != f.shard.count {
                return Err(MergeError::ShardCounts { scenario: name.clone() });
            }
            for (i, m) in &f.results {
                let ok = *i < plan.len() && f.shard.owns(*i);
                match slots.get_mut(*i) {
                    Some(slot @ None) if ok => *slot = Some(m),
                    _ => {
                        return Err(MergeError::Duplicate {
                            scenario: name.clone(),
                            run: *i,
                        });
                    }
                }
            }
        }
        let count = count.unwrap_or(1);
        let missing: Vec<String> = (1..=count)
            .map(|k| Shard { index: k, count })
            .filter(|sh| (0..plan.len()).any(|i| sh.owns(i) && slots[i].is_none()))
            .map(|sh| sh.to_string())
            .collect();
        if !missing.is_empty() {
            return Err(MergeError::Missing {
                scenario: name.clone(),
                shards: missing.join(", "),
            });
        }
        let runs = plan
            .iter()
            .zip(slots)
            .map(|(p, m)| RunResult {
                plan: *p,
                metrics: m.cloned().unwrap_or_default(),
            })
            .collect();
        Ok(Results { runs })
    }

    /// Writes CSV, JSON, plots and the report under `out/<name>/`.
    pub fn write(&self, results: &Results, out: &Path) -> Result<Outcome, ReportError> {
        write_outputs(&self.scenario, &results.runs, out)
    }
}
