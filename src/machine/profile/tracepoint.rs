//! What one enabled tracepoint costs the code it fires in on this host,
//! measured by `fsmeta calibrate` ([`crate::calibrate::tracepoint`]): the
//! prices of the lab's events inside the windows the twins time.

/// ns per firing of an enabled tracepoint into a private tracefs
/// instance (kernel/trace/trace.c, trace_events.c).
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TracepointPrices {
    /// A record kept: reserved, filled and committed into the ring buffer.
    pub event_ns: f64,
    /// A record the event's filter rejects (built in the per-CPU temp
    /// buffer and dropped).
    pub discard_ns: f64,
    /// A record the event's filter passes: built in the per-CPU temp
    /// buffer, tested, then copied into the ring buffer
    /// (`__buffer_unlock_commit` -> `ring_buffer_write`,
    /// kernel/trace/trace.c). The events of the lab the twins price have
    /// a filter but one (`btrfs_reserved_extent_free`), so where a profile
    /// has it the twins price their kept records at it
    /// ([`crate::kernel::tracing::kept_ps`]); profiles measured before
    /// session 64 have only `event_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_ns: Option<f64>,
    /// A kept record's stack, on top of the record (the instance's
    /// `options/stacktrace`: `__ftrace_trace_stack` unwinds the stack and
    /// keeps it in a record of its own, kernel/trace/trace.c), measured
    /// where the stack showed [`Self::stack_frames`] frames; the twins
    /// price a stack of other depths in proportion to the frames walked
    /// ([`crate::kernel::tracing::stack_ps`]). Profiles measured before
    /// session 71 have none: there a stack is its counted loads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_ns: Option<f64>,
    /// Frames the measured stack showed (given with `stack_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_frames: Option<u32>,
}

impl TracepointPrices {
    /// Why a price is out of range, as (field, message): a record's
    /// prices in `[0, 1e6]` ns, a passed record's in `(0, 1e6]` (built
    /// and copied: never free; `fsmeta calibrate` keeps it only when
    /// positive), a stack's in `(0, 1e6]` ns with its frames in `[1,
    /// 1000]`, the two together.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        for (field, ns) in [("tracepoint.event_ns", self.event_ns), ("tracepoint.discard_ns", self.discard_ns)] {
            if !(ns.is_finite() && (0.0..=1e6).contains(&ns)) {
                return Err((field, format!("{ns} ns is not in [0, 1e6]")));
            }
        }
        if let Some(ns) = self.passed_ns
            && !(ns.is_finite() && ns > 0.0 && ns <= 1e6)
        {
            return Err(("tracepoint.passed_ns", format!("{ns} ns is not in (0, 1e6]")));
        }
        match (self.stack_ns, self.stack_frames) {
            (None, None) => Ok(()),
            (Some(ns), Some(f)) if ns.is_finite() && ns > 0.0 && ns <= 1e6 && (1..=1000).contains(&f) => Ok(()),
            (Some(ns), Some(_)) if !(ns.is_finite() && ns > 0.0 && ns <= 1e6) => {
                Err(("tracepoint.stack_ns", format!("{ns} ns is not in (0, 1e6]")))
            }
            (Some(_), Some(f)) => Err(("tracepoint.stack_frames", format!("{f} is not in [1, 1000]"))),
            (Some(_), None) => Err((
                "tracepoint.stack_frames",
                "missing: tracepoint.stack_ns needs the frames its stack showed".to_string(),
            )),
            (None, Some(_)) => Err((
                "tracepoint.stack_ns",
                "missing: tracepoint.stack_frames is the depth of a measured stack_ns".to_string(),
            )),
        }
    }
}
