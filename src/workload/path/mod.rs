//! The `path` workload: threads on a modelled machine, each running the
//! scenario's `[[path]]` once per operation, with named shared lines,
//! locks and counters. The machine (profile, placement, pricing) is built
//! once per run point; each run builds fresh lines, locks and counters and
//! its own random streams.

pub mod build;
pub mod config;
pub mod keys;
pub mod metrics;
pub mod precision;
mod proc;
pub mod sim;

use crate::engine::Metrics;
use crate::engine::rng::RunKey;
use crate::engine::time::SimTimePs;
use crate::machine::coherence::LineTable;
use crate::machine::lock::LockTable;
use crate::machine::{Machine, MachineError};
use crate::param::ParamError;
use crate::workload::{Input, MetricSpec, Prepared, RunFailure, Sections, StopConfig, Workload};
use build::{Lines, Names};
use config::PathSections;
use precision::Target;
use sim::{SimSpec, Stop};
use std::collections::BTreeMap;

/// The `path` workload.
#[derive(Debug, Clone, Copy)]
pub struct PathWorkload;

impl Workload for PathWorkload {
    fn kind(&self) -> &'static str {
        "path"
    }

    fn about(&self) -> &'static str {
        "threads on a modelled machine running [[path]] steps over shared lines, locks and counters"
    }

    fn sections(&self) -> &'static [&'static str] {
        &["path", "work", "lines", "locks", "counters", "stop"]
    }

    fn reads_shared(&self) -> &'static [&'static str] {
        &["machine", "workload.threads", "scenario.ops", "scenario.time_ms"]
    }

    fn params(&self) -> Vec<crate::workload::ParamSpec> {
        keys::PARAMS.to_vec()
    }

    fn metric_docs(&self) -> Vec<MetricSpec> {
        let mut m = metrics::schema(&["LINE".into()], &["LOCK".into()], &["COUNTER".into()]);
        m.extend(metrics::stop_schema());
        m.sort_by(|a, b| a.name.cmp(&b.name));
        m
    }

    fn resolved_toml(&self, sections: &Sections<'_>) -> Result<String, ParamError> {
        let s = PathSections::read(sections)?;
        toml::to_string_pretty(&s).map_err(|e| ParamError::new("path", e.to_string()))
    }

    fn prepare(&self, input: &Input<'_>) -> Result<Box<dyn Prepared>, ParamError> {
        Ok(Box::new(PreparedPath::new(PathSections::read(&input.sections)?, input)?))
    }
}

/// A `path` study ready to run at one point.
#[derive(Debug)]
pub struct PreparedPath {
    sections: PathSections,
    machine: std::sync::Arc<Machine>,
    threads: u32,
    stop: StopConfig,
    metric_names: (Vec<String>, Vec<String>, Vec<String>),
}

/// The run's stop condition: `scenario.ops` or `scenario.time_ms`, or a
/// `[stop]` precision target (with its `max_ops` cap, and not together
/// with `scenario.ops`).
fn check_stop(sections: &PathSections, input: &Input<'_>) -> Result<(), ParamError> {
    let Some(stop) = &sections.stop else {
        if input.stop.ops.is_none() && input.stop.time_ms.is_none() {
            return Err(ParamError::new(
                "scenario.ops",
                "a `path` workload needs a stop condition: scenario.ops, scenario.time_ms or [stop]",
            ));
        }
        return Ok(());
    };
    if input.stop.ops.is_some() {
        return Err(ParamError::new(
            "stop",
            "[stop] and scenario.ops are both set; set one (the cap of a precision stop is stop.max_ops)",
        ));
    }
    if stop.metric != "ops_per_sec" {
        return Err(ParamError::new(
            "stop.metric",
            format!(
                "expected \"ops_per_sec\" (the only metric a precision stop targets), found {:?}",
                stop.metric
            ),
        ));
    }
    let pct = stop.ci_half_width_pct;
    if !(pct > 0.0 && pct <= 50.0) {
        return Err(ParamError::new(
            "stop.ci_half_width_pct",
            format!("expected a percentage in (0, 50], found {pct}"),
        ));
    }
    let min = precision::BASE_BATCH_OPS * precision::MIN_KEPT as u64;
    let max = crate::engine::MAX_OPS;
    if !(min..=max).contains(&stop.max_ops) {
        return Err(ParamError::new(
            "stop.max_ops",
            format!(
                "expected {min} ({} batches of {}) to {max} operations (the cap of scenario.ops), found {}",
                precision::MIN_KEPT,
                precision::BASE_BATCH_OPS,
                stop.max_ops
            ),
        ));
    }
    Ok(())
}

/// The used name a declared-but-unused one was probably meant to be: one
/// that extends it or is within the usual edit distance.
fn near(name: &str, used: &[&str]) -> Option<String> {
    let extended = used.iter().find(|u| u.starts_with(name) || name.starts_with(**u));
    extended
        .map(|u| u.to_string())
        .or_else(|| crate::text::closest(name, used.iter().copied()))
}

/// Turns a machine error into a parameter error on `[machine]`.
pub fn machine_param(e: MachineError) -> ParamError {
    match e {
        MachineError::Param(p) => p,
        other => ParamError::new("machine.profile", other.to_string()),
    }
}

impl PreparedPath {
    /// Validates the sections, builds the machine, and checks that every
    /// step, lock and counter resolves.
    pub fn new(sections: PathSections, input: &Input<'_>) -> Result<Self, ParamError> {
        if sections.path.is_empty() {
            return Err(ParamError::new("path", "a `path` workload needs at least one [[path]] step"));
        }
        check_stop(&sections, input)?;
        let machine = input.machines.get(input.machine, input.threads, input.dir).map_err(machine_param)?;
        let threads = machine.cpus.len() as u32;
        let mut p = PreparedPath {
            sections,
            threads,
            machine,
            stop: input.stop,
            metric_names: Default::default(),
        };
        let spec = p.spec(None)?;
        p.check_all_used()?;
        let lines = spec.lines.names().iter().take(spec.reported_lines).cloned().collect();
        let counters = spec.counters.iter().map(|(n, _)| n.clone()).collect();
        p.metric_names = (lines, spec.lock_names, counters);
        Ok(p)
    }

    /// Every declared line, lock and counter is used by a step (or, for a
    /// line, by a lock or counter placed on it): a declaration nobody uses
    /// is a mistake, usually a typo in a variant or a step.
    fn check_all_used(&self) -> Result<(), ParamError> {
        let d = &self.sections;
        let steps = &d.path;
        let used_counters: Vec<&str> = steps.iter().filter_map(|s| s.counter.as_deref()).collect();
        for name in d.counters.keys() {
            if !used_counters.contains(&name.as_str()) {
                let message = format!("counter `{name}` is declared but no [[path]] step uses it");
                return Err(ParamError::new(format!("counters.{name}"), message).suggest(near(name, &used_counters)));
            }
        }
        let used_works: Vec<&str> = steps
            .iter()
            .filter_map(|s| match &s.work {
                Some(config::WorkRef::Named(n)) => Some(n.as_str()),
                _ => None,
            })
            .collect();
        for name in d.work.keys() {
            if !used_works.contains(&name.as_str()) {
                let message = format!("work `{name}` is declared but no [[path]] step names it (work = \"{name}\")");
                return Err(ParamError::new(format!("work.{name}"), message).suggest(near(name, &used_works)));
            }
        }
        let used_locks: Vec<&str> = steps.iter().filter_map(|s| s.lock.as_deref()).collect();
        for name in d.locks.keys() {
            if !used_locks.contains(&name.as_str()) {
                let message = format!("lock `{name}` is declared but no [[path]] step takes it");
                return Err(ParamError::new(format!("locks.{name}"), message).suggest(near(name, &used_locks)));
            }
        }
        for name in d.lines.keys() {
            let n = Some(name.as_str());
            let by_step = steps
                .iter()
                .any(|s| s.read.as_deref() == n || s.write.as_deref() == n || s.atomic.as_deref() == n);
            let by_work = d.work.values().any(|w| w.read.as_deref() == n);
            let by_owner =
                by_work || d.locks.values().any(|l| l.line.as_deref() == n) || d.counters.values().any(|c| c.line.as_deref() == n);
            if !by_step && !by_owner {
                return Err(ParamError::new(
                    format!("lines.{name}"),
                    format!("line `{name}` is declared but nothing reads, writes or lives on it"),
                ));
            }
        }
        Ok(())
    }

    /// The simulator input for one run (`key` None: no random streams, for
    /// validation).
    pub fn spec(&self, key: Option<RunKey>) -> Result<SimSpec, ParamError> {
        let doc = &self.sections;
        let topo = self.machine.topology();
        let cpus = &self.machine.cpus;
        let mut lines = Lines::with_declared(doc.lines.keys().cloned());
        let mut locks = LockTable::default();
        let mut lock_ids = BTreeMap::new();
        // Reported lines: lock words, counter main lines, then path lines.
        for (name, l) in &doc.locks {
            let line = match l.line.as_deref() {
                Some(line) => lines.named(line, &format!("locks.{name}.line"))?,
                None => lines.id(&format!("{name}.word")),
            };
            lock_ids.insert(name.clone(), locks.add(l.kind, line));
        }
        let counter_ids: BTreeMap<String, u32> = doc.counters.keys().enumerate().map(|(i, c)| (c.clone(), i as u32)).collect();
        for (name, c) in &doc.counters {
            match c.line.as_deref() {
                Some(line) => lines.named(line, &format!("counters.{name}.line"))?,
                None => lines.id(name),
            };
        }
        let names = Names {
            locks: &lock_ids,
            counters: &counter_ids,
            works: &doc.work,
        };
        let path = doc
            .path
            .iter()
            .enumerate()
            .map(|(i, s)| build::step(s, &format!("path[{i}]"), &mut lines, &names))
            .collect::<Result<Vec<_>, _>>()?;
        let every = doc
            .path
            .iter()
            .enumerate()
            .map(|(i, s)| build::every(s, &format!("path[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        build::check_lock_pairs(&path, &every, &lock_ids)?;
        let reported = lines.names.len();
        let mut counters = Vec::with_capacity(doc.counters.len());
        for (name, c) in &doc.counters {
            counters.push((
                name.clone(),
                build::counter(name, c, self.machine.online_cpus, topo, cpus, &mut lines, &mut locks)?,
            ));
        }
        let rngs = match key {
            Some(k) => (0..self.threads).map(|t| k.stream(&format!("thread{t}.work"))).collect(),
            None => Vec::new(),
        };
        Ok(SimSpec {
            pricing: self.machine.pricing.clone(),
            slowdown_permille: self.machine.slowdown_permille.clone(),
            rngs,
            path,
            every,
            lines: LineTable::new(lines.names, self.threads as usize),
            reported_lines: reported,
            locks,
            lock_names: doc.locks.keys().cloned().collect(),
            counters,
            stop: Stop {
                ops: doc.stop.as_ref().map_or(self.stop.ops, |s| Some(s.max_ops)),
                time: self.stop.time_ms.map(|ms| SimTimePs::from_ns_f64(ms * 1e6)),
                precision: doc.stop.as_ref().map(|s| Target {
                    half_width: s.ci_half_width_pct / 100.0,
                }),
            },
        })
    }
}

impl Prepared for PreparedPath {
    fn metrics(&self) -> Vec<MetricSpec> {
        let (lines, locks, counters) = &self.metric_names;
        let mut m = metrics::schema(lines, locks, counters);
        if self.sections.stop.is_some() {
            m.extend(metrics::stop_schema());
            m.sort_by(|a, b| a.name.cmp(&b.name));
        }
        m
    }

    fn key_metrics(&self) -> &'static [&'static str] {
        &["ops_per_sec", "latency_mean_ns", "latency_p99_ns"]
    }

    fn run(&self, key: RunKey) -> Result<Metrics, RunFailure> {
        let spec = self.spec(Some(key)).map_err(|e| RunFailure::Model(e.into()))?;
        Ok(sim::run(spec)?)
    }
}
