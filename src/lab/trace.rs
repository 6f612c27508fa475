//! Tracing in a private tracefs instance, and the trace text parser.
//!
//! The instance is `/sys/kernel/tracing/instances/fsmeta-<pid>-<n>`,
//! recorded in the run's ledger before it is made and removed with the
//! run's filesystem ([`super::host::Fs`]'s drop). Phases are separated by
//! `trace_marker` writes.
//!
//! The clock: the `trace` file prints an in-nanoseconds clock (`mono`)
//! in microseconds (`trace_print_context` in kernel/trace/trace_output.c),
//! too coarse for calls of a few microseconds. Where the kernel offers
//! `x86-tsc` the instance uses it (raw cycles, printed whole), and writes
//! a clock marker `fsmeta-clock:mono_ns=N` (N read from CLOCK_MONOTONIC
//! just before the write) when tracing starts and again when it stops;
//! [`parse`] converts cycles to nanoseconds on the line through those
//! two markers. Without `x86-tsc` the clock is `mono` (microseconds).

use super::LabError;
use super::host::{Fs, TRACEFS, check_interrupt};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// One event to trace: `system/event`, an optional filter, and whether a
/// kernel stack is recorded with each hit (the `stacktrace` trigger, with
/// the same filter).
#[derive(Debug, Clone)]
pub struct EventSpec {
    /// `system/event`, e.g. `xfs/xfs_trans_alloc`.
    pub event: &'static str,
    /// A tracefs filter expression, e.g. `dev == 7340035`.
    pub filter: Option<String>,
    /// Record the kernel stack of each hit.
    pub stack: bool,
}

/// A private tracefs instance.
#[derive(Debug)]
pub struct Instance {
    dir: PathBuf,
    events: Vec<EventSpec>,
    clock: &'static str,
    started: std::time::Instant,
}

/// The prefix of a point marker's text ([`Instance::note`]).
pub const AT_MARK: &str = "fsmeta-at:";

/// The first point marker `AT_MARK` + `text` in `records`.
pub fn noted_at<'a>(records: &'a [Record], text: &str) -> Option<&'a Record> {
    records
        .iter()
        .find(|r| r.event == "tracing_mark_write" && r.body.trim().strip_prefix(AT_MARK) == Some(text))
}

/// The prefix of a clock marker's text.
pub const CLOCK_MARK: &str = "fsmeta-clock:mono_ns=";

/// Shortest time between the two clock markers, so the cycles-per-ns
/// ratio has at least 5 significant digits (a marker write takes a few
/// microseconds).
const CLOCK_BASE: std::time::Duration = std::time::Duration::from_millis(100);

/// CLOCK_MONOTONIC now, in ns (the kernel's `mono` trace clock).
fn mono_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    (t.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(t.tv_nsec as u64)
}

/// The trace clock the lab uses among an instance's `trace_clock` list:
/// `x86-tsc` where offered (ns resolution), else `mono`. Under retpolines
/// `x86-tsc` is read through `buffer->clock` (an indirect call per kept
/// record; `ring_buffer.c` calls only `trace_clock_local` directly), so
/// `fsmeta calibrate` prices its events on the same clock.
pub fn clock_of(trace_clock: &str) -> &'static str {
    if trace_clock.split_whitespace().any(|c| c.trim_matches(['[', ']']) == "x86-tsc") {
        "x86-tsc"
    } else {
        "mono"
    }
}

/// The trigger an event is traced with: its kernel stack recorded
/// (`stacktrace`, under the event's filter), or none.
fn trigger_of(e: &EventSpec) -> Option<String> {
    e.stack.then(|| match &e.filter {
        Some(f) => format!("stacktrace if {f}"),
        None => "stacktrace".to_string(),
    })
}

fn write(path: &Path, text: &str) -> Result<(), LabError> {
    fs::write(path, text).map_err(|e| LabError::step(format!("write `{text}` to {}", path.display()), e))
}

impl Instance {
    /// Makes the instance (recorded in `fs`'s ledger first), sets its
    /// clock and buffer, and enables `events`; tracing starts at once.
    pub fn create(fs: &mut Fs, events: &[EventSpec], buffer_kb: u64) -> Result<Instance, LabError> {
        check_interrupt()?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = Path::new(TRACEFS).join(format!("instances/fsmeta-{}-{n}", std::process::id()));
        fs.record_instance(&dir)?;
        fs::create_dir(&dir).map_err(|e| LabError::step(format!("mkdir {}", dir.display()), e))?;
        let clock = clock_of(&fs::read_to_string(dir.join("trace_clock")).unwrap_or_default());
        let me = Instance {
            dir,
            events: events.to_vec(),
            clock,
            started: std::time::Instant::now(),
        };
        write(&me.dir.join("tracing_on"), "0")?;
        write(&me.dir.join("trace_clock"), clock)?;
        write(&me.dir.join("buffer_size_kb"), &buffer_kb.to_string())?;
        for e in events {
            let ev = me.dir.join("events").join(e.event);
            if !ev.is_dir() {
                return Err(LabError::Missing {
                    what: format!("the tracepoint {} in the running kernel", e.event),
                    hint: None,
                });
            }
            if let Some(f) = &e.filter {
                write(&ev.join("filter"), f)?;
            }
            if let Some(trig) = trigger_of(e) {
                write(&ev.join("trigger"), &trig)?;
            }
            write(&ev.join("enable"), "1")?;
        }
        write(&me.dir.join("tracing_on"), "1")?;
        let mut me = me;
        me.started = std::time::Instant::now();
        me.clock_mark()?;
        Ok(me)
    }

    /// Writes a clock marker (CLOCK_MONOTONIC in ns) for [`parse`] to
    /// convert cycles into ns.
    fn clock_mark(&self) -> Result<(), LabError> {
        write(&self.dir.join("trace_marker"), &format!("{CLOCK_MARK}{}", mono_ns()))
    }

    /// The trace clock in use and how its timestamps are read, for
    /// `lab.txt`.
    pub fn clock(&self) -> String {
        match self.clock {
            "x86-tsc" => "x86-tsc (TSC cycles, converted to ns through two CLOCK_MONOTONIC markers at the start and end of tracing)".into(),
            c => format!("{c} (the trace prints microseconds)"),
        }
    }

    /// Writes `fsmeta:TEXT` into the trace (a phase boundary).
    pub fn mark(&self, text: &str) -> Result<(), LabError> {
        write(&self.dir.join("trace_marker"), &format!("fsmeta:{text}"))
    }

    /// Writes [`AT_MARK`]`TEXT` into the trace: a point in time inside a
    /// phase (not a boundary: [`phases`] does not take it).
    pub fn note(&self, text: &str) -> Result<(), LabError> {
        write(&self.dir.join("trace_marker"), &format!("{AT_MARK}{text}"))
    }

    /// What the events of this instance are, for `lab.txt`.
    pub fn describe(&self) -> Vec<String> {
        let clock = format!("trace clock: {}", self.clock());
        std::iter::once(clock)
            .chain(self.events.iter().map(|e| {
                format!(
                    "traced {}{}{}",
                    e.event,
                    e.filter.as_ref().map(|f| format!(" if {f}")).unwrap_or_default(),
                    if e.stack { " (with kernel stacks)" } else { "" }
                )
            }))
            .collect()
    }

    /// Stops tracing, switches the instance's events off, and returns the
    /// trace text; a trace that lost events (a full buffer) is a failed
    /// step.
    ///
    /// The events go off as well as `tracing_on`: an event left enabled in
    /// an instance that no longer records still runs its probe at every
    /// firing, and with a filter it fills the per-CPU scratch record and
    /// tests it before the write to the stopped buffer fails (6.18
    /// `trace_event_buffer_lock_reserve`). Measured by hand on a family 23
    /// model 1 host: `prctl(PR_SET_NAME)` 318 ns with `task_rename` off,
    /// 406 with it enabled and filtered in an instance with `tracing_on`
    /// 0, 492 recording. A later pass of the same run would pay that for
    /// every earlier instance.
    pub fn finish(&self) -> Result<String, LabError> {
        let elapsed = self.started.elapsed();
        if elapsed < CLOCK_BASE {
            std::thread::sleep(CLOCK_BASE - elapsed);
        }
        self.clock_mark()?;
        write(&self.dir.join("tracing_on"), "0")?;
        // A trigger keeps its event's probe registered (soft mode, `0*`)
        // after the event is disabled: removed first.
        for e in &self.events {
            if let Some(trig) = trigger_of(e) {
                write(&self.dir.join("events").join(e.event).join("trigger"), &format!("!{trig}"))?;
            }
        }
        let enable = self.dir.join("events").join("enable");
        write(&enable, "0")?;
        match fs::read_to_string(&enable) {
            Ok(v) if v.trim() == "0" => {}
            v => {
                return Err(LabError::step(
                    "switch the instance's events off",
                    format!("{} reads {:?} after writing 0", enable.display(), v.map(|t| t.trim().to_string())),
                ));
            }
        }
        let text = fs::read_to_string(self.dir.join("trace")).map_err(|e| LabError::step("read the trace", e))?;
        let cpus = fs::read_dir(self.dir.join("per_cpu")).map_err(|e| LabError::step("read per_cpu", e))?;
        for c in cpus.flatten() {
            let stats = fs::read_to_string(c.path().join("stats")).unwrap_or_default();
            let lost = ["overrun:", "dropped events:"]
                .iter()
                .filter_map(|k| stats.lines().find_map(|l| l.strip_prefix(k)))
                .filter_map(|v| v.trim().parse::<u64>().ok())
                .sum::<u64>();
            if lost > 0 {
                return Err(LabError::step(
                    "trace",
                    format!("{lost} events lost on {}: run fewer operations", c.file_name().to_string_lossy()),
                ));
            }
        }
        Ok(text)
    }
}

/// One record of a trace: who, where, when, which event, its text, and
/// the kernel stack recorded with it (innermost first, without the
/// tracing frames).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The task's name.
    pub task: String,
    /// Its pid.
    pub pid: u32,
    /// The CPU.
    pub cpu: u32,
    /// The time, in ns: from a `mono` trace, microseconds as printed;
    /// from an `x86-tsc` trace, cycles converted through the clock
    /// markers (see the module docs).
    pub ts_ns: u64,
    /// The event's name (`tracing_mark_write` for markers).
    pub event: String,
    /// The event's text.
    pub body: String,
    /// Stack frames (function names without offsets), innermost first.
    pub stack: Vec<String>,
    /// The time of the `<stack trace>` record those frames came in (same
    /// clock as `ts_ns`): `__ftrace_trace_stack` writes it after
    /// unwinding, so `stack_ts_ns - ts_ns` is the stack's time.
    pub stack_ts_ns: Option<u64>,
}

/// A timestamp: `SEC.FRACTION` (an in-ns clock) in ns, or a whole
/// number of cycles (`x86-tsc`) as it is, to be converted by [`parse`].
fn parse_ts(s: &str) -> Option<u64> {
    let Some((sec, frac)) = s.split_once('.') else {
        return s.trim().parse().ok();
    };
    let sec: u64 = sec.parse().ok()?;
    // Digits only (a byte slice of anything else could split a character).
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = frac.len().min(9);
    let f: u64 = frac[..digits].parse().ok()?;
    sec.checked_mul(1_000_000_000)?.checked_add(f * 10u64.pow(9 - digits as u32))
}

/// Parses the head of one trace line: `TASK-PID [CPU] FLAGS TS: EVENT: BODY`.
pub fn parse_line(line: &str) -> Option<Record> {
    // The CPU field `[NNN]` is the first bracketed number after the task.
    let open = line.find(" [")?;
    let close = open + line[open..].find(']')?;
    let cpu: u32 = line[open + 2..close].trim().parse().ok()?;
    let (task, pid) = line[..open].trim().rsplit_once('-')?;
    let pid: u32 = pid.parse().ok()?;
    let rest = line[close + 1..].trim_start();
    let mut it = rest.splitn(2, ' ');
    let first = it.next()?;
    // Flags (`.....`) are printed unless the irq-info option is off.
    let rest = if first.ends_with(':') { rest } else { it.next()?.trim_start() };
    let (ts, rest) = rest.split_once(": ")?;
    let ts_ns = parse_ts(ts)?;
    let (event, body) = match rest.split_once(": ") {
        Some((e, b)) => (e, b),
        None => (rest.trim_end_matches(':'), ""),
    };
    Some(Record {
        task: task.to_string(),
        pid,
        cpu,
        ts_ns,
        event: event.to_string(),
        body: body.to_string(),
        stack: Vec::new(),
        stack_ts_ns: None,
    })
}

/// Parses a whole trace: comment lines skipped, each `<stack trace>`
/// record's frames attached to the task's previous record.
pub fn parse(text: &str) -> Vec<Record> {
    let mut out: Vec<Record> = Vec::new();
    let mut stack_of: Option<usize> = None;
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(frame) = line.trim_start().strip_prefix("=> ") {
            if let Some(i) = stack_of {
                let name = frame.split(['+', ' ']).next().unwrap_or(frame);
                if !name.starts_with("trace_event_raw_event") && !name.starts_with("trace_") {
                    out[i].stack.push(name.to_string());
                }
            }
            continue;
        }
        let Some(r) = parse_line(line) else {
            stack_of = None;
            continue;
        };
        if r.event == "<stack trace>" {
            stack_of = out.iter().rposition(|p| p.pid == r.pid);
            if let Some(i) = stack_of {
                out[i].stack_ts_ns = Some(r.ts_ns);
            }
            continue;
        }
        stack_of = None;
        out.push(r);
    }
    to_ns(&mut out);
    out
}

/// Converts cycle timestamps to ns on the line through the first and
/// last clock markers (`fsmeta-clock:mono_ns=N`), when the trace has
/// both and its timestamps are cycles (the markers' cycles differ from
/// their ns by more than the marker gap: a trace in ns is left alone).
fn to_ns(recs: &mut [Record]) {
    let marks: Vec<(u64, u64)> = recs
        .iter()
        .filter(|r| r.event == "tracing_mark_write")
        .filter_map(|r| Some((r.ts_ns, r.body.trim().strip_prefix(CLOCK_MARK)?.parse::<u64>().ok()?)))
        .collect();
    let (Some(&(c0, n0)), Some(&(c1, n1))) = (marks.first(), marks.last()) else {
        return;
    };
    if c1 <= c0 || n1 <= n0 {
        return;
    }
    // A trace already in ns: the markers' timestamps are their ns values
    // give or take the write's latency.
    if c0.abs_diff(n0) < 1_000_000 && c1.abs_diff(n1) < 1_000_000 {
        return;
    }
    let per_cycle = (n1 - n0) as f64 / (c1 - c0) as f64;
    let convert = |ts: u64| (n0 as f64 + (ts as f64 - c0 as f64) * per_cycle).max(0.0).round() as u64;
    for r in recs.iter_mut() {
        r.ts_ns = convert(r.ts_ns);
        r.stack_ts_ns = r.stack_ts_ns.map(convert);
    }
}

/// The token after `key ` in an event's text (`dev 7:3 trans ...`).
pub fn field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let mut it = body.split_whitespace();
    while let Some(t) = it.next() {
        if t == key {
            return it.next();
        }
    }
    None
}

/// The value of a `key=value` token in an event's text
/// (`block=30507008 ... diff_ns=120`); `name` is `key=`.
pub fn assigned<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    body.split_whitespace().find_map(|t| t.strip_prefix(name))
}

/// A number printed in decimal or `0x` hex.
pub fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The phase each record falls in: the text of the last `fsmeta:PHASE`
/// marker before it (`None` before the first).
pub fn phases(records: &[Record]) -> Vec<Option<String>> {
    let mut cur = None;
    records
        .iter()
        .map(|r| {
            if r.event == "tracing_mark_write"
                && let Some(p) = r.body.trim().strip_prefix("fsmeta:")
            {
                cur = Some(p.to_string());
            }
            cur.clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(ts: &str, event: &str, body: &str) -> String {
        format!("          fsmeta-7   [001] .....  {ts}: {event}: {body}\n")
    }

    #[test]
    fn a_timestamp_with_anything_but_digits_after_the_point_is_refused() {
        assert_eq!(parse_ts("2354.988232"), Some(2_354_988_232_000));
        assert_eq!(parse_ts("1.1234567891"), Some(1_123_456_789), "ns at most");
        // A multi-byte character where the ninth digit would end.
        assert_eq!(parse_ts("1.0270\u{feff}42"), None);
        assert_eq!(parse_ts("1.02x"), None);
    }

    #[test]
    fn the_lab_takes_x86_tsc_where_offered_else_mono() {
        assert_eq!(clock_of("[local] global counter uptime perf mono mono_raw boot x86-tsc"), "x86-tsc");
        assert_eq!(clock_of("local global [x86-tsc] mono"), "x86-tsc");
        assert_eq!(clock_of("[local] global counter mono"), "mono");
        assert_eq!(clock_of(""), "mono");
    }

    #[test]
    fn cycles_are_converted_through_the_clock_markers() {
        // 3 cycles per ns: markers at cycle 3,000,000,000 (1 s) and
        // 3,300,000,000 (1.1 s); an event 3,000 cycles after the first.
        let text = [
            line("3000000000", "tracing_mark_write", "fsmeta-clock:mono_ns=1000000000"),
            line("3000003000", "xfs_alloc_size_done", "dev 7:0 len 1"),
            // Its stack, 1,500 cycles later: 500 ns.
            "          fsmeta-7   [001] .....  3000004500: <stack trace>\n => xfs_alloc_vextent_exact_bno+0x1/0x2\n".to_string(),
            line("3300000000", "tracing_mark_write", "fsmeta-clock:mono_ns=1100000000"),
        ]
        .concat();
        let recs = parse(&text);
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0].ts_ns, 1_000_000_000);
        assert_eq!(recs[1].ts_ns, 1_000_001_000);
        assert_eq!(recs[1].stack, ["xfs_alloc_vextent_exact_bno"]);
        assert_eq!(recs[1].stack_ts_ns, Some(1_000_001_500));
        assert_eq!(recs[0].stack_ts_ns, None);
        assert_eq!(recs[2].ts_ns, 1_100_000_000);
        // Clock markers are not phases.
        assert!(phases(&recs).iter().all(Option::is_none));
    }

    #[test]
    fn a_trace_in_microseconds_is_left_in_ns() {
        let text = [
            line("1.000000", "tracing_mark_write", "fsmeta-clock:mono_ns=1000000000"),
            line("1.000008", "xfs_alloc_size_done", "dev 7:0 len 1"),
            line("1.100000", "tracing_mark_write", "fsmeta-clock:mono_ns=1100000000"),
        ]
        .concat();
        let recs = parse(&text);
        assert_eq!(recs[1].ts_ns, 1_000_008_000);
    }
}
