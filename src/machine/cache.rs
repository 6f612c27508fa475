//! Set-associative LRU cache hierarchy with write-invalidate coherence.
//!
//! Per core a private L1d and L2, per socket a shared last-level cache,
//! 64-byte lines. An access says which level served it; latencies live in
//! the machine profile, not here. The model answers one question exactly
//! and deterministically: given the sizes and the access sequence, does a
//! tree node's line hit or miss, and where does it come from?
//!
//! Policy (documented choices, not any one CPU):
//! - LRU replacement in every set; set index = line address mod sets
//!   (power-of-two set counts; no LLC slice hashing).
//! - Non-inclusive: a miss fills every level it missed in (L1 and L2, and
//!   the requester's LLC when the line came from memory or another core).
//!   Evictions never back-invalidate and never fill other levels (no victim
//!   fills).
//! - Coherence: a write by core c invalidates the line in every other
//!   core's L1 and L2 and makes c its dirty owner. Another core's next
//!   access misses privately and is served by c's cache (a *coherence
//!   miss*, [`Served::Peer`]); after that the line is shared and clean
//!   (written back), so later misses are served by the LLC or memory. When
//!   the owner evicts the line from both private levels it is written back
//!   and the ownership ends. LLC copies are not invalidated: the LLC is
//!   treated as the place a written-back line lands.

mod lines;
mod model;
mod set;
#[cfg(test)]
pub(crate) use lines::Form;
use lines::{Cell, LineStates};
use set::SetAssoc;

/// Most ways a cache level may have.
pub use set::MAX_WAYS;

#[cfg(test)]
pub(crate) use model::BUILT;
pub use model::{CachePrices, MachineCaches};

/// Size and associativity of one cache level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelConfig {
    /// Capacity, bytes.
    pub size_bytes: u64,
    /// Ways per set, 1 to 16 (each set's LRU order is one 64-bit word of
    /// 4-bit fields).
    pub ways: u32,
}

/// Shape of the hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// Private L1 data cache, per core.
    pub l1d: LevelConfig,
    /// Private L2, per core.
    pub l2: LevelConfig,
    /// Shared last-level cache, one per socket.
    pub llc: LevelConfig,
    /// Socket of each core (`core_socket[core]`); sockets are numbered from 0.
    pub core_socket: Vec<u32>,
}

/// A configuration the model cannot build.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheError {
    /// Size / (64 * ways) is not a power of two >= 1, or ways is 0 or over
    /// 16 (which level, bytes, ways).
    BadGeometry(&'static str, u64, u32),
    /// No cores.
    NoCores,
}

impl std::fmt::Display for CacheError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadGeometry(level, _, ways) if !(1..=MAX_WAYS).contains(ways) => {
                write!(f, "{level}: {ways} ways: a level has 1 to {MAX_WAYS} ways")
            }
            Self::BadGeometry(level, bytes, ways) => {
                write!(
                    f,
                    "{level}: {bytes} B / (64 B x {ways} ways) is not a power-of-two number of sets (ways: 1 to 16)"
                )
            }
            Self::NoCores => write!(f, "the hierarchy has no cores, or more than {MAX_CORES}"),
        }
    }
}

impl std::error::Error for CacheError {}

/// Where an access was served from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Served {
    /// The core's L1d.
    L1,
    /// The core's L2.
    L2,
    /// The socket's LLC.
    Llc,
    /// DRAM.
    Memory,
    /// Another core's private cache, because that core wrote the line last
    /// (a coherence miss).
    Peer {
        /// The core that held the line modified.
        from_core: u32,
        /// True if that core is on another socket.
        cross_socket: bool,
    },
}

/// Result of one access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Where the data came from.
    pub served: Served,
    /// Other cores whose private copies this access invalidated (writes only).
    pub invalidated_cores: u32,
}

/// Event counts, per core or summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Accesses.
    pub accesses: u64,
    /// L1 hits.
    pub l1_hits: u64,
    /// L1 misses.
    pub l1_misses: u64,
    /// L2 hits (lookups after an L1 miss).
    pub l2_hits: u64,
    /// L2 misses.
    pub l2_misses: u64,
    /// LLC hits (lookups after an L2 miss not served by a peer).
    pub llc_hits: u64,
    /// LLC misses: served by memory.
    pub llc_misses: u64,
    /// L2 misses served by another core's modified copy.
    pub coherence_misses: u64,
    /// Other cores' copies invalidated by this core's writes (cores).
    pub invalidations: u64,
}

impl Counters {
    /// The counters of a core whose accesses were served as `tally` says.
    fn of(tally: &Tally) -> Self {
        let [l1, l2, llc, memory, peer] = tally.served;
        Self {
            accesses: l1 + l2 + llc + memory + peer,
            l1_hits: l1,
            // Every access past the L1 missed it; every one past the L2
            // missed both private levels.
            l1_misses: l2 + llc + memory + peer,
            l2_hits: l2,
            l2_misses: llc + memory + peer,
            llc_hits: llc,
            llc_misses: memory,
            coherence_misses: peer,
            invalidations: tally.invalidations,
        }
    }

    fn add(&mut self, o: &Counters) {
        self.accesses += o.accesses;
        self.l1_hits += o.l1_hits;
        self.l1_misses += o.l1_misses;
        self.l2_hits += o.l2_hits;
        self.l2_misses += o.l2_misses;
        self.llc_hits += o.llc_hits;
        self.llc_misses += o.llc_misses;
        self.coherence_misses += o.coherence_misses;
        self.invalidations += o.invalidations;
    }
}

/// What a core's accesses came to, counted as they happen: accesses by
/// where they were served ([`Served::class`] order) and invalidations;
/// [`Counters`] follow from it.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    served: [u64; 5],
    invalidations: u64,
}

impl Tally {
    /// Counts one access served by `served` that invalidated
    /// `invalidated` other cores' copies.
    #[inline]
    fn count(&mut self, served: Served, invalidated: u32) {
        self.served[served.class()] += 1;
        self.invalidations += u64::from(invalidated);
    }
}

impl Served {
    /// 0 to 4: L1, L2, LLC, memory, peer.
    #[inline]
    fn class(self) -> usize {
        match self {
            Served::L1 => 0,
            Served::L2 => 1,
            Served::Llc => 2,
            Served::Memory => 3,
            Served::Peer { .. } => 4,
        }
    }
}

/// Coherence state of a line: which cores may hold a private copy and
/// which core holds it modified. Stored in two bytes on machines of up to
/// 8 cores, four up to 16, ten beyond ([`lines`]): a run keeps one per
/// line it has seen (case 2 writes 17 lines per inode, 6M inodes per
/// run), so the states are most of a large run's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LineState {
    /// Bit `c % 64` ([`FILTER_BITS`]) is set when core `c` (or, beyond 64
    /// cores, another core of the same residue) may hold a copy in L1 or
    /// L2: exact up to 64 cores, a superset filter beyond, so a write
    /// looks only at cores that may hold the line.
    sharers: u64,
    /// Core holding it modified, or `NO_OWNER`.
    owner: u16,
}

/// Bits of the sharer filter ([`LineState::sharers`]).
///
/// 64 since issue 35 (session 49); it was 16. On `index-scaling.toml`'s
/// 64-core machine a write probed the private caches of every core of
/// its bit's residue (four per bit): 45.6M probes for 12.2M copies
/// invalidated over 960K creates at 10^5 open inodes, each probe two
/// set lookups. With one bit a core those three runs took 4.55 s user
/// against 6.44, outputs byte-identical; the states of machines over 16
/// cores take ten bytes instead of four.
const FILTER_BITS: usize = 64;

const NO_OWNER: u16 = u16::MAX;

impl Default for LineState {
    fn default() -> Self {
        Self {
            sharers: 0,
            owner: NO_OWNER,
        }
    }
}

#[inline]
fn bit(core: usize) -> u64 {
    1 << (core % FILTER_BITS)
}

/// Most cores a hierarchy may have (line states keep core numbers in 16 bits).
pub const MAX_CORES: usize = 32_000;

/// One core's private caches, its LLC's number and its counts, kept
/// together so that an access finds them with one index.
#[derive(Clone, Debug)]
struct Private {
    l1: SetAssoc,
    l2: SetAssoc,
    /// Index of the core's LLC (its socket).
    socket: usize,
    tally: Tally,
}

impl Private {
    /// An access to `line` in the L1d, then the L2: the level that served
    /// it, or `None` if both missed. Every level missed is filled. From an
    /// L2 hit the core already holds the line, so its sharer bit is set.
    #[inline]
    fn lookup(&mut self, line: u64) -> Option<Served> {
        if self.l1.touch(line) {
            Some(Served::L1)
        } else if self.l2.touch(line) {
            Some(Served::L2)
        } else {
            None
        }
    }

    /// Drops `line` from the L1d and the L2 (another core took it for
    /// writing); true if either held it.
    #[inline]
    fn invalidate(&mut self, line: u64) -> bool {
        let (l1, l2) = (self.l1.remove(line), self.l2.remove(line));
        l1 || l2
    }

    /// Whether the L1d or L2 holds `line`.
    #[inline]
    fn holds(&self, line: u64) -> bool {
        self.l1.contains(line) || self.l2.contains(line)
    }
}

/// The cache hierarchy of one machine.
#[derive(Clone, Debug)]
pub struct Hierarchy {
    private: Vec<Private>,
    llc: Vec<SetAssoc>,
    lines: LineStates,
    /// Lines from this address on must be admitted to every array before
    /// an access ([`SetAssoc::admit`]): the least of their `high_line`s.
    high_line: u64,
}

impl Hierarchy {
    /// The error [`Hierarchy::new`] would give for `config`, without
    /// building the arrays.
    pub fn check(config: &CacheConfig) -> Result<(), CacheError> {
        let cores = config.core_socket.len();
        if cores == 0 || cores > MAX_CORES {
            return Err(CacheError::NoCores);
        }
        SetAssoc::sets("l1d", config.l1d)?;
        SetAssoc::sets("l2", config.l2)?;
        SetAssoc::sets("llc", config.llc)?;
        Ok(())
    }

    /// Builds empty (cold) caches for `config`.
    pub fn new(config: &CacheConfig) -> Result<Self, CacheError> {
        Self::build(config, LineStates::new)
    }

    /// [`Hierarchy::new`] keeping its line states in `form` (one that
    /// holds the core count), whatever the core count would choose: tests
    /// hold the forms to each other.
    #[cfg(test)]
    pub(crate) fn with_form(config: &CacheConfig, form: lines::Form) -> Result<Self, CacheError> {
        Self::build(config, |cores| LineStates::with_form(cores, form))
    }

    fn build(config: &CacheConfig, states: impl FnOnce(usize) -> LineStates) -> Result<Self, CacheError> {
        Self::check(config)?;
        let sockets = config.core_socket.iter().max().map_or(0, |&s| s as usize + 1);
        let l1 = SetAssoc::new("l1d", config.l1d)?;
        let l2 = SetAssoc::new("l2", config.l2)?;
        let llc = SetAssoc::new("llc", config.llc)?;
        let private = config
            .core_socket
            .iter()
            .map(|&s| Private {
                l1: l1.clone(),
                l2: l2.clone(),
                socket: s as usize,
                tally: Tally::default(),
            })
            .collect();
        let mut h = Self {
            private,
            llc: vec![llc; sockets],
            lines: states(config.core_socket.len()),
            high_line: 0,
        };
        h.high_line = h.least_high_line();
        Ok(h)
    }

    /// The least of every array's [`SetAssoc::high_line`].
    fn least_high_line(&self) -> u64 {
        let private = self.private.iter().flat_map(|p| [p.l1.high_line(), p.l2.high_line()]);
        private.chain(self.llc.iter().map(SetAssoc::high_line)).min().unwrap_or(u64::MAX)
    }

    /// Admits `line` to every array ([`SetAssoc::admit`]), which then
    /// keep their tags' high halves if it needs them.
    #[cold]
    #[inline(never)]
    fn admit(&mut self, line: u64) {
        for p in &mut self.private {
            p.l1.admit(line);
            p.l2.admit(line);
        }
        self.llc.iter_mut().for_each(|a| a.admit(line));
        self.high_line = self.least_high_line();
    }

    /// Number of cores.
    pub fn cores(&self) -> usize {
        self.private.len()
    }

    /// Counters of one core.
    pub fn counters(&self, core: usize) -> Counters {
        Counters::of(&self.private[core].tally)
    }

    /// Counters summed over all cores.
    pub fn totals(&self) -> Counters {
        let mut sum = Counters::default();
        self.private.iter().for_each(|p| sum.add(&Counters::of(&p.tally)));
        sum
    }

    /// Whether `core`'s (L1d, L2) hold `line`.
    pub fn private_holds(&self, core: usize, line: u64) -> (bool, bool) {
        let p = &self.private[core];
        (p.l1.contains(line), p.l2.contains(line))
    }

    /// Whether `socket`'s LLC holds `line`.
    pub fn llc_holds(&self, socket: usize, line: u64) -> bool {
        self.llc[socket].contains(line)
    }

    /// `lines` fresh lines (never accessed before or after, as a stream
    /// through memory the model does not otherwise follow) pass through
    /// `core`'s L1d and L2 and its LLC: each fills every level, evicting
    /// what LRU says. Not counted as accesses. Costs one byte update per
    /// set reached (at most every set); each set absorbs its share when
    /// next looked at.
    pub fn stream_fresh(&mut self, core: usize, lines: u64) {
        let p = &mut self.private[core];
        p.l1.stream(lines);
        p.l2.stream(lines);
        self.llc[p.socket].stream(lines);
    }

    /// One access by `core` to line address `line` (byte address / 64).
    ///
    /// Every level the access missed in is filled as it is looked up (the
    /// lookups and fills touch different arrays, so their order does not
    /// matter; a peer's caches are looked at, never filled).
    ///
    /// Always inlined: a caller's loop over touches runs it once per
    /// touch, and when LLVM outlined it (once the library had a second
    /// caller) case 2 took 9% more CPU time (3 paired runs).
    ///
    /// Tried in issue 35 (session 48) and not kept: a host prefetch of
    /// every touch's L2 and LLC sets and line state before the touch list
    /// is priced, so the host's misses on those arrays would overlap. Case
    /// 2 at full scale, `--jobs 1`, two alternating pairs: 43.3 and 43.5 s
    /// user against 42.1 and 42.4 without (byte-identical outputs). With
    /// transparent huge pages forced on for the whole run (`always`; the
    /// host's setting is `madvise`) it took 43.4 s: neither the TLB nor
    /// the order of the misses is what the accesses wait on.
    #[inline(always)]
    pub fn access(&mut self, core: usize, line: u64, is_write: bool) -> Outcome {
        if line >= self.high_line {
            self.admit(line);
        }
        if is_write {
            return self.write(core, line);
        }
        let served = match self.private[core].lookup(line) {
            Some(served) => served,
            None => match &mut self.lines {
                LineStates::Narrow(c) => fetch_cell(&self.private, &mut self.llc, c.entry(line), core, line),
                LineStates::Wide(c) => fetch_cell(&self.private, &mut self.llc, c.entry(line), core, line),
                LineStates::Broad(c) => fetch_cell(&self.private, &mut self.llc, c.entry(line), core, line),
            },
        };
        self.private[core].tally.count(served, 0);
        Outcome {
            served,
            invalidated_cores: 0,
        }
    }

    /// A write by `core`: looked up as a read, then `core` takes
    /// ownership, invalidating the other cores' private copies. One
    /// line-state lookup serves the whole write.
    ///
    /// A line no core has ever fetched (its state has no sharer: a line
    /// enters a cache only through a fetch, which makes the fetching core
    /// a sharer, and a write leaves its writer one) is in no cache: it
    /// misses every level and comes from memory; the private levels and
    /// the LLC are filled without looking (a new object's initialising
    /// stores are such writes). The same outcome and state as the general
    /// path, without its tag compares.
    #[inline]
    fn write(&mut self, core: usize, line: u64) -> Outcome {
        match &mut self.lines {
            LineStates::Narrow(c) => write_cell(&mut self.private, &mut self.llc, c.entry(line), core, line),
            LineStates::Wide(c) => write_cell(&mut self.private, &mut self.llc, c.entry(line), core, line),
            LineStates::Broad(c) => write_cell(&mut self.private, &mut self.llc, c.entry(line), core, line),
        }
    }
}

/// [`Hierarchy::write`] with the line's state `cell` found.
#[inline(always)]
fn write_cell<S: Cell>(private: &mut [Private], llc: &mut [SetAssoc], cell: &mut S, core: usize, line: u64) -> Outcome {
    let mut state = cell.get();
    if state.sharers == 0 {
        *cell = S::put(LineState {
            sharers: bit(core),
            owner: core as u16,
        });
        let p = &mut private[core];
        p.l1.fill(line);
        p.l2.fill(line);
        llc[p.socket].fill(line);
        p.tally.count(Served::Memory, 0);
        return Outcome {
            served: Served::Memory,
            invalidated_cores: 0,
        };
    }
    let served = match private[core].lookup(line) {
        Some(served) => served,
        None => fetch(private, llc, &mut state, core, line),
    };
    let invalidated_cores = take_ownership(private, &mut state, core, line);
    *cell = S::put(state);
    private[core].tally.count(served, invalidated_cores);
    Outcome { served, invalidated_cores }
}

/// [`fetch`] with the line's state `cell` found.
#[inline(always)]
fn fetch_cell<S: Cell>(private: &[Private], llc: &mut [SetAssoc], cell: &mut S, core: usize, line: u64) -> Served {
    let mut state = cell.get();
    let served = fetch(private, llc, &mut state, core, line);
    *cell = S::put(state);
    served
}

/// Beyond `core`'s private caches (L1 and L2 already filled): a peer's
/// modified copy, the LLC, or memory. The core becomes a sharer of the
/// line (state `state`).
#[inline(always)]
fn fetch(private: &[Private], llc: &mut [SetAssoc], state: &mut LineState, core: usize, line: u64) -> Served {
    let socket = private[core].socket;
    let owner = state.owner;
    state.sharers |= bit(core);
    // Ownership ends when the owner no longer holds the line privately
    // (it was written back on eviction); checked here, lazily.
    if owner != NO_OWNER && owner as usize != core && private[owner as usize].holds(line) {
        state.owner = NO_OWNER; // shared now, written back
        llc[socket].touch(line);
        let cross_socket = private[owner as usize].socket != socket;
        return Served::Peer {
            from_core: u32::from(owner),
            cross_socket,
        };
    }
    if llc[socket].touch(line) { Served::Llc } else { Served::Memory }
}

/// A write by `core` to `line` (state `state`): invalidate other cores'
/// private copies, become the owner. Returns the number of cores whose
/// copies were invalidated.
///
/// Always inlined into [`write_cell`]: LLVM outlined it, and the call
/// with its spills was 1.4% of case 2's instructions (cachegrind, rb-tree
/// variant, --quick).
#[inline(always)]
fn take_ownership(private: &mut [Private], state: &mut LineState, core: usize, line: u64) -> u32 {
    let cores = private.len();
    let few = cores <= FILTER_BITS;
    let others = if few { state.sharers & !bit(core) } else { state.sharers };
    state.sharers = bit(core);
    state.owner = core as u16;
    if others == 0 {
        return 0;
    }
    let mut invalidated = 0;
    let mut bits = others;
    while bits != 0 {
        let b = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        if few {
            // Bit `b` is core `b` itself, and `others` excludes `core`.
            invalidated += u32::from(private[b].invalidate(line));
            continue;
        }
        for other in (b..cores).step_by(FILTER_BITS).filter(|&o| o != core) {
            invalidated += u32::from(private[other].invalidate(line));
        }
    }
    invalidated
}

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;
