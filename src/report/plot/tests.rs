//! Tests of the plot renderers: content, determinism, PNG output and
//! robustness against any values a caller can pass.

use super::*;
use proptest::prelude::*;

/// A point whose CI is `y * (1 -+ rel)`.
fn pt(x: f64, y: f64, rel: f64) -> PlotPoint {
    PlotPoint {
        x,
        y,
        lo: y * (1.0 - rel),
        hi: y * (1.0 + rel),
    }
}

/// Creates/s against cores for two counter variants: the kind of plot the
/// m_active_trans case produces (values made up for the picture).
pub(super) fn example_spec() -> PlotSpec {
    let cores = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
    let atomic = [310e3, 560e3, 820e3, 930e3, 880e3, 760e3, 640e3];
    let percpu = [320e3, 630e3, 1.2e6, 2.1e6, 3.3e6, 4.4e6, 5.0e6];
    let series = |name: &str, ys: &[f64], rel: f64| Series {
        name: name.to_string(),
        points: cores.iter().zip(ys).map(|(&x, &y)| pt(x, y, rel)).collect(),
    };
    PlotSpec {
        title: "m_active_trans: creates/s vs cores (16-way create, 95% CI)".into(),
        x_label: "cores per socket".into(),
        y_label: "creates/s".into(),
        x_log: false,
        y_log: false,
        x_categories: None,
        series: vec![series("atomic", &atomic, 0.04), series("percpu batch=32", &percpu, 0.03)],
        ..Default::default()
    }
}

/// Per-operation latency over filesystems, log y, categorical x, with a
/// zero and a NaN that must be skipped.
pub(super) fn categorical_log_spec() -> PlotSpec {
    let fs = ["ext4", "xfs", "btrfs", "tmpfs"];
    let ops: [(&str, [f64; 4]); 3] = [
        ("create", [2_400.0, 3_100.0, 9_800.0, 650.0]),
        ("unlink", [1_900.0, 2_700.0, 14_500.0, 0.0]),
        ("rename", [5_200.0, 4_100.0, 31_000.0, f64::NAN]),
    ];
    let series = ops
        .iter()
        .map(|(name, ys)| Series {
            name: (*name).to_string(),
            points: ys.iter().enumerate().map(|(i, &y)| pt(i as f64, y, 0.15)).collect(),
        })
        .collect();
    PlotSpec {
        title: "Metadata op latency by filesystem (log scale)".into(),
        x_label: "filesystem".into(),
        y_label: "latency per op (ns)".into(),
        x_log: false,
        y_log: true,
        x_categories: Some(fs.iter().map(|s| s.to_string()).collect()),
        series,
        ..Default::default()
    }
}

/// The contents of every `<text>` element of an SVG document, trimmed.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = t.split_once('>')?.1;
            Some(body.split_once("</text>")?.0.trim().to_string())
        })
        .collect()
}

#[test]
fn svg_has_title_labels_and_series_names() {
    let svg = render_svg(&example_spec()).unwrap_or_default();
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("font-family=\"DejaVu Sans\""));
    let texts = svg_texts(&svg);
    for text in [
        "m_active_trans: creates/s vs cores (16-way create, 95% CI)",
        "cores per socket",
        "creates/s",
        "atomic",
        "percpu batch=32",
        "0",
        "1M",
        "5M",
        "60",
    ] {
        assert!(texts.iter().any(|t| t == text), "missing {text} in {texts:?}");
    }
}

#[test]
fn categorical_svg_shows_category_names_and_log_ticks() {
    let svg = render_svg(&categorical_log_spec()).unwrap_or_default();
    let texts = svg_texts(&svg);
    for text in ["ext4", "xfs", "btrfs", "tmpfs", "500", "1k", "2k", "10k", "20k"] {
        assert!(texts.iter().any(|t| t == text), "missing {text} in {texts:?}");
    }
}

#[test]
fn svg_is_deterministic() {
    let a = render_svg(&example_spec()).ok();
    let b = render_svg(&example_spec()).ok();
    assert!(a.is_some());
    assert_eq!(a, b);
}

#[test]
fn png_has_signature_and_real_content() {
    let dir = std::env::temp_dir().join(format!("fsmeta-plot-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_default();
    let path = dir.join("t.png");
    assert!(render_png(&example_spec(), &path).is_ok());
    let bytes = std::fs::read(&path).unwrap_or_default();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(bytes.len() > 10_000, "only {} bytes", bytes.len());
    assert!(!dir.join("t.tmp.png").exists());
    std::fs::remove_dir_all(&dir).unwrap_or_default();
}

#[test]
fn png_path_must_end_in_png() {
    let err = render_png(&example_spec(), Path::new("/tmp/x.svg"));
    assert!(matches!(err, Err(PlotError::NotPng { .. })));
}

#[test]
fn edge_cases_render() {
    let mut spec = example_spec();
    spec.series.clear();
    assert!(render_svg(&spec).is_ok());
    spec.series = vec![Series {
        name: "one".into(),
        points: vec![pt(3.0, 7.0, 0.0)],
    }];
    assert!(render_svg(&spec).is_ok());
    spec.series[0].points = vec![pt(1.0, 5.0, 0.0), pt(2.0, 5.0, 0.0)];
    spec.x_log = true;
    spec.y_log = true;
    assert!(render_svg(&spec).is_ok());
    spec.x_categories = Some(vec![]);
    assert!(render_svg(&spec).is_ok());
}

#[test]
fn bar_values_keep_three_significant_digits() {
    use super::draw::bar_value;
    assert_eq!(bar_value(0.0452), "0.0452");
    assert_eq!(bar_value(7.8213), "7.82");
    assert_eq!(bar_value(96.75), "96.8");
    assert_eq!(bar_value(1001.0), "1001");
    assert_eq!(bar_value(0.0), "0");
    assert_eq!(bar_value(1.8), "1.8");
}

/// Any f64, with non-finite and extreme values over-represented.
fn any_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        -1e6..1e6f64,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
    ]
}

fn any_point() -> impl Strategy<Value = PlotPoint> {
    (any_value(), any_value(), any_value(), any_value()).prop_map(|(x, y, lo, hi)| PlotPoint { x, y, lo, hi })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn never_panics_on_any_values(
        series in prop::collection::vec(prop::collection::vec(any_point(), 0..6), 0..4),
        x_log: bool,
        y_log: bool,
        categories in prop::option::of(0usize..5),
    ) {
        let spec = PlotSpec {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_log,
            y_log,
            x_categories: categories.map(|n| (0..n).map(|i| format!("c{i}")).collect()),
            series: series
                .into_iter()
                .enumerate()
                .map(|(i, points)| Series { name: format!("s{i}"), points })
                .collect(),
            ..Default::default()
        };
        let svg = render_svg(&spec);
        prop_assert!(svg.is_ok());
        prop_assert!(!svg.unwrap_or_default().contains("NaN"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]
    #[test]
    fn png_never_panics_on_any_values(
        points in prop::collection::vec(any_point(), 0..8),
        y_log: bool,
    ) {
        let spec = PlotSpec {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_log: false,
            y_log,
            x_categories: None,
            series: vec![Series { name: "s".into(), points }],
            ..Default::default()
        };
        let dir = std::env::temp_dir().join(format!("fsmeta-plot-prop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        prop_assert!(render_png(&spec, &dir.join("p.png")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap_or_default();
    }
}

/// Writes the example plots next to the crate for a person to look at;
/// run with `cargo test -- --ignored write_examples`.
#[test]
#[ignore]
fn write_examples() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(render_png(&example_spec(), &dir.join("example.png")).is_ok());
    assert!(render_png(&categorical_log_spec(), &dir.join("example_log_categories.png")).is_ok());
    let svg = render_svg(&example_spec()).unwrap_or_default();
    assert!(std::fs::write(dir.join("example.svg"), svg).is_ok());
}

/// Many long category names, which must not overlap.
pub(super) fn long_categories_spec() -> PlotSpec {
    let names: Vec<String> = (0..10).map(|i| format!("dir-{}k-entries-hashed", (i + 1) * 100)).collect();
    PlotSpec {
        title: "Lookups per create vs directory size".into(),
        x_label: "directory".into(),
        y_label: "btree nodes visited per create".into(),
        x_log: false,
        y_log: false,
        x_categories: Some(names),
        series: vec![Series {
            name: "xfs dir2 node".into(),
            points: (0..10).map(|i| pt(f64::from(i), 3.0 + f64::from(i) * 0.4, 0.05)).collect(),
        }],
        ..Default::default()
    }
}

#[test]
#[ignore]
fn write_long_categories_example() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = dir.join("example_long_categories.png");
    assert!(render_png(&long_categories_spec(), &path).is_ok());
    let svg = render_svg(&long_categories_spec()).unwrap_or_default();
    assert!(std::fs::write(dir.join("example_long_categories.svg"), svg).is_ok());
}
