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

use crate::plan::{RunPlan, plan};
use crate::report::{Outcome, ReportError, write_outputs};
use crate::runner::{RunError, RunResult, run_all};
use crate::scenario::{LoadOptions, Scenario, ScenarioError, load, load_str};
use std::path::Path;

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

    /// Writes CSV, JSON, plots and the report under `out/<name>/`.
    pub fn write(&self, results: &Results, out: &Path) -> Result<Outcome, ReportError> {
        write_outputs(&self.scenario, &results.runs, out)
    }
}
