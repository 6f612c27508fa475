//! The discrete-event core: simulated time, the event queue, named random
//! streams, sampling distributions, latency histograms and the path
//! interpreter that runs one process per simulated CPU; and the one bounded
//! reader of data files ([`input`]). The precision-targeted stop lives with
//! the interpreter that uses it (`workload::path::precision`).
//!
//! Nothing here knows about scenario files or outputs; the runner feeds it a
//! built simulation (`workload::path::sim::SimSpec`) and reads back its
//! metrics.

pub mod dist;
pub mod exp;
pub mod fifo;
pub mod histogram;
pub mod input;
pub mod prefetch;
pub mod queue;
pub mod rng;
pub mod time;

/// The most operations one run may simulate: 10^10 is hours of wall time
/// at the engine's tens of millions of events per second.
pub const MAX_OPS: u64 = 10_000_000_000;

/// Metrics of one run, by name, in sorted order (so output order never
/// depends on insertion order).
pub type Metrics = std::collections::BTreeMap<String, f64>;
