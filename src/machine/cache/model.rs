//! The cache model of one run's machine ([`MachineCaches`]): the
//! hierarchy laid out for the run's threads and what each outcome costs.
//! [`MachineCaches::check`] validates the layout without building the
//! arrays (what `fsmeta check` needs: a point's caches are megabytes).

use super::{CacheConfig, CacheError, Hierarchy, LevelConfig, MAX_WAYS, Outcome, Served};
use crate::param::ParamError;

/// The cache model of one run's machine: the hierarchy, the hierarchy core
/// each thread runs on (SMT siblings share one core's private caches), and
/// what each outcome costs.
#[derive(Clone, Debug)]
pub struct MachineCaches {
    /// The caches, cold.
    pub hierarchy: Hierarchy,
    /// Hierarchy core of each thread, by thread number.
    pub thread_core: Vec<usize>,
    /// Prices of outcomes.
    pub prices: CachePrices,
}

/// What an access costs by where it was served, in ps (load-to-use).
#[derive(Clone, Debug)]
pub struct CachePrices {
    /// Served without leaving the core's socket, in `Served::class`
    /// order: L1d hit (`hit_ns`), L2 hit (`levels.l2_hit_ns`), LLC hit
    /// (`levels.llc_hit_ns`), DRAM (`memory_ns`). An array, so an access
    /// is priced by a load rather than a jump on where it was served.
    pub local_ps: [u64; 4],
    /// Transfer from core `a`'s cache to core `b`'s, `[a * cores + b]`,
    /// by the distance class of their CPUs.
    pub peer_ps: Vec<u64>,
    cores: usize,
}

impl CachePrices {
    /// Cost of one access by `core` with outcome `o`, in ps: the load-to-use
    /// latency of where it was served. A store that must invalidate other
    /// cores' copies costs no more than its load part: on x86 (TSO) stores
    /// retire into the store buffer and the ownership request overlaps the
    /// code that follows; the line's transfer still happens (the other
    /// cores' next reads miss).
    #[inline]
    pub fn of(&self, core: usize, o: Outcome) -> u64 {
        match o.served {
            Served::Peer { from_core, .. } => self.peer_ps[from_core as usize * self.cores + core],
            local => self.local_ps[local.class() & 3],
        }
    }
}

#[cfg(test)]
thread_local! {
    /// How many models [`MachineCaches::for_machine`] built on this thread
    /// (tests check what builds them and what does not).
    pub(crate) static BUILT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// What a run's caches are built from: the hierarchy's shape, the core
/// of each thread and the prices.
struct Layout {
    config: CacheConfig,
    thread_core: Vec<usize>,
    prices: CachePrices,
}

impl MachineCaches {
    /// Builds the cache model for `machine`'s threads: one private L1d and
    /// L2 per physical core in use, one LLC per LLC domain in use (its
    /// share of `llc_bytes_per_socket`), LRU with the profile's ways
    /// (`levels.l1d_ways`, `levels.l2_ways`, `cache_ways` for the LLC).
    /// Errors name the profile field that is missing or does not make a
    /// power-of-two number of sets.
    pub fn for_machine(machine: &crate::machine::Machine) -> Result<Self, ParamError> {
        #[cfg(test)]
        BUILT.with(|b| b.set(b.get() + 1));
        let layout = layout(machine)?;
        let hierarchy = Hierarchy::new(&layout.config).map_err(|e| geometry_error(&e))?;
        Ok(Self {
            hierarchy,
            thread_core: layout.thread_core,
            prices: layout.prices,
        })
    }

    /// The errors [`MachineCaches::for_machine`] would give, without
    /// building the arrays (a few MiB per core).
    pub fn check(machine: &crate::machine::Machine) -> Result<(), ParamError> {
        let layout = layout(machine)?;
        Hierarchy::check(&layout.config).map_err(|e| geometry_error(&e))
    }
}

/// A geometry error, named by the profile field that makes it.
fn geometry_error(e: &CacheError) -> ParamError {
    let field = match *e {
        CacheError::BadGeometry(level, _, ways) if !(1..=MAX_WAYS).contains(&ways) => match level {
            "l1d" => "machine.profile.levels.l1d_ways",
            "l2" => "machine.profile.levels.l2_ways",
            _ => "machine.profile.cache_ways",
        },
        CacheError::BadGeometry("l1d", ..) => "machine.profile.l1d_bytes",
        CacheError::BadGeometry("l2", ..) => "machine.profile.l2_bytes",
        CacheError::NoCores => "workload.threads",
        _ => "machine.profile.llc_bytes_per_socket",
    };
    ParamError::new(field, e.to_string())
}

/// The hierarchy's shape for `machine`'s threads and the prices.
fn layout(machine: &crate::machine::Machine) -> Result<Layout, ParamError> {
    let p = &machine.profile;
    let topo = machine.topology();
    let levels = p.levels.as_ref().ok_or_else(|| {
        ParamError::new(
            "machine.profile",
            format!(
                "profile `{}` has no [levels] table (l1d_ways, l2_ways, l2_hit_ns, llc_hit_ns), which the cache model needs",
                p.name
            ),
        )
    })?;
    let (thread_core, firsts) = first_seen(machine.cpus.iter().map(|&c| topo.core_of(c)));
    let rep_cpu: Vec<_> = firsts.iter().map(|&i| machine.cpus[i]).collect();
    let core_socket = first_seen(rep_cpu.iter().map(|&c| topo.llc_of(c)))
        .0
        .into_iter()
        .map(|i| i as u32)
        .collect();
    let llc_bytes = p.llc_bytes_per_socket / u64::from(topo.llcs_per_socket.max(1));
    let config = CacheConfig {
        l1d: LevelConfig {
            size_bytes: p.l1d_bytes,
            ways: levels.l1d_ways,
        },
        l2: LevelConfig {
            size_bytes: p.l2_bytes,
            ways: levels.l2_ways,
        },
        llc: LevelConfig {
            size_bytes: llc_bytes,
            ways: p.cache_ways,
        },
        core_socket,
    };
    let n = rep_cpu.len();
    let mut peer_ps = Vec::with_capacity(n * n);
    for &a in &rep_cpu {
        for &b in &rep_cpu {
            peer_ps.push(p.transfer_between_ps(topo.distance(a, b), topo.socket_of(a), topo.socket_of(b)));
        }
    }
    let ps = crate::machine::ns_to_ps;
    let prices = CachePrices {
        local_ps: [ps(p.hit_ns), ps(levels.l2_hit_ns), ps(levels.llc_hit_ns), p.memory_ps()],
        peer_ps,
        cores: n,
    };
    Ok(Layout {
        config,
        thread_core,
        prices,
    })
}

/// Groups `keys` by value in order of first appearance: each key's group,
/// and the position of each group's first key.
fn first_seen(keys: impl Iterator<Item = u32>) -> (Vec<usize>, Vec<usize>) {
    let (mut seen, mut firsts) = (Vec::<u32>::new(), Vec::new());
    let groups = keys
        .enumerate()
        .map(|(at, k)| match seen.iter().position(|&s| s == k) {
            Some(g) => g,
            None => {
                seen.push(k);
                firsts.push(at);
                seen.len() - 1
            }
        })
        .collect();
    (groups, firsts)
}
