//! Five what-ifs of the kind a kernel developer asks, each a sweep of an
//! indexed key (one step of a shipped scenario's `[[path]]`) at a small
//! scale: each must change the metric it is about, in the expected
//! direction. Before indexed keys worked, each of these sweeps was
//! accepted and ignored, so every point gave the same answer.

use super::root;
use fsmeta::{LoadOptions, Study};
use toml::Value;

/// Shipped scenario `name` cut down to one what-if: its plots,
/// expectations, quick mode and sweep removed, `ops` operations, one
/// replication, `threads` threads, and `sweep` (a `[sweep]` or
/// `[[sweep.zip]]` table in TOML) as its only axis. Returns the mean of
/// `metric` (or `metric / over` per run) for the first variant at each
/// point, in sweep order.
fn what_if(name: &str, threads: i64, ops: i64, sweep: &str, metric: &str, over: Option<&str>) -> Vec<f64> {
    let file = root().join("scenarios").join(format!("{name}.toml"));
    let mut doc: toml::Table = toml::from_str(&std::fs::read_to_string(&file).expect("read")).expect("parses");
    // A shipped precision stop gives way to the fixed `ops` set below.
    for k in ["plot", "expect", "sweep", "stop"] {
        doc.remove(k);
    }
    let scenario = doc.get_mut("scenario").and_then(Value::as_table_mut).expect("[scenario]");
    scenario.remove("quick");
    scenario.insert("ops".into(), Value::Integer(ops));
    scenario.insert("replications".into(), Value::Integer(1));
    let workload = doc.get_mut("workload").and_then(Value::as_table_mut).expect("[workload]");
    workload.insert("threads".into(), Value::Integer(threads));
    let sweep: toml::Table = toml::from_str(sweep).expect("sweep parses");
    doc.extend(sweep);
    let text = toml::to_string(&doc).expect("writes");
    let study = Study::from_text(&file, &text, &LoadOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let results = study.run(2, &|| {}).expect("runs");
    (0..study.scenario.points.len())
        .map(|p| {
            let r = results
                .runs
                .iter()
                .find(|r| r.plan.point == p && r.plan.variant == 0)
                .expect("a run per point");
            let v = r.metrics[metric];
            over.map_or(v, |o| v / r.metrics[o])
        })
        .collect()
}

#[test]
fn halving_the_service_time_doubles_a_saturated_server() {
    let x = what_if(
        "queue-theory",
        32,
        40_000,
        "[sweep]\n\"path[2].work.mean_ns\" = [100.0, 50.0]\n",
        "ops_per_sec",
        None,
    );
    assert!(x[1] / x[0] > 1.6, "ops/s with S = 100 ns and 50 ns: {x:?}");
}

#[test]
fn a_four_times_longer_critical_section_keeps_the_spinlock_busier() {
    // 8 threads, 4 us outside the lock: held 150 ns, the lock is busy
    // about 8 x 150 / 4150 = 29% of the time; held 600 ns, most of it.
    let x = what_if(
        "spinlock-scaling",
        8,
        20_000,
        "[sweep]\n\"path[2].work.mean_ns\" = [150.0, 600.0]\n",
        "l.utilisation",
        None,
    );
    assert!(
        x[0] < 0.5 && x[1] / x[0] > 2.0,
        "lock utilisation with a 150 ns and a 600 ns critical section: {x:?}"
    );
}

#[test]
fn less_work_between_counter_updates_raises_the_update_rate() {
    let x = what_if(
        "counter-scaling",
        16,
        20_000,
        "[sweep]\n\"path[1].work.mean_ns\" = [1000.0, 100.0]\n",
        "ops_per_sec",
        None,
    );
    assert!(x[1] / x[0] > 1.1, "ops/s with 1000 ns and 100 ns between inc and dec: {x:?}");
}

#[test]
fn the_extra_counter_pair_every_8th_transaction_adds_increments() {
    // path[22] and path[24] are the roll's dec / inc pair (the old
    // handle's xfs_trans_free, xfs_trans_dup's new handle), run every
    // 64th create inside the AGI hold; they must keep the same period, so
    // they are zipped.
    let x = what_if(
        "xfs-active-trans",
        16,
        200_000,
        "[[sweep.zip]]\n\"path[22].every\" = [64, 8]\n\"path[24].every\" = [64, 8]\n",
        "m_active_trans.inc_per_sec",
        Some("ops_per_sec"),
    );
    // Increments per transaction: 1 + 1/64 against 1 + 1/8.
    assert!((x[0] - (1.0 + 1.0 / 64.0)).abs() < 0.01, "{x:?}");
    assert!((x[1] - (1.0 + 1.0 / 8.0)).abs() < 0.01, "{x:?}");
}

#[test]
fn counting_one_transaction_in_four_cuts_increments_on_four_sockets() {
    // path[0] and path[4] are the transaction's own inc and dec.
    let x = what_if(
        "whatif-case1-4socket",
        32,
        200_000,
        "[[sweep.zip]]\n\"path[0].every\" = [1, 4]\n\"path[4].every\" = [1, 4]\n",
        "m_active_trans.inc_per_sec",
        Some("ops_per_sec"),
    );
    assert!((x[0] - (1.0 + 1.0 / 64.0)).abs() < 0.01, "{x:?}");
    assert!((x[1] - (0.25 + 1.0 / 64.0)).abs() < 0.01, "{x:?}");
}
