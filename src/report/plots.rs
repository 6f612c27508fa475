//! Builds figures from `[[plot]]` blocks and the summary rows: line plots
//! and grouped bars of a metric against a swept parameter (with reference
//! marks for published figures), heat maps over two swept parameters, and
//! the busiest lines and locks per variant; along a workload's step axis
//! (phases, log2 histograms) see [`super::steps`].

use super::plot::{Figure, HeatPanel, HeatSpec, PlotPoint, PlotSpec, RefMark, Series};
use super::stats::{Summary, find};
use crate::scenario::Scenario;
use crate::scenario::config::PlotConfig;
pub use crate::scenario::sweep::short_value;

/// Resources shown by a `utilisation` plot unless `top` says otherwise.
const DEFAULT_TOP: usize = 8;

/// The file stem of a plot.
pub fn stem(p: &PlotConfig) -> String {
    p.file_stem()
}

/// The small print of every plot: scenario name, seed and fsmeta version
/// (no date, so outputs stay byte-identical).
pub fn footer(s: &Scenario) -> String {
    format!(
        "{} · seed {} · {} replication(s) · fsmeta {}",
        s.doc.scenario.name,
        s.doc.scenario.seed,
        s.doc.scenario.replications,
        env!("CARGO_PKG_VERSION")
    )
}

fn index_of(s: &Scenario, param: &str) -> Option<usize> {
    s.sweep.iter().position(|(p, _)| p == param)
}

fn matches(s: &Scenario, at: &toml::Table, point: usize) -> bool {
    at.iter()
        .all(|(k, v)| index_of(s, k).is_some_and(|i| &s.points[point].values[i] == v))
}

/// A default axis label with a unit, from a metric or parameter name.
pub fn label(name: &str) -> String {
    let unit = if name.ends_with("_per_sec") {
        " (per second)"
    } else if name.ends_with("_ns") {
        " (ns)"
    } else if name.ends_with("_us") {
        " (µs)"
    } else if name.ends_with("_ms") {
        " (ms)"
    } else if name.ends_with("utilisation") {
        " (fraction busy)"
    } else {
        ""
    };
    format!("{name}{unit}")
}

/// A metric's axis label: its name and the unit its workload declares
/// (`ops_per_sec (ops/s)`), else [`label`]'s guess from the name.
pub fn metric_label(s: &Scenario, name: &str) -> String {
    match super::text::unit_of(s, name).as_str() {
        "" => label(name),
        "count" => name.to_string(),
        unit => format!("{name} ({unit})"),
    }
}

/// `title` with the slice `at` selects (`threads=4`, or the value's label
/// where its axis has labels), unless the title already shows every value
/// of it: two slices of one sweep never share a title.
pub fn sliced_title(s: &Scenario, title: String, at: &toml::Table) -> String {
    if at.is_empty() {
        return title;
    }
    let parts: Vec<(String, String)> = at
        .iter()
        .map(|(k, v)| {
            let shown = index_of(s, k).map_or_else(|| short_value(v), |i| s.shown(i, v));
            (k.rsplit('.').next().unwrap_or(k).to_string(), shown)
        })
        .collect();
    if parts.iter().all(|(_, v)| title.contains(v.as_str())) {
        return title;
    }
    let slice: Vec<String> = parts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{title} (at {})", slice.join(", "))
}

/// The figure a `[[plot]]` block asks for.
pub fn figure(s: &Scenario, p: &PlotConfig, rows: &[Summary]) -> Figure {
    let mut fig = figure_of(s, p, rows);
    match &mut fig {
        Figure::Chart(c) => c.title = sliced_title(s, std::mem::take(&mut c.title), &p.at),
        Figure::Heat(h) => h.title = sliced_title(s, std::mem::take(&mut h.title), &p.at),
        Figure::Hist(h) => h.title = sliced_title(s, std::mem::take(&mut h.title), &p.at),
    }
    fig
}

fn figure_of(s: &Scenario, p: &PlotConfig, rows: &[Summary]) -> Figure {
    let axis = || super::steps::axis(s, &p.x);
    match p.kind.as_str() {
        "heatmap" => Figure::Heat(heat(s, p, rows)),
        "utilisation" => Figure::Chart(utilisation(s, p, rows)),
        "histogram" => Figure::Hist(axis().map(|a| super::steps::histogram(s, p, &a, rows)).unwrap_or_default()),
        _ => match axis() {
            Some(a) => Figure::Chart(super::steps::spec(s, p, &a, rows)),
            None => Figure::Chart(spec(s, p, rows)),
        },
    }
}

/// The variants a plot shows, by index.
fn shown_variants(s: &Scenario, p: &PlotConfig) -> Vec<usize> {
    (0..s.variants.len())
        .filter(|&v| p.variants.is_empty() || p.variants.contains(&s.variants[v].name))
        .collect()
}

/// A line plot or grouped bars: x from the swept parameter, one series per
/// variant or per value of the `series` parameter.
pub fn spec(s: &Scenario, p: &PlotConfig, rows: &[Summary]) -> PlotSpec {
    let bars = p.kind == "bars";
    let xi = index_of(s, &p.x).unwrap_or(0);
    let values: Vec<toml::Value> = s.sweep.get(xi).map(|(_, vs)| vs.clone()).unwrap_or_default();
    let numeric = values.iter().all(|v| v.is_integer() || v.is_float());
    // A labelled axis is drawn as categories named by its labels.
    let categories: Option<Vec<String>> = (bars || !numeric || s.is_labelled(xi)).then(|| values.iter().map(|v| s.shown(xi, v)).collect());
    // `log1m`: 1 - x on a log axis, so levels near 1 spread out.
    let log1m = p.x_scale.as_deref() == Some("log1m") && categories.is_none();
    let x_of = |v: &toml::Value| -> f64 {
        let x = match (v, &categories) {
            (_, Some(_)) => values.iter().position(|w| w == v).unwrap_or(0) as f64,
            (toml::Value::Integer(i), None) => *i as f64,
            (toml::Value::Float(f), None) => *f,
            _ => 0.0,
        };
        if log1m { 1.0 - x } else { x }
    };
    let mut series: Vec<Series> = Vec::new();
    let variants = shown_variants(s, p);
    for point in (0..s.points.len()).filter(|&pt| matches(s, &p.at, pt)) {
        for &v in &variants {
            let Some(r) = find(rows, point, v, &p.y) else { continue };
            let name = series_name(s, p, point, v, variants.len());
            let pt = PlotPoint {
                x: x_of(&s.points[point].values[xi]),
                y: r.mean,
                lo: r.ci95_lo,
                hi: r.ci95_hi,
            };
            match series.iter_mut().find(|se| se.name == name) {
                Some(se) => se.points.push(pt),
                None => series.push(Series { name, points: vec![pt] }),
            }
        }
    }
    for se in &mut series {
        se.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    let refs = ref_marks(p, &series, |v| Some(x_of(v)));
    PlotSpec {
        title: p
            .title
            .clone()
            .unwrap_or_else(|| format!("{}: {} vs {}", s.doc.scenario.name, p.y, p.x)),
        x_label: p.x_label.clone().unwrap_or_else(|| {
            if log1m {
                format!("1 - {} (log scale)", label(&p.x))
            } else {
                label(&p.x)
            }
        }),
        y_label: p.y_label.clone().unwrap_or_else(|| metric_label(s, &p.y)),
        x_log: p.x_log || log1m || p.x_scale.as_deref() == Some("log"),
        y_log: p.y_log,
        x_categories: categories,
        series,
        bars,
        refs,
        footer: footer(s),
    }
}

/// The legend name of variant `v` at `point`: the variant, or the value
/// of the `series` parameter (with the variant when several are shown).
fn series_name(s: &Scenario, p: &PlotConfig, point: usize, v: usize, shown: usize) -> String {
    if p.series == "variant" {
        return s.variants[v].name.clone();
    }
    let si = index_of(s, &p.series).unwrap_or(0);
    let tag = format!("{}={}", p.series.rsplit('.').next().unwrap_or(&p.series), s.shown_at(si, point));
    if shown > 1 { format!("{} {tag}", s.variants[v].name) } else { tag }
}

/// The plot's published marks (`[[plot.mark]]`) placed on its x axis:
/// `x_of` maps a mark's `at` value of the x parameter to a position (marks
/// without one, or off the axis, are left out); a mark naming a variant is
/// tied to that variant's series (its colour).
pub(super) fn ref_marks(p: &PlotConfig, series: &[Series], x_of: impl Fn(&toml::Value) -> Option<f64>) -> Vec<RefMark> {
    p.marks
        .iter()
        .filter_map(|m| {
            let x = x_of(m.at.get(&p.x)?)?;
            let series = m.variant.as_ref().and_then(|v| series.iter().position(|se| se.name == *v));
            Some(RefMark {
                x,
                y: m.value,
                series,
                label: m.label.clone(),
            })
        })
        .collect()
}

/// The busiest lines and locks at the first point `at` selects: the `top`
/// resources by their highest utilisation over the variants shown, as
/// grouped bars (one bar per variant).
pub fn utilisation(s: &Scenario, p: &PlotConfig, rows: &[Summary]) -> PlotSpec {
    let point = (0..s.points.len()).find(|&pt| matches(s, &p.at, pt)).unwrap_or(0);
    let variants = shown_variants(s, p);
    let mut busiest: Vec<(String, f64)> = Vec::new();
    for r in rows.iter().filter(|r| r.point == point && variants.contains(&r.variant)) {
        let Some(name) = r.metric.strip_suffix(".utilisation") else {
            continue;
        };
        match busiest.iter_mut().find(|b| b.0 == name) {
            Some(b) => b.1 = b.1.max(r.mean),
            None => busiest.push((name.to_string(), r.mean)),
        }
    }
    busiest.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    busiest.truncate(p.top.unwrap_or(DEFAULT_TOP).max(1));
    let series = variants
        .iter()
        .map(|&v| Series {
            name: s.variants[v].name.clone(),
            points: busiest
                .iter()
                .enumerate()
                .filter_map(|(i, (name, _))| {
                    let r = find(rows, point, v, &format!("{name}.utilisation"))?;
                    Some(PlotPoint {
                        x: i as f64,
                        y: r.mean,
                        lo: r.ci95_lo,
                        hi: r.ci95_hi,
                    })
                })
                .collect(),
        })
        .collect();
    let at = super::compare::short_point(s, point);
    PlotSpec {
        title: p.title.clone().unwrap_or_else(|| {
            if at.is_empty() {
                format!("{}: busiest lines and locks", s.doc.scenario.name)
            } else {
                format!("{}: busiest lines and locks at {at}", s.doc.scenario.name)
            }
        }),
        x_label: p.x_label.clone().unwrap_or_else(|| "cache line or lock".into()),
        y_label: p.y_label.clone().unwrap_or_else(|| "utilisation (fraction of time busy)".into()),
        x_log: false,
        y_log: p.y_log,
        x_categories: Some(busiest.into_iter().map(|b| b.0).collect()),
        series,
        bars: true,
        refs: Vec::new(),
        footer: footer(s),
    }
}

/// A heat map of `metric` over the swept `x` and `y`: one panel per
/// variant shown, or one panel of the ratio `of / over`. Other swept
/// parameters are fixed by `at` (else the first point found is used).
pub fn heat(s: &Scenario, p: &PlotConfig, rows: &[Summary]) -> HeatSpec {
    let metric = p.metric.clone().unwrap_or_default();
    let axis = |param: &str| -> (usize, Vec<toml::Value>) {
        let i = index_of(s, param).unwrap_or(0);
        (i, s.sweep.get(i).map(|(_, vs)| vs.clone()).unwrap_or_default())
    };
    let ((xi, xs), (yi, ys)) = (axis(&p.x), axis(&p.y));
    let cell_point = |x: &toml::Value, y: &toml::Value| {
        (0..s.points.len()).find(|&pt| {
            let vals = &s.points[pt].values;
            vals.get(xi) == Some(x) && vals.get(yi) == Some(y) && matches(s, &p.at, pt)
        })
    };
    let mean = |pt: Option<usize>, v: usize| pt.and_then(|pt| find(rows, pt, v, &metric)).map_or(f64::NAN, |r| r.mean);
    let grid = |f: &dyn Fn(Option<usize>) -> f64| -> Vec<Vec<f64>> {
        ys.iter().map(|y| xs.iter().map(|x| f(cell_point(x, y))).collect()).collect()
    };
    let variant = |name: &str| s.variants.iter().position(|v| v.name == name);
    let (panels, value_label) = match &p.ratio {
        Some(r) => {
            let (a, b) = (variant(&r.of).unwrap_or(0), variant(&r.over).unwrap_or(0));
            let values = grid(&|pt| mean(pt, a) / mean(pt, b));
            let name = format!("{} / {}", r.of, r.over);
            (vec![HeatPanel { name, values }], format!("{metric}, {} over {}", r.of, r.over))
        }
        None => {
            let panels = shown_variants(s, p)
                .into_iter()
                .map(|v| HeatPanel {
                    name: s.variants[v].name.clone(),
                    values: grid(&|pt| mean(pt, v)),
                })
                .collect();
            (panels, metric_label(s, &metric))
        }
    };
    HeatSpec {
        title: p
            .title
            .clone()
            .unwrap_or_else(|| format!("{}: {metric} by {} and {}", s.doc.scenario.name, p.x, p.y)),
        x_label: p.x_label.clone().unwrap_or_else(|| label(&p.x)),
        y_label: p.y_label.clone().unwrap_or_else(|| metric_label(s, &p.y)),
        x_ticks: xs.iter().map(|v| s.shown(xi, v)).collect(),
        y_ticks: ys.iter().map(|v| s.shown(yi, v)).collect(),
        value_label,
        panels,
        footer: footer(s),
    }
}

#[cfg(test)]
mod tests {
    use super::sliced_title;
    use crate::scenario::{LoadOptions, Scenario, load_str};

    /// A `path` study sweeping threads and a labelled work mean.
    fn scenario() -> Scenario {
        let text = r#"
[scenario]
name = "t"
ops = 100
[machine]
profile = "ideal"
[workload]
kind = "path"
[[path]]
work = { dist = "fixed", mean_ns = 200.0 }
[sweep]
"workload.threads" = [1, 4]
"path[0].work.mean_ns" = { values = [100.0, 200.0], labels = ["short", "long"] }
"#;
        load_str(std::path::Path::new("t.toml"), text, &LoadOptions::default()).expect("loads")
    }

    #[test]
    fn a_sliced_plot_names_its_slice() {
        let s = scenario();
        let at: toml::Table = toml::from_str("\"workload.threads\" = 4\n\"machine.profile\" = \"machines/host-a.toml\"").expect("toml");
        let t = sliced_title(&s, "creates/s".into(), &at);
        assert!(
            t.starts_with("creates/s (at ") && t.contains("threads=4") && t.contains("profile=host-a"),
            "{t}"
        );
        assert_eq!(sliced_title(&s, "host-a, 4 threads".into(), &at), "host-a, 4 threads");
        assert_eq!(sliced_title(&s, "all".into(), &toml::Table::new()), "all");
        // A labelled axis's slice is named by its label.
        let at: toml::Table = toml::from_str("\"path[0].work.mean_ns\" = 200.0").expect("toml");
        assert_eq!(sliced_title(&s, "rate".into(), &at), "rate (at mean_ns=long)");
    }

    #[test]
    fn a_heat_map_names_its_labelled_ticks_and_its_metric_unit() {
        let s = scenario();
        let p: crate::scenario::config::PlotConfig =
            toml::from_str("kind = \"heatmap\"\nx = \"path[0].work.mean_ns\"\ny = \"workload.threads\"\nmetric = \"ops_per_sec\"")
                .expect("plot");
        let h = super::heat(&s, &p, &[]);
        assert_eq!(h.x_ticks, ["short", "long"]);
        assert_eq!(h.y_ticks, ["1", "4"]);
        assert_eq!(h.value_label, super::metric_label(&s, "ops_per_sec"));
        assert!(h.value_label.contains("ops/s"), "{}", h.value_label);
    }
}
