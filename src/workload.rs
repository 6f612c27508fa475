//! Workloads: the kinds of study a scenario can run, behind one contract
//! ([`contract::Workload`]) and one registry ([`registry`]). Nothing outside
//! the registry matches on a kind; adding a workload is one module that
//! implements the contract plus one line in [`registry::REGISTRY`].

pub mod btrfs_dir;
pub mod contract;
pub mod fsmark;
pub mod path;
pub mod registry;
pub mod sections;
pub mod selected;
pub mod work_scale;
pub mod xfs_alloc;

pub use contract::{Input, MetricSpec, ParamSpec, Prepared, RunFailure, StepAxis, StepScale, StopConfig, Workload};
pub use sections::Sections;
