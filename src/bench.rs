//! `fsmeta bench`: the engine's speed, measured on the calling thread's
//! CPU time ([`fsmeta::measure`]), the median of several runs.
//!
//! * The engine path (`benches/engine.toml`: 16 threads on the ideal
//!   machine, exponential work, a queued lock around exponential work), in
//!   events per second.
//! * M/M/1//N (`benches/mm1n.toml`) through fsmeta next to the bare-heap
//!   loop ([`fsmeta::measure::mm1n`]), in completions per second, run in
//!   turns: their ratio is issue 13's figure, and the bare loop's rate
//!   shows how fast this machine is. The ratio is the median over the
//!   repeats of each pair's ratio (fsmeta's run and the bare loop's next
//!   to it in time): on a shared machine the slow phases last longer than
//!   a pair, so a pair sees the same phase, while separate medians of the
//!   two rates can each come from another phase. The bare loop runs twice
//!   per repeat: with statrs' sampler (the baseline) and with the
//!   engine's, so the ratio can be read with and without the sampler's
//!   share.
//! * The cache model alone (issue 35's per-access cost, on which case 2's
//!   and `index-scaling`'s wall times depend): case 2's access pattern
//!   ([`fsmeta::measure::cache_pattern`], [`CACHE_CREATES`] creates on cold
//!   caches, their building not timed), in simulated accesses per second.
//! * With `--simpy PYTHON`, the same M/M/1//N in SimPy
//!   (`benches/simpy_mm1n.py`, run by that interpreter, [`SIMPY_SHARE`] of
//!   the completions, timed by the script on its own CPU clock), in turns
//!   with fsmeta's run: issue 35's "vs SimPy" ratio, the median of the
//!   pairs' ratios as for the bare loop.

use fsmeta::measure::{cache_pattern, median, mm1n, timed};
use fsmeta::{LoadOptions, Study};
use std::path::Path;

/// The fixed scenario of the engine path (`ops` replaced by the caller).
pub const BENCH_SCENARIO: &str = include_str!("../benches/engine.toml");
/// The M/M/1//N scenario (`ops` replaced by the caller).
pub const MM1N_SCENARIO: &str = include_str!("../benches/mm1n.toml");
/// The SimPy reference of the same model (run with `PYTHON -c`).
pub const SIMPY_SCRIPT: &str = include_str!("../benches/simpy_mm1n.py");
/// SimPy runs this fraction of fsmeta's completions (it is about 100
/// times slower; its rate is per CPU second, so the count only sets how
/// long it is timed).
pub const SIMPY_SHARE: u64 = 2;

/// What the benchmark measured.
#[derive(Debug, Clone, Copy)]
pub struct BenchResult {
    /// Events processed per run of the engine path.
    pub events: u64,
    /// Runs of each kind.
    pub repeat: u32,
    /// CPU seconds of the median engine-path run.
    pub cpu_s: f64,
    /// Events per CPU second: the median over the runs, rounded down.
    pub events_per_sec: u64,
    /// Events per CPU second of the fastest run, rounded down.
    pub events_per_sec_best: u64,
    /// M/M/1//N completions per CPU second through fsmeta (median).
    pub mm1n_fsmeta: f64,
    /// M/M/1//N completions per CPU second of the bare-heap loop (median).
    pub mm1n_bare_heap: f64,
    /// fsmeta / bare loop, the median of the per-repeat ratios.
    pub mm1n_ratio: f64,
    /// fsmeta / the bare loop drawing with the engine's sampler, the
    /// median of the per-repeat ratios.
    pub mm1n_ratio_same_sampler: f64,
    /// Simulated cache accesses per CPU second of the cache model on case
    /// 2's pattern (median).
    pub cache_accesses_per_sec: f64,
    /// M/M/1//N completions per CPU second of the SimPy reference
    /// (median), when asked for.
    pub mm1n_simpy: Option<f64>,
    /// fsmeta / SimPy, the median of the per-repeat ratios, when asked for.
    pub mm1n_simpy_ratio: Option<f64>,
}

/// Completions per CPU second of one SimPy run of M/M/1//N
/// (`benches/simpy_mm1n.py` by `python`), as the script measured them.
fn simpy_rate(python: &str, completions: u64, seed: u64) -> Result<f64, anyhow::Error> {
    let out = std::process::Command::new(python)
        .arg("-c")
        .arg(SIMPY_SCRIPT)
        .arg(completions.to_string())
        .arg(seed.to_string())
        .output()
        .map_err(|e| anyhow::anyhow!("--simpy: could not run `{python}`: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().last().unwrap_or("no message");
        return Err(anyhow::anyhow!(
            "--simpy: the SimPy reference failed under `{python}` ({}): {last}",
            out.status
        ));
    }
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("completions_per_cpu_sec "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| anyhow::anyhow!("--simpy: the SimPy reference printed no `completions_per_cpu_sec` line: {stdout:?}"))
}

/// Creates of case 2's access pattern per run of the cache figure (about
/// 0.4M accesses).
pub const CACHE_CREATES: u64 = 10_000;

/// Accesses per CPU second of one run of case 2's access pattern on cold
/// caches (built before the clock starts).
fn cache_rate() -> Result<f64, anyhow::Error> {
    let mut h = cache_pattern::spr()?;
    let mut accesses = 0;
    let d = timed(1, || accesses = cache_pattern::run(&mut h, CACHE_CREATES).0);
    Ok(accesses as f64 / d.as_secs_f64().max(1e-9))
}

/// A scenario with `ops = 1000` replaced by `ops`.
fn study(name: &str, text: &str, ops: u64) -> Result<Study, anyhow::Error> {
    let text = text.replace("ops = 1000", &format!("ops = {}", ops.max(1)));
    Ok(Study::from_text(Path::new(name), &text, &LoadOptions::default())?)
}

/// One run of `s`'s only run on this thread: its metrics and CPU seconds.
fn run_timed(s: &Study) -> Result<(fsmeta::engine::Metrics, f64), anyhow::Error> {
    let plan = s.plan();
    let first = plan.first().ok_or_else(|| anyhow::anyhow!("the bench scenario has no run"))?;
    let mut out = None;
    let d = timed(1, || out = Some(fsmeta::runner::run_one(&s.scenario, first)));
    let metrics = out.ok_or_else(|| anyhow::anyhow!("the bench run did not run"))??;
    Ok((metrics, d.as_secs_f64().max(1e-9)))
}

/// Runs the engine path for `ops` operations and M/M/1//N for `completions`
/// completions (fsmeta and the bare loop in turns, and SimPy under
/// `simpy`'s interpreter when given; none for 0), `repeat` times each.
pub fn engine_bench(ops: u64, completions: u64, repeat: u32, simpy: Option<&str>) -> Result<BenchResult, anyhow::Error> {
    let repeat = repeat.max(1);
    let engine = study("benches/engine.toml", BENCH_SCENARIO, ops)?;
    let queue = study("benches/mm1n.toml", MM1N_SCENARIO, completions)?;
    let (mut rates, mut secs, mut fsmeta_cps, mut bare_cps) = (vec![], vec![], vec![], vec![]);
    let (mut ratios, mut ratios_same, mut cache) = (vec![], vec![], vec![]);
    let (mut simpy_cps, mut simpy_ratios) = (vec![], vec![]);
    let per_sec = |d: std::time::Duration| completions as f64 / d.as_secs_f64().max(1e-9);
    let mut events = 0;
    for r in 0..repeat {
        let (m, s) = run_timed(&engine)?;
        events = m.get("events").copied().unwrap_or(0.0) as u64;
        rates.push(events as f64 / s);
        secs.push(s);
        cache.push(cache_rate()?);
        if completions == 0 {
            continue;
        }
        let (m, s) = run_timed(&queue)?;
        let fsmeta = m.get("ops").copied().unwrap_or(0.0) / s;
        let bare = per_sec(timed(1, || mm1n::bare_heap(completions, 1 + u64::from(r))));
        let same = per_sec(timed(1, || mm1n::bare_heap_engine_sampler(completions, 1 + u64::from(r))));
        fsmeta_cps.push(fsmeta);
        bare_cps.push(bare);
        ratios.push(fsmeta / bare);
        ratios_same.push(fsmeta / same);
        if let Some(python) = simpy {
            let rate = simpy_rate(python, (completions / SIMPY_SHARE).max(1), 1 + u64::from(r))?;
            simpy_cps.push(rate);
            simpy_ratios.push(fsmeta / rate);
        }
    }
    Ok(BenchResult {
        events,
        repeat,
        cpu_s: median(&secs),
        events_per_sec: median(&rates) as u64,
        events_per_sec_best: rates.iter().copied().fold(0.0, f64::max) as u64,
        mm1n_fsmeta: median(&fsmeta_cps),
        mm1n_bare_heap: median(&bare_cps),
        mm1n_ratio: median(&ratios),
        mm1n_ratio_same_sampler: median(&ratios_same),
        cache_accesses_per_sec: median(&cache),
        mm1n_simpy: (!simpy_cps.is_empty()).then(|| median(&simpy_cps)),
        mm1n_simpy_ratio: (!simpy_ratios.is_empty()).then(|| median(&simpy_ratios)),
    })
}
