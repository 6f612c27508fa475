//! The sections a `path` workload reads: `[[path]]` steps, `[work.NAME]`,
//! `[lines.NAME]`, `[locks.NAME]` and `[counters.NAME]`, parsed with
//! unknown keys denied.

use crate::kernel::sync::counter::CounterOp;
use crate::param::ParamError;
use crate::workload::Sections;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything a `path` workload reads from a scenario, in the order it is
/// written back to `scenario.resolved.toml`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
pub struct PathSections {
    /// `[[path]]`: the steps each thread runs per operation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<StepConfig>,
    /// `[work.NAME]`: named CPU work (with its reads), used by steps as
    /// `work = "NAME"`; a sweep or variant can set `work.NAME.mean_ns`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub work: BTreeMap<String, WorkConfig>,
    /// `[lines.NAME]`: optional notes on named shared cache lines.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lines: BTreeMap<String, LineConfig>,
    /// `[locks.NAME]`: named locks.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub locks: BTreeMap<String, LockConfig>,
    /// `[counters.NAME]`: named counters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, CounterConfig>,
    /// `[workqueues.NAME]`: work queues that `queue` steps defer items to.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workqueues: BTreeMap<String, WorkqueueConfig>,
    /// `[stop]`: a precision-targeted stop instead of `scenario.ops`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopSection>,
    /// `[code]`: how the counted kernel code that `[work.NAME]` tables
    /// name with `code` is sized and priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<CodeSection>,
    /// `[fs]`: the allocation groups and the threads' directories that
    /// `per = "ag"` and `per = "dir"` objects have an instance of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsSection>,
    /// `[start]`: when each thread starts its first operation
    /// ([`super::start`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StartSection>,
}

/// `[start]`: when the threads start their first operations.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StartSection {
    /// `"together"` or `"staggered"`; unset: staggered when every work
    /// step of the path has a fixed duration, together otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<StartRule>,
}

/// How the threads' first operations start (`[start] threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StartRule {
    /// Every thread at time 0.
    Together,
    /// Thread `t` of `T` at `t / T` of an operation's mean work.
    Staggered,
}

/// `[fs]`: the filesystem layout a thread's per-AG and per-directory
/// objects follow ([`super::layout`]).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FsSection {
    /// Allocation groups (`sb_agcount`, `mp->m_maxagi`): the instances of
    /// a `per = "ag"` object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agcount: Option<u32>,
    /// The threads' directories: `"per-thread"`, `"shared"` or a number
    /// of directories shared round robin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirs: Option<DirLayout>,
    /// `mp->m_agirotor` when the first thread directory is made (the
    /// directories made since mount before it, modulo `agcount`; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotor: Option<u32>,
}

/// How the threads' directories are laid out (`[fs] dirs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirLayout {
    /// One directory per thread (`"per-thread"`), made in thread order.
    PerThread,
    /// One directory for all threads (`"shared"`).
    Shared,
    /// `N` directories, thread `t` in directory `t mod N`.
    RoundRobin(u32),
}

impl Serialize for DirLayout {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DirLayout::PerThread => s.serialize_str("per-thread"),
            DirLayout::Shared => s.serialize_str("shared"),
            DirLayout::RoundRobin(n) => s.serialize_u32(*n),
        }
    }
}

impl<'de> Deserialize<'de> for DirLayout {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = DirLayout;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"per-thread\", \"shared\", or a number of directories shared round robin")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DirLayout, E> {
                match v {
                    "per-thread" => Ok(DirLayout::PerThread),
                    "shared" => Ok(DirLayout::Shared),
                    other => Err(E::invalid_value(serde::de::Unexpected::Str(other), &self)),
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<DirLayout, E> {
                u32::try_from(v)
                    .ok()
                    .filter(|&n| n >= 1)
                    .map(DirLayout::RoundRobin)
                    .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Signed(v), &"1 or more directories"))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<DirLayout, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// Which instance of a per-AG or per-directory object a thread uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Per {
    /// One instance per allocation group: the AG of the thread's directory.
    Ag,
    /// One instance per directory: the thread's directory.
    Dir,
}

/// `[code]`: the host's one knob and the sizes for works that are the
/// counted code of a kernel path (`[work.NAME] code = "..."`, the table
/// `crate::kernel::xfs::paths::CODE_PATHS`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CodeSection {
    /// ns per counted straight-line load as a multiple of the profile's
    /// `hit_ns` (the host's one knob; default 1). Inner-loop loads are
    /// priced at `hit_ns`, cold lines at `memory_ns`, locked operations at
    /// `atomic_ns`. `"host"`: the profile's fitted knob
    /// ([`crate::workload::work_scale::WorkScale`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_scale: Option<crate::workload::work_scale::WorkScale>,
    /// Names in each thread's directory at the end of its creates (the
    /// lab's `files`): a create's work is its mean over the directory
    /// growing to this size, an unlink's over it shrinking back.
    pub dir_entries: u64,
}

/// `[stop]` (or `stop = { ... }`): run until the 95 % confidence interval
/// of a metric is this narrow, at most `max_ops` operations.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StopSection {
    /// Target relative 95 % half-width, percent of the estimate.
    pub ci_half_width_pct: f64,
    /// The metric whose interval is targeted (only `ops_per_sec`).
    #[serde(default = "default_stop_metric")]
    pub metric: String,
    /// Cap on operations (all threads) when the target is not reached.
    pub max_ops: u64,
}

fn default_stop_metric() -> String {
    "ops_per_sec".into()
}

impl PathSections {
    /// Reads the sections (each may be absent).
    pub fn read(sections: &Sections<'_>) -> Result<Self, ParamError> {
        Ok(PathSections {
            path: sections.get("path")?,
            work: sections.get("work")?,
            lines: sections.get("lines")?,
            locks: sections.get("locks")?,
            counters: sections.get("counters")?,
            workqueues: sections.get("workqueues")?,
            stop: sections.get_opt("stop")?,
            code: sections.get_opt("code")?,
            fs: sections.get_opt("fs")?,
            start: sections.get_opt("start")?,
        })
    }
}

/// A duration distribution, in nanoseconds.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DistConfig {
    /// `fixed`, `exp`, `uniform`, `normal` or `lognormal`.
    pub dist: DistKind,
    /// Mean in ns (fixed, exp, normal, lognormal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ns: Option<f64>,
    /// Standard deviation in ns (normal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd_ns: Option<f64>,
    /// Lower bound in ns (uniform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ns: Option<f64>,
    /// Upper bound in ns (uniform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ns: Option<f64>,
    /// Shape sigma of the underlying normal (lognormal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<f64>,
}

impl DistConfig {
    /// Each duration key with the value written for it (if any), in the
    /// order the reference lists them.
    pub fn given(&self) -> [(&'static str, Option<f64>); 5] {
        [
            ("mean_ns", self.mean_ns),
            ("sd_ns", self.sd_ns),
            ("min_ns", self.min_ns),
            ("max_ns", self.max_ns),
            ("sigma", self.sigma),
        ]
    }
}

/// `[work.NAME]`: CPU work a step names with `work = "NAME"`: a duration
/// distribution (the keys of [`DistConfig`]) and the reads of one line
/// spread over it. Naming the work lets a sweep or a variant address it
/// (`work.NAME.mean_ns`, `work.NAME.count`), e.g. to zip a fitted work with
/// the host it was fitted on.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkConfig {
    /// `fixed`, `exp`, `uniform`, `normal` or `lognormal` (with `code`:
    /// `fixed`, the default, or `exp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<DistKind>,
    /// The counted code of a kernel path by name (e.g. `xfs_create`): the
    /// work's mean is that code's counted work priced on the machine
    /// profile with `[code]`'s `work_scale`, instead of `mean_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Mean in ns (fixed, exp, normal, lognormal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ns: Option<f64>,
    /// Standard deviation in ns (normal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd_ns: Option<f64>,
    /// Lower bound in ns (uniform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ns: Option<f64>,
    /// Upper bound in ns (uniform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ns: Option<f64>,
    /// Shape sigma of the underlying normal (lognormal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<f64>,
    /// A line read during the work, `count` times at evenly spaced points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    /// How many reads of `read` the work makes (0 = none; default 1 when
    /// `read` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// A work without `code` that steps split (`from`, `to`) the way the
    /// counted code of this kernel path splits: each stretch gets the
    /// share of the work that the code's stretch is of the whole code
    /// (priced with `[code]`), so the split is counted, not fitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_by: Option<String>,
}

impl WorkConfig {
    /// The duration distribution of this work (`dist` checked present).
    pub fn dist(&self, dist: DistKind) -> DistConfig {
        DistConfig {
            dist,
            mean_ns: self.mean_ns,
            sd_ns: self.sd_ns,
            min_ns: self.min_ns,
            max_ns: self.max_ns,
            sigma: self.sigma,
        }
    }
}

/// The `work` of a step: a distribution written in place, or the name of
/// a `[work.NAME]` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum WorkRef {
    /// `work = { dist = "exp", mean_ns = 100.0 }`.
    Inline(DistConfig),
    /// `work = "NAME"`.
    Named(String),
}

impl<'de> Deserialize<'de> for WorkRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = WorkRef;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a distribution table such as { dist = \"exp\", mean_ns = 100.0 }, or the name of a [work.NAME] table")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<WorkRef, E> {
                Ok(WorkRef::Named(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<WorkRef, A::Error> {
                DistConfig::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(WorkRef::Inline)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// Distribution families for `work` steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DistKind {
    /// Always `mean_ns`.
    Fixed,
    /// Exponential with mean `mean_ns`.
    Exp,
    /// Uniform on `[min_ns, max_ns]`.
    Uniform,
    /// Normal (`mean_ns`, `sd_ns`), clamped at 0.
    Normal,
    /// Log-normal with mean `mean_ns` and shape `sigma`.
    Lognormal,
}

/// One `[[path]]` step: exactly one of `work`, `read`, `write`, `atomic`, `cmpxchg`,
/// `lock`, `unlock`, `counter`, `queue`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    /// CPU work of this duration (in place, or a `[work.NAME]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<WorkRef>,
    /// Read this line (`count` times; with `work`, spread over the work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    /// How many reads the step stands for (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Store to this line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
    /// Atomic read-modify-write of this line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic: Option<String>,
    /// A `cmpxchg` loop on this line: load, compute, `cmpxchg`, retried
    /// while another CPU changed the line in between.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmpxchg: Option<String>,
    /// With `cmpxchg`: the time between the load and the `cmpxchg` (the
    /// new value's computation), in ns; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<f64>,
    /// Acquire this lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// With `lock` on an `rwsem`, `qrwlock` or `seqlock`: take the read
    /// or the write side (default `write`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<LockMode>,
    /// Release this lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlock: Option<String>,
    /// Operate on this counter (with `op`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<String>,
    /// The counter operation: `inc`, `dec`, `add`, `sum`, `read`,
    /// `compare` (`get`, `put` for a `percpu-ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<CounterOp>,
    /// With `op = "add"`: the amount added (not 0); with
    /// `op = "compare"`: the value compared against (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<i64>,
    /// Queue one deferred item on this work queue (`queue_work`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// Run the step only on every `every`-th operation of its thread (the
    /// `every`-th, `2 x every`-th, ...); default 1, every operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u32>,
    /// With `queue`: queue the item only the `every_total`-th,
    /// `2 x every_total`-th, ... time any thread reaches this step (the
    /// count is over all threads, as a space shared by every CPU fills:
    /// `xlog_cil_push_background` queues the CIL push when the context's
    /// space, summed over the CPUs, passes its limit). Not with `every`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_total: Option<u32>,
    /// With a named work that has `code` or `split_by`: the stretch starts
    /// at this point of the counted path (default its start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// With a named work that has `code` or `split_by`: the stretch ends
    /// at this point of the counted path (default its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// `[lines.NAME]`: documentation of what shares a line.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LineConfig {
    /// The fields that live on this line (documentation only).
    #[serde(default)]
    pub fields: Vec<String>,
}

/// The side of a reader-writer lock a `lock` step takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockMode {
    /// `down_read`, `read_lock`, `read_seqbegin`.
    Read,
    /// `down_write`, `write_lock`, `write_seqlock`.
    Write,
}

/// Lock designs a scenario can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockKindName {
    /// Ticket spinlock.
    Ticket,
    /// Queued spinlock (`qspinlock`).
    Queued,
    /// Sleeping mutex.
    Mutex,
    /// Reader-writer semaphore (`struct rw_semaphore`).
    Rwsem,
    /// Queued read-write spinlock (`rwlock_t`, `struct qrwlock`).
    Qrwlock,
    /// Sequence lock (`seqlock_t`).
    Seqlock,
}

/// `[locks.NAME]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LockConfig {
    /// `ticket`, `queued`, `mutex`, `rwsem`, `qrwlock` or `seqlock`.
    pub kind: LockKindName,
    /// `rwsem` only: writers spin on a running writer owner instead of
    /// sleeping (`CONFIG_RWSEM_SPIN_ON_OWNER`; default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin: Option<bool>,
    /// The line holding the lock word (default: a line of its own, `NAME.word`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    /// One instance per allocation group (`ag`) or per directory (`dir`)
    /// of `[fs]`, each with its own lock word (`NAME[i].word`); a step
    /// takes the instance of its thread's directory or of that
    /// directory's AG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<Per>,
}

/// Counter designs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CounterKindName {
    /// `atomic_t`.
    Atomic,
    /// `percpu_counter`.
    Percpu,
    /// Per-CPU deltas folding into per-socket counts, then the global one.
    Hierarchical,
    /// `struct percpu_ref` (lib/percpu-refcount.c), with `get` and `put`.
    PercpuRef,
}

/// The mode of a `percpu-ref` counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefMode {
    /// Per-CPU mode (after `percpu_ref_init` without
    /// `PERCPU_REF_INIT_ATOMIC`): get and put touch this CPU's count.
    Percpu,
    /// Atomic mode (after `percpu_ref_kill` or
    /// `percpu_ref_switch_to_atomic`): get and put are atomics on the
    /// shared `percpu_ref_data` count.
    Atomic,
}

/// `[counters.NAME]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CounterConfig {
    /// The design.
    pub kind: CounterKindName,
    /// Per-CPU fold threshold (default `max(32, 2 x CPUs)`, as
    /// `compute_batch_value` in lib/percpu_counter.c).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<i64>,
    /// Per-socket fold threshold for `hierarchical` (default `batch x
    /// CPUs per socket`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_batch: Option<i64>,
    /// Line holding the global count and its lock (default: its own line,
    /// named after the counter). Name another line to model false sharing.
    /// For a `percpu-ref`, the line of the `struct percpu_ref` itself (its
    /// `percpu_count_ptr`); the atomic count is on `NAME.data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    /// `percpu-ref` only: `percpu` (default) or `atomic` (killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RefMode>,
    /// Read only to refuse it: a counter has no per-AG or per-directory
    /// instances (the per-AG counts of XFS, `pagi_freecount` and the
    /// like, are fields under the AG's buffer lock, not counters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<Per>,
}

/// Where a work queue's items run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkqueueKind {
    /// Per-CPU (bound) work queue: an item runs on the CPU that queued it,
    /// in its kworker, which takes the CPU from that CPU's thread.
    Bound,
    /// `WQ_UNBOUND`: items run on workers on idle CPUs.
    Unbound,
}

/// `[workqueues.NAME]`: a work queue and the steps its worker runs per item.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkqueueConfig {
    /// `bound` (per-CPU) or `unbound`.
    pub kind: WorkqueueKind,
    /// `unbound` only: at most this many items run at once (`max_active`;
    /// default 256, `WQ_DFL_ACTIVE`), each on an idle CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_active: Option<u32>,
    /// `[[workqueues.NAME.path]]`: the steps a worker runs for one item.
    #[serde(default)]
    pub path: Vec<StepConfig>,
}
