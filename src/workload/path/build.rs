//! Translating `[[path]]` steps into interpreter steps: duration
//! distributions, interned line names, lock and counter references (every
//! name must resolve), and counter placement on the machine's CPUs.

use super::config::{
    CodeSection, CounterConfig, CounterKindName, DistConfig, DistKind, LockKindName, Per, RefMode, StepConfig, WorkConfig, WorkRef,
};
use super::sim::Step;
use crate::engine::dist::{Duration, ExpDuration};
use crate::engine::time::SimTimePs;
use crate::kernel::sync::counter::{Counter, CounterKind, CounterOp, CounterPlacement};
use crate::machine::coherence::LineId;
use crate::machine::lock::{LockKind, LockTable};
use crate::machine::{CpuId, MachineProfile, Topology};
use crate::param::ParamError;
use statrs::distribution::{LogNormal, Normal, Uniform};
use std::collections::BTreeMap;

/// A problem building the run, with the field it concerns.
pub type BuildError = ParamError;

fn err(field: impl Into<String>, message: impl Into<String>) -> BuildError {
    ParamError::new(field, message)
}

/// Interns line names; reported lines first.
#[derive(Debug, Default)]
pub struct Lines {
    /// Names by id.
    pub names: Vec<String>,
    ids: BTreeMap<String, LineId>,
    declared: Vec<String>,
}

impl Lines {
    /// A table whose named lines must be among `declared` (`[lines.NAME]`).
    pub fn with_declared(declared: impl IntoIterator<Item = String>) -> Self {
        Lines {
            declared: declared.into_iter().collect(),
            ..Lines::default()
        }
    }

    /// The id of a line a scenario names at `field`: it must be declared
    /// under `[lines]`, so that a typo cannot create a private line.
    pub fn named(&mut self, name: &str, field: &str) -> Result<LineId, BuildError> {
        if !self.declared.iter().any(|d| d == name) {
            return Err(err(field, format!("no line named `{name}` is declared under [lines]"))
                .suggest(crate::text::closest(name, self.declared.iter().map(String::as_str))));
        }
        Ok(self.id(name))
    }

    /// The id of line `name`, created on first use.
    pub fn id(&mut self, name: &str) -> LineId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as LineId;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }
}

/// The locks and counters a path can name, by name.
#[derive(Debug)]
pub struct Names<'a> {
    /// Declared spinlocks and mutexes -> lock id.
    pub locks: &'a BTreeMap<String, u32>,
    /// Declared reader-writer locks -> (id, kind).
    pub rwlocks: &'a BTreeMap<String, (u32, LockKindName)>,
    /// Declared counters -> kind.
    pub counter_kinds: &'a BTreeMap<String, CounterKindName>,
    /// Declared work queues -> index.
    pub queues: &'a BTreeMap<String, u32>,
    /// Declared counters -> index.
    pub counters: &'a BTreeMap<String, u32>,
    /// Named work, `[work.NAME]`.
    pub works: &'a BTreeMap<String, WorkConfig>,
    /// `[code]`, for works that name counted code.
    pub code: Option<&'a CodeSection>,
    /// The machine profile counted code is priced on.
    pub profile: &'a MachineProfile,
    /// Locks with `per` -> (per what, instances): their id in `locks` or
    /// `rwlocks` is the first instance's, the others follow it.
    pub per: &'a BTreeMap<String, (Per, u32)>,
}

/// The action of a step: exactly one must be set.
fn step_action(s: &StepConfig, field: &str) -> Result<&'static str, BuildError> {
    let set: Vec<&'static str> = [
        ("work", s.work.is_some()),
        ("read", s.read.is_some()),
        ("write", s.write.is_some()),
        ("atomic", s.atomic.is_some()),
        ("cmpxchg", s.cmpxchg.is_some()),
        ("lock", s.lock.is_some()),
        ("unlock", s.unlock.is_some()),
        ("counter", s.counter.is_some()),
        ("queue", s.queue.is_some()),
    ]
    .into_iter()
    .filter(|&(_, on)| on)
    .map(|(n, _)| n)
    .collect();
    match set.as_slice() {
        [one] => Ok(one),
        ["work", "read"] => Ok("work"),
        [] => Err(err(
            field,
            "a step needs one of work, read, write, atomic, cmpxchg, lock, unlock, counter, queue",
        )),
        _ => Err(err(field, format!("a step takes one action, found {}", set.join(" and ")))),
    }
}

fn name_ref(map: &BTreeMap<String, u32>, name: &str, field: &str, what: &str) -> Result<u32, BuildError> {
    map.get(name).copied().ok_or_else(|| {
        err(field, format!("no {what} named `{name}` is declared under [{what}s]"))
            .suggest(crate::text::closest(name, map.keys().map(String::as_str)))
    })
}

/// A `queue` step ([`Step::Queue`]): every arrival, or with
/// `every_total` every N-th over all threads.
fn queue_step(s: &StepConfig, field: &str, names: &Names<'_>) -> Result<Step, BuildError> {
    let name = s.queue.as_deref().unwrap_or_default();
    let q = name_ref(names.queues, name, &format!("{field}.queue"), "workqueue")?;
    match s.every_total {
        None => Ok(Step::Queue { q, every: 1 }),
        Some(0) => Err(err(
            format!("{field}.every_total"),
            "expected every_total >= 1 (1 = every time a thread reaches the step)",
        )),
        Some(_) if s.every.is_some() => Err(err(
            format!("{field}.every_total"),
            "a step counts its operations per thread (every) or over all threads (every_total), not both: remove one",
        )),
        Some(every) => Ok(Step::Queue { q, every }),
    }
}

/// Translates one `[[path]]` step (`field` is its path, e.g. `path[2]`).
pub fn step(s: &StepConfig, field: &str, lines: &mut Lines, names: &Names<'_>) -> Result<Step, BuildError> {
    let count = s.count.unwrap_or(1);
    if count == 0 {
        return Err(err(format!("{field}.count"), "expected a count >= 1"));
    }
    let action = step_action(s, field)?;
    if s.count.is_some() && !matches!(action, "read" | "work") {
        return Err(err(
            format!("{field}.count"),
            format!("a `{action}` step does not read `count` (only read steps and work with `read` do); remove it"),
        ));
    }
    if s.count.is_some() && action == "work" && s.read.is_none() && matches!(s.work, Some(WorkRef::Inline(_))) {
        return Err(err(format!("{field}.count"), "count needs `read`: the line the work reads"));
    }
    if s.op.is_some() && action != "counter" {
        return Err(err(
            format!("{field}.op"),
            format!("a `{action}` step does not read `op` (only counter steps do); remove it"),
        ));
    }
    if s.amount.is_some() && action != "counter" {
        return Err(err(
            format!("{field}.amount"),
            format!("a `{action}` step does not read `amount` (only counter steps with add or compare do); remove it"),
        ));
    }
    if s.window_ns.is_some() && action != "cmpxchg" {
        return Err(err(
            format!("{field}.window_ns"),
            format!("a `{action}` step does not read `window_ns` (only cmpxchg steps do); remove it"),
        ));
    }
    let stretch_key = [("from", s.from.is_some()), ("to", s.to.is_some())]
        .iter()
        .find(|(_, on)| *on)
        .map(|(k, _)| *k);
    if let Some(key) = stretch_key
        && (action != "work" || matches!(s.work, Some(WorkRef::Inline(_))))
    {
        return Err(err(
            format!("{field}.{key}"),
            format!("only a step naming a [work.NAME] with `code` or `split_by` reads `{key}` (a point of counted code); remove it"),
        ));
    }
    if s.every_total.is_some() && action != "queue" {
        return Err(err(
            format!("{field}.every_total"),
            format!(
                "a `{action}` step does not read `every_total` (only a queue step does: it queues every N-th time any thread reaches it); use `every` or remove it"
            ),
        ));
    }
    if s.mode.is_some() && action != "lock" {
        return Err(err(
            format!("{field}.mode"),
            format!("a `{action}` step does not read `mode` (only lock steps on an rwsem, qrwlock or seqlock do); remove it"),
        ));
    }
    Ok(match action {
        "work" => work_step(s, field, count, lines, names)?,
        "queue" => queue_step(s, field, names)?,
        "read" => Step::Read {
            line: lines.named(s.read.as_deref().unwrap_or_default(), &format!("{field}.read"))?,
            count,
        },
        "write" => Step::Write(lines.named(s.write.as_deref().unwrap_or_default(), &format!("{field}.write"))?),
        "atomic" => Step::Write(lines.named(s.atomic.as_deref().unwrap_or_default(), &format!("{field}.atomic"))?),
        "cmpxchg" => {
            let window = s.window_ns.unwrap_or(0.0);
            if !(window.is_finite() && (0.0..=1e9).contains(&window)) {
                return Err(err(
                    format!("{field}.window_ns"),
                    format!("expected a time from 0 to 1e9 ns, found {window}"),
                ));
            }
            Step::Cas {
                line: lines.named(s.cmpxchg.as_deref().unwrap_or_default(), &format!("{field}.cmpxchg"))?,
                window: (window * 1000.0).round() as u64,
            }
        }
        "lock" | "unlock" => super::lockstep::lock_step(s, field, names)?,
        _ => {
            let name = s.counter.as_deref().unwrap_or_default();
            let id = name_ref(names.counters, name, &format!("{field}.counter"), "counter")?;
            let op = s.op.ok_or_else(|| {
                err(
                    format!("{field}.op"),
                    "a counter step needs `op` (inc, dec, add, sum, read or compare; get or put for a percpu-ref)",
                )
            })?;
            let is_ref = names.counter_kinds.get(name) == Some(&CounterKindName::PercpuRef);
            let ref_op = matches!(op, CounterOp::Get | CounterOp::Put);
            if is_ref != ref_op {
                let expected = if is_ref {
                    "get or put"
                } else {
                    "inc, dec, add, sum, read or compare"
                };
                return Err(err(
                    format!("{field}.op"),
                    format!("counter `{name}` takes {expected}, found {op:?}").to_lowercase(),
                ));
            }
            let amount = counter_amount(s, op, field)?;
            Step::Counter { id, op, amount }
        }
    })
}

/// A counter step's `amount`: required and not 0 for `add`, the value
/// compared against for `compare` (default 0), refused elsewhere.
fn counter_amount(s: &StepConfig, op: CounterOp, field: &str) -> Result<i64, BuildError> {
    match (op, s.amount) {
        (CounterOp::Add, None | Some(0)) => Err(err(
            format!("{field}.amount"),
            "an `add` step needs a nonzero `amount` (use inc or dec for 1 or -1)",
        )),
        (CounterOp::Add | CounterOp::Compare, a) => Ok(a.unwrap_or(0)),
        (_, Some(_)) => Err(err(
            format!("{field}.amount"),
            format!(
                "a `{}` step does not read `amount` (only add and compare do); remove it",
                format!("{op:?}").to_lowercase()
            ),
        )),
        (_, None) => Ok(0),
    }
}

/// A work step: its duration and the reads spread over it, written in
/// the step or taken from the `[work.NAME]` it names.
fn work_step(s: &StepConfig, field: &str, count: u32, lines: &mut Lines, names: &Names<'_>) -> Result<Step, BuildError> {
    match s.work.as_ref().ok_or_else(|| err(field, "missing work"))? {
        WorkRef::Inline(d) => {
            let dur = duration(d, &format!("{field}.work"))?;
            let reads = match s.read.as_deref() {
                Some(l) => Some((lines.named(l, &format!("{field}.read"))?, count)),
                None => None,
            };
            Ok(Step::Work { dur, reads })
        }
        WorkRef::Named(name) => {
            let w = names.works.get(name).ok_or_else(|| {
                err(format!("{field}.work"), format!("no work named `{name}` is declared under [work]"))
                    .suggest(crate::text::closest(name, names.works.keys().map(String::as_str)))
            })?;
            if s.read.is_some() || s.count.is_some() {
                let key = if s.read.is_some() { "read" } else { "count" };
                return Err(err(
                    format!("{field}.{key}"),
                    format!("a step naming work `{name}` takes its reads from [work.{name}]: set read and count there"),
                ));
            }
            let at = format!("work.{name}");
            let stretch = match (s.from.as_deref(), s.to.as_deref()) {
                (None, None) => None,
                (from, to) => Some(super::code::stretch(w, name, from, to, field)?),
            };
            let dur = match &w.code {
                Some(code) => super::code::duration(w, code, &at, stretch, names)?,
                None => {
                    let dist = w.dist.ok_or_else(|| {
                        err(
                            format!("{at}.dist"),
                            "missing `dist` (fixed, exp, uniform, normal, lognormal), or `code` for counted kernel code",
                        )
                    })?;
                    let mut d = w.dist(dist);
                    if let Some(st) = stretch {
                        let path = super::code::split_path(w, name, "from", field)?;
                        let k = super::code::share(path, st, &format!("{at}.split_by"), names)?;
                        let scale = |v: Option<f64>| v.map(|x| x * k);
                        d.mean_ns = scale(d.mean_ns);
                        d.sd_ns = scale(d.sd_ns);
                        d.min_ns = scale(d.min_ns);
                        d.max_ns = scale(d.max_ns);
                    }
                    duration(&d, &at)?
                }
            };
            let reads = match (w.read.as_deref(), w.count) {
                (Some(l), n) => {
                    let line = lines.named(l, &format!("{at}.read"))?;
                    let n = split_reads(w, name, n.unwrap_or(1), stretch, field, names)?;
                    (n > 0).then_some((line, n))
                }
                (None, Some(_)) => return Err(err(format!("{at}.count"), "count needs `read`: the line the work reads")),
                (None, None) => None,
            };
            Ok(Step::Work { dur, reads })
        }
    }
}

/// The reads of a split work's stretch: the work's `n` reads spread over
/// the whole work, the stretch `[a, b)` taking round(n x share before b)
/// - round(n x share before a), so the stretches' reads add up to `n`.
fn split_reads(
    w: &WorkConfig,
    name: &str,
    n: u32,
    stretch: Option<(usize, usize)>,
    field: &str,
    names: &Names<'_>,
) -> Result<u32, BuildError> {
    let Some((a, b)) = stretch else { return Ok(n) };
    let path = super::code::split_path(w, name, "from", field)?;
    let at = format!("work.{name}");
    let cum = |i: usize| -> Result<f64, BuildError> {
        Ok(if i == 0 {
            0.0
        } else {
            (f64::from(n) * super::code::share(path, (0, i), &at, names)?).round()
        })
    };
    Ok((cum(b)? - cum(a)?).max(0.0) as u32)
}

/// How often step `s` runs: on every `every`-th operation of its thread.
pub fn every(s: &StepConfig, field: &str) -> Result<u32, BuildError> {
    match s.every {
        Some(0) => Err(err(format!("{field}.every"), "expected every >= 1 (1 = every operation)")),
        Some(n) => Ok(n),
        None => Ok(1),
    }
}

/// The largest mean, bound or spread of a work duration, ns (1,000 s):
/// a sample far in its tail stays well inside the simulated clock's range
/// (about 1.8e16 ns), rather than failing the run after it started.
pub const MAX_WORK_NS: f64 = 1e12;

/// The largest sample a lognormal duration may reach at 9 sigma above its
/// median (the tail a run of 2^53 draws can see), ns.
const MAX_LOGNORMAL_TAIL_NS: f64 = 1e15;

/// Builds a duration distribution from its config.
pub fn duration(d: &DistConfig, field: &str) -> Result<Duration, BuildError> {
    let need = |v: Option<f64>, name: &str| -> Result<f64, BuildError> {
        match v {
            Some(x) if x.is_finite() && x > MAX_WORK_NS && name != "sigma" => Err(err(
                format!("{field}.{name}"),
                format!("expected at most {MAX_WORK_NS:e} ns (1,000 s) for one work step, found {x}"),
            )),
            Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
            Some(x) => Err(err(format!("{field}.{name}"), format!("expected a finite number >= 0, found {x}"))),
            None => Err(err(
                format!("{field}.{name}"),
                format!("`{name}` is required for dist = {:?}", d.dist).to_lowercase(),
            )),
        }
    };
    let bad = |e: &dyn std::fmt::Display| err(field.to_string(), format!("invalid distribution: {e}"));
    let reads: &[&str] = match d.dist {
        DistKind::Fixed | DistKind::Exp => &["mean_ns"],
        DistKind::Uniform => &["min_ns", "max_ns"],
        DistKind::Normal => &["mean_ns", "sd_ns"],
        DistKind::Lognormal => &["mean_ns", "sigma"],
    };
    if let Some((name, _)) = d.given().iter().find(|(n, v)| v.is_some() && !reads.contains(n)) {
        return Err(err(
            format!("{field}.{name}"),
            format!(
                "dist = {:?} does not read `{name}` (it reads {}); remove it",
                d.dist,
                reads.join(" and ")
            )
            .to_lowercase(),
        ));
    }
    Ok(match d.dist {
        DistKind::Fixed => Duration::Fixed(SimTimePs::from_ns_f64(need(d.mean_ns, "mean_ns")?)),
        DistKind::Exp => {
            let mean = need(d.mean_ns, "mean_ns")?;
            if mean == 0.0 {
                Duration::Fixed(SimTimePs::ZERO)
            } else {
                Duration::Exp(ExpDuration::from_mean_ns(mean).ok_or_else(|| bad(&"the mean must be finite and positive"))?)
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
            let tail = mean.ln() - sigma * sigma / 2.0 + 9.0 * sigma;
            if tail > MAX_LOGNORMAL_TAIL_NS.ln() {
                return Err(err(
                    format!("{field}.sigma"),
                    format!(
                        "sigma = {sigma} with mean_ns = {mean} gives samples of up to {:.3e} ns (9 sigma above the median), over {MAX_LOGNORMAL_TAIL_NS:e} ns",
                        tail.exp()
                    ),
                ));
            }
            Duration::LogNormal(LogNormal::new(mean.ln() - sigma * sigma / 2.0, sigma).map_err(|e| bad(&e))?)
        }
    })
}

fn kind_word(k: CounterKindName) -> &'static str {
    match k {
        CounterKindName::Atomic => "atomic",
        CounterKindName::Percpu => "percpu",
        CounterKindName::Hierarchical => "hierarchical",
        CounterKindName::PercpuRef => "percpu-ref",
    }
}

/// Default per-CPU batch of `percpu_counter`: `max(32, 2 * CPUs)`, as
/// `compute_batch_value` in lib/percpu_counter.c.
pub fn default_batch(cpus: u32) -> i64 {
    i64::from(cpus.saturating_mul(2)).max(32)
}

/// Places counter `name` on the threads' CPUs: its main line and lock, one
/// slot line per thread, one line and lock per socket. `online_cpus` is
/// what the kernel under test sees (it sizes the default batch).
pub fn counter(
    name: &str,
    c: &CounterConfig,
    online_cpus: u32,
    topo: &Topology,
    cpus: &[CpuId],
    lines: &mut Lines,
    locks: &mut LockTable,
) -> Result<Counter, BuildError> {
    let field = format!("counters.{name}");
    if c.per.is_some() {
        return Err(err(
            format!("{field}.per"),
            "a counter has no per-AG or per-directory instances (only locks take `per`; XFS's per-AG counts live under the AG's buffer lock); remove it",
        ));
    }
    let batch = c.batch.unwrap_or_else(|| default_batch(online_cpus));
    if batch < 1 {
        return Err(err(format!("{field}.batch"), "expected a batch >= 1"));
    }
    let per_socket = i64::from(topo.cores_per_socket * topo.smt);
    let socket_batch = c.socket_batch.unwrap_or(batch.saturating_mul(per_socket));
    if c.socket_batch.is_some() && c.kind != CounterKindName::Hierarchical {
        return Err(err(
            format!("{field}.socket_batch"),
            "only a `hierarchical` counter reads socket_batch",
        ));
    }
    if c.batch.is_some() && matches!(c.kind, CounterKindName::Atomic | CounterKindName::PercpuRef) {
        return Err(err(
            format!("{field}.batch"),
            format!("an `{}` counter has no batch", kind_word(c.kind)),
        ));
    }
    if c.mode.is_some() && c.kind != CounterKindName::PercpuRef {
        return Err(err(format!("{field}.mode"), "only a `percpu-ref` counter reads mode"));
    }
    if socket_batch < 1 {
        return Err(err(format!("{field}.socket_batch"), "expected a socket_batch >= 1"));
    }
    let kind = match c.kind {
        CounterKindName::Atomic => CounterKind::Atomic,
        CounterKindName::Percpu => CounterKind::Percpu { batch },
        CounterKindName::Hierarchical => CounterKind::Hierarchical { batch, socket_batch },
        CounterKindName::PercpuRef => CounterKind::PercpuRef {
            atomic: c.mode == Some(RefMode::Atomic),
        },
    };
    let main_line = match c.line.as_deref() {
        Some(l) => lines.named(l, &format!("{field}.line"))?,
        None => lines.id(name),
    };
    let lock = locks.add(LockKind::Queued, main_line);
    let slot_lines = (0..cpus.len()).map(|p| lines.id(&format!("{name}.slot{p}"))).collect();
    let socket_lines = (0..topo.sockets)
        .map(|s| lines.id(&format!("{name}.socket{s}")))
        .collect::<Vec<_>>();
    let socket_locks = socket_lines.iter().map(|&l| locks.add(LockKind::Queued, l)).collect();
    let socket_of = cpus.iter().map(|&c| topo.socket_of(c)).collect();
    let data_line = match c.kind {
        CounterKindName::PercpuRef => lines.id(&format!("{name}.data")),
        _ => main_line,
    };
    let at = CounterPlacement {
        data_line,
        online_cpus,
        main_line,
        lock,
        slot_lines,
        socket_lines,
        socket_locks,
        socket_of,
    };
    Ok(Counter::new(kind, at))
}
