//! The `path` workload: threads on a modelled machine, each running the
//! scenario's `[[path]]` once per operation, with named shared lines,
//! locks and counters. The machine (profile, placement, pricing) is built
//! once per run point; each run builds fresh lines, locks and counters and
//! its own random streams.

pub mod build;
pub mod code;
pub mod config;
pub mod keys;
pub mod layout;
mod lockstep;
pub mod metrics;
pub mod precision;
mod proc;
pub mod sim;
pub mod start;
mod tables;
pub mod wq;

use crate::engine::Metrics;
use crate::engine::rng::RunKey;
use crate::engine::time::SimTimePs;
use crate::machine::coherence::LineTable;
use crate::machine::{CpuId, Machine, MachineError, Pricing};
use crate::param::ParamError;
use crate::workload::{Input, MetricSpec, Prepared, RunFailure, Sections, StopConfig, Workload};
use build::{Lines, Names};
use config::{PathSections, StepConfig, WorkqueueKind};
use precision::Target;
use sim::{SimSpec, Stop};
use std::collections::BTreeMap;
use tables::LockTables;

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
        &[
            "path",
            "work",
            "lines",
            "locks",
            "counters",
            "workqueues",
            "stop",
            "code",
            "fs",
            "start",
        ]
    }

    fn reads_shared(&self) -> &'static [&'static str] {
        &["machine", "workload.threads", "scenario.ops", "scenario.time_ms"]
    }

    fn params(&self) -> Vec<crate::workload::ParamSpec> {
        keys::PARAMS.to_vec()
    }

    fn metric_docs(&self) -> Vec<MetricSpec> {
        let mut m = metrics::schema(&metrics::Names {
            lines: vec!["LINE".into()],
            locks: vec!["LOCK".into()],
            rwlocks: vec!["RWLOCK".into()],
            counters: vec!["COUNTER".into()],
            queues: vec!["QUEUE".into()],
            arrays: vec!["LOCK".into()],
            ..Default::default()
        });
        m.extend(metrics::stop_schema());
        m.sort_by(|a, b| a.name.cmp(&b.name));
        m
    }

    fn resolved_toml(&self, sections: &Sections<'_>) -> Result<String, ParamError> {
        let s = PathSections::read(sections)?;
        toml::to_string_pretty(&s).map_err(|e| ParamError::new("path", e.to_string()))
    }

    fn resolved_table(&self, sections: &Sections<'_>) -> Result<toml::Table, ParamError> {
        let s = PathSections::read(sections)?;
        toml::Table::try_from(&s).map_err(|e| ParamError::new("path", e.to_string()))
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
    metric_names: metrics::Names,
    /// Unbound work queues' workers: per queue, how many (on idle CPUs).
    workers: Vec<u32>,
    /// Pricing and SMT slowdown of the threads followed by the workers.
    pricing: Pricing,
    slowdown_permille: Vec<u32>,
    /// The CPUs of the threads followed by the workers'.
    cpus: Vec<CpuId>,
    /// Each thread's AG and directory (`[fs]`), when a lock has `per`.
    layout: Option<layout::Layout>,
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

/// A run stopped by `scenario.ops` (and no stop time) whose operations
/// work alone would take more simulated time than the clock holds is
/// refused at `scenario.ops` before it runs: `ops` operations, each at
/// least the mean work of the path's steps (per `every`), spread over the
/// threads at best, is a lower bound on the time the run needs. Without
/// this, the run would fail after computing, naming no key.
fn check_clock(spec: &SimSpec, stop: StopConfig) -> Result<(), ParamError> {
    let Some(ops) = stop.ops.filter(|_| stop.time_ms.is_none()) else {
        return Ok(());
    };
    let per_op_ns = start::mean_work_ps(&spec.path, &spec.every) / 1000.0;
    let needed_ps = ops as f64 * per_op_ns * 1000.0 / spec.threads.max(1) as f64;
    let range_ps = SimTimePs::MAX.0 as f64;
    if needed_ps < range_ps {
        return Ok(());
    }
    const PS_PER_DAY: f64 = 86_400.0 * 1e12;
    Err(ParamError::new(
        "scenario.ops",
        format!(
            "{ops} operations of at least {per_op_ns:.4e} ns of work each on {} thread(s) need at least {:.3e} days of simulated time; \
             the clock holds about {:.0} days: lower scenario.ops or the path's work, or stop at scenario.time_ms",
            spec.threads,
            needed_ps / PS_PER_DAY,
            range_ps / PS_PER_DAY
        ),
    ))
}

/// The used name a declared-but-unused one was probably meant to be: one
/// that extends it or is within the usual edit distance.
fn near(name: &str, used: &[&str]) -> Option<String> {
    let extended = used.iter().find(|u| u.starts_with(name) || name.starts_with(**u));
    extended
        .map(|u| u.to_string())
        .or_else(|| crate::text::closest(name, used.iter().copied()))
}

/// Translates a list of steps (`at`: `path` or `workqueues.NAME.path`),
/// checks its lock pairs, and gives each step's `every`.
fn steps(list: &[StepConfig], at: &str, lines: &mut Lines, names: &Names<'_>) -> Result<(Vec<sim::Step>, Vec<u32>), ParamError> {
    let mut path = list
        .iter()
        .enumerate()
        .map(|(i, s)| build::step(s, &format!("{at}[{i}]"), lines, names))
        .collect::<Result<Vec<_>, _>>()?;
    let every = list
        .iter()
        .enumerate()
        .map(|(i, s)| build::every(s, &format!("{at}[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    lockstep::check_lock_pairs(&mut path, &every, names, at)?;
    Ok((path, every))
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
        // Unbound queues' workers on the idle CPUs, in declaration order.
        let unbound = sections.workqueues.values().any(|q| matches!(q.kind, WorkqueueKind::Unbound));
        let idle = if unbound { machine.idle_cpus() } else { Vec::new() };
        let mut workers = Vec::new();
        let mut taken = 0usize;
        for (name, q) in &sections.workqueues {
            let field = format!("workqueues.{name}");
            wq::check_config(q, &field)?;
            let n = match q.kind {
                WorkqueueKind::Bound => 0,
                WorkqueueKind::Unbound => {
                    let max = q.max_active.unwrap_or(wq::WQ_DFL_ACTIVE) as usize;
                    max.min(idle.len() - taken)
                }
            };
            taken += n;
            workers.push(n as u32);
        }
        let (pricing, slowdown_permille) = machine.with_extra(&idle[..taken]);
        let cpus = machine.cpus.iter().chain(&idle[..taken]).copied().collect();
        let first_per = |per: config::Per| sections.locks.iter().find(|(_, l)| l.per == Some(per)).map(|(n, _)| n.as_str());
        let layout = layout::layout(
            sections.fs.as_ref(),
            first_per(config::Per::Ag),
            first_per(config::Per::Dir),
            threads,
        )?;
        let mut p = PreparedPath {
            sections,
            threads,
            machine,
            stop: input.stop,
            metric_names: Default::default(),
            workers,
            pricing,
            slowdown_permille,
            cpus,
            layout,
        };
        let spec = p.spec(None)?;
        p.check_all_used()?;
        check_clock(&spec, input.stop)?;
        p.metric_names = metrics::Names {
            lines: spec.lines.names().iter().take(spec.reported_lines).cloned().collect(),
            locks: spec.lock_names,
            rwlocks: spec.rwlock_names,
            counters: spec.counters.iter().map(|(n, _)| n.clone()).collect(),
            queues: spec.queues.iter().map(|(q, _)| q.name.clone()).collect(),
            arrays: spec.arrays,
            ..Default::default()
        };
        Ok(p)
    }

    /// Every step: the threads' path, then each work queue's.
    fn all_steps(&self) -> impl Iterator<Item = &StepConfig> {
        let d = &self.sections;
        d.path.iter().chain(d.workqueues.values().flat_map(|q| q.path.iter()))
    }

    /// Every declared line, lock and counter is used by a step (or, for a
    /// line, by a lock or counter placed on it): a declaration nobody uses
    /// is a mistake, usually a typo in a variant or a step.
    fn check_all_used(&self) -> Result<(), ParamError> {
        let d = &self.sections;
        let steps: Vec<&StepConfig> = self.all_steps().collect();
        let used_queues: Vec<&str> = steps.iter().filter_map(|s| s.queue.as_deref()).collect();
        for name in d.workqueues.keys() {
            if !used_queues.contains(&name.as_str()) {
                let message = format!("work queue `{name}` is declared but no [[path]] step queues on it (queue = \"{name}\")");
                return Err(ParamError::new(format!("workqueues.{name}"), message).suggest(near(name, &used_queues)));
            }
        }
        wq::check_every_total(&d.path)?;
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
        let mut split = code::check_splits(&d.path, "path", &d.work)?;
        for (name, q) in &d.workqueues {
            split.extend(code::check_splits(&q.path, &format!("workqueues.{name}.path"), &d.work)?);
        }
        for (name, w) in &d.work {
            if w.split_by.is_some() && !split.contains(&name.as_str()) {
                return Err(ParamError::new(
                    format!("work.{name}.split_by"),
                    format!(
                        "no step splits work `{name}` (with from or to), so split_by would change nothing: remove it or split the work's steps"
                    ),
                ));
            }
        }
        let code_works: Vec<&String> = d
            .work
            .iter()
            .filter(|(_, w)| w.code.is_some() || w.split_by.is_some())
            .map(|(n, _)| n)
            .collect();
        if d.code.is_some() && code_works.is_empty() {
            return Err(ParamError::new(
                "code",
                "[code] sizes and prices counted code, but no [work.NAME] names any (code = \"xfs_create\", ...): remove it or name the code",
            ));
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
                .any(|s| s.read.as_deref() == n || s.write.as_deref() == n || s.atomic.as_deref() == n || s.cmpxchg.as_deref() == n);
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
        let mut lines = Lines::with_declared(doc.lines.keys().cloned());
        // Reported lines: lock words, counter main lines, unbound pools,
        // then path lines; the words of per-instance locks come after
        // them (their number follows [fs], not the scenario's names).
        let mut tables = LockTables::new(&doc.locks, self.layout.as_ref(), &mut lines)?;
        let counter_ids: BTreeMap<String, u32> = doc.counters.keys().enumerate().map(|(i, c)| (c.clone(), i as u32)).collect();
        let counter_kinds = doc.counters.iter().map(|(n, c)| (n.clone(), c.kind)).collect();
        for (name, c) in &doc.counters {
            match c.line.as_deref() {
                Some(line) => lines.named(line, &format!("counters.{name}.line"))?,
                None => lines.id(name),
            };
            if c.kind == config::CounterKindName::PercpuRef {
                lines.id(&format!("{name}.data"));
            }
        }
        let queue_ids: BTreeMap<String, u32> = doc.workqueues.keys().enumerate().map(|(i, q)| (q.clone(), i as u32)).collect();
        for (name, q) in &doc.workqueues {
            if q.kind == WorkqueueKind::Unbound {
                lines.id(&format!("{name}.pool"));
            }
        }
        let names = Names {
            locks: &tables.lock_ids,
            rwlocks: &tables.rw_ids,
            counter_kinds: &counter_kinds,
            queues: &queue_ids,
            counters: &counter_ids,
            works: &doc.work,
            code: doc.code.as_ref(),
            profile: &self.machine.profile,
            per: &tables.per,
        };
        let (path, every) = steps(&doc.path, "path", &mut lines, &names)?;
        let starts = start::offsets(
            start::rule(doc.start.as_ref(), &path),
            self.threads as usize,
            start::mean_work_ps(&path, &every),
        );
        let mut sub = Vec::with_capacity(doc.workqueues.len());
        for (name, q) in &doc.workqueues {
            let at = format!("workqueues.{name}.path");
            let list = steps(&q.path, &at, &mut lines, &names)?.0;
            if q.kind == WorkqueueKind::Unbound
                && let Some(i) = list.iter().position(|s| matches!(s, sim::Step::Keyed { .. }))
            {
                return Err(ParamError::new(
                    format!("{at}[{i}]"),
                    "an unbound work queue's item runs on any idle CPU, for no thread's directory or AG: a lock with `per` is taken only in [[path]] or in a bound work queue's path",
                ));
            }
            sub.push(list);
        }
        let reported = lines.names.len();
        tables.place_instance_words(&mut lines);
        let instances = match &self.layout {
            Some(l) => (0..self.cpus.len())
                .map(|p| if p < self.threads as usize { l.instances(p) } else { [0, 0] })
                .collect(),
            None => Vec::new(),
        };
        let procs = self.cpus.len();
        let mut counters = Vec::with_capacity(doc.counters.len());
        for (name, c) in &doc.counters {
            counters.push((
                name.clone(),
                build::counter(name, c, self.machine.online_cpus, topo, &self.cpus, &mut lines, &mut tables.locks)?,
            ));
        }
        let mut queues = Vec::with_capacity(doc.workqueues.len());
        let mut next_worker = self.threads;
        for (((name, q), steps), &n) in doc.workqueues.iter().zip(sub).zip(&self.workers) {
            let bound = q.kind == WorkqueueKind::Bound;
            let pool_lines = if bound {
                (0..procs).map(|p| lines.id(&format!("{name}.pool{p}"))).collect()
            } else {
                vec![lines.id(&format!("{name}.pool"))]
            };
            let workers = (next_worker..next_worker + n).collect();
            next_worker += n;
            let spec = wq::QueueSpec {
                name: name.clone(),
                bound,
                workers,
                pool_lines,
            };
            queues.push((spec, steps));
        }
        let rngs = match key {
            Some(k) => (0..self.threads)
                .map(|t| k.stream(&format!("thread{t}.work")))
                .chain((self.threads..procs as u32).map(|w| k.stream(&format!("worker{w}.work"))))
                .collect(),
            None => Vec::new(),
        };
        Ok(SimSpec {
            pricing: self.pricing.clone(),
            slowdown_permille: self.slowdown_permille.clone(),
            rngs,
            path,
            every,
            starts,
            threads: self.threads as usize,
            lines: LineTable::new(lines.names, procs),
            reported_lines: reported,
            lock_names: tables.lock_ids.keys().cloned().collect(),
            rwlock_names: tables.rw_ids.keys().cloned().collect(),
            queues,
            counters,
            instances,
            lock_arrays: tables.lock_arrays(),
            rwlock_arrays: tables.rwlock_arrays(),
            arrays: tables.per.keys().cloned().collect(),
            locks: tables.locks,
            rwlocks: tables.rw,
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
    fn resolved_sections(&self) -> Option<Result<toml::Table, ParamError>> {
        Some(toml::Table::try_from(&self.sections).map_err(|e| ParamError::new("path", e.to_string())))
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        let mut m = metrics::schema(&self.metric_names);
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
