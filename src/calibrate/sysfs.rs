//! The host's CPU topology and caches as Linux shows them under
//! `/sys/devices/system/cpu`, and the distance class of a pair of CPUs.
//!
//! Reading is split in two so the parser can be tested on saved snippets:
//! [`Snapshot::read`] copies the few files it needs into a map keyed by
//! their path below the root (`cpu0/topology/core_id`), and
//! [`HostTopology::parse`] works on that map only. [`Snapshot::parse_text`]
//! reads the same map from `path: value` lines, the form in which the
//! snapshots under `tests/calibrate/data` are saved.

use super::CalibrateError;
use crate::machine::{Distance, Topology};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Where Linux shows the CPUs.
pub const SYSFS_CPU_ROOT: &str = "/sys/devices/system/cpu";

/// Files read for every CPU, below `cpuN/`.
const TOPOLOGY_FILES: [&str; 3] = ["topology/physical_package_id", "topology/core_id", "topology/thread_siblings_list"];

/// Files read for every cache, below `cpuN/cache/indexM/`.
const CACHE_FILES: [&str; 5] = ["level", "type", "size", "shared_cpu_list", "ways_of_associativity"];

/// The sysfs files the topology is built from, keyed by their path below
/// the root (`cpu3/cache/index2/size`), values trimmed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Path below the root -> file content (trimmed).
    pub files: BTreeMap<String, String>,
}

impl Snapshot {
    /// Reads the topology and cache files of every online CPU below `root`
    /// (normally [`SYSFS_CPU_ROOT`]). Files that do not exist are left out
    /// (the parser says which one it missed); other read errors fail.
    pub fn read(root: &Path) -> Result<Snapshot, CalibrateError> {
        let io = |path: &Path, e: std::io::Error| CalibrateError::Sysfs {
            path: path.display().to_string(),
            detail: e.to_string(),
        };
        let mut snap = Snapshot::default();
        let online = root.join("online");
        let text = std::fs::read_to_string(&online).map_err(|e| io(&online, e))?;
        snap.files.insert("online".to_string(), text.trim().to_string());
        let cpus = parse_cpu_list(text.trim()).map_err(|detail| CalibrateError::Sysfs {
            path: online.display().to_string(),
            detail,
        })?;
        for cpu in cpus {
            let mut rel = TOPOLOGY_FILES.iter().map(|f| format!("cpu{cpu}/{f}")).collect::<Vec<_>>();
            for index in 0.. {
                let dir = format!("cpu{cpu}/cache/index{index}");
                if !root.join(&dir).is_dir() {
                    break;
                }
                rel.extend(CACHE_FILES.iter().map(|f| format!("{dir}/{f}")));
            }
            for r in rel {
                let path = root.join(&r);
                match std::fs::read_to_string(&path) {
                    Ok(v) => {
                        snap.files.insert(r, v.trim().to_string());
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io(&path, e)),
                }
            }
        }
        Ok(snap)
    }

    /// Reads `path: value` lines (blank lines and `#` comments skipped);
    /// the path may carry the root (`/sys/devices/system/cpu/`), which is
    /// removed. Errors name the line.
    pub fn parse_text(text: &str) -> Result<Snapshot, CalibrateError> {
        let mut snap = Snapshot::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((path, value)) = line.split_once(':') else {
                return Err(CalibrateError::Topology(format!("snapshot line {}: expected `path: value`", i + 1)));
            };
            let path = path.trim();
            let path = path.strip_prefix(SYSFS_CPU_ROOT).unwrap_or(path).trim_start_matches('/');
            snap.files.insert(path.to_string(), value.trim().to_string());
        }
        Ok(snap)
    }

    fn get(&self, rel: &str) -> Result<&str, CalibrateError> {
        self.files
            .get(rel)
            .map(String::as_str)
            .ok_or_else(|| CalibrateError::Topology(format!("{SYSFS_CPU_ROOT}/{rel} is missing")))
    }

    fn number(&self, rel: &str) -> Result<u64, CalibrateError> {
        let v = self.get(rel)?;
        v.parse()
            .map_err(|_| CalibrateError::Topology(format!("{SYSFS_CPU_ROOT}/{rel}: `{v}` is not a number")))
    }

    fn list(&self, rel: &str) -> Result<Vec<u32>, CalibrateError> {
        parse_cpu_list(self.get(rel)?).map_err(|e| CalibrateError::Topology(format!("{SYSFS_CPU_ROOT}/{rel}: {e}")))
    }
}

/// Parses a Linux CPU list (`0-3,8,10-11`) into sorted, distinct CPU
/// numbers. An empty list is an error, as are reversed ranges and CPU
/// numbers of 2^20 or more (far above any kernel's `NR_CPUS`).
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, String> {
    const LIMIT: u32 = 1 << 20;
    let mut out = BTreeSet::new();
    for part in text.trim().split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let num = |s: &str| {
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n < LIMIT)
                .ok_or_else(|| format!("`{text}` is not a CPU list (bad number `{s}`)"))
        };
        let (lo, hi) = (num(lo)?, num(hi)?);
        if hi < lo {
            return Err(format!("`{text}` is not a CPU list (range {lo}-{hi} runs backwards)"));
        }
        out.extend(lo..=hi);
    }
    Ok(out.into_iter().collect())
}

/// Parses a sysfs cache size (`32K`, `1024K`, `32M`, `512`) into bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, mult) = match t.chars().last() {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("`{text}` is not a cache size"))
}

/// One cache as one CPU sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    /// 1, 2, 3...
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Bytes.
    pub size: u64,
    /// Ways of associativity (0 when sysfs does not say).
    pub ways: u32,
    /// The CPUs sharing this cache.
    pub shared: Vec<u32>,
}

/// What sysfs says about one online CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpu {
    /// Logical CPU number.
    pub id: u32,
    /// `physical_package_id` (the socket).
    pub package: u32,
    /// `core_id` (unique within the package only).
    pub core: u32,
    /// `thread_siblings_list`: the hardware threads of this CPU's core.
    pub siblings: Vec<u32>,
    /// Data and unified caches, nearest first.
    pub caches: Vec<Cache>,
}

impl Cpu {
    /// The last-level cache: the highest-level data or unified cache.
    pub fn llc(&self) -> Option<&Cache> {
        self.caches.iter().filter(|c| c.kind != "Instruction").max_by_key(|c| c.level)
    }

    /// The data or unified cache of `level`.
    pub fn cache(&self, level: u32) -> Option<&Cache> {
        self.caches.iter().find(|c| c.level == level && c.kind != "Instruction")
    }
}

/// The host's CPUs as sysfs shows them, and the profile topology they make.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTopology {
    /// Every online CPU, by number.
    pub cpus: Vec<Cpu>,
    /// Sockets x cores per socket x SMT, LLC domains per socket.
    pub topology: Topology,
}

impl HostTopology {
    /// Builds the topology from a snapshot: sockets are distinct
    /// `physical_package_id`s, cores distinct `(package, core_id)`, SMT the
    /// largest sibling list, LLC domains per socket the distinct
    /// `shared_cpu_list`s of the LLC within a socket. A machine that does
    /// not fit the profile's regular shape (sockets of unequal core counts,
    /// cores with unequal thread counts) is an error naming the mismatch.
    pub fn parse(snap: &Snapshot) -> Result<HostTopology, CalibrateError> {
        let online = snap.list("online")?;
        let mut cpus = Vec::with_capacity(online.len());
        for id in online {
            cpus.push(parse_cpu(snap, id)?);
        }
        let topology = shape(&cpus)?;
        Ok(HostTopology { cpus, topology })
    }

    /// The CPU numbered `id`, if online.
    pub fn cpu(&self, id: u32) -> Option<&Cpu> {
        self.cpus.iter().find(|c| c.id == id)
    }

    /// Distance class of two CPUs: the same CPU; SMT siblings (in each
    /// other's `thread_siblings_list`); sharing the LLC; the same package;
    /// else other sockets. `None` if either is not online.
    pub fn classify(&self, a: u32, b: u32) -> Option<Distance> {
        let (ca, cb) = (self.cpu(a)?, self.cpu(b)?);
        Some(if a == b {
            Distance::SameCpu
        } else if ca.siblings.contains(&b) {
            Distance::SmtSibling
        } else if ca.llc().is_some_and(|l| l.shared.contains(&b)) {
            Distance::SameLlc
        } else if ca.package == cb.package {
            Distance::SameSocket
        } else {
            Distance::CrossSocket
        })
    }

    /// One pair of CPUs per distance class that `allowed` CPUs can reach,
    /// nearest class first, each pair the lowest-numbered such pair
    /// (`(a, b)`, `a < b`). [`Distance::SameCpu`] is never listed.
    pub fn representative_pairs(&self, allowed: &[u32]) -> Vec<(Distance, u32, u32)> {
        let mut found: BTreeMap<Distance, (u32, u32)> = BTreeMap::new();
        let ids: Vec<u32> = self.cpus.iter().map(|c| c.id).filter(|id| allowed.contains(id)).collect();
        for (i, &a) in ids.iter().enumerate() {
            for &b in &ids[i + 1..] {
                if let Some(d) = self.classify(a, b) {
                    found.entry(d).or_insert((a, b));
                }
            }
        }
        found.into_iter().map(|(d, (a, b))| (d, a, b)).collect()
    }
}

fn parse_cpu(snap: &Snapshot, id: u32) -> Result<Cpu, CalibrateError> {
    let small = |rel: String| -> Result<u32, CalibrateError> {
        let n = snap.number(&rel)?;
        u32::try_from(n).map_err(|_| CalibrateError::Topology(format!("{SYSFS_CPU_ROOT}/{rel}: {n} is too large")))
    };
    let mut caches = Vec::new();
    for index in 0.. {
        let dir = format!("cpu{id}/cache/index{index}");
        if !snap.files.contains_key(&format!("{dir}/level")) {
            break;
        }
        let kind = snap.get(&format!("{dir}/type"))?.to_string();
        if kind == "Instruction" {
            continue;
        }
        let size_rel = format!("{dir}/size");
        let size = parse_size(snap.get(&size_rel)?).map_err(|e| CalibrateError::Topology(format!("{SYSFS_CPU_ROOT}/{size_rel}: {e}")))?;
        let ways_rel = format!("{dir}/ways_of_associativity");
        let ways = if snap.files.contains_key(&ways_rel) { small(ways_rel)? } else { 0 };
        caches.push(Cache {
            level: small(format!("{dir}/level"))?,
            kind,
            size,
            ways,
            shared: snap.list(&format!("{dir}/shared_cpu_list"))?,
        });
    }
    caches.sort_by_key(|c| c.level);
    Ok(Cpu {
        id,
        package: small(format!("cpu{id}/topology/physical_package_id"))?,
        core: small(format!("cpu{id}/topology/core_id"))?,
        siblings: snap.list(&format!("cpu{id}/topology/thread_siblings_list"))?,
        caches,
    })
}

/// The regular shape the profile needs, or why the host has none.
fn shape(cpus: &[Cpu]) -> Result<Topology, CalibrateError> {
    let bad = |msg: String| Err(CalibrateError::Topology(msg));
    let packages: BTreeSet<u32> = cpus.iter().map(|c| c.package).collect();
    if packages.is_empty() {
        return bad("no online CPU".to_string());
    }
    let mut cores_per: Vec<usize> = Vec::new();
    let mut llcs_per: Vec<usize> = Vec::new();
    for p in &packages {
        let on: Vec<&Cpu> = cpus.iter().filter(|c| c.package == *p).collect();
        cores_per.push(on.iter().map(|c| c.core).collect::<BTreeSet<_>>().len());
        llcs_per.push(on.iter().map(|c| c.llc().map(|l| l.shared.clone())).collect::<BTreeSet<_>>().len());
    }
    if cores_per.iter().any(|&n| n != cores_per[0]) {
        return bad(format!("sockets have unequal core counts {cores_per:?}"));
    }
    if llcs_per.iter().any(|&n| n != llcs_per[0]) {
        return bad(format!("sockets have unequal LLC domain counts {llcs_per:?}"));
    }
    let smt: BTreeSet<usize> = cpus.iter().map(|c| c.siblings.len()).collect();
    if smt.len() != 1 {
        return bad(format!("cores have unequal thread counts {smt:?}"));
    }
    let count = |n: usize| u32::try_from(n).map_err(|_| CalibrateError::Topology(format!("{n} is too many")));
    let topology = Topology {
        sockets: count(packages.len())?,
        cores_per_socket: count(cores_per[0])?,
        smt: count(smt.into_iter().next().unwrap_or(1))?,
        llcs_per_socket: count(llcs_per[0])?,
    };
    topology
        .validate()
        .map_err(|e| CalibrateError::Topology(format!("the host's topology is not one a profile can hold: {e}")))?;
    if topology.cpus() as usize != cpus.len() {
        return bad(format!(
            "{} online CPUs, but {} sockets x {} cores x {} threads = {}",
            cpus.len(),
            topology.sockets,
            topology.cores_per_socket,
            topology.smt,
            topology.cpus()
        ));
    }
    Ok(topology)
}
