//! A machine built for one run point: the resolved profile, the CPUs the
//! threads are placed on, the transfer-cost matrix between them and the SMT
//! slowdown of each. Built once per point; every run of the point shares it.

use super::config::{MachineConfig, Threads};
use super::profile::{MachineProfile, closest_builtin, find_builtin, load_profile, ns_to_ps};
use super::topology::{CpuId, Distance, Topology};
use super::{MachineError, Pricing};
use crate::param::ParamError;
use std::path::Path;

/// The machine as the threads of one run point see it.
#[derive(Debug, Clone)]
pub struct Machine {
    /// The profile, with the scenario's topology override applied.
    pub profile: MachineProfile,
    /// The CPU each thread runs on, by thread number.
    pub cpus: Vec<CpuId>,
    /// Transfer costs and distance classes between the threads.
    pub pricing: Pricing,
    /// Per-thread work slowdown in permille (1000 = a core of its own).
    pub slowdown_permille: Vec<u32>,
    /// CPUs the kernel under test sees (`num_online_cpus()`).
    pub online_cpus: u32,
}

impl Machine {
    /// Resolves `[machine]` (profile paths relative to `dir`) and places
    /// `threads` threads on its CPUs.
    pub fn build(config: &MachineConfig, threads: Threads, dir: &Path) -> Result<Machine, MachineError> {
        let profile = resolve_profile(config, dir)?;
        let topo = &profile.topology;
        let cpus = topo
            .place(threads.on(topo.cpus()), config.placement)
            .map_err(|e| e.under("workload"))?;
        let mut pricing = pricing(&profile, topo, &cpus);
        pricing.wakeup_ps = ns_to_ps(config.wakeup_ns);
        let slowdown_permille = smt_slowdown(&profile, topo, &cpus);
        let online_cpus = match config.online_cpus {
            Some(n) if n == 0 || (n as usize) < cpus.len() => {
                return Err(ParamError::new(
                    "machine.online_cpus",
                    format!("expected at least as many online CPUs as threads ({}), found {n}", cpus.len()),
                )
                .into());
            }
            Some(n) => n,
            None => topo.cpus(),
        };
        Ok(Machine {
            profile,
            cpus,
            pricing,
            slowdown_permille,
            online_cpus,
        })
    }

    /// The topology the threads run on.
    pub fn topology(&self) -> &Topology {
        &self.profile.topology
    }

    /// The CPUs of the topology that no thread runs on, in CPU order
    /// (where unbound work-queue workers run).
    pub fn idle_cpus(&self) -> Vec<CpuId> {
        (0..self.topology().cpus()).map(CpuId).filter(|c| !self.cpus.contains(c)).collect()
    }

    /// Pricing and SMT slowdown for the threads' CPUs followed by `extra`
    /// CPUs (work-queue workers): the threads' slowdowns are kept as they
    /// are (a worker runs only now and then); a worker's counts the
    /// threads on its core.
    pub fn with_extra(&self, extra: &[CpuId]) -> (Pricing, Vec<u32>) {
        if extra.is_empty() {
            return (self.pricing.clone(), self.slowdown_permille.clone());
        }
        let all: Vec<CpuId> = self.cpus.iter().chain(extra).copied().collect();
        let topo = self.topology();
        let mut pricing = pricing(&self.profile, topo, &all);
        pricing.wakeup_ps = self.pricing.wakeup_ps;
        let mut slow = self.slowdown_permille.clone();
        slow.extend(smt_slowdown(&self.profile, topo, &all).into_iter().skip(self.cpus.len()));
        (pricing, slow)
    }
}

/// Machines already built for a scenario, keyed by their configuration
/// and thread count: the points of a sweep share one `Machine` per
/// distinct (`[machine]`, threads), so a large sweep holds each pricing
/// matrix once.
#[derive(Debug, Default)]
pub struct MachineCache {
    built: std::cell::RefCell<Vec<(BuiltFor, std::sync::Arc<Machine>)>>,
}

/// What a cached machine was built for.
type BuiltFor = (Threads, std::path::PathBuf, MachineConfig);

impl MachineCache {
    /// The machine for `config` and `threads`, built on first use.
    pub fn get(&self, config: &MachineConfig, threads: Threads, dir: &Path) -> Result<std::sync::Arc<Machine>, MachineError> {
        let same = |(t, d, c): &BuiltFor| *t == threads && d == dir && c == config;
        if let Some((_, m)) = self.built.borrow().iter().find(|(k, _)| same(k)) {
            return Ok(m.clone());
        }
        let m = std::sync::Arc::new(Machine::build(config, threads, dir)?);
        self.built
            .borrow_mut()
            .push(((threads, dir.to_path_buf(), config.clone()), m.clone()));
        Ok(m)
    }
}

/// Resolves `[machine]` to a profile with the scenario's topology override.
pub fn resolve_profile(config: &MachineConfig, dir: &Path) -> Result<MachineProfile, MachineError> {
    let name = &config.profile;
    let mut profile = if name.ends_with(".toml") {
        load_profile(&dir.join(name))?
    } else {
        find_builtin(name).ok_or_else(|| {
            ParamError::new(
                "machine.profile",
                format!("no built-in profile `{name}`; `fsmeta machines` lists them, or give a path ending in .toml"),
            )
            .suggest(closest_builtin(name))
        })?
    };
    if let Some(t) = &config.topology {
        profile.topology = t.apply(&profile.topology);
    }
    profile.validate().map_err(|e| e.under("machine"))?;
    Ok(profile)
}

/// Transfer cost and distance class between every pair of threads.
fn pricing(profile: &MachineProfile, topo: &Topology, cpus: &[CpuId]) -> Pricing {
    let n = cpus.len();
    let mut xfer = Vec::with_capacity(n * n);
    let mut class = Vec::with_capacity(n * n);
    for &a in cpus {
        for &b in cpus {
            let d = topo.distance(a, b);
            xfer.push(if d == Distance::SameCpu {
                profile.atomic_ps()
            } else {
                profile.transfer_between_ps(d, topo.socket_of(a), topo.socket_of(b))
            });
            class.push(d.index() as u8);
        }
    }
    Pricing::from_matrix(n, xfer, class, profile.atomic_ps(), profile.memory_ps())
}

/// Work on a CPU whose SMT sibling also runs a thread is slower: the two
/// share one core whose combined throughput is `smt_throughput` times one
/// thread's, so each runs at `smt_throughput / 2` speed.
fn smt_slowdown(profile: &MachineProfile, topo: &Topology, cpus: &[CpuId]) -> Vec<u32> {
    cpus.iter()
        .map(|&c| {
            let shared = cpus.iter().filter(|&&o| topo.core_of(o) == topo.core_of(c)).count();
            if shared > 1 {
                (1000.0 * shared as f64 / profile.smt_throughput.max(1.0)).round() as u32
            } else {
                1000
            }
        })
        .collect()
}
