//! The modelled machine: topology, latency profiles, cache-line coherence
//! and locks built on lines.
//!
//! [`Pricing`] is the one interface through which path steps are priced:
//! the transfer cost between every pair of processes (simulated threads)
//! from their CPUs' distance class, plus hit and memory latency. The ideal
//! machine prices everything at zero.

pub mod build;
pub mod builtin;
pub mod cache;
pub mod coherence;
pub mod config;
pub mod linemap;
pub mod lock;
pub mod profile;
pub mod rwlock;
pub mod topology;

pub use build::{Machine, MachineCache};
pub use config::{MachineConfig, Threads};

/// Why a machine could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MachineError {
    /// A `[machine]` parameter or profile field is out of range.
    #[error(transparent)]
    Param(#[from] crate::param::ParamError),
    /// A profile file is unreadable or malformed.
    #[error(transparent)]
    Input(#[from] crate::param::InputError),
}

pub use profile::{MachineProfile, builtin_profiles, closest_builtin, find_builtin, load_profile, ns_to_ps};
pub use topology::{CpuId, Distance, Placement, Topology};

/// Transfer costs between the processes of one run, in picoseconds.
#[derive(Debug, Clone)]
pub struct Pricing {
    procs: usize,
    xfer_ps: Vec<u64>,
    class: Vec<u8>,
    /// Cost of an access that hits in the requester's cache, in ps.
    pub hit_ps: u64,
    /// Cost of fetching a line that no cache holds, in ps.
    pub memory_ps: u64,
    /// Scheduler wake-up latency for a sleeping mutex waiter, in ps.
    pub wakeup_ps: u64,
}

impl Pricing {
    /// The ideal machine: every access and hand-off is free.
    pub fn ideal(procs: usize) -> Self {
        Pricing::from_matrix(procs, vec![0; procs * procs], vec![0; procs * procs], 0, 0)
    }

    /// Builds pricing from a `procs x procs` matrix of transfer costs (ps)
    /// and distance classes (`Distance as u8`), indexed `[from * procs + to]`.
    pub fn from_matrix(procs: usize, xfer_ps: Vec<u64>, class: Vec<u8>, hit_ps: u64, memory_ps: u64) -> Self {
        debug_assert_eq!(xfer_ps.len(), procs * procs);
        Pricing {
            procs,
            xfer_ps,
            class,
            hit_ps,
            memory_ps,
            wakeup_ps: 0,
        }
    }

    /// Number of processes priced.
    pub fn procs(&self) -> usize {
        self.procs
    }

    /// Cost of moving a line from process `from`'s cache to `to`'s, in ps.
    #[inline]
    pub fn xfer(&self, from: u32, to: u32) -> u64 {
        self.xfer_ps[from as usize * self.procs + to as usize]
    }

    /// [`Pricing::xfer`] and [`Pricing::class`] of one pair, found once.
    #[inline]
    pub fn xfer_class(&self, from: u32, to: u32) -> (u64, usize) {
        let i = from as usize * self.procs + to as usize;
        (self.xfer_ps[i], usize::from(self.class[i]))
    }

    /// Distance class between the two processes' CPUs (index into
    /// [`coherence::LineStats::transfers`]).
    #[inline]
    pub fn class(&self, from: u32, to: u32) -> usize {
        usize::from(self.class[from as usize * self.procs + to as usize])
    }
}
