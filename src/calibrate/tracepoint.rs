//! What one enabled tracepoint costs the code it fires in, on this host:
//! the lab's twins price the events the lab enables inside the windows
//! they time, so the price is measured here rather than assumed.
//!
//! Method: `prctl(PR_SET_NAME)` fires `task:task_rename` from
//! `__set_task_comm` (fs/exec.c) and does little else (a 16-byte copy
//! from user space under `task_lock`). On a CPU this thread is pinned to,
//! in a private tracefs instance (`instances/fsmeta-calibrate-<pid>-<n>`,
//! written to a lab ledger before it is made, removed on every exit path
//! by [`crate::lab::host::undo`], a dead run's by the next lab
//! run), each sample times [`CALLS`] calls four ways, interleaved: the
//! event off; on with no filter (`kept`: the record reserved, filled and
//! committed in the ring buffer); on with a filter no record passes
//! (`common_pid == 0`; `discarded`: built in the per-CPU temp buffer and
//! dropped, 0fc1b09ff1ff); on with a filter every record passes
//! (`common_pid != 0`; `passed`: built in the temp buffer, tested, then
//! copied into the ring buffer by `ring_buffer_write`, as
//! `__buffer_unlock_commit` does for a temp-buffer event,
//! kernel/trace/trace.c: the lab's events have such a filter, all but
//! `btrfs_reserved_extent_free` and `sched_switch`);
//! on with no filter and the instance's `options/stacktrace` set
//! (`stacked`: the record kept, then its stack unwound and kept in a
//! record of its own, `__ftrace_trace_stack`, as the lab records its
//! reservation events' stacks); off again. A sample's cost per call is
//! on minus the mean of its two offs, the stack's is `stacked` less
//! `kept`; one more call with the stack on is read back from the trace
//! for the frames the stack showed. The instance runs on the lab's trace
//! clock (`x86-tsc` where offered), whose read is part of a kept record's
//! price.
//!
//! Needs root and tracefs with the `task_rename` event; without them the
//! profile says why and the twins count the event's loads instead.

use super::stats::Spread;
use crate::lab::host::UndoOnDrop;
use crate::lab::ledger::{Entry, Ledger};
use std::path::Path;
use std::time::Instant;

/// `prctl(PR_SET_NAME)` calls per timing.
pub const CALLS: u32 = 2_000;

/// Samples (each five timings): many short timings, so that the medians
/// stand against a virtual CPU's noise (a prctl costs 200-250 ns here;
/// one timing's mean moves by 100 ns from one to the next).
pub const SAMPLES: usize = 200;

/// ns per firing of one enabled tracepoint, measured.
#[derive(Debug, Clone)]
pub struct TracepointCost {
    /// Kept: reserved, filled and committed into the ring buffer.
    pub kept: Spread,
    /// Rejected by the event's filter (built in the temp buffer, dropped).
    pub discarded: Spread,
    /// Passed by the event's filter: built in the temp buffer, tested,
    /// copied into the ring buffer and committed.
    pub passed: Spread,
    /// A kept record's stack on top of the record: unwound and kept.
    pub stack: Spread,
    /// Frames the stack showed (`task_rename`'s handler up to the syscall
    /// entry), read back from the trace; `None` when none was found.
    pub stack_frames: Option<u32>,
    /// The instance's trace clock: the lab's ([`crate::lab::trace::clock_of`]).
    pub clock: &'static str,
}

/// Why the tracepoint cost could not be measured (the profile says so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotMeasured(pub String);

const TRACEFS: &str = "/sys/kernel/tracing";
const EVENT: &str = "events/task/task_rename";

fn write(path: &Path, text: &str) -> Result<(), NotMeasured> {
    std::fs::write(path, text).map_err(|e| NotMeasured(format!("write `{text}` to {}: {e}", path.display())))
}

/// Times `CALLS` `prctl(PR_SET_NAME)` calls, ns per call.
fn set_name_ns() -> f64 {
    let name = c"fsmeta-cal";
    let t = Instant::now();
    for _ in 0..CALLS {
        // SAFETY: PR_SET_NAME reads a NUL-terminated string of up to 16
        // bytes from the pointer, which `name` is.
        unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0) };
    }
    t.elapsed().as_nanos() as f64 / f64::from(CALLS)
}

/// Measures the tracepoint cost on the calling thread (pin it first),
/// [`SAMPLES`] samples; `Err` says why it could not be measured here.
pub fn measure() -> Result<TracepointCost, NotMeasured> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(NotMeasured("not root (tracefs instances need root)".into()));
    }
    if !Path::new(TRACEFS).join("instances").is_dir() || !Path::new(TRACEFS).join(EVENT).is_dir() {
        return Err(NotMeasured(format!("no tracefs with {EVENT} at {TRACEFS}")));
    }
    let mut old_name = [0u8; 17];
    // SAFETY: PR_GET_NAME writes at most 16 bytes and a NUL into the buffer.
    unsafe { libc::prctl(libc::PR_GET_NAME, old_name.as_mut_ptr() as libc::c_ulong, 0, 0, 0) };
    let mut ledger = Ledger::open().map_err(|e| NotMeasured(format!("the lab's ledger: {e}")))?;
    let dir = Path::new(TRACEFS).join(format!("instances/fsmeta-calibrate-{}-0", std::process::id()));
    ledger
        .record(Entry::Instance(dir.clone()))
        .map_err(|e| NotMeasured(format!("the lab's ledger: {e}")))?;
    let guard = UndoOnDrop::new(ledger);
    let out = timed(&dir, SAMPLES);
    drop(guard);
    // SAFETY: old_name is NUL-terminated (17 bytes zeroed, 16 at most written).
    unsafe { libc::prctl(libc::PR_SET_NAME, old_name.as_ptr() as libc::c_ulong, 0, 0, 0) };
    out
}

fn timed(dir: &Path, n: usize) -> Result<TracepointCost, NotMeasured> {
    std::fs::create_dir(dir).map_err(|e| NotMeasured(format!("mkdir {}: {e}", dir.display())))?;
    write(&dir.join("buffer_size_kb"), "256")?;
    let clock = crate::lab::trace::clock_of(&std::fs::read_to_string(dir.join("trace_clock")).unwrap_or_default());
    write(&dir.join("trace_clock"), clock)?;
    let ev = dir.join(EVENT);
    let (mut kept, mut discarded, mut passed, mut stack) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    set_name_ns(); // warm up
    for _ in 0..n {
        // off, kept, discarded, passed, off again: each against the mean
        // of the two offs around it, so a drift within the sample cancels.
        write(&ev.join("enable"), "0")?;
        write(&ev.join("filter"), "0")?;
        let off0 = set_name_ns();
        write(&ev.join("enable"), "1")?;
        let on = set_name_ns();
        write(&ev.join("filter"), "common_pid == 0")?;
        let filtered = set_name_ns();
        write(&ev.join("filter"), "common_pid != 0")?;
        let through = set_name_ns();
        write(&ev.join("filter"), "0")?;
        write(&dir.join("options/stacktrace"), "1")?;
        let stacked = set_name_ns();
        write(&dir.join("options/stacktrace"), "0")?;
        write(&ev.join("enable"), "0")?;
        let off = (off0 + set_name_ns()) / 2.0;
        kept.push(on - off);
        discarded.push(filtered - off);
        passed.push(through - off);
        stack.push(stacked - on);
    }
    // A stack not read back leaves the other figures (and no stack price).
    let stack_frames = frames_shown(dir, &ev).ok().flatten();
    write(&ev.join("enable"), "0")?;
    let spread = |v: &[f64], what: &str| Spread::of(v).ok_or_else(|| NotMeasured(format!("no {what} samples")));
    Ok(TracepointCost {
        kept: spread(&kept, "kept")?,
        discarded: spread(&discarded, "discarded")?,
        passed: spread(&passed, "passed")?,
        stack: spread(&stack, "stack")?,
        stack_frames,
        clock,
    })
}

/// Frames of one stack the event records: the trace emptied, one call
/// with the stack on, then the lines of its `<stack trace>` record read
/// back ([`count_frames`]).
fn frames_shown(dir: &Path, ev: &Path) -> Result<Option<u32>, NotMeasured> {
    write(&dir.join("trace"), "")?;
    write(&dir.join("options/stacktrace"), "1")?;
    write(&ev.join("enable"), "1")?;
    let name = c"fsmeta-cal";
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of up to 16
    // bytes from the pointer, which `name` is.
    unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0) };
    write(&ev.join("enable"), "0")?;
    write(&dir.join("options/stacktrace"), "0")?;
    let text = std::fs::read_to_string(dir.join("trace")).unwrap_or_default();
    Ok(count_frames(&text))
}

/// The frames (` => ` lines) of the first `<stack trace>` record in a
/// trace's text; `None` without one.
pub fn count_frames(trace: &str) -> Option<u32> {
    let mut lines = trace.lines().skip_while(|l| !l.contains("<stack trace>"));
    lines.next()?;
    let n = lines.take_while(|l| l.starts_with(" => ")).count();
    (n > 0).then_some(n as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frames_of_the_first_stack_are_counted() {
        let trace = "# tracer: nop\n\
            fsmeta-cal-1 [001] ..... 96: <stack trace>\n \
            => trace_event_raw_event_task_rename\n \
            => __set_task_comm\n \
            => __do_sys_prctl\n \
            => do_syscall_64\n \
            => entry_SYSCALL_64_after_hwframe\n\
            fsmeta-cal-1 [001] ..... 97: task_rename: pid=1\n\
            fsmeta-cal-1 [001] ..... 98: <stack trace>\n \
            => one\n";
        assert_eq!(count_frames(trace), Some(5));
        assert_eq!(count_frames("fsmeta-cal-1 [001] ..... 97: task_rename: pid=1\n"), None);
        assert_eq!(count_frames("x: <stack trace>\nnext record\n"), None);
    }
}
