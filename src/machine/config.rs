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
    /// Overrides fields of the profile's topology (any subset, e.g.
    /// `machine.topology.sockets` alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyOverride>,
    /// How threads are placed on CPUs (default `spread`).
    #[serde(default = "default_placement")]
    pub placement: Placement,
    /// Scheduler wake-up latency for a sleeping mutex waiter, ns (default 0).
    #[serde(default)]
    pub wakeup_ns: f64,
    /// CPUs the kernel under test sees (`num_online_cpus()`): a virtual
    /// machine's vCPU count when the threads run in a guest. Sizes what
    /// depends on it, such as the default `percpu_counter` batch
    /// (`compute_batch_value`). Default: every CPU of the topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online_cpus: Option<u32>,
}

/// Fields of a [`Topology`] to replace; absent fields keep the profile's.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyOverride {
    /// Processor packages (NUMA sockets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<u32>,
    /// Physical cores per socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_per_socket: Option<u32>,
    /// Hardware threads per core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smt: Option<u32>,
    /// LLC domains per socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llcs_per_socket: Option<u32>,
}

impl TopologyOverride {
    /// `base` with the given fields replaced.
    pub fn apply(&self, base: &Topology) -> Topology {
        Topology {
            sockets: self.sockets.unwrap_or(base.sockets),
            cores_per_socket: self.cores_per_socket.unwrap_or(base.cores_per_socket),
            smt: self.smt.unwrap_or(base.smt),
            llcs_per_socket: self.llcs_per_socket.unwrap_or(base.llcs_per_socket),
        }
    }
}

/// How many threads a run places: a count, or `"all"`, one per CPU of the
/// point's machine (so one sweep can cover machines of different sizes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// This many threads.
    Count(u32),
    /// One thread per CPU of the machine.
    All,
}

impl Threads {
    /// The number of threads on a machine of `cpus` CPUs.
    pub fn on(self, cpus: u32) -> u32 {
        match self {
            Threads::Count(n) => n,
            Threads::All => cpus,
        }
    }
}

impl Default for Threads {
    fn default() -> Self {
        Threads::Count(1)
    }
}

impl Serialize for Threads {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Threads::Count(n) => s.serialize_u32(*n),
            Threads::All => s.serialize_str("all"),
        }
    }
}

impl<'de> Deserialize<'de> for Threads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Count(i64),
            Word(String),
        }
        let bad = || serde::de::Error::custom("expected a whole number of threads from 1 to 65,536, or \"all\" (one per CPU)");
        match Raw::deserialize(d).map_err(|_: D::Error| bad())? {
            Raw::Count(n) if (1..=65_536).contains(&n) => Ok(Threads::Count(n as u32)),
            Raw::Word(w) if w == "all" => Ok(Threads::All),
            _ => Err(bad()),
        }
    }
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
            online_cpus: None,
        }
    }
}
