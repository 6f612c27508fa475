//! The `path` workload: threads on a modelled machine, each running the
//! scenario's `[[path]]` once per operation. Builds a [`SimSpec`] from a
//! resolved document: resolves the machine profile and topology, places
//! threads on CPUs, prices every pair of threads, and creates the lines,
//! locks and counters the path names.

use crate::engine::dist::Duration;
use crate::engine::rng::RunKey;
use crate::engine::time::SimTimePs;
use crate::machine::coherence::{LineId, LineTable};
use crate::machine::lock::{LockKind, LockTable};
use crate::machine::{Distance, MachineProfile, Pricing, Topology, find_builtin, load_profile, ns_to_ps};
use crate::kernel::sync::counter::{Counter, CounterKind, CounterPlacement};
use crate::scenario::config::{CounterConfig, CounterKindName, DistConfig, DistKind, Document, StepConfig};
use crate::workload::path::sim::{SimSpec, Step, Stop};
pub mod sim;
use statrs::distribution::{Exp, LogNormal, Normal, Uniform};
use std::collections::BTreeMap;
use std::path::Path;

/// A problem building the run, with the field it concerns.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct BuildError {
    /// Dotted path of the field.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

fn err(field: impl Into<String>, message: impl Into<String>) -> BuildError {
    BuildError {
        field: field.into(),
        message: message.into(),
    }
}

/// Resolves `[machine]` to a profile with the scenario's topology override.
pub fn machine_profile(doc: &Document, dir: &Path) -> Result<MachineProfile, BuildError> {
    let name = &doc.machine.profile;
    let mut profile = if name.ends_with(".toml") {
        load_profile(&dir.join(name)).map_err(|e| err("machine.profile", e.to_string()))?
    } else {
        find_builtin(name).ok_or_else(|| {
            let hint = crate::machine::closest_builtin(name)
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default();
            err(
                "machine.profile",
                format!("no built-in profile `{name}`{hint}; `fsmeta machines` lists them, or give a path ending in .toml"),
            )
        })?
    };
    if let Some(t) = &doc.machine.topology {
        profile.topology = t.clone();
    }
    profile.validate().map_err(|e| err("machine", e.to_string()))?;
    Ok(profile)
}

/// Builds a duration distribution from its config.
pub fn duration(d: &DistConfig, field: &str) -> Result<Duration, BuildError> {
    let need = |v: Option<f64>, name: &str| -> Result<f64, BuildError> {
        match v {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
            Some(x) => Err(err(format!("{field}.{name}"), format!("expected a finite number >= 0, found {x}"))),
            None => Err(err(
                format!("{field}.{name}"),
                format!("`{name}` is required for dist = {:?}", d.dist).to_lowercase(),
            )),
        }
    };
    let bad = |e: &dyn std::fmt::Display| err(field.to_string(), format!("invalid distribution: {e}"));
    Ok(match d.dist {
        DistKind::Fixed => Duration::Fixed(SimTimePs::from_ns_f64(need(d.mean_ns, "mean_ns")?)),
        DistKind::Exp => {
            let mean = need(d.mean_ns, "mean_ns")?;
            if mean == 0.0 {
                Duration::Fixed(SimTimePs::ZERO)
            } else {
                Duration::Exp(Exp::new(1.0 / mean).map_err(|e| bad(&e))?)
            }
        }
        DistKind::Uniform => {
            let (lo, hi) = (need(d.min_ns, "min_ns")?, need(d.max_ns, "max_ns")?);
            if lo >= hi {
                return Err(err(format!("{field}.max_ns"), format!("expected max_ns > min_ns ({lo})")));
            }
            Duration::Uniform(Uniform::new(lo, hi).map_err(|e| bad(&e))?)
        }
        DistKind::Normal => Duration::Normal(Normal::new(need(d.mean_ns, "mean_ns")?, need(d.sd_ns, "sd_ns")?).map_err(|e| bad(&e))?),
        DistKind::Lognormal => {
            let (mean, sigma) = (need(d.mean_ns, "mean_ns")?, need(d.sigma, "sigma")?);
            if mean <= 0.0 {
                return Err(err(format!("{field}.mean_ns"), "expected mean_ns > 0"));
            }
            Duration::LogNormal(LogNormal::new(mean.ln() - sigma * sigma / 2.0, sigma).map_err(|e| bad(&e))?)
        }
    })
}

/// Default per-CPU batch of `percpu_counter`: `max(32, 2 * CPUs)`.
pub fn default_batch(cpus: u32) -> i64 {
    i64::from(cpus.saturating_mul(2)).max(32)
}

/// Interns line names; reported lines first.
#[derive(Default)]
struct Lines {
    names: Vec<String>,
    ids: BTreeMap<String, LineId>,
}

impl Lines {
    fn id(&mut self, name: &str) -> LineId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as LineId;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }
}

/// The action of a step: exactly one must be set.
fn step_action(s: &StepConfig, field: &str) -> Result<&'static str, BuildError> {
    let set: Vec<&'static str> = [
        ("work", s.work.is_some()),
        ("read", s.read.is_some()),
        ("write", s.write.is_some()),
        ("atomic", s.atomic.is_some()),
        ("lock", s.lock.is_some()),
        ("unlock", s.unlock.is_some()),
        ("counter", s.counter.is_some()),
    ]
    .into_iter()
    .filter(|&(_, on)| on)
    .map(|(n, _)| n)
    .collect();
    match set.as_slice() {
        [one] => Ok(one),
        ["work", "read"] => Ok("work"),
        [] => Err(err(field, "a step needs one of work, read, write, atomic, lock, unlock, counter")),
        _ => Err(err(field, format!("a step takes one action, found {}", set.join(" and ")))),
    }
}

fn name_ref<'a>(map: &'a BTreeMap<String, impl Sized>, name: &str, field: &str, what: &str) -> Result<&'a str, BuildError> {
    map.get_key_value(name).map(|(k, _)| k.as_str()).ok_or_else(|| {
        let hint = crate::scenario::error::closest(name, map.keys().map(String::as_str))
            .map(|c| format!(" (did you mean `{c}`?)"))
            .unwrap_or_default();
        err(field, format!("no {what} named `{name}` is declared under [{what}s]{hint}"))
    })
}

/// Everything the path needs, before random streams are attached.
#[derive(Debug)]
pub struct Built {
    /// The simulator input, with empty rng list.
    pub spec: SimSpec,
    /// The machine's CPU count.
    pub cpus: u32,
}

/// Builds the simulator input for one run of a `path` document.
pub fn build(doc: &Document, dir: &Path, key: Option<RunKey>) -> Result<Built, BuildError> {
    let profile = machine_profile(doc, dir)?;
    let topo = &profile.topology;
    let threads = doc.workload.threads;
    let cpus = topo
        .place(threads, doc.machine.placement)
        .map_err(|e| err("workload.threads", e.to_string()))?;
    let pricing = pricing(&profile, topo, &cpus, doc.machine.wakeup_ns);
    let slowdown = smt_slowdown(&profile, topo, &cpus);
    let mut lines = Lines::default();
    let mut locks = LockTable::default();
    let mut lock_ids = BTreeMap::new();
    // Reported lines: path lines, lock words, counter main lines.
    for (name, l) in &doc.locks {
        let line = lines.id(l.line.as_deref().unwrap_or(&format!("{name}.word")));
        lock_ids.insert(name.clone(), locks.add(l.kind, line));
    }
    let mut path = Vec::with_capacity(doc.path.len());
    let mut counter_ids = BTreeMap::new();
    for (i, c) in doc.counters.keys().enumerate() {
        counter_ids.insert(c.clone(), i as u32);
        lines.id(doc.counters[c].line.as_deref().unwrap_or(c));
    }
    for (i, s) in doc.path.iter().enumerate() {
        path.push(step(s, &format!("path[{i}]"), doc, &mut lines, &lock_ids, &counter_ids)?);
    }
    let reported = lines.names.len();
    let counters = doc
        .counters
        .iter()
        .map(|(name, c)| counter(name, c, topo, &cpus, &mut lines, &mut locks))
        .collect::<Result<Vec<_>, _>>()?;
    let lock_names = doc.locks.keys().cloned().collect();
    let rngs = match key {
        Some(k) => (0..threads).map(|t| k.stream(&format!("thread{t}.work"))).collect(),
        None => Vec::new(),
    };
    let time = doc.scenario.time_ms.map(|ms| SimTimePs::from_ns_f64(ms * 1e6));
    let spec = SimSpec {
        pricing,
        slowdown_permille: slowdown,
        rngs,
        path,
        lines: LineTable::new(lines.names, threads as usize),
        reported_lines: reported,
        locks,
        lock_names,
        counters,
        stop: Stop {
            ops: doc.scenario.ops,
            time,
        },
    };
    Ok(Built { spec, cpus: topo.cpus() })
}

fn step(
    s: &StepConfig,
    field: &str,
    doc: &Document,
    lines: &mut Lines,
    locks: &BTreeMap<String, u32>,
    counters: &BTreeMap<String, u32>,
) -> Result<Step, BuildError> {
    let count = s.count.unwrap_or(1);
    if count == 0 {
        return Err(err(format!("{field}.count"), "expected a count >= 1"));
    }
    Ok(match step_action(s, field)? {
        "work" => {
            let dur = duration(s.work.as_ref().ok_or_else(|| err(field, "missing work"))?, &format!("{field}.work"))?;
            Step::Work {
                dur,
                reads: s.read.as_deref().map(|l| (lines.id(l), count)),
            }
        }
        "read" => Step::Read {
            line: lines.id(s.read.as_deref().unwrap_or_default()),
            count,
        },
        "write" | "atomic" => Step::Write(lines.id(s.write.as_deref().or(s.atomic.as_deref()).unwrap_or_default())),
        "lock" | "unlock" => {
            let name = s.lock.as_deref().or(s.unlock.as_deref()).unwrap_or_default();
            let key = name_ref(&doc.locks, name, &format!("{field}.lock"), "lock")?;
            let id = locks[key];
            if s.lock.is_some() { Step::Lock(id) } else { Step::Unlock(id) }
        }
        _ => {
            let name = s.counter.as_deref().unwrap_or_default();
            let key = name_ref(&doc.counters, name, &format!("{field}.counter"), "counter")?;
            let op =
                s.op.ok_or_else(|| err(format!("{field}.op"), "a counter step needs `op` (inc, dec, sum or read)"))?;
            Step::Counter { id: counters[key], op }
        }
    })
}

fn counter(
    name: &str,
    c: &CounterConfig,
    topo: &Topology,
    cpus: &[crate::machine::CpuId],
    lines: &mut Lines,
    locks: &mut LockTable,
) -> Result<(String, Counter), BuildError> {
    let field = format!("counters.{name}");
    let batch = c.batch.unwrap_or_else(|| default_batch(topo.cpus()));
    if batch < 1 {
        return Err(err(format!("{field}.batch"), "expected a batch >= 1"));
    }
    let per_socket = i64::from(topo.cores_per_socket * topo.smt);
    let socket_batch = c.socket_batch.unwrap_or(batch * per_socket);
    if socket_batch < 1 {
        return Err(err(format!("{field}.socket_batch"), "expected a socket_batch >= 1"));
    }
    let kind = match c.kind {
        CounterKindName::Atomic => CounterKind::Atomic,
        CounterKindName::Percpu => CounterKind::Percpu { batch },
        CounterKindName::Hierarchical => CounterKind::Hierarchical { batch, socket_batch },
    };
    let main_line = lines.id(c.line.as_deref().unwrap_or(name));
    let lock = locks.add(LockKind::Queued, main_line);
    let slot_lines = (0..cpus.len()).map(|p| lines.id(&format!("{name}.slot{p}"))).collect();
    let socket_lines = (0..topo.sockets)
        .map(|s| lines.id(&format!("{name}.socket{s}")))
        .collect::<Vec<_>>();
    let socket_locks = socket_lines.iter().map(|&l| locks.add(LockKind::Queued, l)).collect();
    let socket_of = cpus.iter().map(|&c| topo.socket_of(c)).collect();
    let at = CounterPlacement {
        main_line,
        lock,
        slot_lines,
        socket_lines,
        socket_locks,
        socket_of,
    };
    Ok((name.to_string(), Counter::new(kind, at)))
}

/// Transfer cost and distance class between every pair of threads.
fn pricing(profile: &MachineProfile, topo: &Topology, cpus: &[crate::machine::CpuId], wakeup_ns: f64) -> Pricing {
    let n = cpus.len();
    let mut xfer = Vec::with_capacity(n * n);
    let mut class = Vec::with_capacity(n * n);
    for &a in cpus {
        for &b in cpus {
            let d = topo.distance(a, b);
            xfer.push(if d == Distance::SameCpu {
                profile.atomic_ps()
            } else {
                profile.transfer_ps(d)
            });
            class.push(d.index() as u8);
        }
    }
    let mut p = Pricing::from_matrix(n, xfer, class, profile.atomic_ps(), profile.memory_ps());
    p.wakeup_ps = ns_to_ps(wakeup_ns);
    p
}

/// Work on a CPU whose SMT sibling also runs a thread is slower: the two
/// share one core whose combined throughput is `smt_throughput` times one
/// thread's, so each runs at `smt_throughput / 2` speed.
fn smt_slowdown(profile: &MachineProfile, topo: &Topology, cpus: &[crate::machine::CpuId]) -> Vec<u32> {
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

/// Names of every metric a `path` run of this document reports.
pub fn metric_names(doc: &Document, dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = [
        "events",
        "ops",
        "ops_per_sec",
        "sim_time_ms",
        "latency_mean_ns",
        "latency_p50_ns",
        "latency_p90_ns",
        "latency_p95_ns",
        "latency_p99_ns",
        "latency_max_ns",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Ok(b) = build(doc, dir, None) {
        for l in b.spec.lines.names().iter().take(b.spec.reported_lines) {
            for m in [
                "utilisation",
                "wait_mean_ns",
                "transfers",
                "transfers_smt",
                "transfers_same_llc",
                "transfers_same_socket",
                "transfers_cross_socket",
            ] {
                names.push(format!("{l}.{m}"));
            }
        }
        for l in &b.spec.lock_names {
            for m in ["utilisation", "wait_mean_ns", "acquisitions", "contended", "handoff_mean_ns"] {
                names.push(format!("{l}.{m}"));
            }
        }
        for (c, _) in &b.spec.counters {
            names.push(format!("{c}.folds"));
            names.push(format!("{c}.read_error_max"));
        }
    }
    names.sort();
    names
}
