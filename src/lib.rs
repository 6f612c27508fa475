//! fsmeta: a deterministic discrete-event simulator of Linux filesystem
//! metadata paths.
//!
//! A scenario file (TOML) names a machine, a workload and the variants to
//! compare; `fsmeta run` resolves it into run points, runs them in parallel
//! and writes CSV, JSON, plots and a report. Layers, top to bottom:
//! `scenario -> plan -> runner -> report` (the binary adds `cli`), over
//! the workload contract and registry ([`workload`]), the machine
//! ([`machine`]), the kernel models ([`kernel`]) and the engine ([`engine`]).
//!
//! See [`Study`] for the whole flow in a few lines.
#![warn(missing_docs, missing_debug_implementations)]
// Scenario errors carry a file, a location, a field path and a hint; they
// are built once per failed load, so their size does not matter.
#![allow(clippy::result_large_err)]

pub mod calibrate;
pub mod diagnostic;
pub mod engine;
pub mod hostinfo;
pub mod kernel;
pub mod lab;
pub mod machine;
pub mod measure;
pub mod param;
pub mod plan;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod slope;
pub mod study;
pub mod text;
pub mod workload;

pub use scenario::{LoadOptions, ScenarioError};
pub use study::{Results, Study};
