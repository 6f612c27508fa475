//! `fsmeta lab --pool`: sets of one experiment joined into one.

use fsmeta::lab::pool::pool;
use std::path::{Path, PathBuf};

/// A set as `fsmeta lab` writes it: lab.txt, runs.csv (values of `le`'s
/// `alloc_us_p50`), summary.csv, and one trace file named `trace`.
fn set(root: &Path, name: &str, params: &str, values: &[f64], trace: &str) -> PathBuf {
    let dir = root.join(name).join("lab-xfs-alloc");
    std::fs::create_dir_all(&dir).unwrap();
    let lab = format!(
        "experiment: xfs-alloc\ntwin: scenarios/lab/xfs-alloc.toml\ncpu model: family 25 model 17\nparameters: {params}\nruns: {} (each on a fresh filesystem)\nwall time: 3.0 s\nload average at the start: 0.50 0.40 0.30 1/80 7\nsetup: mount\n",
        values.len()
    );
    std::fs::write(dir.join("lab.txt"), lab).unwrap();
    let mut runs = String::from("scenario,variant,replication,seed,alloc_us_p50\n");
    for (i, v) in values.iter().enumerate() {
        runs += &format!("lab-xfs-alloc,le,{i},{i},{v}\n");
    }
    std::fs::write(dir.join("runs.csv"), runs).unwrap();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    std::fs::write(
        dir.join("summary.csv"),
        format!("scenario,variant,metric,mean,stddev,ci95_lo,ci95_hi,n,diff_vs_first,diff_ci95_lo,diff_ci95_hi,ratio_vs_first\nlab-xfs-alloc,le,alloc_us_p50,{mean},0,,,{},,,,\n", values.len()),
    )
    .unwrap();
    std::fs::write(dir.join("trace.txt"), trace).unwrap();
    dir
}

#[test]
fn sets_of_one_setup_pool_into_one_and_others_are_refused() {
    let root = std::env::temp_dir().join(format!("fsmeta-pool-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let a = set(&root, "a", "extents=10000", &[7.4, 10.5, 7.5], "first");
    let b = set(&root, "b", "extents=10000", &[11.0, 7.3], "second");
    let out = root.join("out");
    let (run, head) = pool(&[a.clone(), b.clone()], &out).expect("pooled");
    assert_eq!(run.variants, ["le"]);
    let vals: Vec<f64> = run.runs[0].iter().map(|m| m["alloc_us_p50"]).collect();
    assert_eq!(vals, [7.4, 10.5, 7.5, 11.0, 7.3]);
    assert!(head.contains("runs: 5 (2 sets of 3 + 2 runs"), "{head}");
    assert!(head.contains("wall time: 3.0 s / 3.0 s (the sets)"), "{head}");
    assert!(head.contains("load average at the start: 0.50 / 0.50"), "{head}");
    assert!(head.contains("setup: mount"), "{head}");
    // Sets without a line transfer (older runs) give the pool none.
    assert!(!head.contains("line transfer:"), "{head}");
    // The last set's own files come along; the CSVs are remade.
    assert_eq!(run.files, [("trace.txt".to_string(), b"second".to_vec())]);
    // Written, its summary is over all five runs.
    let (dir, _) = fsmeta::lab::output::write_with(&run, &out, &head).expect("written");
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert!(
        summary.contains("lab-xfs-alloc,le,alloc_us_p50,8.7") && summary.contains(",5,"),
        "{summary}"
    );
    assert!(
        std::fs::read_to_string(dir.join("lab.txt"))
            .unwrap()
            .starts_with("experiment: xfs-alloc\n")
    );
    // Another setup is refused, naming the line that differs; one set is
    // no pool.
    let c = set(&root, "c", "extents=100000", &[9.0], "third");
    let err = pool(&[a.clone(), c], &out).expect_err("other parameters").to_string();
    assert!(err.contains("parameters:") && err.contains("extents=100000"), "{err}");
    assert!(pool(std::slice::from_ref(&a), &out).is_err());
    // No run is counted twice: the same set twice, a pooled set, or the
    // folder the pool would replace.
    let err = pool(&[a.clone(), a.clone()], &out).expect_err("twice").to_string();
    assert!(err.contains("given twice"), "{err}");
    let err = pool(&[a.clone(), dir.clone()], &root.join("elsewhere"))
        .expect_err("pooled")
        .to_string();
    assert!(err.contains("a pooled set"), "{err}");
    let err = pool(&[a.clone(), b.clone()], &root.join("a")).expect_err("own set").to_string();
    assert!(err.contains("would replace one of its own sets"), "{err}");
    // Another kernel is another setup.
    let k = set(&root, "k", "extents=10000", &[9.0], "fourth");
    let txt = std::fs::read_to_string(k.join("lab.txt")).unwrap();
    std::fs::write(k.join("lab.txt"), txt + "kernel: Linux 6.1\n").unwrap();
    let err = pool(&[a.clone(), k], &out).expect_err("other kernel").to_string();
    assert!(err.contains("kernel:"), "{err}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_pool_gives_the_lowest_and_highest_line_transfer_of_its_sets() {
    let root = std::env::temp_dir().join(format!("fsmeta-pool-transfer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let with = |name: &str, line: &str| {
        let dir = set(&root, name, "extents=10000", &[7.0, 8.0], name);
        let txt = std::fs::read_to_string(dir.join("lab.txt")).unwrap();
        std::fs::write(dir.join("lab.txt"), format!("{txt}{line}")).unwrap();
        dir
    };
    // The first set's vCPUs were apart, the second's were SMT siblings at
    // the start: the pool's two figures are 7.85 and 70.10, so a profile
    // that priced either placement alone is warned about.
    let a = with("a", "line transfer: 66.00 70.10 (CPU 0 <-> CPU 1, ...)\n");
    let b = with("b", "line transfer: 7.85 63.57 (CPU 0 <-> CPU 1, ...)\n");
    let (_, head) = pool(&[a.clone(), b], &root.join("out")).expect("pooled");
    let line = head.lines().find(|l| l.starts_with("line transfer:")).expect("a transfer line");
    assert!(line.starts_with("line transfer: 7.85 70.10 ("), "{line}");
    assert!(line.contains("66.00 / 70.10, 7.85 / 63.57"), "{line}");
    // A set that did not measure it: the pool says so, with no figures.
    let c = with("c", "line transfer: not measured: CPU 1 is offline\n");
    let (_, head) = pool(&[a, c], &root.join("out2")).expect("pooled");
    let line = head.lines().find(|l| l.starts_with("line transfer:")).expect("a transfer line");
    assert!(line.starts_with("line transfer: not measured in every set"), "{line}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_pool_says_which_of_its_sets_were_sampled() {
    let root = std::env::temp_dir().join(format!("fsmeta-pool-sampled-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let a = set(&root, "a", "extents=10000", &[7.4, 7.5], "first");
    let b = set(&root, "b", "extents=10000", &[7.3], "second");
    let lab = b.join("lab.txt");
    let text = std::fs::read_to_string(&lab).unwrap() + "setup: sampled: perf record -e cpu-clock -c 50000 -a -g\n";
    std::fs::write(&lab, text).unwrap();
    let (_, head) = pool(&[a.clone(), b.clone()], &root.join("out")).expect("pooled");
    assert!(head.contains("setup: sampled: set(s) 2 of 2"), "{head}");
    // The first set's own sampled line (naming its files) is not kept:
    // the pool's line says which sets were sampled.
    let (_, head) = pool(&[b.clone(), a.clone()], &root.join("out3")).expect("pooled");
    assert!(head.contains("setup: sampled: set(s) 1 of 2"), "{head}");
    assert!(!head.contains("-c 50000"), "{head}");
    let c = set(&root, "c", "extents=10000", &[7.2], "third");
    let (_, head) = pool(&[a, c], &root.join("out2")).expect("pooled");
    assert!(!head.contains("sampled"), "{head}");
    let _ = std::fs::remove_dir_all(&root);
}
