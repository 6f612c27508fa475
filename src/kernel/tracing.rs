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
