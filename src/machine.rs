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

pub use profile::{
    MachineProfile, MemmovePrices, MitigationPrices, SchedPrices, StoragePrices, TracepointPrices, builtin_profiles, closest_builtin,
    find_builtin, load_profile, ns_to_ps,
};
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
    /// Machines of up to 64 processes (one word of sharer bits): per
    /// requesting process, the others grouped by price ([`Groups`]).
    groups: Vec<Groups>,
}

/// The processes grouped by the price of a transfer to one requester
/// `p`, as bit masks (bit `q` for process `q`), so that the nearest and
/// the farthest of a line's sharers are found by testing a few masks
/// instead of pricing every sharer.
#[derive(Debug, Clone, Default)]
struct Groups {
    /// `(mask, xfer, class)` for each distinct `(xfer(q, p), class(q, p))`,
    /// in ascending order of the pair.
    near: Vec<(u64, u64, u8)>,
    /// `(mask, xfer)` for each distinct `xfer(q, p)`, most expensive first.
    far: Vec<(u64, u64)>,
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
        let groups = if procs <= 64 && xfer_ps.len() == procs * procs && class.len() == procs * procs {
            (0..procs).map(|p| Groups::of(procs, p, &xfer_ps, &class)).collect()
        } else {
            Vec::new()
        };
        Pricing {
            procs,
            xfer_ps,
            class,
            hit_ps,
            memory_ps,
            wakeup_ps: 0,
            groups,
        }
    }

    /// True when the processes are grouped by price ([`Pricing::nearest`],
    /// [`Pricing::farthest`]): machines of up to 64 processes.
    #[inline]
    pub fn grouped(&self) -> bool {
        !self.groups.is_empty()
    }

    /// Of the processes set in `sharers` (one word: machines of up to 64
    /// processes), the price `(xfer, class)` of the transfer to `p` from
    /// the nearest one: the least `(xfer(q, p), class(q, p))` over them.
    /// `None` when no process is set, or when the machine has more than
    /// 64 processes (the caller then prices each sharer).
    #[inline]
    pub fn nearest(&self, p: u32, sharers: u64) -> Option<(u64, usize)> {
        let g = self.groups.get(p as usize)?;
        g.near
            .iter()
            .find(|&&(mask, _, _)| sharers & mask != 0)
            .map(|&(_, x, c)| (x, usize::from(c)))
    }

    /// Of the processes set in `sharers` (one word), the farthest from
    /// `p`: the greatest `xfer(q, p)`, and of the processes at that price
    /// the lowest-numbered one's class. `None` as for [`Pricing::nearest`].
    #[inline]
    pub fn farthest(&self, p: u32, sharers: u64) -> Option<(u64, usize)> {
        let g = self.groups.get(p as usize)?;
        let &(mask, x) = g.far.iter().find(|&&(mask, _)| sharers & mask != 0)?;
        let q = (sharers & mask).trailing_zeros();
        Some((x, self.class(q, p)))
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

impl Groups {
    /// The groups of requester `p` on a machine of `procs` (at most 64)
    /// processes with the given `[from * procs + to]` matrices.
    fn of(procs: usize, p: usize, xfer_ps: &[u64], class: &[u8]) -> Groups {
        let mut near: Vec<(u64, u64, u8)> = Vec::new();
        let mut far: Vec<(u64, u64)> = Vec::new();
        for q in 0..procs {
            let (x, c) = (xfer_ps[q * procs + p], class[q * procs + p]);
            let bit = 1u64 << q;
            match near.iter_mut().find(|g| (g.1, g.2) == (x, c)) {
                Some(g) => g.0 |= bit,
                None => near.push((bit, x, c)),
            }
            match far.iter_mut().find(|g| g.1 == x) {
                Some(g) => g.0 |= bit,
                None => far.push((bit, x)),
            }
        }
        near.sort_by_key(|g| (g.1, g.2));
        far.sort_by_key(|g| std::cmp::Reverse(g.1));
        Groups { near, far }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The price groups give what pricing every set sharer gives: the
        /// least `(xfer, class)` pair, and the greatest `xfer` with the
        /// class of the lowest-numbered process at it. Prices and classes
        /// come from a few values, so ties (the case the groups must
        /// split right) are common.
        #[test]
        fn groups_find_the_nearest_and_farthest_sharer(
            procs in 1usize..=64,
            seed in proptest::collection::vec((0u64..4, 0u8..3), 64 * 64),
            masks in proptest::collection::vec(any::<u64>(), 8),
        ) {
            let xfer: Vec<u64> = seed.iter().take(procs * procs).map(|&(x, _)| x * 10_000).collect();
            let class: Vec<u8> = seed.iter().take(procs * procs).map(|&(_, c)| c).collect();
            let m = Pricing::from_matrix(procs, xfer, class, 1_000, 80_000);
            let all = if procs == 64 { u64::MAX } else { (1u64 << procs) - 1 };
            for p in 0..procs as u32 {
                for &mask in &masks {
                    let sharers = mask & all & !(1u64 << p);
                    let set = (0..procs as u32).filter(|&q| sharers >> q & 1 == 1);
                    let nearest = set.clone().map(|q| (m.xfer(q, p), m.class(q, p))).min();
                    prop_assert_eq!(m.nearest(p, sharers), nearest);
                    let mut far: Option<(u64, usize)> = None;
                    for q in set {
                        if far.is_none_or(|(c, _)| m.xfer(q, p) > c) {
                            far = Some((m.xfer(q, p), m.class(q, p)));
                        }
                    }
                    prop_assert_eq!(m.farthest(p, sharers), far);
                }
            }
        }
    }

    #[test]
    fn past_64_processes_there_are_no_groups() {
        assert!(Pricing::ideal(64).grouped());
        let m = Pricing::ideal(65);
        assert!(!m.grouped());
        assert_eq!(m.nearest(0, 0b110), None);
        assert_eq!(m.farthest(0, 0b110), None);
    }
}
