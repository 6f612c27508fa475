//! What an enabled tracepoint costs the code it sits in.

/// L1 loads and stores of one enabled tracepoint firing with a filter
/// into a private instance's ring buffer (kernel/trace/trace_events.c,
/// kernel/trace/ring_buffer.c): `trace_event_buffer_reserve` ->
/// `ring_buffer_lock_reserve` (`rb_reserve_next_event`: the per-CPU
/// buffer's `local_t` counters, not locked on x86; the clock read), the
/// event's `TP_fast_assign` stores (about a dozen fields), one filter
/// predicate (`filter_match_preds`), `trace_event_buffer_commit`
/// (`rb_commit`, the wake-up test) and the trigger test. About 110, no
/// locked operation.
pub const TRACE_EVENT_LOADS: f64 = 110.0;

/// L1 loads and stores of one enabled tracepoint firing whose filter
/// rejects the record (kernel/trace/trace.c, trace_events_trigger.c):
/// with a filter set, `trace_event_buffer_lock_reserve` builds the record
/// in the per-CPU `trace_buffered_event` page (`trace_buffered_event_cnt`
/// incremented, the entry's header), not in the ring buffer; then the
/// event's `TP_fast_assign` stores; at commit
/// `__event_trigger_test_discard` evaluates the condition of a trigger
/// with one (`event_triggers_call`: the lab's `stacktrace if ...`) and the
/// event's filter (`filter_match_preds`), and `__trace_event_discard_commit`
/// only decrements the counter (no ring-buffer reserve, copy or commit;
/// the temp buffer of "tracing: Use temp buffer when filtering events",
/// 0fc1b09ff1ff, v4.7). About 45.
pub const TRACE_DISCARD_LOADS: f64 = 45.0;

/// The price of a kept record of an event with a filter, fired once per
/// call, ps: a record the filter passed, built in the per-CPU temp
/// buffer, tested, copied into the ring buffer (`__buffer_unlock_commit`
/// -> `ring_buffer_write`, kernel/trace/trace.c). The lab filters the
/// events its twins price (`dev == ...`, `owner == 5`, `type ==
/// "delayed_item"`) but one, [`unfiltered_ps`]. The profile's measured
/// `tracepoint.passed_ns` (`fsmeta calibrate`, since session 64) when it
/// has one, else its `event_ns` (a record kept with no filter: the temp
/// buffer, the test and the copy not counted), else `counted_ps`, the
/// event's counted loads as the caller prices them.
pub fn kept_ps(m: &crate::machine::MachineProfile, counted_ps: u64) -> u64 {
    m.tracepoint
        .as_ref()
        .map_or(counted_ps, |t| crate::machine::ns_to_ps(t.passed_ns.unwrap_or(t.event_ns)))
}

/// The price of a kept record of an event with no filter (the lab's
/// `btrfs_reserved_extent_free`), ps: the profile's measured
/// `tracepoint.event_ns` when it has one, else `counted_ps`.
pub fn unfiltered_ps(m: &crate::machine::MachineProfile, counted_ps: u64) -> u64 {
    m.tracepoint.as_ref().map_or(counted_ps, |t| crate::machine::ns_to_ps(t.event_ns))
}

/// The price of a record the filter rejects, ps: the profile's measured
/// `tracepoint.discard_ns`, else `counted_ps` ([`TRACE_DISCARD_LOADS`]).
pub fn discarded_ps(m: &crate::machine::MachineProfile, counted_ps: u64) -> u64 {
    m.tracepoint.as_ref().map_or(counted_ps, |t| crate::machine::ns_to_ps(t.discard_ns))
}

/// The price of a kept record fired once per turn of a kernel loop, ps:
/// `counted_ps` (the loop's price for its loads), at most the measured
/// cold firing ([`kept_ps`]), an upper bound for a hot one. On the family
/// 23 model 1 host, measured without the earlier passes' events (the lab
/// fix of 267492c), the kept `xfs_extent_busy_trim` in the busy walk costs
/// 140-151 ns a record with 16 to 4096 busy records: between that host's
/// `event_ns` (119-140) and its `passed_ns` (157-178), the price the bound
/// gives there (docs/lab-hosts.md, session 64).
pub fn looped_ps(m: &crate::machine::MachineProfile, counted_ps: u64) -> u64 {
    counted_ps.min(kept_ps(m, counted_ps))
}

/// Frames the unwinder walks for the stack an event records from a
/// btrfs syscall path (`__ftrace_trace_stack` -> `stack_trace_save` ->
/// `arch_stack_walk`): the tracing frames it skips and about 12 from the
/// event's caller up to `entry_SYSCALL_64` (`btrfs_delayed_item_reserve_metadata`,
/// `btrfs_delete_delayed_dir_index`, `__btrfs_unlink_inode`,
/// `btrfs_unlink_inode`, `btrfs_unlink`, `vfs_unlink`, `do_unlinkat`,
/// the syscall entry): about 16.
pub const STACK_FRAMES: f64 = 16.0;

/// L1 loads per frame of the ORC unwinder
/// (arch/x86/kernel/unwind_orc.c `unwind_next_frame`: the ORC entry's
/// fields, the switch on its registers, `deref_stack_reg` with
/// `stack_access_ok`, the state update; the frame's address stored into
/// the per-CPU stack buffer): about 55.
pub const STACK_FRAME_LOADS: f64 = 55.0;

/// Returns per frame of the unwinder's loop (6.18, all out of line in its
/// `/proc/kallsyms`): `unwind_next_frame`, `__rcu_read_lock` and
/// `__rcu_read_unlock` (its `guard(rcu)`), `stack_access_ok`,
/// `unwind_get_return_address`, `__kernel_text_address`,
/// `kernel_text_address`, `core_kernel_text`, and the consume callback
/// `stack_trace_consume_entry`: 9. The search below returns once
/// (`orc_find` tail-jumps to `__orc_find`).
pub const STACK_FRAME_RETURNS: f64 = 9.0;

/// Inner-loop loads per frame of `orc_find`'s search (the `orc_lookup`
/// block, then `__orc_find`'s binary search over its entries): about 10.
pub const STACK_FRAME_SEARCH_LOADS: f64 = 10.0;

/// One stack recorded with an event: its frames, plus the ring buffer
/// entry it is copied into (a second reserve and commit, about 60 loads).
/// The frames are the turns of `arch_stack_walk`'s loop
/// (`unwind_next_frame`, `orc_find`), whose trip count is the stack's
/// depth: [`Work::looped`], priced at `hit_ns` as every inner loop is
/// ([`crate::kernel::work`]).
///
/// [`Work::looped`]: crate::kernel::work::Work::looped
pub fn stack_trace() -> crate::kernel::work::Tally {
    use crate::kernel::work::{Tally, Work};
    let mut t = Tally::default();
    t.add(Work::looped(STACK_FRAME_LOADS).returning(STACK_FRAME_RETURNS), STACK_FRAMES)
        .add(Work::looped(STACK_FRAME_SEARCH_LOADS).returning(1.0), STACK_FRAMES)
        .add(Work::straight(60.0, 0.0), 1.0);
    t
}

/// Frames the unwinder walks beyond those a recorded stack shows: the
/// three `trace_buffer_unlock_commit_regs` skips (`STACK_SKIP`,
/// kernel/trace/trace.c) and `stack_trace_save`'s own (`skipnr + 1`,
/// kernel/stacktrace.c).
pub const STACK_SKIPPED: f64 = 4.0;

/// One stack of `shown` frames recorded with a kept event, ps: on a
/// profile that measured a stack (`tracepoint.stack_ns` at
/// `stack_frames`, `fsmeta calibrate`), that price in proportion to the
/// frames walked, `stack_ns x (shown + STACK_SKIPPED) / (stack_frames +
/// STACK_SKIPPED)`; without it the counted loads of [`stack_trace`] (16
/// frames, whatever `shown`), at `work_scale`. An approximation: the
/// unwinder also walks its own start (`__unwind_start`,
/// `arch_stack_walk`), and the measured price holds the stack record's
/// reserve, copy and commit, which do not grow with the frames; both make
/// a deep stack's price a little high. Live, the cost per frame also
/// differs by context (docs/lab-hosts.md, session 71).
pub fn stack_ps(m: &crate::machine::MachineProfile, shown: u32, work_scale: f64) -> u64 {
    measured_stack_ps(m, shown).unwrap_or_else(|| crate::machine::ns_to_ps(stack_trace().ns(m, work_scale)))
}

/// [`stack_ps`] on a profile that measured a stack; `None` on the others.
pub fn measured_stack_ps(m: &crate::machine::MachineProfile, shown: u32) -> Option<u64> {
    let (ns, frames) = m.tracepoint.as_ref().and_then(|t| t.stack_ns.zip(t.stack_frames))?;
    let walked = |f: u32| f64::from(f) + STACK_SKIPPED;
    Some(crate::machine::ns_to_ps(ns * walked(shown) / walked(frames)))
}
