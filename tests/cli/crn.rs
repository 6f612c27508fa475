//! Common random numbers: variants of one point and replication draw the
//! same random numbers, so a comparison between them carries no sampling
//! noise of its own.

use fsmeta::report::stats::{mean_ci, summarise};
use fsmeta::{LoadOptions, Study};
use std::path::Path;

const RANDOM_DELETES: &str = r#"[scenario]
name = "crn"
replications = 6

[workload]
kind = "btrfs-dir"

[btrfs_dir]
files = 3000
delete_fraction = 0.3

[[variant]]
name = "sequential"
btrfs_dir.strategy = "sequential"

[[variant]]
name = "leaf-match"
btrfs_dir.strategy = "leaf-match"

[[variant]]
name = "sequential-again"
btrfs_dir.strategy = "sequential"
"#;

#[test]
fn variants_see_the_same_deletions_and_identical_variants_give_identical_metrics() {
    let study = Study::from_text(Path::new("crn.toml"), RANDOM_DELETES, &LoadOptions::default()).expect("loads");
    let r = study.run(2, &|| {}).expect("runs");
    let reps = 6;
    for rep in 0..reps {
        let (a, b, c) = (&r.runs[rep].metrics, &r.runs[reps + rep].metrics, &r.runs[2 * reps + rep].metrics);
        assert_eq!(a["files_deleted"], b["files_deleted"], "replication {rep}: same deletion set");
        assert_eq!(a, c, "replication {rep}: variants equal but for the name give equal metrics");
    }
    let seq: Vec<f64> = r.runs[..reps].iter().map(|x| x.metrics["files_deleted"]).collect();
    assert!(seq.windows(2).any(|w| w[0] != w[1]), "replications differ: {seq:?}");
}

#[test]
fn the_paired_ci_is_narrower_than_the_unpaired_one() {
    let study = Study::from_text(Path::new("crn.toml"), RANDOM_DELETES, &LoadOptions::default()).expect("loads");
    let r = study.run(2, &|| {}).expect("runs");
    let rows = summarise(&study.scenario, &r.runs);
    let metric = "delete_delayed_us";
    let get = |v: usize| rows.iter().find(|x| x.variant == v && x.metric == metric).expect("row");
    let (first, second) = (get(0), get(1));
    let paired = second.paired.expect("paired against the first variant");
    let paired_half = (paired.diff_hi - paired.diff_lo) / 2.0;
    // Unpaired: the CI of a difference of two independent means.
    let xs = |v: usize| -> Vec<f64> { r.runs.iter().filter(|x| x.plan.variant == v).map(|x| x.metrics[metric]).collect() };
    let (h0, h1) = (mean_ci(&xs(0), 0.95).2, mean_ci(&xs(1), 0.95).2);
    let unpaired_half = (h0 * h0 + h1 * h1).sqrt();
    assert!(
        paired_half < unpaired_half / 2.0,
        "paired {paired_half} vs unpaired {unpaired_half}"
    );
    assert!((paired.diff_mean - (second.mean - first.mean)).abs() < 1e-6 * first.mean.abs().max(1.0));
}
