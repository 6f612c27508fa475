//! `fsmeta bench`: the engine's speed on a fixed path
//! (`benches/engine.toml`: 16 threads on the ideal machine, exponential
//! work, a queued lock around exponential work), in events per second of
//! wall time on one core.

use fsmeta::{LoadOptions, Study};
use std::path::Path;
use std::time::Instant;

/// The fixed scenario the benchmark runs (`ops` replaced by the caller).
pub const BENCH_SCENARIO: &str = include_str!("../benches/engine.toml");

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

/// Runs the fixed path for `ops` operations on one thread and times it.
pub fn engine_bench(ops: u64) -> Result<BenchResult, anyhow::Error> {
    let text = BENCH_SCENARIO.replace("ops = 1000", &format!("ops = {}", ops.max(1)));
    let study = Study::from_text(Path::new("benches/engine.toml"), &text, &LoadOptions::default())?;
    let start = Instant::now();
    let results = study.run(1, &|| {})?;
    let wall_s = start.elapsed().as_secs_f64();
    let events = results.runs.first().and_then(|r| r.metrics.get("events")).copied().unwrap_or(0.0) as u64;
    Ok(BenchResult {
        events,
        wall_s,
        events_per_sec: (events as f64 / wall_s.max(1e-9)) as u64,
    })
}
