//! The profile file: a header naming the command, date, CPU, kernel and
//! load; the chase curve, its plateaus and the other measurements as
//! comments; then every profile field with a comment saying how it was
//! measured and its spread. [`crate::machine::load_profile`] reads it.

use super::Calibration;
use super::derive::{Derived, bytes};
use super::host::HostInfo;
use super::plateau::plateaus;
use crate::machine::MachineProfile;
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

fn fields(p: &MachineProfile, d: &Derived) -> String {
    let mut s = String::new();
    let note = |s: &mut String, field: &str| {
        let n = d.note(field);
        if !n.is_empty() {
            let _ = writeln!(s, "# {}: {n}", field.rsplit('.').next().unwrap_or(field));
        }
    };
    let _ = writeln!(s, "name = {}", quote(&p.name));
    let _ = writeln!(s, "source = {}", quote(&p.source));
    let _ = writeln!(s, "cpu = {}", quote(&p.cpu));
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
        note(&mut s, f);
        let _ = writeln!(s, "{f} = {v:.2}");
    }
    let sizes = [
        ("l1d_bytes", p.l1d_bytes),
        ("l2_bytes", p.l2_bytes),
        ("llc_bytes_per_socket", p.llc_bytes_per_socket),
        ("cache_ways", u64::from(p.cache_ways)),
    ];
    for (f, v) in sizes {
        note(&mut s, f);
        let _ = writeln!(s, "{f} = {v}");
    }
    note(&mut s, "smt_throughput");
    let _ = writeln!(s, "smt_throughput = {:.2}", p.smt_throughput);
    let t = &p.topology;
    let _ = writeln!(
        s,
        "\n# sysfs: physical_package_id, core_id, thread_siblings_list, the LLC's shared_cpu_list"
    );
    let _ = writeln!(
        s,
        "[topology]\nsockets = {}\ncores_per_socket = {}\nsmt = {}\nllcs_per_socket = {}",
        t.sockets, t.cores_per_socket, t.smt, t.llcs_per_socket
    );
    if let Some(l) = &p.levels {
        let _ = writeln!(
            s,
            "\n# For the set-associative cache model: ways from sysfs, hit latencies from the chase."
        );
        let _ = writeln!(s, "[levels]\nl1d_ways = {}\nl2_ways = {}", l.l1d_ways, l.l2_ways);
        note(&mut s, "levels.l2_hit_ns");
        let _ = writeln!(s, "l2_hit_ns = {:.2}", l.l2_hit_ns);
        note(&mut s, "levels.llc_hit_ns");
        let _ = writeln!(s, "llc_hit_ns = {:.2}", l.llc_hit_ns);
        if let Some(f) = l.fresh_line_ns {
            note(&mut s, "levels.fresh_line_ns");
            let _ = writeln!(s, "fresh_line_ns = {f:.2}");
        }
        note(&mut s, "levels.loop_load_ns");
        if let Some(f) = l.loop_load_ns {
            let _ = writeln!(s, "loop_load_ns = {f:.3}");
        }
    }
    match &p.tracepoint {
        Some(t) => {
            let _ = writeln!(s, "\n# For the lab's twins: one enabled tracepoint firing into a private instance.");
            let _ = writeln!(s, "[tracepoint]");
            note(&mut s, "tracepoint.event_ns");
            let _ = writeln!(s, "event_ns = {:.2}", t.event_ns);
            note(&mut s, "tracepoint.discard_ns");
            let _ = writeln!(s, "discard_ns = {:.2}", t.discard_ns);
            if let Some(ns) = t.passed_ns {
                note(&mut s, "tracepoint.passed_ns");
                let _ = writeln!(s, "passed_ns = {ns:.2}");
            }
        }
        None => {
            let _ = writeln!(s, "\n# tracepoint: {}", d.note("tracepoint"));
        }
    }
    match &p.storage {
        Some(st) => {
            let _ = writeln!(
                s,
                "\n# For the lab's btrfs twin: what the images' filesystem charges for a commit's writes and flushes through the loop device."
            );
            let _ = writeln!(s, "[storage]");
            let kib: Vec<String> = st.flush_kib.iter().map(|k| format!("{k:.0}")).collect();
            let _ = writeln!(s, "flush_kib = [{}]", kib.join(", "));
            note(&mut s, "storage.flush_us");
            let us: Vec<String> = st.flush_us.iter().map(|u| format!("{u:.0}")).collect();
            let _ = writeln!(s, "flush_us = [{}]", us.join(", "));
            if let Some(b) = &st.block_flush_us {
                note(&mut s, "storage.block_flush_us");
                let us: Vec<String> = b.iter().map(|u| format!("{u:.0}")).collect();
                let _ = writeln!(s, "block_flush_us = [{}]", us.join(", "));
            }
            note(&mut s, "storage.super_flush_us");
            let _ = writeln!(s, "super_flush_us = {:.0}", st.super_flush_us);
            note(&mut s, "storage.write_us");
            let _ = writeln!(s, "write_us = {:.2}", st.write_us);
            note(&mut s, "storage.drop_folio_us");
            if let Some(us) = st.drop_folio_us {
                let _ = writeln!(s, "drop_folio_us = {us:.3}");
            }
        }
        None => {
            let _ = writeln!(s, "\n# storage: {}", d.note("storage"));
        }
    }
    match &p.sched {
        Some(sc) => {
            let _ = writeln!(
                s,
                "\n# For the lab's btrfs twin: an unmount's waits for the kernel's helper threads (close_ctree's kthread stops, the expedited grace periods)."
            );
            let _ = writeln!(s, "[sched]");
            note(&mut s, "sched.wake_us");
            let _ = writeln!(s, "wake_us = {:.2}", sc.wake_us);
            note(&mut s, "sched.thread_stop_us");
            let _ = writeln!(s, "thread_stop_us = {:.2}", sc.thread_stop_us);
        }
        None => {
            let _ = writeln!(s, "\n# sched: {}", d.note("sched"));
        }
    }
    match &p.mitigation {
        Some(m) => {
            let _ = writeln!(
                s,
                "\n# For the counted kernel paths: what the kernel's mitigations add to each indirect call (Spectre v2) and each return (SRSO, Retbleed)."
            );
            let _ = writeln!(s, "[mitigation]\nspectre_v2 = {}", quote(&m.spectre_v2));
            note(&mut s, "mitigation.indirect_call_ns");
            let _ = writeln!(s, "indirect_call_ns = {:.2}", m.indirect_call_ns);
            if let Some(line) = &m.spec_rstack_overflow {
                let _ = writeln!(s, "spec_rstack_overflow = {}", quote(line));
            }
            note(&mut s, "mitigation.return_ns");
            let _ = writeln!(s, "return_ns = {:.2}", m.return_ns);
        }
        None => {
            let _ = writeln!(s, "\n# mitigation: {}", d.note("mitigation"));
        }
    }
    s
}

/// A TOML basic string.
fn quote(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}
