//! fsmeta: a deterministic discrete-event simulator of Linux filesystem
//! metadata paths.
//!
//! A scenario file (TOML) names a machine, a workload and the variants to
//! compare; `fsmeta run` resolves it into run points, runs them in parallel
//! and writes CSV, JSON, plots and a report. Layers, top to bottom:
//! `cli -> scenario -> plan -> runner -> report`, over the simulator proper
//! (`engine`, `machine`, `model`, `workload`, `sim`).
//!
//! ```
//! use fsmeta::scenario::{load_str, LoadOptions};
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
//! let s = load_str(std::path::Path::new("doc.toml"), text, &LoadOptions::default()).unwrap();
//! let plan = fsmeta::plan::plan(&s);
//! let results = fsmeta::runner::run_all(&s, &plan, 1, &|| {}).unwrap();
//! assert_eq!(results[0].metrics["ops"], 1000.0);
//! ```
#![warn(missing_docs, missing_debug_implementations)]
// Scenario errors carry a file, a location, a field path and a hint; they
// are built once per failed load, so their size does not matter.
#![allow(clippy::result_large_err)]

pub mod bench;
pub mod cli;
pub mod engine;
pub mod machine;
pub mod kernel;
pub mod plan;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod text;
pub mod workload;
