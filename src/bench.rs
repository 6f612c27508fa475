//! `fsmeta bench`: the engine's speed on a fixed path (16 threads on the
//! ideal machine, exponential work, a queued lock around exponential
//! work), in events per second of wall time on one core.

use crate::engine::rng::RunKey;
use crate::scenario::{self, LoadOptions};
use crate::workload::path;
use std::path::Path;
use std::time::Instant;

/// The fixed scenario the benchmark runs.
pub const BENCH_SCENARIO: &str = r#"
[scenario]
name = "bench"
ops = 1000

[workload]
kind = "path"
threads = 16

[locks.l]
kind = "queued"

[[path]]
work = { dist = "exp", mean_ns = 1000.0 }
[[path]]
lock = "l"
[[path]]
work = { dist = "exp", mean_ns = 50.0 }
[[path]]
unlock = "l"
"#;

/// What the benchmark measured.
#[derive(Debug, Clone, Copy)]
pub struct BenchResult {
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// Events per wall-clock second, rounded down.
    pub events_per_sec: u64,
}

/// Runs the fixed path for `ops` operations and times it.
pub fn engine_bench(ops: u64) -> BenchResult {
    let text = BENCH_SCENARIO.replace("ops = 1000", &format!("ops = {}", ops.max(1)));
    let s = scenario::load_str(Path::new("bench.toml"), &text, &LoadOptions::default());
    let Ok(s) = s else {
        return BenchResult {
            events: 0,
            wall_s: 0.0,
            events_per_sec: 0,
        };
    };
    let key = RunKey {
        seed: 1,
        point: 0,
        variant: 0,
        replication: 0,
    };
    let Ok(built) = path::build(&s.points[0].configs[0], Path::new("."), Some(key)) else {
        return BenchResult {
            events: 0,
            wall_s: 0.0,
            events_per_sec: 0,
        };
    };
    let start = Instant::now();
    let m = crate::workload::path::sim::run(built.spec).unwrap_or_default();
    let wall_s = start.elapsed().as_secs_f64();
    let events = m.get("events").copied().unwrap_or(0.0) as u64;
    BenchResult {
        events,
        wall_s,
        events_per_sec: (events as f64 / wall_s.max(1e-9)) as u64,
    }
}
