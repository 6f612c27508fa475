//! The built-in machine profiles, in a fixed order, and name lookup with a
//! "did you mean" suggestion.
//!
//! # Where the numbers come from
//!
//! * Line-transfer latencies (`smt_ns`, `same_llc_ns`, `same_socket_ns`,
//!   `cross_socket_ns`): nviennot/core-to-core-latency (Rust, MIT), test 1,
//!   a compare-and-swap ping-pong on one line between two pinned threads,
//!   half the round trip, median of the matrix, as collected in
//!   `docs/reference/machines.md`. Where a socket has one LLC (Intel,
//!   Graviton3) the published "same socket" figure is a same-LLC transfer, so
//!   `same_llc_ns = same_socket_ns`. Unreachable classes (cross socket on one
//!   socket, SMT without SMT) repeat the nearest measured value.
//! * `hit_ns`: L1D load-to-use latency in cycles (Intel/AMD optimisation
//!   manuals: 5 cycles Ice Lake, 4-5 Skylake/Cascade Lake/Broadwell, 4 Zen 3
//!   and Neoverse V1) divided by the all-core turbo clock; approximate.
//! * `atomic_ns`: latency of `lock xadd` on an L1-resident line from Agner
//!   Fog's instruction tables (about 18-20 cycles Intel, about 8 cycles Zen)
//!   over the all-core clock; UNSURE, within ~30%. Graviton3's `ldadd` is
//!   ASSUMED at 10 cycles.
//! * `memory_ns`: idle local-DRAM load latency as commonly reported by Intel
//!   MLC / Chips and Cheese style pointer chases; APPROXIMATE (+-15%).
//! * Cache sizes: vendor spec sheets (Intel ARK, AMD product pages, AWS
//!   instance docs / `lscpu` on the instance types) and the usual cache
//!   geometry (ways) of each core family.
//! * `smt_throughput` 1.25: Marr et al., "Hyper-Threading Technology
//!   Architecture and Microarchitecture", Intel Technology Journal 6(1),
//!   2002, report up to 30% more throughput from a second thread on server
//!   workloads; 1.25 is an ASSUMED mid value for a metadata path, applied to
//!   Zen 3 SMT as well. 1.0 where the core has no SMT.

use super::profile::MachineProfile;
use super::topology::Topology;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// Citation of the core-to-core measurements shared by all real profiles.
const C2C: &str =
    "transfers: nviennot/core-to-core-latency test 1 (CAS ping-pong, half round trip, median), via docs/reference/machines.md";

/// Citation of the values common to all real profiles (see module docs).
const REST: &str = "hit_ns = L1D cycles / all-core clock (approx.); atomic_ns from Agner Fog lock xadd latency (UNSURE); memory_ns idle local DRAM (APPROX.); smt_throughput 1.25 ASSUMED (Marr et al. ITJ 2002: up to 30%)";

/// One row of the built-in table; `source` names only what is specific.
struct Row {
    name: &'static str,
    cpu: &'static str,
    source: &'static str,
    /// sockets, cores_per_socket, smt, llcs_per_socket.
    topo: [u32; 4],
    /// hit, atomic, smt, same_llc, same_socket, cross_socket, memory (ns).
    ns: [f64; 7],
    /// l1d, l2 per core, llc per socket (bytes).
    cache: [u64; 3],
    ways: u32,
    smt_throughput: f64,
}

/// The table of built-in profiles, in listing order.
const ROWS: [Row; 8] = [
    Row {
        name: "icelake-2s",
        cpu: "Intel Xeon Platinum 8375C (Ice Lake SP), 2 sockets, AWS m6i/c6i",
        source: "measured: 51 ns same socket, 108 ns cross socket, SMT 8.1 ns; caches: AWS/Intel 48K L1d, 1.25M L2, 54M L3 (12-way); clock 3.5 GHz all-core",
        topo: [2, 32, 2, 1],
        ns: [1.4, 5.7, 8.1, 51.0, 51.0, 108.0, 90.0],
        cache: [48 * KIB, 1280 * KIB, 54 * MIB],
        ways: 12,
        smt_throughput: 1.25,
    },
    Row {
        name: "cascadelake-2s",
        cpu: "Intel Xeon Platinum 8275CL (Cascade Lake), 2 sockets, AWS c5",
        source: "measured: 47 ns same socket, 134 ns cross socket; SMT 8.1 ns ASSUMED (Ice Lake value, machines.md range 4-10); caches: 32K L1d, 1M L2, 35.75M L3 (11-way); clock 3.6 GHz all-core",
        topo: [2, 24, 2, 1],
        ns: [1.4, 5.0, 8.1, 47.0, 47.0, 134.0, 90.0],
        cache: [32 * KIB, MIB, 36608 * KIB],
        ways: 11,
        smt_throughput: 1.25,
    },
    Row {
        name: "cascadelake-gold-6242",
        cpu: "Intel Xeon Gold 6242 (Cascade Lake), 2 sockets",
        source: "measured: 48 ns same socket, 136 ns cross socket; SMT 8.1 ns ASSUMED; caches: Intel ARK 32K L1d, 1M L2, 22M L3 (11-way); clock ~3.3 GHz all-core (approx.)",
        topo: [2, 16, 2, 1],
        ns: [1.5, 5.5, 8.1, 48.0, 48.0, 136.0, 90.0],
        cache: [32 * KIB, MIB, 22 * MIB],
        ways: 11,
        smt_throughput: 1.25,
    },
    Row {
        name: "broadwell-2s",
        cpu: "Intel Xeon E5-2695 v4 (Broadwell EP, ring), 2 sockets",
        source: "measured: 44 ns same socket, 118 ns cross socket; SMT 8.1 ns ASSUMED; caches: Intel ARK 32K L1d, 256K L2, 45M L3 (20-way); clock ~2.6 GHz all-core (approx.)",
        topo: [2, 18, 2, 1],
        ns: [1.9, 7.3, 8.1, 44.0, 44.0, 118.0, 90.0],
        cache: [32 * KIB, 256 * KIB, 45 * MIB],
        ways: 20,
        smt_throughput: 1.25,
    },
    Row {
        name: "milan-2s",
        cpu: "AMD EPYC 7R13 (Zen 3 Milan), 2 sockets x 6 CCX of 8 cores, AWS m6a",
        source: "measured: 23 ns inside a CCX, ~107 ns across CCXs, 197 ns cross socket, SMT 9.8 ns; caches: 32K L1d, 512K L2, 32M L3 per CCX (16-way), memory ~110 ns (APPROX.); clock 3.6 GHz",
        topo: [2, 48, 2, 6],
        ns: [1.1, 2.2, 9.8, 23.0, 107.0, 197.0, 110.0],
        cache: [32 * KIB, 512 * KIB, 192 * MIB],
        ways: 16,
        smt_throughput: 1.25,
    },
    Row {
        name: "zen3-desktop",
        cpu: "AMD Ryzen 9 5950X (Zen 3), 1 socket, 2 CCDs of 8 cores",
        source: "measured: 17 ns inside a CCD, 85 ns across CCDs; SMT 9.8 ns ASSUMED (EPYC 7R13 value, same core); cross_socket unused (= 85); caches: AMD 32K L1d, 512K L2, 2 x 32M L3 (16-way); memory ~80 ns DDR4-3200 (APPROX.); clock ~4.5 GHz",
        topo: [1, 16, 2, 2],
        ns: [0.9, 1.8, 9.8, 17.0, 85.0, 85.0, 80.0],
        cache: [32 * KIB, 512 * KIB, 64 * MIB],
        ways: 16,
        smt_throughput: 1.25,
    },
    Row {
        name: "graviton3",
        cpu: "AWS Graviton3 (Neoverse V1, 64 cores, mesh), 1 socket, no SMT",
        source: "measured: 46 ns between cores; no SMT and one socket, so smt/cross_socket are unused (= 46); caches: 64K L1d, 1M L2, 32M shared LLC (ways 16 UNSURE); memory ~120 ns DDR5 (APPROX.); atomic ASSUMED 10 cycles at 2.6 GHz",
        topo: [1, 64, 1, 1],
        ns: [1.5, 3.8, 46.0, 46.0, 46.0, 46.0, 120.0],
        cache: [64 * KIB, MIB, 32 * MIB],
        ways: 16,
        smt_throughput: 1.0,
    },
    Row {
        name: "ideal",
        cpu: "ideal machine (no coherence or memory cost)",
        source: "not a real machine: every latency 0 and caches of 1 TiB, so only the scenario's own work and queueing remain (for queueing-theory checks such as M/M/1//N); SMT siblings act as full cores",
        topo: [2, 32, 2, 1],
        ns: [0.0; 7],
        cache: [1 << 40, 1 << 40, 1 << 40],
        ways: 16,
        smt_throughput: 2.0,
    },
];

impl Row {
    /// Builds the profile, appending the shared citations to real machines.
    fn profile(&self) -> MachineProfile {
        let [sockets, cores_per_socket, smt, llcs_per_socket] = self.topo;
        let [hit, atomic, smt_ns, same_llc, same_socket, cross_socket, memory] = self.ns;
        let source = if self.name == "ideal" {
            self.source.to_string()
        } else {
            format!("{}; {C2C}; {REST}", self.source)
        };
        MachineProfile {
            name: self.name.to_string(),
            source,
            cpu: self.cpu.to_string(),
            topology: Topology {
                sockets,
                cores_per_socket,
                smt,
                llcs_per_socket,
            },
            hit_ns: hit,
            atomic_ns: atomic,
            smt_ns,
            same_llc_ns: same_llc,
            same_socket_ns: same_socket,
            cross_socket_ns: cross_socket,
            socket_distance_ns: None,
            memory_ns: memory,
            l1d_bytes: self.cache[0],
            l2_bytes: self.cache[1],
            llc_bytes_per_socket: self.cache[2],
            cache_ways: self.ways,
            smt_throughput: self.smt_throughput,
            levels: None,
            tracepoint: None,
            mitigation: None,
            storage: None,
            sched: None,
            memmove: None,
            knob: None,
        }
    }
}

/// Every built-in profile, in a fixed order (the order of `fsmeta machines`).
pub fn builtin_profiles() -> Vec<MachineProfile> {
    ROWS.iter().map(Row::profile).collect()
}

/// The built-in profile called exactly `name`, if any.
pub fn find_builtin(name: &str) -> Option<MachineProfile> {
    ROWS.iter().find(|r| r.name == name).map(Row::profile)
}

/// The built-in name nearest to `name` by Levenshtein distance (case
/// folded), for "did you mean"; `None` when even the nearest differs in
/// more than a third of its characters (and more than 2). Ties go to the
/// earlier profile in [`builtin_profiles`] order.
pub fn closest_builtin(name: &str) -> Option<String> {
    let wanted = name.to_lowercase();
    let (dist, best) = ROWS
        .iter()
        .map(|r| (strsim::levenshtein(&wanted, r.name), r.name))
        .min_by_key(|&(d, _)| d)?;
    let allowed = (best.chars().count() / 3).max(2);
    (dist <= allowed).then(|| best.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::topology::Distance;

    #[test]
    fn every_builtin_validates_and_names_are_unique() {
        let all = builtin_profiles();
        assert_eq!(all.len(), 8);
        for p in &all {
            p.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(!p.source.is_empty());
            assert_eq!(find_builtin(&p.name).as_ref(), Some(p));
        }
        let mut names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
    }

    #[test]
    fn builtins_carry_published_latencies() {
        let ns = |name: &str, d: Distance| find_builtin(name).map(|p| p.transfer_ns(d));
        assert_eq!(ns("icelake-2s", Distance::SameLlc), Some(51.0));
        assert_eq!(ns("icelake-2s", Distance::CrossSocket), Some(108.0));
        assert_eq!(ns("icelake-2s", Distance::SmtSibling), Some(8.1));
        assert_eq!(ns("cascadelake-2s", Distance::CrossSocket), Some(134.0));
        assert_eq!(ns("cascadelake-gold-6242", Distance::SameLlc), Some(48.0));
        assert_eq!(ns("broadwell-2s", Distance::CrossSocket), Some(118.0));
        assert_eq!(ns("milan-2s", Distance::SameLlc), Some(23.0));
        assert_eq!(ns("milan-2s", Distance::SameSocket), Some(107.0));
        assert_eq!(ns("milan-2s", Distance::CrossSocket), Some(197.0));
        assert_eq!(ns("zen3-desktop", Distance::SameSocket), Some(85.0));
        assert_eq!(ns("graviton3", Distance::SameLlc), Some(46.0));
        let ideal = find_builtin("ideal").unwrap();
        assert!(Distance::ALL.iter().all(|&d| ideal.transfer_ps(d) == 0));
        assert_eq!(ideal.memory_ps() + ideal.atomic_ps(), 0);
    }

    #[test]
    fn milan_has_six_ccx_per_socket() {
        let t = find_builtin("milan-2s").unwrap().topology;
        assert_eq!((t.cpus(), t.llcs()), (192, 12));
        assert_eq!(find_builtin("zen3-desktop").unwrap().topology.llcs(), 2);
    }

    #[test]
    fn closest_builtin_suggests() {
        assert_eq!(closest_builtin("icelake2s").as_deref(), Some("icelake-2s"));
        assert_eq!(closest_builtin("Milan-2S").as_deref(), Some("milan-2s"));
        assert_eq!(closest_builtin("graviton2").as_deref(), Some("graviton3"));
        assert_eq!(closest_builtin("cascadelake").as_deref(), Some("cascadelake-2s"));
        assert_eq!(closest_builtin("xyz"), None);
        assert_eq!(closest_builtin("power9-4s"), None);
        assert_eq!(find_builtin("icelake2s"), None);
    }
}
