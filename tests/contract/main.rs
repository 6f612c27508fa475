//! The workload contract from outside the crate: a toy workload written
//! here, through the public API alone, registered in a registry of its
//! own, loads, validates (located errors, metric names), runs
//! deterministically and writes outputs like a built-in one.

use fsmeta::engine::Metrics;
use fsmeta::engine::rng::RunKey;
use fsmeta::param::ParamError;
use fsmeta::workload::{Input, MetricSpec, Prepared, RunFailure, Sections, Workload};
use fsmeta::{LoadOptions, Study};
use rand::RngExt;
use std::path::Path;

/// Flips a fair coin `flips` times per run.
#[derive(Debug)]
struct Coin;

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
struct CoinParams {
    flips: u32,
    /// Read by the parser and the run but, as a bug a workload could have,
    /// left out of its resolved document: the no-op guard must notice.
    bias: Option<f64>,
}

#[derive(Debug)]
struct PreparedCoin(CoinParams);

impl Workload for Coin {
    fn kind(&self) -> &'static str {
        "coin"
    }
    fn about(&self) -> &'static str {
        "flips a coin"
    }
    fn sections(&self) -> &'static [&'static str] {
        &["coin"]
    }
    fn resolved_toml(&self, sections: &Sections<'_>) -> Result<String, ParamError> {
        let p: CoinParams = sections.get("coin")?;
        Ok(format!("[coin]\nflips = {}\n", p.flips))
    }
    fn prepare(&self, input: &Input<'_>) -> Result<Box<dyn Prepared>, ParamError> {
        let p: CoinParams = input.sections.get("coin")?;
        if p.flips == 0 {
            return Err(ParamError::new("coin.flips", "expected at least 1 flip"));
        }
        Ok(Box::new(PreparedCoin(p)))
    }
}

impl Prepared for PreparedCoin {
    fn metrics(&self) -> Vec<MetricSpec> {
        vec![MetricSpec::new("heads", "count", "flips that came up heads")]
    }
    fn key_metrics(&self) -> &'static [&'static str] {
        &["heads"]
    }
    fn run(&self, key: RunKey) -> Result<Metrics, RunFailure> {
        let mut rng = key.stream("coin");
        let p = self.0.bias.unwrap_or(0.5);
        let heads = (0..self.0.flips).filter(|_| rng.random_bool(p)).count();
        Ok(Metrics::from([("heads".to_string(), heads as f64)]))
    }
}

static REGISTRY: &[&dyn Workload] = &[&Coin];

fn opts() -> LoadOptions {
    LoadOptions {
        registry: REGISTRY,
        ..LoadOptions::default()
    }
}

const TOY: &str = r#"
[scenario]
name = "coin"
replications = 3

[workload]
kind = "coin"

[coin]
flips = 1000

[[expect]]
metric = "heads"
within = [400, 600]
"#;

#[test]
fn a_toy_workload_runs_through_the_public_contract() {
    let study = Study::from_text(Path::new("coin.toml"), TOY, &opts()).expect("loads");
    let a = study.run(1, &|| {}).expect("runs");
    let b = study.run(2, &|| {}).expect("runs");
    assert_eq!(a.runs.len(), 3);
    for (x, y) in a.runs.iter().zip(&b.runs) {
        assert_eq!(x.metrics, y.metrics, "same key, same draws, any --jobs");
        let h = x.metrics["heads"];
        assert!((400.0..=600.0).contains(&h), "heads {h}");
    }
    assert!(study.scenario.resolved_toml.contains("[coin]\nflips = 1000"));
    let out = std::env::temp_dir().join(format!("fsmeta-contract-{}", std::process::id()));
    let outcome = study.write(&a, &out).expect("writes");
    assert!(outcome.passed());
    assert!(outcome.text.contains("heads"));
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn the_toy_workload_gets_located_errors_and_metric_checks() {
    let err = |text: &str| {
        Study::from_text(Path::new("coin.toml"), text, &opts())
            .expect_err("rejected")
            .to_string()
    };
    let e = err(&TOY.replace("flips = 1000", "flipz = 1000"));
    assert!(e.starts_with("coin.toml:10:1"), "{e}");
    assert!(e.contains("did you mean `coin.flips`"), "{e}");
    let e = err(&TOY.replace("flips = 1000", "flips = 0"));
    assert!(e.starts_with("coin.toml:10:1") && e.contains("at least 1 flip"), "{e}");
    let e = err(&TOY.replace("metric = \"heads\"", "metric = \"head\""));
    assert!(e.contains("did you mean `heads`"), "{e}");
    let e = err(&TOY.replace("kind = \"coin\"", "kind = \"path\""));
    assert!(e.contains("no workload kind `path`"), "{e}");
    let e = err(&format!("{TOY}\n[dice]\nsides = 6\n"));
    assert!(e.contains("unknown section `dice`"), "{e}");
}

#[test]
fn a_swept_key_missing_from_the_resolved_document_is_refused() {
    let swept = format!("{TOY}\n[sweep]\n\"coin.flips\" = [10, 20]\n");
    let study = Study::from_text(Path::new("coin.toml"), &swept, &opts()).expect("loads");
    let applied: Vec<_> = study.scenario.points.iter().map(|p| p.configs[0].applied.clone()).collect();
    assert_eq!(applied[1], [("coin.flips".to_string(), toml::Value::Integer(20))]);
    let lost = format!("{TOY}\n[sweep]\n\"coin.bias\" = [0.25, 0.75]\n");
    let e = Study::from_text(Path::new("coin.toml"), &lost, &opts())
        .expect_err("a no-op")
        .to_string();
    assert!(
        e.starts_with("coin.toml:17:1: coin.bias: is set to 0.25 but no run reads it"),
        "{e}"
    );
    let variant = format!("{TOY}\n[[variant]]\nname = \"biased\"\ncoin.bias = 0.9\n");
    let e = Study::from_text(Path::new("coin.toml"), &variant, &opts())
        .expect_err("a no-op")
        .to_string();
    assert!(e.starts_with("coin.toml:18:6: coin.bias: is set to 0.9 but no run reads it"), "{e}");
}

#[test]
fn the_generated_scenario_reference_is_current() {
    let want = fsmeta::scenario::reference::reference(fsmeta::workload::registry::REGISTRY, None);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scenario-reference.md");
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/scenario-reference.md is stale: run `cargo run --release -- keys > docs/scenario-reference.md`"
    );
    for kind in ["path", "btrfs-dir", "xfs-alloc"] {
        assert!(want.contains(&format!("## Workload `{kind}`")), "{kind} missing");
    }
    assert!(
        want.contains("`btrfs_dir.files`") && want.contains("`1000`"),
        "defaults come from the workload"
    );
}

#[test]
fn a_known_gap_is_reported_as_a_gap_never_a_pass_and_does_not_fail() {
    let out = std::env::temp_dir().join(format!("fsmeta-gap-{}", std::process::id()));
    let outcome = |extra: &str| {
        let text = TOY.replace("within = [400, 600]", &format!("within = [0, 1]{extra}"));
        let study = Study::from_text(Path::new("coin.toml"), &text, &opts()).expect("loads");
        let r = study.run(1, &|| {}).expect("runs");
        study.write(&r, &out).expect("writes")
    };
    let missed = outcome("");
    assert!(!missed.passed(), "an honest miss fails");
    let gap = outcome("\nknown_gap = \"a coin has no memory\"");
    assert!(gap.passed(), "a known gap does not fail the run");
    assert!(
        gap.text.contains("[gap] heads") && gap.text.contains("known gap: a coin has no memory"),
        "{}",
        gap.text
    );
    assert!(gap.text.contains("0 passed, 0 failed, 1 known gap(s)"), "{}", gap.text);
    let _ = std::fs::remove_dir_all(out);
}

/// The key paths a reference row documents: `plot[].x / y / series` is
/// three, `expect[].within / target + tolerance_pct` three.
fn documented(reference: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in reference.lines().filter(|l| l.starts_with("| `")) {
        let cell = line.split('`').nth(1).unwrap_or("");
        let mut parts = cell.split([' ', '/', '+']).filter(|p| !p.is_empty());
        let Some(first) = parts.next() else { continue };
        out.push(first.to_string());
        let parent = first.rsplit_once('.').map_or("", |(p, _)| p);
        out.extend(parts.map(|p| format!("{parent}.{p}")));
    }
    out
}

/// Whether documented path `doc` covers accepted key `key`: segment by
/// segment equal, an upper-case segment (`NAME`, `PATH`) standing for any
/// name; a key below a documented map (`scenario.quick.NAME`) is covered by
/// the map's row.
fn covers(doc: &str, key: &str) -> bool {
    let is_name = |s: &str| s.chars().any(|c| c.is_ascii_uppercase()) && !s.chars().any(|c| c.is_ascii_lowercase());
    let (d, k): (Vec<&str>, Vec<&str>) = (doc.split('.').collect(), key.split('.').collect());
    let seg = |a: &str, b: &str| {
        a == b || ((is_name(a.trim_end_matches("[]")) || is_name(b.trim_end_matches("[]"))) && a.ends_with("[]") == b.ends_with("[]"))
    };
    if d.len() == k.len() {
        return d.iter().zip(&k).all(|(a, b)| seg(a, b));
    }
    // `sweep.PATH` covers a map's names, e.g. `sweep.NAME`, and nothing below.
    d.len() < k.len() && k[d.len()..].iter().all(|s| is_name(s.trim_end_matches("[]"))) && d.iter().zip(&k).all(|(a, b)| seg(a, b))
}

#[test]
fn every_key_the_parsers_accept_is_in_the_reference() {
    use fsmeta::scenario::schema::accepted_keys;
    let reference = fsmeta::scenario::reference::reference(fsmeta::workload::registry::REGISTRY, None);
    let rows = documented(&reference);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for dir in ["scenarios", "docs/examples"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        files.extend(
            entries
                .map(|e| e.expect("entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml")),
        );
    }
    files.sort();
    let mut keys = std::collections::BTreeSet::new();
    for f in &files {
        let study = Study::load(f, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let doc: toml::Table = toml::from_str(&study.scenario.resolved_toml).expect("resolved parses");
        keys.extend(accepted_keys(&doc, study.scenario.workload));
    }
    // The probe reaches the nested tables (it is not vacuous).
    for k in [
        "plot[].name",
        "expect[].known_gap",
        "expect[].note",
        "path[].every",
        "work.NAME.mean_ns",
        "sweep.zip[].NAME",
    ] {
        assert!(keys.contains(k), "{k} not found by the probe: {keys:?}");
    }
    // A section or table is documented by the rows of its keys.
    let has_rows = |k: &str| {
        rows.iter()
            .any(|d| d.starts_with(&format!("{k}.")) || d.starts_with(&format!("{k}[].")))
    };
    let missing: Vec<&String> = keys.iter().filter(|k| !rows.iter().any(|d| covers(d, k)) && !has_rows(k)).collect();
    assert!(
        missing.is_empty(),
        "keys the parsers accept but docs/scenario-reference.md does not list: {missing:?}"
    );
}

/// Counts `work` units per run and says in which order the runs started
/// (a process-wide count: tests using it hold [`ORDER_LOCK`]); a run of
/// `work = 13` fails.
#[derive(Debug)]
struct Ordered;

static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static ORDER_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
struct OrderedParams {
    work: u32,
    /// Estimated memory of a run, bytes; a run with some holds it until
    /// another such run is in flight too, or `hold_ms` have passed.
    memory: u64,
    hold_ms: u64,
}

#[derive(Debug)]
struct PreparedOrdered(OrderedParams);

/// Runs with memory in flight now, and the most ever.
static HOLDING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static MOST_HOLDING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Workload for Ordered {
    fn kind(&self) -> &'static str {
        "ordered"
    }
    fn about(&self) -> &'static str {
        "says when it started"
    }
    fn sections(&self) -> &'static [&'static str] {
        &["ordered"]
    }
    fn resolved_toml(&self, sections: &Sections<'_>) -> Result<String, ParamError> {
        let p: OrderedParams = sections.get("ordered")?;
        Ok(format!(
            "[ordered]\nwork = {}\nmemory = {}\nhold_ms = {}\n",
            p.work, p.memory, p.hold_ms
        ))
    }
    fn prepare(&self, input: &Input<'_>) -> Result<Box<dyn Prepared>, ParamError> {
        let p: OrderedParams = input.sections.get("ordered")?;
        Ok(Box::new(PreparedOrdered(p)))
    }
}

impl Prepared for PreparedOrdered {
    fn metrics(&self) -> Vec<MetricSpec> {
        vec![MetricSpec::new("started", "count", "runs started before this one")]
    }
    fn key_metrics(&self) -> &'static [&'static str] {
        &["started"]
    }
    fn work_estimate(&self) -> f64 {
        f64::from(self.0.work)
    }
    fn memory_bytes(&self) -> u64 {
        self.0.memory
    }
    fn run(&self, _key: RunKey) -> Result<Metrics, RunFailure> {
        use std::sync::atomic::Ordering::SeqCst;
        let started = STARTED.fetch_add(1, SeqCst);
        if self.0.memory > 0 {
            let now = HOLDING.fetch_add(1, SeqCst) + 1;
            MOST_HOLDING.fetch_max(now, SeqCst);
            let until = std::time::Instant::now() + std::time::Duration::from_millis(self.0.hold_ms);
            while HOLDING.load(SeqCst) < 2 && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            MOST_HOLDING.fetch_max(HOLDING.load(SeqCst), SeqCst);
            HOLDING.fetch_sub(1, SeqCst);
        }
        if self.0.work == 13 {
            return Err(fsmeta::kernel::ModelError::Overflow("work 13").into());
        }
        Ok(Metrics::from([("started".to_string(), started as f64)]))
    }
}

static ORDERED: &[&dyn Workload] = &[&Ordered];

fn ordered(works: &str, replications: u32) -> Study {
    let sweep = format!("[sweep]\n\"ordered.work\" = {works}");
    ordered_within(&sweep, replications, LoadOptions::default().max_memory_bytes)
}

/// The toy scenario with `sweep` (a sweep section) under a memory budget.
fn ordered_within(sweep: &str, replications: u32, max_memory_bytes: u64) -> Study {
    let text = format!(
        "[scenario]\nname = \"ordered\"\nreplications = {replications}\n\n[workload]\nkind = \"ordered\"\n\n[ordered]\nwork = 1\n\n{sweep}\n"
    );
    let opts = LoadOptions {
        registry: ORDERED,
        max_memory_bytes,
        ..LoadOptions::default()
    };
    Study::from_text(Path::new("ordered.toml"), &text, &opts).expect("loads")
}

#[test]
fn runs_start_longest_first_and_come_back_in_plan_order() {
    let _one = ORDER_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    STARTED.store(0, std::sync::atomic::Ordering::SeqCst);
    let study = ordered("[10, 1000, 1, 100]", 2);
    let results = study.run(1, &|| {}).expect("runs");
    let started: Vec<(usize, u32, f64)> = results
        .runs
        .iter()
        .map(|r| (r.plan.point, r.plan.replication, r.metrics["started"]))
        .collect();
    // Points of work 10, 1000, 1, 100, two replications each, in plan
    // order: 1000 starts first (its replications in plan order), then
    // 100, 10, 1.
    let expected = [
        (0, 0, 4.0),
        (0, 1, 5.0),
        (1, 0, 0.0),
        (1, 1, 1.0),
        (2, 0, 6.0),
        (2, 1, 7.0),
        (3, 0, 2.0),
        (3, 1, 3.0),
    ];
    assert_eq!(started, expected, "results in plan order, started longest first");
}

#[test]
fn the_first_failure_in_plan_order_is_reported() {
    let _one = ORDER_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Point 1 fails and starts first; with one job no run starts after it.
    let study = ordered("[1, 13, 5]", 1);
    let e = study.run(1, &|| {}).expect_err("work 13 fails").to_string();
    assert!(e.contains("point 1") && e.contains("work 13 overflows"), "{e}");
    // On two jobs, whichever runs were computed, point 1's failure is the one.
    for jobs in [2, 3] {
        let e = study.run(jobs, &|| {}).expect_err("work 13 fails").to_string();
        assert!(e.contains("point 1"), "{e}");
    }
}

#[test]
fn runs_in_flight_stay_within_the_memory_budget() {
    let _one = ORDER_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    use std::sync::atomic::Ordering::SeqCst;
    // Two long runs of 600 bytes and two short ones of none: the long ones
    // start first and, when allowed, each waits (up to 1 s) for the other.
    let zipped = "[[sweep.zip]]\n\"ordered.work\" = [100, 90, 2, 1]\n\"ordered.memory\" = [600, 600, 0, 0]\n\"ordered.hold_ms\" = [1000, 1000, 0, 0]";
    let most = |budget: u64| {
        MOST_HOLDING.store(0, SeqCst);
        let study = ordered_within(zipped, 1, budget);
        study.run(2, &|| {}).expect("runs");
        MOST_HOLDING.load(SeqCst)
    };
    assert_eq!(most(1 << 30), 2, "without a tight budget the two long runs overlap");
    assert_eq!(most(1000), 1, "600 + 600 bytes do not fit in 1000: one at a time");
    // A run over the budget on its own is refused when the scenario loads,
    // whatever --jobs.
    let e = Study::from_text(
        Path::new("ordered.toml"),
        "[scenario]\nname = \"ordered\"\n\n[workload]\nkind = \"ordered\"\n\n[ordered]\nmemory = 2000\n",
        &LoadOptions {
            registry: ORDERED,
            max_memory_bytes: 1000,
            ..LoadOptions::default()
        },
    )
    .expect_err("over the budget")
    .to_string();
    assert!(e.contains("over the memory budget"), "{e}");
}
