//! Case 1 (docs/reference/cases.md): XFS `m_active_trans` on the `path`
//! workload. The shipped scenarios at reduced scale (transaction handles
//! per create and per unlink from the kernel's code path, the ratios the
//! model predicts on hosts A and B, read misses against the counter line's
//! layout in the layout what-if), the spread-miss mechanism against
//! queueing/renewal theory and against explicit per-read steps, and the
//! `percpu_counter` batch taken from the guest's online CPUs.

mod per_ag;

use fsmeta::engine::Metrics;
use fsmeta::{LoadOptions, Study};
use std::collections::BTreeMap;
use std::path::Path;

fn manifest(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Runs scenario `text` (as if it were the file `file`) in quick mode and
/// returns the mean of each metric by (point values, variant name).
fn run_text(file: &Path, text: &str) -> BTreeMap<(String, String), Metrics> {
    let opts = LoadOptions {
        quick: true,
        ..LoadOptions::default()
    };
    let study = Study::from_text(file, text, &opts).expect("scenario loads");
    let results = study.run(2, &|| {}).expect("scenario runs");
    let s = &study.scenario;
    let mut sums: BTreeMap<(String, String), (Metrics, f64)> = BTreeMap::new();
    for r in &results.runs {
        let point = s.points[r.plan.point]
            .values
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let key = (point, s.variants[r.plan.variant].name.clone());
        let e = sums.entry(key).or_default();
        for (k, v) in &r.metrics {
            *e.0.entry(k.clone()).or_default() += v;
        }
        e.1 += 1.0;
    }
    sums.into_iter()
        .map(|(k, (m, n))| (k, m.into_iter().map(|(name, v)| (name, v / n)).collect()))
        .collect()
}

/// A shipped scenario with its quick scale replaced by `ops` operations.
fn shipped(name: &str, ops: u64) -> (std::path::PathBuf, String) {
    let file = manifest(&format!("scenarios/{name}"));
    let text = std::fs::read_to_string(&file).expect("scenario file");
    let quick = format!("quick = {{ \"scenario.ops\" = {ops}, \"scenario.replications\" = 1 }}");
    // A shipped precision stop ([stop]) gives way to the fixed `ops` the
    // hand counts need.
    let stop = ["[stop]", "ci_half_width_pct = ", "max_ops = "];
    let fixed = format!("[scenario]\nops = {ops}");
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !stop.iter().any(|s| l.starts_with(s)))
        .map(|l| match l {
            _ if l.starts_with("quick = ") => quick.clone(),
            "[scenario]" if text.contains("\n[stop]\n") => fixed.clone(),
            _ => l.to_string(),
        })
        .collect();
    assert!(lines.contains(&quick), "no `quick = ` line in {name}");
    (file, lines.join("\n"))
}

/// The metrics of `variant` on host `host` at layout `count` (reads of
/// the counter's line per transaction, the first swept value), or at the
/// only layout of a scenario that does not sweep it (`None`).
fn at<'a>(m: &'a BTreeMap<(String, String), Metrics>, host: &str, count: Option<u32>, variant: &str) -> &'a Metrics {
    m.iter()
        .find(|((p, v), _)| v == variant && p.contains(&format!("host-{host}")) && count.is_none_or(|c| p.starts_with(&format!("{c},"))))
        .map(|(_, m)| m)
        .unwrap_or_else(|| panic!("no point host-{host} count {count:?} {variant}: {:?}", m.keys().collect::<Vec<_>>()))
}

#[test]
fn create_takes_one_handle_plus_a_roll_per_64_inode_chunk() {
    // The case at its one layout (1 read of the counter's line per
    // transaction): 2 hosts x 2 variants, no layout axis.
    let (file, text) = shipped("xfs-active-trans.toml", 160_000);
    let m = run_text(&file, &text);
    assert_eq!(m.len(), 4, "{:?}", m.keys().collect::<Vec<_>>());
    for host in ["a", "b"] {
        for variant in ["atomic", "percpu"] {
            let r = at(&m, host, None, variant);
            // xfs_trans_alloc once per create, xfs_trans_dup once per 64
            // creates of a thread (10,000 creates per thread: 156 rolls).
            let per_create = r["m_active_trans.inc_per_sec"] / r["ops_per_sec"];
            let expected = 1.0 + 156.0 / 10_000.0;
            assert!(
                (per_create - expected).abs() < 2e-3,
                "{host} {variant}: {per_create} handles per create"
            );
        }
        // The atomic shares its line with m_resblks_avail: the transaction's
        // read of it misses when another CPU's inc or dec wrote the line.
        assert!(at(&m, host, None, "atomic")["xfs_mount_active_trans.read_misses"] > 0.0);
    }
    // The model's predictions (issue 10 note): the atomic counter's line
    // is far from saturated, so per-CPU gains little on either host.
    for (host, lo, hi) in [("a", 0.99, 1.10), ("b", 0.95, 1.05)] {
        let ratio = at(&m, host, None, "percpu")["ops_per_sec"] / at(&m, host, None, "atomic")["ops_per_sec"];
        assert!((lo..=hi).contains(&ratio), "host {host}: percpu/atomic {ratio}");
    }
}

#[test]
fn read_misses_follow_the_counter_lines_layout() {
    // The layout what-if: 0, 1 or 5 reads of the counter's line per
    // transaction, both hosts, both variants.
    let (file, text) = shipped("whatif-case1-layout.toml", 160_000);
    let m = run_text(&file, &text);
    assert_eq!(m.len(), 12, "{:?}", m.keys().collect::<Vec<_>>());
    for host in ["a", "b"] {
        for count in [0, 1, 5] {
            // An inc followed by a dec on one CPU never reaches the batch:
            // the per-CPU counter's shared line is only read, at any layout.
            let r = at(&m, host, Some(count), "percpu");
            assert_eq!(r["m_active_trans.folds"], 0.0, "host {host} layout {count}");
        }
        // More reads of the counter's line per transaction, more misses;
        // alone on its line (0 reads), none.
        let misses = |count| at(&m, host, Some(count), "atomic")["xfs_mount_active_trans.read_misses"];
        assert_eq!(misses(0), 0.0, "host {host}");
        assert!(misses(1) > 0.0, "host {host}");
        assert!(misses(5) > 2.0 * misses(1), "host {host}: {} vs {}", misses(5), misses(1));
    }
}

#[test]
fn events_per_create_are_one_per_step_and_one_per_read() {
    // The engine's event economy on case 1's path: an atomic inc or dec is
    // one event, a per-CPU one two (its micro-ops), the transaction's work
    // one plus one per spread read of the counter's line (no lumps), and
    // the every-64 roll's inc and dec one (two) event each per 64 creates.
    let (file, text) = shipped("whatif-case1-layout.toml", 160_000);
    let m = run_text(&file, &text);
    for host in ["a", "b"] {
        for count in [0u32, 1, 5] {
            for (variant, per_op) in [("atomic", 1.0), ("percpu", 2.0)] {
                let r = at(&m, host, Some(count), variant);
                let expected = 2.0 * per_op + 1.0 + f64::from(count) + 2.0 * per_op / 64.0;
                let got = r["events"] / r["ops"];
                // Besides whole creates: up to one create in flight per
                // thread (16) when the run stops, and each thread's last,
                // partial 64-create chunk, which has no roll yet.
                let slack = 16.0 * (expected + 2.0 * per_op) / r["ops"];
                assert!(
                    (got - expected).abs() < slack,
                    "host {host} layout {count} {variant}: {got} events per create, want {expected}"
                );
            }
        }
    }
}

#[test]
fn unlink_takes_two_handles_plus_a_roll_per_freed_chunk() {
    let (file, text) = shipped("xfs-active-trans-rm.toml", 80_000);
    let m = run_text(&file, &text);
    for host in ["a", "b"] {
        let r = at(&m, host, Some(1), "atomic");
        // xfs_remove + xfs_inactive_ifree, and one roll per 64 unlinks of
        // a thread (5,000 per thread: 78 rolls).
        let per_unlink = r["m_active_trans.inc_per_sec"] / r["ops_per_sec"];
        let expected = 2.0 + 78.0 / 5_000.0;
        assert!((per_unlink - expected).abs() < 4e-3, "{host}: {per_unlink} handles per unlink");
    }
}

/// `got` shared steps over `ops` operations against `per_op` from a hand
/// count, allowing `slack_steps` for the operations in flight at the stop
/// (up to one per thread) and each thread's last, partial 64-operation
/// chunk (no roll yet).
fn per_op_close(what: &str, got: f64, ops: f64, per_op: f64, slack_steps: f64) {
    assert!(
        (got - per_op * ops).abs() <= slack_steps,
        "{what}: {got} over {ops} operations, want {per_op} each (+- {slack_steps})"
    );
}

/// The steps every transaction takes on the shared objects, `tx`
/// transactions per operation of run `r`: each grant head's good
/// cmpxchgs (one per `xlog_grant_add_space` and `xlog_grant_sub_space`
/// loop; failed ones are retries), `down_read(xc_ctx_lock)` and
/// `xc_cil_lock` once, `m_fdblocks` never written; `slack(steps)` is the
/// allowance for operations in flight.
fn shared_steps_close(what: &dyn Fn(&str) -> String, r: &Metrics, tx: f64, slack: &dyn Fn(f64) -> f64) {
    let ops = r["ops"];
    for head in ["l_reserve_head", "l_write_head"] {
        let good = r[&format!("{head}.writes")] - r[&format!("{head}.cmpxchg_retries")];
        per_op_close(&what(head), good, ops, 2.0 * tx, slack(2.0));
    }
    per_op_close(&what("xc_ctx_lock"), r["xc_ctx_lock.read_acquisitions"], ops, tx, slack(1.0));
    per_op_close(&what("xc_cil_lock"), r["xc_cil_lock.acquisitions"], ops, tx, slack(1.0));
    assert_eq!(r["m_fdblocks_count.writes"], 0.0, "{}", what("m_fdblocks"));
}

#[test]
fn create_takes_the_shared_steps_of_the_57_transaction_path() {
    // Hand count per create transaction from the 5.7 source (the header of
    // scenarios/xfs-active-trans.toml): xlog_grant_add_space on the reserve
    // and write heads in xfs_log_reserve, xlog_grant_sub_space on both in
    // xfs_log_ticket_ungrant (2 cmpxchg loops per head); down_read(xc_ctx_lock) and
    // spin_lock(xc_cil_lock) once each in xfs_log_commit_cil /
    // xlog_cil_insert_items, one write of the CIL list head; m_ifree - 1
    // (xfs_mod_ifree: add, then compare) and, in the roll, the chunk's
    // m_icount and m_ifree + 64; m_active_trans + 1 and - 1. Transactions per create:
    // 1 + 1/64 (xfs_dir_ialloc's roll per inode chunk).
    let (file, text) = shipped("xfs-active-trans.toml", 160_000);
    let m = run_text(&file, &text);
    let tx = 1.0 + 1.0 / 64.0;
    // 16 threads: one create in flight each, one partial chunk each.
    let slack = |steps: f64| 16.0 * steps * 2.0;
    for host in ["a", "b"] {
        for variant in ["atomic", "percpu"] {
            let r = at(&m, host, None, variant);
            let ops = r["ops"];
            let what = |k: &str| format!("host {host} {variant} {k}");
            shared_steps_close(&what, r, tx, &slack);
            assert_eq!(r["xc_ctx_lock.write_acquisitions"], 0.0, "no CIL push modelled");
            per_op_close(&what("xc_cil"), r["xc_cil.writes"], ops, tx, slack(1.0));
            // m_ifree - 1 per create on each thread's own CPU slot and + 64
            // per chunk (the roll's deltas): per 64 creates, two folds of
            // the decrements (at -32 and -64) and one of the + 64 (|64| >=
            // the batch of 32): 3 / 64.
            per_op_close(&what("m_ifree folds"), r["m_ifree.folds"], ops, 3.0 / 64.0, 16.0 * 3.0);
            // Every m_ifree compare sums while the count stays within
            // 32 x 16 of 0: one per transaction. The model's count runs
            // from 0 down to -63 per thread between chunks, so while the
            // threads start in step (the first chunk cycle, 64 creates
            // each) it can pass -512 and a few compares take the fast path.
            per_op_close(&what("m_ifree sums"), r["m_ifree.slow_compares"], ops, tx, slack(1.0) + 16.0 * 64.0);
            // m_icount only grows (+ 64 per chunk): its compares sum only
            // until the count passes 128 x 16 = 2048, 32 chunks, plus the
            // rough count's lag (under 128 per CPU).
            assert!(r["m_icount.slow_compares"] <= 64.0, "{}", what("m_icount sums"));
        }
        // The atomic: an inc and a dec per transaction on its line; the
        // per-CPU counter never writes the old atomic's line.
        let atomic = at(&m, host, None, "atomic");
        per_op_close(
            &format!("host {host} atomic line"),
            atomic["xfs_mount_active_trans.writes"],
            atomic["ops"],
            2.0 * tx,
            slack(2.0),
        );
        assert_eq!(at(&m, host, None, "percpu")["xfs_mount_active_trans.writes"], 0.0);
    }
}

#[test]
fn unlink_takes_the_shared_steps_of_the_57_transaction_path() {
    // Hand count per unlink (scenarios/xfs-active-trans-rm.toml, 5.7):
    // xfs_remove's and xfs_inactive_ifree's transactions, and the chunk
    // free's roll 1 in 64: 2 + 1/64 handles, each 2 RMWs per grant head,
    // one down_read(xc_ctx_lock), one xc_cil_lock; m_ifree + 1 once per
    // unlink (xfs_difree in xfs_inactive_ifree's transaction), -63 instead
    // and m_icount - 64 when a chunk goes, each with its compare; m_fdblocks
    // read by xfs_remove's reservation only, never written.
    let (file, text) = shipped("xfs-active-trans-rm.toml", 80_000);
    let m = run_text(&file, &text);
    let tx = 2.0 + 1.0 / 64.0;
    let slack = |steps: f64| 16.0 * steps * 3.0;
    for host in ["a", "b"] {
        for variant in ["atomic", "percpu"] {
            let r = at(&m, host, Some(1), variant);
            let what = |k: &str| format!("host {host} {variant} {k}");
            shared_steps_close(&what, r, tx, &slack);
            // m_ifree + 1 per unlink, and - 64 more when the chunk goes
            // (1 in 64): per 64 unlinks, folds at + 32 and + 64, and of the
            // - 64: 3 / 64. One compare per unlink, each summing.
            per_op_close(&what("m_ifree folds"), r["m_ifree.folds"], r["ops"], 3.0 / 64.0, 16.0 * 3.0);
            per_op_close(&what("m_ifree sums"), r["m_ifree.slow_compares"], r["ops"], 1.0, slack(1.0));
            assert!(r["m_icount.slow_compares"] <= 64.0, "{}", what("m_icount sums"));
        }
    }
}

/// Two threads, each running `path` (a work of mean `m` ns with `n`
/// reads spread over it, then a store to the line).
fn reader_writer(work: &str, extra: &str, n: u32, ops: u64) -> Metrics {
    let text = format!(
        r#"
[scenario]
name = "spread"
seed = 7
replications = 1
ops = {ops}
[machine]
profile = "ideal"
[workload]
kind = "path"
threads = 2
[lines.shared]
[work.w]
{work}
read = "shared"
count = {n}
[[path]]
work = "w"
{extra}
[[path]]
write = "shared"
"#
    );
    let opts = LoadOptions::default();
    let study = Study::from_text(Path::new("spread.toml"), &text, &opts).expect("loads");
    let results = study.run(1, &|| {}).expect("runs");
    results.runs[0].metrics.clone()
}

#[test]
fn spread_read_misses_match_renewal_theory() {
    // Each thread: work D ~ Exp(m) with n reads at D(2k-1)/2n, then a
    // store. The other thread's stores form a Poisson stream of rate 1/m
    // (exponential cycles; transfers on the ideal machine are ~1e-4 of m).
    // Read 1 misses if a store fell in the D/2n since this thread's own
    // store: P = 1 - E[exp(-D/2nm)] = 1/(2n+1); reads 2..n, each D/n after
    // the last: 1/(n+1). Misses per second = (2/m)(1/(2n+1) + (n-1)/(n+1)).
    let (m_ns, n) = (10_000.0, 4u32);
    let r = reader_writer("dist = \"exp\"\nmean_ns = 10_000.0", "", n, 400_000);
    let per_op = 1.0 / f64::from(2 * n + 1) + f64::from(n - 1) / f64::from(n + 1);
    let analytic = 2.0 / (m_ns * 1e-9) * per_op;
    let simulated = r["shared.read_misses"] / (r["sim_time_ms"] * 1e-3);
    assert!(
        (simulated / analytic - 1.0).abs() < 0.02,
        "simulated {simulated} misses/s, analytic {analytic}"
    );
}

#[test]
fn spread_reads_equal_explicit_per_read_steps() {
    // A fixed 8 us work with 4 spread reads is, read for read, the same as
    // slices of 1, 2, 2, 2 and 1 us with a read step between each.
    let spread = reader_writer("dist = \"fixed\"\nmean_ns = 8_000.0", "", 4, 20_000);
    let text = r#"
[scenario]
name = "explicit"
seed = 7
replications = 1
ops = 20_000
[machine]
profile = "ideal"
[workload]
kind = "path"
threads = 2
[lines.shared]
[[path]]
work = { dist = "fixed", mean_ns = 1_000.0 }
[[path]]
read = "shared"
[[path]]
work = { dist = "fixed", mean_ns = 2_000.0 }
[[path]]
read = "shared"
[[path]]
work = { dist = "fixed", mean_ns = 2_000.0 }
[[path]]
read = "shared"
[[path]]
work = { dist = "fixed", mean_ns = 2_000.0 }
[[path]]
read = "shared"
[[path]]
work = { dist = "fixed", mean_ns = 1_000.0 }
[[path]]
write = "shared"
"#;
    let study = Study::from_text(Path::new("explicit.toml"), text, &LoadOptions::default()).expect("loads");
    let explicit = study.run(1, &|| {}).expect("runs").runs[0].metrics.clone();
    for k in [
        "ops_per_sec",
        "shared.read_misses",
        "shared.transfers",
        "shared.utilisation",
        "sim_time_ms",
    ] {
        assert_eq!(spread[k], explicit[k], "{k}");
    }
    assert!(spread["shared.read_misses"] > 0.0);
}

/// Folds of a per-CPU counter incremented by one thread, `ops` times, on
/// host A (64 CPUs), with the given `[machine]` extra line.
fn folds_on_host_a(machine_extra: &str, ops: u64) -> f64 {
    let text = format!(
        r#"
[scenario]
name = "batch"
seed = 1
replications = 1
ops = {ops}
[machine]
profile = "machines/host-a.toml"
{machine_extra}
[workload]
kind = "path"
threads = 1
[counters.c]
kind = "percpu"
[[path]]
counter = "c"
op = "inc"
[[path]]
work = {{ dist = "fixed", mean_ns = 100.0 }}
"#
    );
    let file = manifest("scenarios/batch.toml");
    let study = Study::from_text(&file, &text, &LoadOptions::default()).expect("loads");
    study.run(1, &|| {}).expect("runs").runs[0].metrics["c.folds"]
}

#[test]
fn percpu_batch_follows_the_guests_online_cpus() {
    // compute_batch_value: max(32, 2 x num_online_cpus()). The 16-vCPU
    // guest: 32; the whole 64-CPU host: 128.
    assert_eq!(folds_on_host_a("online_cpus = 16", 3_200), 100.0);
    assert_eq!(folds_on_host_a("", 3_200), 25.0);
}

#[test]
fn fewer_online_cpus_than_threads_is_an_error() {
    let text = r#"
[scenario]
name = "bad"
ops = 10
[machine]
online_cpus = 1
[workload]
kind = "path"
threads = 2
[[path]]
work = { dist = "fixed", mean_ns = 100.0 }
"#;
    let e = Study::from_text(Path::new("bad.toml"), text, &LoadOptions::default()).expect_err("refused");
    assert!(e.to_string().contains("online_cpus"), "{e}");
}

/// A path scenario with a `[work.create]` and one step naming `step_work`.
fn named_work(step_work: &str, extra: &str) -> Result<Study, String> {
    let text = format!(
        r#"
[scenario]
name = "named"
ops = 10
[workload]
kind = "path"
[work.create]
dist = "fixed"
mean_ns = 100.0
[[path]]
work = {step_work}
{extra}
"#
    );
    Study::from_text(Path::new("named.toml"), &text, &LoadOptions::default()).map_err(|e| e.to_string())
}

#[test]
fn named_work_resolves_or_is_refused_with_the_closest_name() {
    assert!(named_work("\"create\"", "").is_ok());
    let e = named_work("\"craete\"", "").expect_err("unknown name");
    assert!(e.contains("no work named `craete`") && e.contains("create"), "{e}");
    // Declared but never named by a step: a silent no-op, refused.
    let e = named_work("{ dist = \"fixed\", mean_ns = 5.0 }", "").expect_err("unused");
    assert!(e.contains("work `create` is declared but no [[path]] step names it"), "{e}");
    // Reads belong to the named work, not the step.
    let e = named_work("\"create\"", "count = 3").expect_err("count on the step");
    assert!(e.contains("takes its reads from [work.create]"), "{e}");
    // every = 0 would never run the step.
    let e = named_work("\"create\"", "every = 0").expect_err("every 0");
    assert!(e.contains("every"), "{e}");
}

/// One run of `threads` threads, each doing 1 us of work and then a
/// `compare` of counter `c` (`kind`) against `rhs` on host A's profile.
fn compare_run(kind: &str, rhs: i64, threads: u32) -> Metrics {
    let text = format!(
        r#"
[scenario]
name = "fbc"
seed = 3
replications = 1
ops = 20000
[machine]
profile = "machines/host-a.toml"
online_cpus = 16
[workload]
kind = "path"
threads = {threads}
[counters.c]
kind = "{kind}"
[[path]]
work = {{ dist = "fixed", mean_ns = 1000.0 }}
[[path]]
counter = "c"
op = "compare"
amount = {rhs}
"#
    );
    let file = manifest("scenarios/fbc.toml");
    let study = Study::from_text(&file, &text, &LoadOptions::default()).expect("loads");
    let results = study.run(1, &|| {}).expect("runs");
    results.runs[0].metrics.clone()
}

#[test]
fn a_counters_spinlock_is_reported_held_by_its_sums() {
    // A per-CPU counter at 0 compared against 0: every compare sums every
    // CPU's slot under fbc->lock (__percpu_counter_sum), so the lock is
    // held a share of the time, and with 16 threads they wait for it.
    // Compared against 10^9 (far beyond 32 x 16), no compare sums and no
    // one takes the lock; an atomic has no lock.
    let near = compare_run("percpu", 0, 16);
    // (Operations still in flight at the stop have compared already.)
    assert!(
        (near["c.slow_compares"] - near["ops"]).abs() <= 16.0,
        "every compare sums: {near:?}"
    );
    // One thread alone holds it a little (its sums read its own slot) and
    // waits only for the lock word; 16 hold it longer (16 slots, each
    // written by another CPU) and queue for it.
    let one = compare_run("percpu", 0, 1);
    let (held, held1) = (near["c.lock.utilisation"], one["c.lock.utilisation"]);
    assert!(
        held1 > 0.0 && held > 2.0 * held1 && held <= 1.0,
        "fbc->lock held {held1} alone, {held} by 16"
    );
    assert!(near["c.lock.wait_mean_ns"] > 10.0 * one["c.lock.wait_mean_ns"], "{near:?}\n{one:?}");
    let far = compare_run("percpu", 1_000_000_000, 16);
    assert_eq!((far["c.slow_compares"], far["c.lock.utilisation"]), (0.0, 0.0));
    let atomic = compare_run("atomic", 0, 16);
    assert_eq!(atomic["c.lock.utilisation"], 0.0);
}
