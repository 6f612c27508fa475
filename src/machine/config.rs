//! `[machine]` of a scenario: which profile, an optional topology override,
//! how threads are placed, and the scheduler wake-up latency.

use super::topology::{Placement, Topology};
use serde::{Deserialize, Serialize};

/// `[machine]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    /// A built-in profile name (`fsmeta machines` lists them) or a path to
    /// a profile TOML, relative to the scenario file. Default `ideal`.
    #[serde(default = "default_profile")]
    pub profile: String,
    /// Overrides the profile's topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// How threads are placed on CPUs (default `spread`).
    #[serde(default = "default_placement")]
    pub placement: Placement,
    /// Scheduler wake-up latency for a sleeping mutex waiter, ns (default 0).
    #[serde(default)]
    pub wakeup_ns: f64,
}

fn default_profile() -> String {
    "ideal".into()
}

fn default_placement() -> Placement {
    Placement::Spread
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            profile: default_profile(),
            topology: None,
            placement: default_placement(),
            wakeup_ns: 0.0,
        }
    }
}
