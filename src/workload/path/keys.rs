//! The parameters of a `path` workload, for the reference.

use crate::workload::ParamSpec;
use crate::workload::contract::param as p;

/// Every key of `[[path]]`, `[work.NAME]`, `[lines.NAME]`, `[locks.NAME]`,
/// `[counters.NAME]`, `[stop]`.
pub const PARAMS: &[ParamSpec] = &[
    p(
        "path[].work",
        "a duration distribution, or a name",
        "see work.*; or a [work.NAME]",
        "CPU work of the step",
    ),
    p(
        "path[].work.dist",
        "a word",
        "fixed, exp, uniform, normal, lognormal",
        "the distribution family",
    ),
    p(
        "path[].work.mean_ns",
        "a time in ns",
        "0 or more",
        "mean (fixed, exp, normal, lognormal)",
    ),
    p(
        "path[].work.sd_ns",
        "a time in ns",
        "0 or more",
        "standard deviation (normal; clamped at 0)",
    ),
    p("path[].work.min_ns", "a time in ns", "0 or more", "lower bound (uniform)"),
    p("path[].work.max_ns", "a time in ns", "above min_ns", "upper bound (uniform)"),
    p(
        "path[].work.sigma",
        "a number",
        "0 or more",
        "shape of the underlying normal (lognormal)",
    ),
    p(
        "path[].read",
        "a line name",
        "a line declared under [lines]",
        "read this line (with work: spread over the work)",
    ),
    p("path[].count", "a whole number", "1 or more", "how many reads the step stands for"),
    p("path[].write", "a line name", "a line declared under [lines]", "store to this line"),
    p(
        "path[].atomic",
        "a line name",
        "a line declared under [lines]",
        "atomic read-modify-write of this line",
    ),
    p("path[].lock", "a lock name", "a lock declared under [locks]", "acquire this lock"),
    p("path[].unlock", "a lock name", "a lock declared under [locks]", "release this lock"),
    p(
        "path[].counter",
        "a counter name",
        "a counter declared under [counters]",
        "operate on this counter (with op)",
    ),
    p("path[].op", "a word", "inc, dec, sum, read", "the counter operation"),
    p(
        "path[].every",
        "a whole number",
        "1 or more",
        "run the step only on every N-th operation of its thread (default 1)",
    ),
    p(
        "work.NAME.dist",
        "a word",
        "fixed, exp, uniform, normal, lognormal",
        "named CPU work (path[].work = \"NAME\"): the distribution family",
    ),
    p(
        "work.NAME.mean_ns",
        "a time in ns",
        "0 or more",
        "mean (fixed, exp, normal, lognormal); also sd_ns, min_ns, max_ns, sigma as in path[].work",
    ),
    p(
        "work.NAME.sd_ns / min_ns / max_ns / sigma",
        "times in ns / a number",
        "as in path[].work",
        "the other parameters of the named work's distribution",
    ),
    p(
        "work.NAME.read",
        "a line name",
        "a line declared under [lines]",
        "a line read during the work, at evenly spaced points",
    ),
    p(
        "work.NAME.count",
        "a whole number",
        "0 or more",
        "reads of `read` during the work (0 = none; default 1)",
    ),
    p(
        "lines.NAME.fields",
        "a list of words",
        "any",
        "the fields that share this cache line (documentation)",
    ),
    p("locks.NAME.kind", "a word", "ticket, queued, mutex", "the lock design"),
    p(
        "locks.NAME.line",
        "a line name",
        "a line declared under [lines]",
        "the line holding the lock word (default its own)",
    ),
    p("counters.NAME.kind", "a word", "atomic, percpu, hierarchical", "the counter design"),
    p(
        "counters.NAME.batch",
        "a whole number",
        "1 or more (percpu, hierarchical)",
        "per-CPU fold threshold (default max(32, 2 x CPUs))",
    ),
    p(
        "counters.NAME.socket_batch",
        "a whole number",
        "1 or more (hierarchical)",
        "per-socket fold threshold (default batch x CPUs per socket)",
    ),
    p(
        "counters.NAME.line",
        "a line name",
        "a line declared under [lines]",
        "the line of the global count (default its own)",
    ),
    p(
        "stop.ci_half_width_pct",
        "a percentage",
        "above 0, at most 50",
        "stop when the 95 % CI half-width of the throughput (batch means after an MSER warm-up cut) is below this; instead of scenario.ops",
    ),
    p(
        "stop.metric",
        "a metric name",
        "ops_per_sec",
        "the metric whose interval is targeted (default ops_per_sec)",
    ),
    p(
        "stop.max_ops",
        "a whole number",
        "3840 (30 batches of 128) to 10,000,000,000",
        "required with [stop]: cap on operations (all threads) if the target is not reached",
    ),
];
