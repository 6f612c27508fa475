//! Machine profiles: what a machine charges for touching a cache line, by
//! the distance between the CPU that wants it and the CPU that holds it,
//! plus memory latency and cache sizes. Built-in profiles (module
//! [`crate::machine::builtin`], re-exported here) carry the published
//! measurement they come from; users may write their own in TOML and load
//! them with [`load_profile`].
//!
//! # Units and rounding
//!
//! Latencies are `f64` nanoseconds in the profile, as published. The model
//! works in integer picoseconds; [`ns_to_ps`] is the one conversion: `ns x
//! 1000` rounded to the nearest picosecond, halves away from zero
//! (`f64::round`). A validated profile has every latency finite, `>= 0` and
//! at most [`MAX_LATENCY_NS`], so the conversion is exact to the picosecond
//! and cannot overflow.

use std::fmt::Write as _;
use std::path::Path;

use super::MachineError;
use super::topology::{Distance, Topology};
use crate::param::ParamError;

pub use super::builtin::{builtin_profiles, closest_builtin, find_builtin};

/// Largest latency a profile may give, in ns (1 ms): far above any cache or
/// memory latency, and small enough that sums of millions stay in `u64` ps.
pub const MAX_LATENCY_NS: f64 = 1.0e6;

/// Latency profile of a machine: prices cache-line accesses and transfers by
/// [`Distance`], plus memory latency and cache geometry for the cache model.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MachineProfile {
    /// Profile name, as given to `[machine] profile = "..."`.
    pub name: String,
    /// Where the numbers come from (citation); uncertain values say so here.
    pub source: String,
    /// Processor model, for reports.
    pub cpu: String,
    /// The machine's own topology, used unless a scenario overrides it.
    pub topology: Topology,
    /// ns for a load from, or an ordinary store to, a line this CPU already
    /// holds in L1 (L1 load-to-use latency); also the price of
    /// [`Distance::SameCpu`].
    pub hit_ns: f64,
    /// ns for a locked read-modify-write (`lock xadd`, `lock cmpxchg`, ARM LSE
    /// `ldadd`) on a line this CPU already holds Modified/Exclusive: the
    /// "operation time" of an atomic, paid on top of any transfer.
    pub atomic_ns: f64,
    /// ns to move a line between the two SMT threads of one core.
    pub smt_ns: f64,
    /// ns to move a line between two cores sharing a last-level cache.
    pub same_llc_ns: f64,
    /// ns to move a line between LLC domains of one socket (equal to
    /// `same_llc_ns` where a socket has one LLC, since it is then unused).
    pub same_socket_ns: f64,
    /// ns to move a line between sockets (unused on one-socket machines).
    pub cross_socket_ns: f64,
    /// Per pair of sockets, ns to move a line between them, for machines
    /// whose sockets are not all one hop apart (a NUMA distance matrix:
    /// `socket_distance_ns[a][b]`, square over the sockets, symmetric; the
    /// diagonal is unused). Default: `cross_socket_ns` for every pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_distance_ns: Option<Vec<Vec<f64>>>,
    /// ns for a load that misses every cache and goes to local DRAM.
    pub memory_ns: f64,
    /// L1 data cache per core, bytes.
    pub l1d_bytes: u64,
    /// L2 cache per core, bytes.
    pub l2_bytes: u64,
    /// Last-level cache per socket, bytes (all LLC domains of the socket).
    pub llc_bytes_per_socket: u64,
    /// Associativity (ways) of the last-level cache; the cache model may use
    /// it for the private cache too.
    pub cache_ways: u32,
    /// Combined throughput of two busy SMT siblings relative to one thread
    /// alone on the core (1.0 = no gain, 2.0 = two full cores), in `[1, 2]`.
    pub smt_throughput: f64,
    /// Per-level geometry and hit latencies for the set-associative cache
    /// model ([`crate::machine::cache`]); optional, needed only by workloads
    /// that price memory touches through it (`fsmark`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<CacheLevels>,
    /// What one enabled tracepoint costs the code it fires in, measured
    /// by `fsmeta calibrate` ([`crate::calibrate::tracepoint`]); optional:
    /// without it the lab's twins count the event's loads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracepoint: Option<TracepointPrices>,
    /// What the kernel's Spectre v2 mitigation adds to each indirect call
    /// on this host, measured by `fsmeta calibrate`
    /// ([`crate::calibrate::mitigation`]); optional: without it an
    /// indirect call costs what a direct one does (the assumed profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mitigation: Option<MitigationPrices>,
    /// What the filesystem holding the lab's images charges for a btrfs
    /// commit's flushes through the loop device, measured by `fsmeta
    /// calibrate` ([`StoragePrices`]); optional: without it the lab's
    /// btrfs twin counts a commit's writes and does not price them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<StoragePrices>,
    /// What waking a thread asleep on another, idle CPU costs (a round
    /// trip, and a thread's stop), measured by `fsmeta calibrate`
    /// ([`SchedPrices`]); optional: without it the lab's btrfs twin does
    /// not price an unmount's teardown (profiles measured before session
    /// 68).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched: Option<SchedPrices>,
    /// What the kernel's `memmove` costs per 64 bytes for the moves
    /// `btrfs_del_items` makes inside a leaf, measured by `fsmeta
    /// calibrate` ([`MemmovePrices`]); optional: without it the btrfs
    /// twins price a moved line as a load and a store at `hit_ns`
    /// (profiles measured before session 71).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memmove: Option<MemmovePrices>,
    /// The host's one fitted knob (issue 30), for the scenarios that ask
    /// for it with `work_scale = "host"`; optional: `fsmeta calibrate`
    /// does not write it (a profile measured again needs its knob fitted
    /// again on the same figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knob: Option<HostKnob>,
}

/// A measured host's one fitted knob: what no microbenchmark gives,
/// solved on one named live figure (docs/lab-hosts.md shows each fit).
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostKnob {
    /// ns per counted straight-line load of kernel code as a multiple of
    /// `hit_ns` (the counted paths' `work_scale`), in (0, 1000].
    pub work_scale: f64,
    /// The one figure it was fitted on: the experiment, variant and
    /// metric (e.g. "fsmeta lab xfs-alloc -p extents=100000: le,
    /// alloc_us_p50, the live median"). Every other time on the host is a
    /// prediction.
    pub fitted_on: String,
}

/// Largest accepted knob (a load at 1,000 L1 hits).
pub const MAX_WORK_SCALE: f64 = 1000.0;

/// What the kernel's speculation mitigations add to kernel code on one
/// host (arch/x86/kernel/cpu/bugs.c picks them; the sysfs files under
/// `/sys/devices/system/cpu/vulnerabilities/` name them).
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MitigationPrices {
    /// The host's `spectre_v2` line when it was measured, as sysfs gave it.
    pub spectre_v2: String,
    /// ns one indirect call (a call through a function pointer) costs
    /// beyond a plain `call *%reg`, through the sequence the line names:
    /// the generic retpoline thunk (`__x86_indirect_thunk_*`,
    /// arch/x86/lib/retpoline.S) for "Retpolines", `lfence; call` for
    /// "LFENCE", nothing (0) for (enhanced) IBRS, "Not affected" or
    /// "Vulnerable".
    pub indirect_call_ns: f64,
    /// The host's `spec_rstack_overflow` line when [`Self::return_ns`]
    /// was measured, as sysfs gave it (absent from profiles measured
    /// before returns were priced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_rstack_overflow: Option<String>,
    /// ns one return of kernel code costs beyond a plain `ret`, through
    /// the sequence the host's `spec_rstack_overflow` and `retbleed`
    /// lines name: the SRSO Safe RET thunk (`srso_alias_return_thunk`,
    /// arch/x86/lib/retpoline.S) for "Safe RET", the untrained return
    /// thunk (`retbleed_return_thunk`) for "untrained return thunk",
    /// nothing (0) otherwise; 0 in profiles measured before returns were
    /// priced. Charged for the returns the counted inner loops make.
    #[serde(default)]
    pub return_ns: f64,
}

/// What the set-associative cache model needs beyond the sizes above: the
/// ways of each private level and the load-to-use latency of a hit in L2
/// and in the LLC (an L1 hit costs `hit_ns`, a miss everywhere `memory_ns`,
/// a line another core holds modified the transfer by distance).
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct CacheLevels {
    /// Ways of the L1 data cache.
    pub l1d_ways: u32,
    /// Ways of the L2.
    pub l2_ways: u32,
    /// ns for a load that hits in L2 (load-to-use).
    pub l2_hit_ns: f64,
    /// ns for a load that hits in the last-level cache (load-to-use).
    pub llc_hit_ns: f64,
    /// ns per 64-byte line of a new object initialised in lines no cache
    /// holds (a slab constructor's `memset`, a fresh object's first
    /// stores), measured by `fsmeta calibrate`
    /// ([`crate::calibrate::fresh`]); optional: without it such a line is
    /// priced as a load from DRAM (`memory_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh_line_ns: Option<f64>,
    /// ns per L1-resident load in the body of a hot loop whose turns do
    /// not wait on one another (issued, not waited for: loads overlap turn
    /// over turn), measured by `fsmeta calibrate`
    /// ([`crate::calibrate::loop_load`]); optional: without it an inner
    /// loop's load is priced at `hit_ns`, as if each waited for the last.
    /// The price of the loads of loops whose turns overlap
    /// ([`crate::kernel::work::Work::overlapped`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_load_ns: Option<f64>,
}

/// Converts ns to integer ps: `ns x 1000` rounded to the nearest ps, halves
/// away from zero; NaN and negatives give 0, huge values saturate.
pub fn ns_to_ps(ns: f64) -> u64 {
    crate::engine::time::SimTimePs::from_ns_f64(ns).0
}

impl MachineProfile {
    /// Checks the topology, that every latency is finite, in `[0,
    /// MAX_LATENCY_NS]` and that transfer latencies do not decrease with
    /// distance (`hit <= smt <= same_llc <= same_socket <= cross_socket`),
    /// that cache sizes and ways are at least 1 and `smt_throughput` is in
    /// `[1, 2]`. Errors name the field (`topology.smt`, `same_llc_ns`, ...).
    pub fn validate(&self) -> Result<(), ParamError> {
        self.topology.validate().map_err(|e| e.under("topology"))?;
        for (field, ns) in self.latencies() {
            if !(0.0..=MAX_LATENCY_NS).contains(&ns) {
                return Err(invalid(field, format!("{ns} ns is not in [0, {MAX_LATENCY_NS}]")));
            }
        }
        self.validate_order()?;
        self.validate_distances()?;
        let sizes = [
            ("l1d_bytes", self.l1d_bytes),
            ("l2_bytes", self.l2_bytes),
            ("llc_bytes_per_socket", self.llc_bytes_per_socket),
            ("cache_ways", u64::from(self.cache_ways)),
        ];
        for (field, value) in sizes {
            if value == 0 {
                return Err(invalid(field, "must be at least 1".to_string()));
            }
        }
        self.validate_levels()?;
        self.validate_tracepoint()?;
        self.validate_mitigation()?;
        if let Some(st) = &self.storage {
            st.check().map_err(|(field, msg)| invalid(field, msg))?;
        }
        if let Some(s) = &self.sched {
            s.check().map_err(|(field, msg)| invalid(field, msg))?;
        }
        if let Some(m) = &self.memmove {
            m.check().map_err(|(field, msg)| invalid(field, msg))?;
        }
        if let Some(k) = &self.knob {
            if !(k.work_scale > 0.0 && k.work_scale <= MAX_WORK_SCALE) {
                return Err(invalid(
                    "knob.work_scale",
                    format!("{} is not in (0, {MAX_WORK_SCALE}]", k.work_scale),
                ));
            }
            if k.fitted_on.trim().is_empty() {
                return Err(invalid("knob.fitted_on", "must name the figure the knob was fitted on".to_string()));
            }
        }
        if !(1.0..=2.0).contains(&self.smt_throughput) {
            let msg = format!("{} is not in [1, 2]", self.smt_throughput);
            return Err(invalid("smt_throughput", msg));
        }
        Ok(())
    }

    /// The optional measured cache levels: each level between `hit_ns`
    /// and `memory_ns`, the loop and fresh-line prices in range, ways at
    /// least 1.
    fn validate_levels(&self) -> Result<(), ParamError> {
        let Some(l) = &self.levels else {
            return Ok(());
        };
        for (field, ns) in [("levels.l2_hit_ns", l.l2_hit_ns), ("levels.llc_hit_ns", l.llc_hit_ns)] {
            if !(self.hit_ns..=self.memory_ns.max(self.hit_ns)).contains(&ns) {
                return Err(invalid(field, format!("{ns} ns is not between hit_ns and memory_ns")));
            }
        }
        if l.llc_hit_ns < l.l2_hit_ns {
            return Err(invalid("levels.llc_hit_ns", "is less than levels.l2_hit_ns".to_string()));
        }
        if let Some(ns) = l.loop_load_ns
            && !(ns.is_finite() && ns > 0.0 && ns <= 1e3)
        {
            return Err(invalid("levels.loop_load_ns", format!("{ns} ns is not in (0, 1000]")));
        }
        if let Some(ns) = l.fresh_line_ns
            && !(ns.is_finite() && (0.0..=1e3).contains(&ns))
        {
            return Err(invalid("levels.fresh_line_ns", format!("{ns} ns is not in [0, 1000]")));
        }
        for (field, w) in [("levels.l1d_ways", l.l1d_ways), ("levels.l2_ways", l.l2_ways)] {
            if w == 0 {
                return Err(invalid(field, "must be at least 1".to_string()));
            }
        }
        Ok(())
    }

    /// The optional tracepoint prices, in range ([`TracepointPrices::check`]).
    fn validate_tracepoint(&self) -> Result<(), ParamError> {
        match &self.tracepoint {
            Some(t) => t.check().map_err(|(field, msg)| invalid(field, msg)),
            None => Ok(()),
        }
    }

    /// The optional mitigation prices, each in `[0, 1000]` ns.
    fn validate_mitigation(&self) -> Result<(), ParamError> {
        let Some(mi) = &self.mitigation else {
            return Ok(());
        };
        for (field, ns) in [
            ("mitigation.indirect_call_ns", mi.indirect_call_ns),
            ("mitigation.return_ns", mi.return_ns),
        ] {
            if !(ns.is_finite() && (0.0..=1e3).contains(&ns)) {
                return Err(invalid(field, format!("{ns} ns is not in [0, 1000]")));
            }
        }
        Ok(())
    }

    /// ns an indirect call costs beyond a direct one on this machine: the
    /// measured [`MitigationPrices::indirect_call_ns`], 0 without it.
    pub fn indirect_call_ns(&self) -> f64 {
        self.mitigation.as_ref().map_or(0.0, |m| m.indirect_call_ns)
    }

    /// ns a return costs beyond a plain `ret` on this machine: the
    /// measured [`MitigationPrices::return_ns`], 0 without it.
    pub fn return_ns(&self) -> f64 {
        self.mitigation.as_ref().map_or(0.0, |m| m.return_ns)
    }

    /// ns per line of a new object initialised where no cache holds it:
    /// the measured [`CacheLevels::fresh_line_ns`], else `memory_ns`.
    pub fn fresh_line_ns(&self) -> f64 {
        self.levels.as_ref().and_then(|l| l.fresh_line_ns).unwrap_or(self.memory_ns)
    }
    /// Whether `fsmeta calibrate` measured this profile on the CPU
    /// `family_model` (`family F model M`, as `lab.txt` and
    /// [`crate::hostinfo::HostInfo::family`] give it): its `cpu` line
    /// names it as `(family F model M)`.
    pub fn measured_on_cpu(&self, family_model: &str) -> bool {
        self.cpu.contains(&format!("({family_model})"))
    }

    /// The `spectre_v2` state `fsmeta calibrate` measured this profile
    /// under (its `[mitigation]` table), if it says.
    pub fn spectre_v2(&self) -> Option<&str> {
        self.mitigation.as_ref().map(|m| m.spectre_v2.as_str())
    }

    /// ns per load in the body of a hot inner loop
    /// whose turns overlap ([`crate::kernel::work::Work::overlapped`]):
    /// the measured
    /// [`CacheLevels::loop_load_ns`], else `hit_ns`.
    pub fn loop_load_ns(&self) -> f64 {
        self.levels.as_ref().and_then(|l| l.loop_load_ns).unwrap_or(self.hit_ns)
    }

    /// Every latency field with its name, in declaration order.
    fn latencies(&self) -> [(&'static str, f64); 7] {
        [
            ("hit_ns", self.hit_ns),
            ("atomic_ns", self.atomic_ns),
            ("smt_ns", self.smt_ns),
            ("same_llc_ns", self.same_llc_ns),
            ("same_socket_ns", self.same_socket_ns),
            ("cross_socket_ns", self.cross_socket_ns),
            ("memory_ns", self.memory_ns),
        ]
    }

    /// A distance matrix must be square over the sockets, symmetric, and
    /// no nearer than one socket's own transfers.
    fn validate_distances(&self) -> Result<(), ParamError> {
        let Some(m) = &self.socket_distance_ns else {
            return Ok(());
        };
        let n = self.topology.sockets as usize;
        if m.len() != n || m.iter().any(|row| row.len() != n) {
            return Err(invalid(
                "socket_distance_ns",
                format!("expected a {n} x {n} matrix (one row and column per socket)"),
            ));
        }
        for (a, row) in m.iter().enumerate() {
            for (b, &x) in row.iter().enumerate() {
                let y = m[b][a];
                if a != b && (x != y || !(self.same_socket_ns..=MAX_LATENCY_NS).contains(&x)) {
                    let msg = format!("[{a}][{b}] = {x} ns: expected a symmetric matrix of values from same_socket_ns to {MAX_LATENCY_NS}");
                    return Err(invalid("socket_distance_ns", msg));
                }
            }
        }
        Ok(())
    }

    /// Transfer cost between two CPUs at distance `d` on sockets `a` and
    /// `b`, in ps: the distance matrix where one is given for two sockets.
    pub fn transfer_between_ps(&self, d: Distance, a: u32, b: u32) -> u64 {
        match (&self.socket_distance_ns, d) {
            (Some(m), Distance::CrossSocket) => m
                .get(a as usize)
                .and_then(|row| row.get(b as usize))
                .map_or_else(|| self.transfer_ps(d), |&ns| ns_to_ps(ns)),
            _ => self.transfer_ps(d),
        }
    }

    /// Transfer latencies must not decrease as the distance grows.
    fn validate_order(&self) -> Result<(), ParamError> {
        let fields = ["hit_ns", "smt_ns", "same_llc_ns", "same_socket_ns", "cross_socket_ns"];
        for (i, pair) in Distance::ALL.windows(2).enumerate() {
            let (near, far) = (self.transfer_ns(pair[0]), self.transfer_ns(pair[1]));
            if far < near {
                let msg = format!("{far} ns is less than {} = {near} ns", fields[i]);
                return Err(invalid(fields[i + 1], msg));
            }
        }
        Ok(())
    }

    /// ns to get a line held at distance `d` ([`Distance::SameCpu`] is
    /// `hit_ns`, a hit in this CPU's own L1).
    pub fn transfer_ns(&self, d: Distance) -> f64 {
        match d {
            Distance::SameCpu => self.hit_ns,
            Distance::SmtSibling => self.smt_ns,
            Distance::SameLlc => self.same_llc_ns,
            Distance::SameSocket => self.same_socket_ns,
            Distance::CrossSocket => self.cross_socket_ns,
        }
    }

    /// [`MachineProfile::transfer_ns`] in integer ps, rounded by [`ns_to_ps`]
    /// (nearest ps, halves away from zero).
    pub fn transfer_ps(&self, d: Distance) -> u64 {
        ns_to_ps(self.transfer_ns(d))
    }

    /// `atomic_ns` in ps (rounded by [`ns_to_ps`]).
    pub fn atomic_ps(&self) -> u64 {
        ns_to_ps(self.atomic_ns)
    }

    /// `memory_ns` in ps (rounded by [`ns_to_ps`]).
    pub fn memory_ps(&self) -> u64 {
        ns_to_ps(self.memory_ns)
    }

    /// Multi-line human listing for `fsmeta machines`.
    pub fn describe(&self) -> String {
        let t = &self.topology;
        let mut s = format!("{}: {}\n", self.name, self.cpu);
        let _ = writeln!(
            s,
            "  topology: {} socket(s) x {} cores x {} SMT = {} CPUs, {} LLC domain(s) per socket",
            t.sockets,
            t.cores_per_socket,
            t.smt,
            t.cpus(),
            t.llcs_per_socket
        );
        let _ = writeln!(
            s,
            "  latency ns: hit {} atomic {} | transfer smt {} same_llc {} same_socket {} cross_socket {} | memory {}",
            self.hit_ns, self.atomic_ns, self.smt_ns, self.same_llc_ns, self.same_socket_ns, self.cross_socket_ns, self.memory_ns
        );
        let _ = writeln!(
            s,
            "  caches: L1d {} + L2 {} per core, LLC {} per socket ({}-way)",
            bytes(self.l1d_bytes),
            bytes(self.l2_bytes),
            bytes(self.llc_bytes_per_socket),
            self.cache_ways
        );
        let _ = writeln!(s, "  smt_throughput: {}", self.smt_throughput);
        let _ = writeln!(s, "  source: {}", self.source);
        s
    }
}

/// Formats a byte count in KiB/MiB/GiB when it is a whole multiple.
fn bytes(n: u64) -> String {
    for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if n >= size && n.is_multiple_of(size / 4) {
            return format!("{} {unit}", n as f64 / size as f64);
        }
    }
    format!("{n} B")
}

/// Reads and validates a user profile from a TOML file with the fields of
/// [`MachineProfile`] (`[topology]` as a table). Syntax, type and
/// unknown-field errors give `InputFile` with toml's line, and the message
/// starts with the column, so it prints as `file:line: column N: message`; a
/// failed [`MachineProfile::validate`] gives `InputFile` at the line of the
/// offending key when it can be found (else line 1), message `field: why`.
pub fn load_profile(path: &Path) -> Result<MachineProfile, MachineError> {
    let text = crate::engine::input::read_text_file(path)?;
    let profile: MachineProfile = toml::from_str(&text).map_err(|e| {
        let (line, col) = e.span().map_or((1, 1), |span| line_col(&text, span.start));
        let message = e.message().trim_end();
        // A misspelt key: name the closest valid one, as a scenario's do.
        let hint = crate::text::suggestion_from_serde(message)
            .map(|(_, key)| format!(" (did you mean `{key}`?)"))
            .unwrap_or_default();
        input_error(path, line, format!("column {col}: {message}{hint}"))
    })?;
    profile.validate().map_err(|e| {
        let key = e.field.rsplit('.').next().unwrap_or(&e.field);
        let line = key_line(&text, key).unwrap_or(1);
        input_error(path, line, e.to_string())
    })?;
    Ok(profile)
}

/// 1-based (line, column) of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// 1-based line where `key = ...` is assigned (first occurrence).
fn key_line(text: &str, key: &str) -> Option<usize> {
    let is_key_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.lines()
        .position(|line| {
            line.match_indices(key).any(|(i, _)| {
                let before_ok = !line[..i].chars().next_back().is_some_and(is_key_char);
                let rest = line[i + key.len()..].trim_start();
                before_ok && rest.starts_with('=')
            })
        })
        .map(|i| i + 1)
}

fn input_error(path: &Path, line: usize, message: String) -> MachineError {
    crate::param::InputError::Malformed {
        path: path.to_path_buf(),
        line,
        message,
    }
    .into()
}

/// Builds the `InvalidParam` error for a profile field.
fn invalid(field: &str, message: String) -> ParamError {
    ParamError::new(field, message)
}

mod memmove;
mod sched;
mod storage;
#[cfg(test)]
mod tests;
mod tracepoint;

pub use memmove::{FAST_STRING_DISTANCE, MemmovePrices};
pub use sched::SchedPrices;
pub use storage::StoragePrices;
pub use tracepoint::TracepointPrices;
