//! Issue 34: every result file read back through the typed model
//! (`fsmeta::report::model`) equals what was written, for hostile names
//! (commas, quotes, newlines, unicode) and every `f64` (NaN and the
//! infinities are `NaN`, `inf`, `-inf` in CSV, `null` in JSON), and the
//! files a run writes read back to the same bytes.

use super::{run_golden, temp_dir};
use fsmeta::report::model::{
    ModelError, Num, PairedCells, RunRow, RunsTable, SUMMARY_JSON_FORMAT, SUMMARY_JSON_VERSION, SummaryJson, SummaryJsonRow, SummaryRow,
    SummaryTable,
};
use proptest::prelude::*;

/// Names and values as hostile as text gets: separators, quotes, line
/// ends, unicode, spaces at the ends (a swept path is never one of the
/// fixed column names, which the header is split on).
fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z_.]{1,12}", "[ ,\"\n\r'a-zé√🦀]{0,10}", any::<String>(),]
}

fn param() -> impl Strategy<Value = String> {
    text().prop_filter("not a fixed column", |s| {
        !["scenario", "variant", "replication", "seed", "metric"].contains(&s.as_str())
    })
}

fn num() -> impl Strategy<Value = Num> {
    prop_oneof![
        any::<f64>(),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0)
    ]
    .prop_map(Num)
}

/// Equal as numbers read back: the same bits, or both NaN.
fn same(a: Num, b: Num) -> bool {
    a.0.to_bits() == b.0.to_bits() || (a.0.is_nan() && b.0.is_nan())
}

fn same_opt(a: Option<Num>, b: Option<Num>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same(a, b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

fn runs_table() -> impl Strategy<Value = RunsTable> {
    (prop::collection::vec(param(), 0..3), prop::collection::vec(text(), 0..4)).prop_flat_map(|(params, metrics)| {
        let (k, m) = (params.len(), metrics.len());
        let row = (
            text(),
            text(),
            prop::collection::vec(text(), k),
            any::<u32>(),
            any::<u64>(),
            prop::collection::vec(prop::option::of(num()), m),
        )
            .prop_map(|(scenario, variant, point, replication, seed, metrics)| RunRow {
                scenario,
                variant,
                point,
                replication,
                seed,
                metrics,
            });
        prop::collection::vec(row, 0..5).prop_map(move |rows| RunsTable {
            params: params.clone(),
            metrics: metrics.clone(),
            rows,
        })
    })
}

fn summary_table() -> impl Strategy<Value = SummaryTable> {
    prop::collection::vec(param(), 0..3).prop_flat_map(|params| {
        let k = params.len();
        let paired = (
            prop::option::of(num()),
            prop::option::of(num()),
            prop::option::of(num()),
            prop::option::of(num()),
        )
            .prop_map(|(diff, diff_lo, diff_hi, ratio)| PairedCells {
                diff,
                diff_lo,
                diff_hi,
                ratio,
            });
        let row = (
            text(),
            text(),
            prop::collection::vec(text(), k),
            text(),
            num(),
            num(),
            prop::option::of(num()),
            prop::option::of(num()),
            any::<usize>(),
            paired,
        )
            .prop_map(
                |(scenario, variant, point, metric, mean, stddev, ci95_lo, ci95_hi, n, paired)| SummaryRow {
                    scenario,
                    variant,
                    point,
                    metric,
                    mean,
                    stddev,
                    ci95_lo,
                    ci95_hi,
                    n,
                    paired,
                },
            );
        prop::collection::vec(row, 0..5).prop_map(move |rows| SummaryTable {
            params: params.clone(),
            rows,
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn runs_csv_reads_back_to_what_was_written(t in runs_table()) {
        let text = t.to_csv().expect("writes");
        let back = RunsTable::from_csv(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back.params, &t.params);
        prop_assert_eq!(&back.metrics, &t.metrics);
        prop_assert_eq!(back.rows.len(), t.rows.len());
        for (a, b) in back.rows.iter().zip(&t.rows) {
            prop_assert_eq!((&a.scenario, &a.variant, &a.point, a.replication, a.seed), (&b.scenario, &b.variant, &b.point, b.replication, b.seed));
            prop_assert!(a.metrics.iter().zip(&b.metrics).all(|(x, y)| same_opt(*x, *y)), "{:?} / {:?}", a.metrics, b.metrics);
        }
        prop_assert_eq!(back.to_csv().expect("writes"), text);
    }

    #[test]
    fn summary_csv_reads_back_to_what_was_written(t in summary_table()) {
        let text = t.to_csv().expect("writes");
        let back = SummaryTable::from_csv(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back.params, &t.params);
        prop_assert_eq!(back.rows.len(), t.rows.len());
        for (a, b) in back.rows.iter().zip(&t.rows) {
            prop_assert_eq!((&a.scenario, &a.variant, &a.point, &a.metric, a.n), (&b.scenario, &b.variant, &b.point, &b.metric, b.n));
            prop_assert!(same(a.mean, b.mean) && same(a.stddev, b.stddev) && same_opt(a.ci95_lo, b.ci95_lo) && same_opt(a.ci95_hi, b.ci95_hi));
            let (p, q) = (a.paired, b.paired);
            prop_assert!(same_opt(p.diff, q.diff) && same_opt(p.diff_lo, q.diff_lo) && same_opt(p.diff_hi, q.diff_hi) && same_opt(p.ratio, q.ratio));
        }
        prop_assert_eq!(back.to_csv().expect("writes"), text);
    }

    #[test]
    fn summary_json_reads_back_to_what_was_written(
        rows in prop::collection::vec((text(), prop::collection::btree_map(text(), text(), 0..3), text(), prop::option::of(-1e300f64..1e300), any::<u64>()), 0..5),
        scenario in text(),
        seed in any::<u64>(),
    ) {
        let doc = SummaryJson {
            format: SUMMARY_JSON_FORMAT.into(),
            version: SUMMARY_JSON_VERSION,
            scenario,
            seed,
            rows: rows.into_iter().map(|(variant, point, metric, x, n)| SummaryJsonRow {
                variant, point, metric, mean: x, stddev: x.map(f64::abs), ci95_lo: x, ci95_hi: None, n: n as usize,
            }).collect(),
        };
        let text = doc.to_json().expect("writes");
        prop_assert_eq!(SummaryJson::from_json(&text).expect("reads"), doc);
    }
}

#[test]
fn non_finite_numbers_are_written_as_stated() {
    let row = |x: f64| SummaryRow {
        scenario: "s".into(),
        variant: "v".into(),
        point: vec![],
        metric: "m".into(),
        mean: Num(x),
        stddev: Num(0.0),
        ci95_lo: Some(Num(1e-7)),
        ci95_hi: Some(Num(1e21)),
        n: 1,
        paired: PairedCells {
            diff: None,
            diff_lo: None,
            diff_hi: None,
            ratio: Some(Num(f64::INFINITY)),
        },
    };
    let t = SummaryTable {
        params: vec![],
        rows: vec![row(f64::NAN), row(f64::NEG_INFINITY)],
    };
    let text = t.to_csv().expect("writes");
    let mut lines = text.lines().skip(1);
    // Rust's shortest round-trip text, never an exponent; NaN and the
    // infinities as Rust writes them.
    assert_eq!(lines.next(), Some("s,v,m,NaN,0,0.0000001,1000000000000000000000,1,,,,inf"));
    assert_eq!(lines.next(), Some("s,v,m,-inf,0,0.0000001,1000000000000000000000,1,,,,inf"));
    let doc = SummaryJson {
        format: SUMMARY_JSON_FORMAT.into(),
        version: SUMMARY_JSON_VERSION,
        scenario: "s".into(),
        seed: 1,
        rows: vec![SummaryJsonRow {
            variant: "v".into(),
            point: Default::default(),
            metric: "m".into(),
            mean: None,
            stddev: Some(0.5),
            ci95_lo: None,
            ci95_hi: None,
            n: 1,
        }],
    };
    assert!(doc.to_json().expect("writes").contains("\"mean\": null"));
}

#[test]
fn result_files_of_another_version_or_shape_are_refused_not_misread() {
    let e = SummaryJson::from_json("{\"format\": \"fsmeta-summary\", \"version\": 1, \"rows\": []}").expect_err("old");
    assert_eq!(
        e.to_string(),
        "format \"fsmeta-summary\" version 1, this fsmeta reads \"fsmeta-summary\" version 2"
    );
    let e = SummaryJson::from_json("{\"scenario\": \"x\", \"seed\": 1, \"rows\": [\n").expect_err("no version");
    assert!(
        matches!(e, ModelError::Version { .. }) || matches!(e, ModelError::Json { .. }),
        "{e}"
    );
    let e = RunsTable::from_csv("scenario,variant,seed\n").expect_err("no replication");
    assert!(e.to_string().contains("no `replication` column"), "{e}");
    let e = RunsTable::from_csv("scenario,variant,replication,seed,ops\ns,v,x,1,2\n").expect_err("bad number");
    assert!(e.to_string().starts_with("line 2:"), "{e}");
    let e = SummaryTable::from_csv("scenario,variant,metric,mean\n").expect_err("short header");
    assert!(e.to_string().contains("expected the header to end"), "{e}");
    let e = RunsTable::from_csv("scenario,variant,replication,seed,ops\ns,v,1,2\n").expect_err("short row");
    assert!(e.to_string().starts_with("line 2:"), "{e}");
}

/// The files a run writes, read back through the model and written
/// again, are the same bytes.
#[test]
fn the_files_a_run_writes_read_back_to_the_same_bytes() {
    let dir = run_golden(&temp_dir("files-model"));
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect(f);
    let runs = read("runs.csv");
    let t = RunsTable::from_csv(&runs).expect("runs.csv reads");
    assert!(!t.rows.is_empty() && !t.metrics.is_empty());
    assert_eq!(t.to_csv().expect("writes"), runs);
    let summary = read("summary.csv");
    let t = SummaryTable::from_csv(&summary).expect("summary.csv reads");
    assert!(t.rows.iter().any(|r| r.paired.ratio.is_some()), "paired columns present");
    assert_eq!(t.to_csv().expect("writes"), summary);
    let json = read("summary.json");
    let doc = SummaryJson::from_json(&json).expect("summary.json reads");
    assert_eq!(doc.rows.len(), t.rows.len());
    assert_eq!(doc.to_json().expect("writes"), json);
}
