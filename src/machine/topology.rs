//! CPU topology: sockets x physical cores x SMT threads, with last-level
//! cache (LLC) domains inside a socket, numbered the way Linux numbers
//! logical CPUs, and the distance class of every pair of CPUs.
//!
//! # Linux CPU numbering
//!
//! On a multi-socket x86 server the firmware (ACPI MADT) lists the first
//! hardware thread of every core before any second thread, and Linux hands
//! out logical CPU numbers in that order. So with `C = sockets x
//! cores_per_socket` physical cores:
//!
//! * CPUs `0 .. C` are thread 0 of cores `0 .. C` (socket 0's cores first,
//!   then socket 1's, ...);
//! * CPUs `C .. 2C` are thread 1 of the same cores in the same order; and so
//!   on for more SMT threads.
//!
//! That is, CPU `c` is SMT thread `c / C` of global physical core `c % C`,
//! and core `k` sits on socket `k / cores_per_socket`. This is what
//! `/sys/devices/system/cpu/cpuN/topology/thread_siblings_list` shows on
//! such machines: on a 2 x 4 x 2 box CPU 0's siblings are `0,8`.
//!
//! LLC domains (AMD CCX/CCD) split each socket's cores into
//! `llcs_per_socket` equal, contiguous groups: core `k`'s LLC is
//! `socket * llcs_per_socket + (k % cores_per_socket) / (cores_per_socket /
//! llcs_per_socket)`. Intel server parts share one LLC per socket
//! (`llcs_per_socket = 1`), so two distinct cores of one socket are then
//! always [`Distance::SameLlc`] and [`Distance::SameSocket`] cannot occur.

use crate::param::ParamError;

/// Largest number of logical CPUs a topology may have (the kernel's
/// `CONFIG_NR_CPUS` limit on common distribution kernels is 4096 or 8192;
/// we keep the smaller so per-CPU arrays in the models stay small).
pub const MAX_CPUS: u64 = 4096;

/// A logical CPU number as Linux numbers them (`smp_processor_id()`), see
/// the module docs for the numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuId(pub u32);

/// Distance class between two CPUs, ordered nearest first: it selects which
/// cache-line transfer latency of a [`crate::machine::profile::MachineProfile`]
/// a coherence transfer between them costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Distance {
    /// The same logical CPU: the line is already in its own L1.
    SameCpu,
    /// Two hardware threads of one physical core (shared L1/L2).
    SmtSibling,
    /// Different cores sharing one last-level cache (Intel socket, AMD CCX).
    SameLlc,
    /// Different LLC domains of one socket (AMD: across CCX/CCD via the IO die).
    SameSocket,
    /// Different sockets (UPI / Infinity Fabric between packages).
    CrossSocket,
}

impl Distance {
    /// Every distance class, nearest first; `ALL[d.index()] == d`.
    pub const ALL: [Distance; 5] = [
        Distance::SameCpu,
        Distance::SmtSibling,
        Distance::SameLlc,
        Distance::SameSocket,
        Distance::CrossSocket,
    ];

    /// Short name used in metric names and reports: `same_cpu`, `smt`,
    /// `same_llc`, `same_socket`, `cross_socket`.
    pub fn name(self) -> &'static str {
        match self {
            Distance::SameCpu => "same_cpu",
            Distance::SmtSibling => "smt",
            Distance::SameLlc => "same_llc",
            Distance::SameSocket => "same_socket",
            Distance::CrossSocket => "cross_socket",
        }
    }

    /// Position in [`Distance::ALL`] (0 = same CPU ... 4 = cross socket), for
    /// `[u64; 5]` arrays of per-class counts.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Shape of a machine: `sockets x cores_per_socket x smt` logical CPUs, with
/// `llcs_per_socket` LLC domains (CCX) splitting each socket's cores evenly.
/// Numbered as Linux numbers CPUs (module docs).
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Number of processor packages (NUMA sockets), at least 1.
    pub sockets: u32,
    /// Physical cores per socket, at least 1.
    pub cores_per_socket: u32,
    /// Hardware threads per core (1 = no SMT, 2 = Hyper-Threading/SMT2).
    pub smt: u32,
    /// LLC domains per socket (1 on Intel; CCX count on AMD Zen); must divide
    /// `cores_per_socket`.
    pub llcs_per_socket: u32,
}

/// How software threads are pinned to CPUs, in thread order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// One thread per physical core, socket 0's cores first, then socket 1's,
    /// ...; only when every core has a thread do SMT siblings get one. This
    /// is plain Linux CPU order: thread `i` runs on CPU `i`.
    Spread,
    /// Fill all SMT siblings of a core before the next core, cores in order
    /// (socket 0 first): how cloud vCPUs pair up (vCPU 0 and 1 are the two
    /// hyperthreads of one core).
    Compact,
    /// One thread per physical core, alternating sockets (thread `i` on
    /// socket `i % sockets`): how the host scheduler spreads an unpinned
    /// VM's vCPU threads over NUMA nodes when the host is lightly loaded.
    Interleave,
}

impl Topology {
    /// Checks every count is at least 1, `llcs_per_socket` divides
    /// `cores_per_socket`, and there are at most [`MAX_CPUS`] CPUs. Field
    /// names in errors are this struct's (`sockets`, `cores_per_socket`,
    /// `smt`, `llcs_per_socket`).
    pub fn validate(&self) -> Result<(), ParamError> {
        let counts = [
            ("sockets", self.sockets),
            ("cores_per_socket", self.cores_per_socket),
            ("smt", self.smt),
            ("llcs_per_socket", self.llcs_per_socket),
        ];
        for (field, value) in counts {
            if value == 0 {
                return Err(invalid(field, "must be at least 1".to_string()));
            }
        }
        if !self.cores_per_socket.is_multiple_of(self.llcs_per_socket) {
            let msg = format!(
                "{} LLC domains do not split {} cores per socket evenly",
                self.llcs_per_socket, self.cores_per_socket
            );
            return Err(invalid("llcs_per_socket", msg));
        }
        let total = u64::from(self.sockets) * u64::from(self.cores_per_socket) * u64::from(self.smt);
        if total > MAX_CPUS {
            let msg = format!("{total} CPUs in all; at most {MAX_CPUS} are supported");
            return Err(invalid("cores_per_socket", msg));
        }
        Ok(())
    }

    /// Number of logical CPUs, `sockets x cores_per_socket x smt` (saturating;
    /// exact for a validated topology).
    pub fn cpus(&self) -> u32 {
        self.cores().saturating_mul(self.smt)
    }

    /// Number of physical cores in the machine, `sockets x cores_per_socket`.
    pub fn cores(&self) -> u32 {
        self.sockets.saturating_mul(self.cores_per_socket)
    }

    /// Number of LLC domains in the machine, `sockets x llcs_per_socket`.
    pub fn llcs(&self) -> u32 {
        self.sockets.saturating_mul(self.llcs_per_socket)
    }

    /// Socket (package) of CPU `c` (`topology/physical_package_id`).
    pub fn socket_of(&self, c: CpuId) -> u32 {
        self.core_of(c) / self.cores_per_socket.max(1)
    }

    /// Global physical core index of CPU `c`, `0 .. cores()`, socket 0's
    /// cores first (so unlike Linux's per-package `core_id`, it is unique).
    pub fn core_of(&self, c: CpuId) -> u32 {
        c.0 % self.cores().max(1)
    }

    /// SMT thread of CPU `c` within its core, `0 .. smt`.
    pub fn thread_of(&self, c: CpuId) -> u32 {
        c.0 / self.cores().max(1)
    }

    /// Global LLC domain index of CPU `c`, `0 .. llcs()`, socket 0's first.
    pub fn llc_of(&self, c: CpuId) -> u32 {
        let cps = self.cores_per_socket.max(1);
        let cores_per_llc = (cps / self.llcs_per_socket.max(1)).max(1);
        let core_in_socket = self.core_of(c) % cps;
        self.socket_of(c) * self.llcs_per_socket + core_in_socket / cores_per_llc
    }

    /// The CPU of SMT thread `thread` of global physical core `core`: the
    /// inverse of ([`Topology::core_of`], [`Topology::thread_of`]).
    pub fn cpu_of(&self, core: u32, thread: u32) -> CpuId {
        CpuId(thread * self.cores() + core)
    }

    /// Distance class between CPUs `a` and `b` (symmetric): the nearest level
    /// of the hierarchy they share.
    pub fn distance(&self, a: CpuId, b: CpuId) -> Distance {
        if a == b {
            Distance::SameCpu
        } else if self.core_of(a) == self.core_of(b) {
            Distance::SmtSibling
        } else if self.llc_of(a) == self.llc_of(b) {
            Distance::SameLlc
        } else if self.socket_of(a) == self.socket_of(b) {
            Distance::SameSocket
        } else {
            Distance::CrossSocket
        }
    }

    /// The CPUs `threads` software threads run on, in thread order, under
    /// `policy` (see [`Placement`]); each CPU is used at most once. Errors if
    /// `threads` is 0 or more than [`Topology::cpus`] (field `threads`).
    pub fn place(&self, threads: u32, policy: Placement) -> Result<Vec<CpuId>, ParamError> {
        self.validate()?;
        if threads == 0 || threads > self.cpus() {
            let msg = format!("must be 1 to {} (the machine's CPUs)", self.cpus());
            return Err(invalid("threads", msg));
        }
        let cpus = (0..threads).map(|i| match policy {
            Placement::Spread => CpuId(i),
            Placement::Compact => self.cpu_of(i / self.smt, i % self.smt),
            Placement::Interleave => {
                let (socket, k) = (i % self.sockets, i / self.sockets);
                let core = socket * self.cores_per_socket + k % self.cores_per_socket;
                self.cpu_of(core, k / self.cores_per_socket)
            }
        });
        Ok(cpus.collect())
    }
}

/// Builds the `InvalidParam` error for a topology field.
fn invalid(field: &str, message: String) -> ParamError {
    ParamError::new(field, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn topo(sockets: u32, cores_per_socket: u32, smt: u32, llcs_per_socket: u32) -> Topology {
        Topology {
            sockets,
            cores_per_socket,
            smt,
            llcs_per_socket,
        }
    }

    fn d(t: &Topology, a: u32, b: u32) -> Distance {
        t.distance(CpuId(a), CpuId(b))
    }

    #[test]
    fn linux_numbering_2x4x2() {
        let t = topo(2, 4, 2, 1);
        assert_eq!(t.cpus(), 16);
        // CPU 0..3 socket 0 thread 0, 4..7 socket 1 thread 0,
        // 8..11 socket 0 thread 1, 12..15 socket 1 thread 1.
        let sockets: Vec<u32> = (0..16).map(|c| t.socket_of(CpuId(c))).collect();
        assert_eq!(sockets, [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(t.core_of(CpuId(13)), 5);
        assert_eq!(t.thread_of(CpuId(13)), 1);
        assert_eq!(t.cpu_of(5, 1), CpuId(13));
    }

    #[test]
    fn distances_2x4x2() {
        let t = topo(2, 4, 2, 1);
        assert_eq!(d(&t, 3, 3), Distance::SameCpu);
        assert_eq!(d(&t, 0, 8), Distance::SmtSibling);
        assert_eq!(d(&t, 5, 13), Distance::SmtSibling);
        assert_eq!(d(&t, 0, 1), Distance::SameLlc);
        assert_eq!(d(&t, 0, 11), Distance::SameLlc);
        assert_eq!(d(&t, 0, 4), Distance::CrossSocket);
        assert_eq!(d(&t, 8, 12), Distance::CrossSocket);
        assert_eq!(d(&t, 3, 12), Distance::CrossSocket);
        assert_eq!(d(&t, 7, 15), Distance::SmtSibling);
    }

    #[test]
    fn llc_domains_ccx() {
        // Milan-like: 2 sockets x 48 cores x 2 SMT, 6 CCX of 8 cores per socket.
        let t = topo(2, 48, 2, 6);
        t.validate().unwrap();
        assert_eq!(t.llcs(), 12);
        assert_eq!(t.llc_of(CpuId(0)), 0);
        assert_eq!(t.llc_of(CpuId(7)), 0);
        assert_eq!(t.llc_of(CpuId(8)), 1);
        assert_eq!(t.llc_of(CpuId(47)), 5);
        assert_eq!(t.llc_of(CpuId(48)), 6);
        assert_eq!(t.llc_of(CpuId(96 + 9)), 1); // sibling of core 9
        assert_eq!(d(&t, 0, 7), Distance::SameLlc);
        assert_eq!(d(&t, 0, 96 + 7), Distance::SameLlc);
        assert_eq!(d(&t, 7, 8), Distance::SameSocket);
        assert_eq!(d(&t, 0, 47), Distance::SameSocket);
        assert_eq!(d(&t, 47, 48), Distance::CrossSocket);
    }

    #[test]
    fn placement_2x4x2() {
        let t = topo(2, 4, 2, 1);
        let ids = |v: Vec<CpuId>| v.into_iter().map(|c| c.0).collect::<Vec<_>>();
        let spread = ids(t.place(10, Placement::Spread).unwrap());
        assert_eq!(spread, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let compact = ids(t.place(6, Placement::Compact).unwrap());
        assert_eq!(compact, [0, 8, 1, 9, 2, 10]);
        let all = ids(t.place(16, Placement::Compact).unwrap());
        assert_eq!(&all[8..], [4, 12, 5, 13, 6, 14, 7, 15]);
    }

    #[test]
    fn placement_16_vcpus_stay_on_one_socket_when_compact() {
        let t = topo(2, 32, 2, 1);
        let cpus = t.place(16, Placement::Compact).unwrap();
        assert!(cpus.iter().all(|&c| t.socket_of(c) == 0));
        assert_eq!(t.distance(cpus[0], cpus[1]), Distance::SmtSibling);
        let spread = t.place(16, Placement::Spread).unwrap();
        assert!(spread.iter().all(|&c| t.thread_of(c) == 0));
    }

    #[test]
    fn placement_rejects_bad_thread_counts() {
        let t = topo(1, 4, 2, 1);
        for n in [0, 9] {
            match t.place(n, Placement::Spread) {
                Err(e) => assert_eq!(e.field, "threads"),
                other => panic!("expected a parameter error, got {other:?}"),
            }
        }
    }

    #[test]
    fn validate_rejects_bad_topologies() {
        let field = |t: Topology| match t.validate() {
            Err(e) => e.field,
            other => panic!("expected a parameter error, got {other:?}"),
        };
        assert_eq!(field(topo(0, 4, 1, 1)), "sockets");
        assert_eq!(field(topo(1, 4, 0, 1)), "smt");
        assert_eq!(field(topo(1, 12, 1, 5)), "llcs_per_socket");
        assert_eq!(field(topo(4, 1024, 2, 1)), "cores_per_socket");
        assert!(topo(4, 512, 2, 1).validate().is_ok());
    }

    #[test]
    fn distance_names_and_order() {
        let names: Vec<&str> = Distance::ALL.iter().map(|d| d.name()).collect();
        assert_eq!(names, ["same_cpu", "smt", "same_llc", "same_socket", "cross_socket"]);
        assert!(Distance::ALL.windows(2).all(|w| w[0] < w[1]));
        assert!(Distance::ALL.iter().enumerate().all(|(i, d)| d.index() == i));
    }

    fn any_topology() -> impl Strategy<Value = Topology> {
        (1u32..=4, 1u32..=4, 1u32..=12, 1u32..=4).prop_map(|(s, llcs, per_llc, smt)| topo(s, llcs * per_llc, smt, llcs))
    }

    proptest! {
        #[test]
        fn distance_is_symmetric_and_consistent(t in any_topology(), a in 0u32..4096, b in 0u32..4096) {
            let (a, b) = (CpuId(a % t.cpus()), CpuId(b % t.cpus()));
            let dist = t.distance(a, b);
            prop_assert_eq!(dist, t.distance(b, a));
            prop_assert_eq!(dist == Distance::SameCpu, a == b);
            // Nested domains: same core => same LLC => same socket.
            if t.core_of(a) == t.core_of(b) { prop_assert!(t.llc_of(a) == t.llc_of(b)); }
            if t.llc_of(a) == t.llc_of(b) { prop_assert!(t.socket_of(a) == t.socket_of(b)); }
            prop_assert!(t.llc_of(a) < t.llcs());
            prop_assert_eq!(t.cpu_of(t.core_of(a), t.thread_of(a)), a);
        }

        #[test]
        fn placements_are_permutations(t in any_topology(), compact in any::<bool>()) {
            let policy = if compact { Placement::Compact } else { Placement::Spread };
            let mut cpus: Vec<u32> = t.place(t.cpus(), policy).unwrap().iter().map(|c| c.0).collect();
            cpus.sort_unstable();
            prop_assert_eq!(cpus, (0..t.cpus()).collect::<Vec<_>>());
        }
    }
}

#[cfg(test)]
mod interleave_tests {
    use super::*;

    #[test]
    fn interleave_alternates_sockets_and_uses_every_cpu_once() {
        let t = Topology {
            sockets: 2,
            cores_per_socket: 4,
            smt: 2,
            llcs_per_socket: 1,
        };
        let cpus = t.place(16, Placement::Interleave).unwrap();
        let sockets: Vec<u32> = cpus.iter().take(4).map(|&c| t.socket_of(c)).collect();
        assert_eq!(sockets, vec![0, 1, 0, 1]);
        let mut ids: Vec<u32> = cpus.iter().map(|c| c.0).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..16).collect::<Vec<_>>());
        assert_eq!(cpus[0], CpuId(0));
        assert_eq!(cpus[1], CpuId(4));
    }
}
