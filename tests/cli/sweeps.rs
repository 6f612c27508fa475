//! Sweeps for real what-ifs: zipped lists, `threads = "all"`, partial
//! topology overrides and a NUMA distance matrix.

use fsmeta::{LoadOptions, Study};

const BASE: &str = r#"[scenario]
name = "w"
ops = 20000

[machine]
profile = "machines/scaling-1s.toml"

[workload]
kind = "path"
threads = "all"

[lines.hot]

[[path]]
atomic = "hot"
"#;

fn study(text: &str) -> Study {
    match Study::from_text(&super::root().join("scenarios/w.toml"), text, &LoadOptions::default()) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn a_partial_topology_override_and_threads_all_follow_the_point() {
    let text = format!("{BASE}\n[sweep]\n\"machine.topology.sockets\" = [1, 2]\n\"machine.topology.cores_per_socket\" = [4]\n");
    let s = study(&text);
    let r = s.run(2, &|| {}).expect("runs");
    let cross = |i: usize| r.runs[i].metrics["hot.transfers_cross_socket"];
    assert_eq!(cross(0), 0.0, "one socket: no cross-socket transfers");
    assert!(cross(1) > 0.0, "two sockets of 4 cores, 8 threads: cross-socket transfers");
}

#[test]
fn zipped_lists_advance_together() {
    let text = format!(
        "{}\n[[sweep.zip]]\n\"machine.profile\" = [\"machines/scaling-1s.toml\", \"machines/scaling-2s.toml\"]\n\"workload.threads\" = [2, 4]\n",
        BASE.replace("threads = \"all\"", "threads = 1")
    );
    let s = study(&text);
    assert_eq!(s.scenario.points.len(), 2, "zipped: 2 points, not 4");
    let threads: Vec<String> = s.scenario.points.iter().map(|p| p.values[1].to_string()).collect();
    assert_eq!(threads, ["2", "4"]);
    let bad = format!("{BASE}\n[[sweep.zip]]\n\"machine.placement\" = [\"spread\", \"compact\"]\n\"scenario.ops\" = [1000]\n");
    let e = Study::from_text(&super::root().join("scenarios/w.toml"), &bad, &LoadOptions::default()).expect_err("unequal");
    assert!(e.to_string().contains("same length") && e.location.is_some(), "{e}");
}

#[test]
fn a_numa_distance_matrix_prices_each_pair_of_sockets() {
    // Two threads interleaved over sockets 0 and 1 ping-pong one line: the
    // rate is 1 / (transfer between sockets 0 and 1), whatever the others.
    let dir = super::temp_dir("numa");
    let profile = std::fs::read_to_string(super::root().join("scenarios/machines/scaling-4s.toml")).expect("profile");
    let scenario = BASE
        .replace("machines/scaling-1s.toml", "numa.toml")
        .replace("threads = \"all\"", "threads = 2")
        .replace("[machine]", "[machine]\nplacement = \"interleave\"");
    let rate = |d01: f64| -> f64 {
        let matrix = format!(
            "socket_distance_ns = [[0, {d01}, 300, 300], [{d01}, 0, 300, 300], [300, 300, 0, 108], [300, 300, 108, 0]]\n\n[topology]"
        );
        std::fs::write(dir.join("numa.toml"), profile.replace("[topology]", &matrix)).expect("write");
        let s = Study::from_text(&dir.join("w.toml"), &scenario, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        s.run(1, &|| {}).expect("runs").runs[0].metrics["ops_per_sec"]
    };
    let ratio = rate(108.0) / rate(300.0);
    assert!(
        (ratio / (300.0 / 108.0) - 1.0).abs() < 0.1,
        "rate scales with the pair's distance: {ratio}"
    );
    std::fs::write(
        dir.join("numa.toml"),
        profile.replace("[topology]", "socket_distance_ns = [[0, 1], [1, 0]]\n[topology]"),
    )
    .expect("write");
    let e = Study::from_text(&dir.join("w.toml"), &scenario, &LoadOptions::default()).expect_err("not 4 x 4");
    assert!(e.to_string().contains("4 x 4 matrix"), "{e}");
}

/// A check holds one point at a time (issue 33: 10^6 points held 5.6 GB):
/// with `check_only` every point is validated, only the first is kept,
/// and the counts are those of the full load. A bad value at the last
/// point is still found.
#[test]
fn a_check_keeps_one_point_and_counts_them_all_issue33() {
    let values: Vec<String> = (0..2_000).map(|i| format!("{}.0", 100 + i)).collect();
    let text = format!(
        "{}\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n\n[sweep]\n\"path[0].work.mean_ns\" = [{}]\n",
        BASE.replace(
            "atomic = \"hot\"",
            "work = { dist = \"exp\", mean_ns = 1.0 }\n[[path]]\natomic = \"hot\""
        )
        .replace("ops = 20000", "ops = 20000\nreplications = 3"),
        values.join(", ")
    );
    let file = super::root().join("scenarios/w.toml");
    let check = LoadOptions {
        check_only: true,
        ..LoadOptions::default()
    };
    let full = study(&text);
    let checked = Study::from_text(&file, &text, &check).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(checked.scenario.points.len(), 1, "one point held");
    assert_eq!(full.scenario.points.len(), 2_000);
    for s in [&full.scenario, &checked.scenario] {
        assert_eq!(s.point_count, 2_000);
        assert_eq!(s.run_count, full.plan().len() as u64);
        assert_eq!(s.run_count, 2_000 * 2 * 3);
    }
    let bad = text.replace("2099.0]", "-1.0]");
    assert_ne!(bad, text);
    let e = Study::from_text(&file, &bad, &check)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("path[0].work.mean_ns") && e.contains("-1"), "{e}");
}

/// `check` validates every point but the first without keeping it or
/// writing its resolved text (issue 33): it must accept and refuse
/// exactly what a full load does, with the same message, whether the bad
/// value is in a shared section (read at every point) or in the
/// workload's (the shared sections read once per variant).
#[test]
fn a_check_refuses_what_a_full_load_refuses_issue33() {
    let two = "\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nmachine.topology.sockets = 2\n";
    let base = BASE.replace(
        "atomic = \"hot\"",
        "work = { dist = \"exp\", mean_ns = 1.0 }\n[[path]]\natomic = \"hot\"",
    );
    let cases = [
        format!("{base}{two}\n[sweep]\n\"path[0].work.mean_ns\" = [1.0, 2.0, -1.0]\n"),
        format!("{base}{two}\n[sweep]\n\"path[0].work.mean_ns\" = [1.0, 2.0, 3]\n"),
        format!("{base}\n[sweep]\n\"machine.topology.sockets\" = [1, 2, 0]\n"),
        format!("{base}\n[sweep]\n\"machine.topology.cores_per_socket\" = [4, 8, 100000]\n"),
        format!("{base}{two}\n[sweep]\n\"scenario.ops\" = [10, 20, 0]\n"),
        format!("{base}\n[sweep]\n\"path[0].work.dist\" = [\"exp\", \"fixed\", \"uniform\"]\n"),
        format!("{base}\n[sweep]\n\"path[0].work\" = [{{ dist = \"fixed\", mean_ns = 2.0 }}, {{ dist = \"exp\" }}]\n"),
        format!("{base}{two}\n[sweep]\n\"path[0].work.mean_ns\" = [1.0, 2.0]\n\"workload.threads\" = [1, 2, 9]\n"),
    ];
    let file = super::root().join("scenarios/w.toml");
    let check = LoadOptions {
        check_only: true,
        ..LoadOptions::default()
    };
    let (mut refused, mut accepted) = (0, 0);
    for text in &cases {
        let full = Study::from_text(&file, text, &LoadOptions::default());
        let checked = Study::from_text(&file, text, &check);
        match (full, checked) {
            (Err(f), Err(c)) => {
                assert_eq!(f.to_string(), c.to_string(), "{text}");
                refused += 1;
            }
            (Ok(f), Ok(c)) => {
                assert_eq!(f.scenario.run_count, c.scenario.run_count, "{text}");
                accepted += 1;
            }
            (f, c) => panic!(
                "full load {:?}, check {:?}:\n{text}",
                f.err().map(|e| e.to_string()),
                c.err().map(|e| e.to_string())
            ),
        }
    }
    assert!(refused >= 5 && accepted >= 1, "{refused} refused, {accepted} accepted");
}

/// Every shipped scenario plans the same runs when checked as when
/// loaded whole.
#[test]
fn a_check_of_every_shipped_scenario_counts_what_a_full_load_plans() {
    let check = LoadOptions {
        check_only: true,
        ..LoadOptions::default()
    };
    let mut files = Vec::new();
    for dir in ["scenarios", "scenarios/lab"] {
        let d = super::root().join(dir);
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        files.extend(
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml")),
        );
    }
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    for file in &files {
        let full = Study::load(file, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let checked = Study::load(file, &check).unwrap_or_else(|e| panic!("{e}"));
        let s = (&full.scenario, &checked.scenario);
        assert_eq!(
            (s.0.point_count, s.0.run_count),
            (s.1.point_count, s.1.run_count),
            "{}",
            file.display()
        );
    }
}
