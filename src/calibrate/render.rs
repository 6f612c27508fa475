//! The profile file: a header naming the command, date, CPU, kernel and
//! load; the chase curve, its plateaus and the other measurements as
//! comments; then every profile field with a comment saying how it was
//! measured and its spread. [`crate::machine::load_profile`] reads it.

use super::Calibration;
use super::derive::{Derived, bytes};
use super::host::HostInfo;
use super::plateau::plateaus;
use crate::machine::MachineProfile;
use crate::machine::profile::{CacheLevels, MemmovePrices, MitigationPrices, SchedPrices, StoragePrices, TracepointPrices};
use std::fmt::Write as _;

/// What the header names besides the measurements.
#[derive(Debug, Clone, Default)]
pub struct Header {
    /// The command line that made the file.
    pub command: String,
    /// UTC date and time at the start.
    pub date: String,
    /// CPU model, kernel, hypervisor, huge pages.
    pub info: HostInfo,
    /// Load averages (1, 5, 15 min) before and after measuring.
    pub load: [Option<[f64; 3]>; 2],
}

/// The profile file for `d`, measured as `cal`, with `h`'s header.
pub fn render(cal: &Calibration, d: &Derived, h: &Header) -> String {
    let mut s = header(cal, h);
    for w in &d.warnings {
        let _ = writeln!(s, "# Warning: {w}.");
    }
    s.push_str(&measurements(cal, d));
    s.push_str(&fields(&d.profile, d));
    s
}

fn load(l: Option<[f64; 3]>) -> String {
    l.map_or("unknown".to_string(), |[a, b, c]| format!("{a:.2} {b:.2} {c:.2}"))
}

fn header(cal: &Calibration, h: &Header) -> String {
    let t = &cal.host.topology;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Machine profile of this host, measured by fsmeta calibrate (fsmeta {}).",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(s, "# Command: {}", h.command);
    let _ = writeln!(s, "# Date: {}", h.date);
    let _ = writeln!(s, "# CPU: {}", h.info.describe());
    let _ = writeln!(
        s,
        "# Topology (sysfs): {} socket(s) x {} cores x {} thread(s), {} LLC domain(s) per socket",
        t.sockets, t.cores_per_socket, t.smt, t.llcs_per_socket
    );
    let _ = writeln!(
        s,
        "# Load average (1, 5, 15 min): {} before, {} after; other work on the host shares its CPUs.",
        load(h.load[0]),
        load(h.load[1])
    );
    let _ = writeln!(
        s,
        "# Each figure: median of {} samples, spread p10-p90 (nearest rank); measuring took {:.1} s.",
        cal.repeat, cal.wall_s
    );
    let _ = writeln!(
        s,
        "# Transparent huge pages: {}; chase buffers of 2 MiB or more asked for them (madvise): {}.",
        h.info.thp,
        if cal.huge_pages { "accepted" } else { "refused" }
    );
    if !h.info.mitigations.is_empty() {
        let _ = writeln!(
            s,
            "# Kernel mitigations on calls and returns (sysfs vulnerabilities): {}.",
            h.info.mitigations.join("; ")
        );
    }
    s
}

fn measurements(cal: &Calibration, d: &Derived) -> String {
    let mut s = String::from("#\n# Pointer chase on CPU ");
    let _ = writeln!(s, "{} (ns per dependent load, median (p10-p90)):", cal.cpu);
    for p in &cal.chase {
        let _ = writeln!(
            s,
            "#   {:>9}  {:8.2} ({:.2}-{:.2})",
            bytes(p.bytes as u64),
            p.ns.median,
            p.ns.p10,
            p.ns.p90
        );
    }
    let curve: Vec<(usize, f64)> = cal.chase.iter().map(|p| (p.bytes, p.ns.median)).collect();
    let found = plateaus(&curve);
    let list: Vec<String> = found
        .iter()
        .map(|p| format!("{}..{} at {:.2} ns", bytes(p.first_bytes as u64), bytes(p.knee_bytes as u64), p.ns))
        .collect();
    let _ = writeln!(
        s,
        "# Plateaus the chase finds: {}",
        if list.is_empty() { "none".to_string() } else { list.join("; ") }
    );
    for f in &d.levels {
        let size = f.sysfs_bytes.map_or("-".to_string(), bytes);
        let knee = f.knee.map_or("none".to_string(), |k| bytes(k as u64));
        let _ = writeln!(
            s,
            "#   {:<4} sysfs size {size:>8}, plateau ends at {knee:>8}, {:.2} ns",
            f.name, f.ns.median
        );
    }
    for t in &cal.transfers {
        let _ = writeln!(
            s,
            "# {} (CPU {} <-> CPU {}), one way: CAS ping-pong {} ns; load/store ping-pong {} ns",
            t.distance.name(),
            t.a,
            t.b,
            t.cas.show(2),
            t.load_store.show(2)
        );
        let overlapped = t.contended_add.map_or(0, |c| c.n);
        let _ = write!(
            s,
            "# {} contended: fetch_add on one line from both CPUs at once, {} ops each per sample; {overlapped} of {} samples overlapped (>= {:.0}% of CPU {}'s ops followed the other's)",
            t.distance.name(),
            super::ATOMIC_OPS,
            t.contended_samples,
            100.0 * super::CONTENDED_HANDOFFS,
            t.a
        );
        match (t.contended_add, t.handoffs) {
            (Some(c), Some(h)) => {
                let _ = writeln!(s, ": {} ns per op on CPU {}, handoffs per op {}", c.show(2), t.a, h.show(3));
            }
            _ => s.push_str(": no contended figure\n"),
        }
    }
    let _ = writeln!(s, "# Uncontended lock xadd, dependent chain: {} ns", cal.atomic.show(2));
    s.push_str("#\n");
    s
}

/// The profile's fields in TOML, each measured one after its note (how
/// it was measured, its spread), each table a part of its own.
fn fields(p: &MachineProfile, d: &Derived) -> String {
    let mut w = Fields { s: String::new(), d };
    w.top(p);
    if let Some(l) = &p.levels {
        w.levels(l);
    }
    match &p.tracepoint {
        Some(t) => w.tracepoint(t),
        None => w.missing("tracepoint"),
    }
    match &p.storage {
        Some(st) => w.storage(st),
        None => w.missing("storage"),
    }
    match &p.sched {
        Some(sc) => w.sched(sc),
        None => w.missing("sched"),
    }
    match &p.memmove {
        Some(m) => w.memmove(m),
        None => w.missing("memmove"),
    }
    match &p.mitigation {
        Some(m) => w.mitigation(m),
        None => w.missing("mitigation"),
    }
    w.s
}

/// [`fields`]' text as it is written, and the notes it takes from.
struct Fields<'a> {
    s: String,
    d: &'a Derived,
}

impl Fields<'_> {
    /// `field`'s note as a comment line, when it has one.
    fn note(&mut self, field: &str) {
        let n = self.d.note(field);
        if !n.is_empty() {
            let _ = writeln!(self.s, "# {}: {n}", field.rsplit('.').next().unwrap_or(field));
        }
    }

    /// `field = value`, after `field`'s note.
    fn noted(&mut self, field: &str, key: &str, value: std::fmt::Arguments<'_>) {
        self.note(field);
        let _ = writeln!(self.s, "{key} = {value}");
    }

    /// A table left out, with the reason its note gives.
    fn missing(&mut self, table: &str) {
        let _ = writeln!(self.s, "\n# {table}: {}", self.d.note(table));
    }

    /// The untabled fields and `[topology]`.
    fn top(&mut self, p: &MachineProfile) {
        let _ = writeln!(self.s, "name = {}", quote(&p.name));
        let _ = writeln!(self.s, "source = {}", quote(&p.source));
        let _ = writeln!(self.s, "cpu = {}", quote(&p.cpu));
        let ns = [
            ("hit_ns", p.hit_ns),
            ("atomic_ns", p.atomic_ns),
            ("smt_ns", p.smt_ns),
            ("same_llc_ns", p.same_llc_ns),
            ("same_socket_ns", p.same_socket_ns),
            ("cross_socket_ns", p.cross_socket_ns),
            ("memory_ns", p.memory_ns),
        ];
        for (f, v) in ns {
            self.noted(f, f, format_args!("{v:.2}"));
        }
        let sizes = [
            ("l1d_bytes", p.l1d_bytes),
            ("l2_bytes", p.l2_bytes),
            ("llc_bytes_per_socket", p.llc_bytes_per_socket),
            ("cache_ways", u64::from(p.cache_ways)),
        ];
        for (f, v) in sizes {
            self.noted(f, f, format_args!("{v}"));
        }
        self.noted("smt_throughput", "smt_throughput", format_args!("{:.2}", p.smt_throughput));
        let t = &p.topology;
        let _ = writeln!(
            self.s,
            "\n# sysfs: physical_package_id, core_id, thread_siblings_list, the LLC's shared_cpu_list"
        );
        let _ = writeln!(
            self.s,
            "[topology]\nsockets = {}\ncores_per_socket = {}\nsmt = {}\nllcs_per_socket = {}",
            t.sockets, t.cores_per_socket, t.smt, t.llcs_per_socket
        );
    }

    /// `[levels]`.
    fn levels(&mut self, l: &CacheLevels) {
        let _ = writeln!(
            self.s,
            "\n# For the set-associative cache model: ways from sysfs, hit latencies from the chase."
        );
        let _ = writeln!(self.s, "[levels]\nl1d_ways = {}\nl2_ways = {}", l.l1d_ways, l.l2_ways);
        self.noted("levels.l2_hit_ns", "l2_hit_ns", format_args!("{:.2}", l.l2_hit_ns));
        self.noted("levels.llc_hit_ns", "llc_hit_ns", format_args!("{:.2}", l.llc_hit_ns));
        if let Some(f) = l.fresh_line_ns {
            self.noted("levels.fresh_line_ns", "fresh_line_ns", format_args!("{f:.2}"));
        }
        self.note("levels.loop_load_ns");
        if let Some(f) = l.loop_load_ns {
            let _ = writeln!(self.s, "loop_load_ns = {f:.3}");
        }
    }

    /// `[tracepoint]`.
    fn tracepoint(&mut self, t: &TracepointPrices) {
        let _ = writeln!(
            self.s,
            "\n# For the lab's twins: one enabled tracepoint firing into a private instance."
        );
        let _ = writeln!(self.s, "[tracepoint]");
        self.noted("tracepoint.event_ns", "event_ns", format_args!("{:.2}", t.event_ns));
        self.noted("tracepoint.discard_ns", "discard_ns", format_args!("{:.2}", t.discard_ns));
        if let Some(ns) = t.passed_ns {
            self.noted("tracepoint.passed_ns", "passed_ns", format_args!("{ns:.2}"));
        }
        self.note("tracepoint.stack_ns");
        if let (Some(ns), Some(f)) = (t.stack_ns, t.stack_frames) {
            let _ = writeln!(self.s, "stack_ns = {ns:.2}\nstack_frames = {f}");
        }
    }

    /// `[storage]`.
    fn storage(&mut self, st: &StoragePrices) {
        let _ = writeln!(
            self.s,
            "\n# For the lab's btrfs twin: what the images' filesystem charges for a commit's writes and flushes through the loop device."
        );
        let _ = writeln!(self.s, "[storage]");
        let list = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(self.s, "flush_kib = [{}]", list(&st.flush_kib));
        self.noted("storage.flush_us", "flush_us", format_args!("[{}]", list(&st.flush_us)));
        if let Some(b) = &st.block_flush_us {
            self.noted("storage.block_flush_us", "block_flush_us", format_args!("[{}]", list(b)));
        }
        self.noted("storage.super_flush_us", "super_flush_us", format_args!("{:.0}", st.super_flush_us));
        self.noted("storage.write_us", "write_us", format_args!("{:.2}", st.write_us));
        self.note("storage.drop_folio_us");
        if let Some(us) = st.drop_folio_us {
            let _ = writeln!(self.s, "drop_folio_us = {us:.3}");
        }
    }

    /// `[sched]`.
    fn sched(&mut self, sc: &SchedPrices) {
        let _ = writeln!(
            self.s,
            "\n# For the lab's btrfs twin: an unmount's waits for the kernel's helper threads (close_ctree's kthread stops, the expedited grace periods)."
        );
        let _ = writeln!(self.s, "[sched]");
        self.noted("sched.wake_us", "wake_us", format_args!("{:.2}", sc.wake_us));
        self.noted("sched.thread_stop_us", "thread_stop_us", format_args!("{:.2}", sc.thread_stop_us));
        if let Some(us) = sc.placed_stop_us {
            self.noted("sched.placed_stop_us", "placed_stop_us", format_args!("{us:.2}"));
        }
    }

    /// `[memmove]`.
    fn memmove(&mut self, m: &MemmovePrices) {
        let _ = writeln!(
            self.s,
            "\n# For the lab's btrfs twin: the kernel's memmove (arch/x86/lib/memmove_64.S) of the two moves btrfs_del_items makes inside a leaf, ns per 64 bytes."
        );
        let _ = writeln!(self.s, "[memmove]");
        self.noted("memmove.backward_ns", "backward_ns", format_args!("{:.2}", m.backward_ns));
        self.noted(
            "memmove.forward_near_ns",
            "forward_near_ns",
            format_args!("{:.2}", m.forward_near_ns),
        );
        self.noted("memmove.forward_far_ns", "forward_far_ns", format_args!("{:.2}", m.forward_far_ns));
    }

    /// `[mitigation]`.
    fn mitigation(&mut self, m: &MitigationPrices) {
        let _ = writeln!(
            self.s,
            "\n# For the counted kernel paths: what the kernel's mitigations add to each indirect call (Spectre v2) and each return (SRSO, Retbleed)."
        );
        let _ = writeln!(self.s, "[mitigation]\nspectre_v2 = {}", quote(&m.spectre_v2));
        self.noted(
            "mitigation.indirect_call_ns",
            "indirect_call_ns",
            format_args!("{:.2}", m.indirect_call_ns),
        );
        if let Some(line) = &m.spec_rstack_overflow {
            let _ = writeln!(self.s, "spec_rstack_overflow = {}", quote(line));
        }
        self.noted("mitigation.return_ns", "return_ns", format_args!("{:.2}", m.return_ns));
    }
}

/// A TOML basic string.
fn quote(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}
