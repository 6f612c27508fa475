//! Semantic checks of a resolved document: ranges, references between
//! sections, and that plots and expectations name real variants, swept
//! parameters and metrics.

use super::Variant;
use super::config::Document;
use super::config::{ExpectConfig, MarkConfig, PlotConfig};
use crate::param::ParamError;
use crate::text::closest;
use crate::workload::{MetricSpec, StepAxis, StepScale};

fn fail(field: impl Into<String>, message: impl Into<String>) -> ParamError {
    ParamError::new(field, message)
}

pub use crate::engine::MAX_OPS;

/// The longest simulated time one run may cover, in ms (10^7 ms, about
/// 2.8 simulated hours; far below the u64 picosecond clock's 2^64 ps).
pub const MAX_TIME_MS: f64 = 1e7;

/// The largest `tolerance_pct` an `[[expect]]` may give: 1000 % already
/// accepts anything from 0 to 11 times a positive target.
pub const MAX_TOLERANCE_PCT: f64 = 1000.0;

/// The largest magnitude of an `[[expect]]` bound or target: no metric a
/// run reports comes near 10^18 (runs stop at `MAX_OPS` operations and
/// `MAX_TIME_MS` of simulated time), so a larger bound cannot fail.
pub const MAX_EXPECT_BOUND: f64 = 1e18;

/// A finite expectation bound no larger than [`MAX_EXPECT_BOUND`].
fn bound_ok(x: f64) -> bool {
    x.is_finite() && x.abs() <= MAX_EXPECT_BOUND
}

/// Checks one resolved document.
pub fn validate(doc: &Document) -> Result<(), ParamError> {
    let s = &doc.scenario;
    if let Some(why) = crate::text::file_name_problem(&s.name) {
        return Err(fail("scenario.name", format!("{why} (it names the output folder)")));
    }
    if !s.name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        return Err(fail(
            "scenario.name",
            "expected a non-empty name of letters, digits, '-', '_' or '.' (it names the output folder)",
        ));
    }
    if s.replications == 0 {
        return Err(fail("scenario.replications", "expected an integer >= 1, found 0"));
    }
    if let Some(n) = s.ops
        && !(1..=MAX_OPS).contains(&n)
    {
        return Err(fail(
            "scenario.ops",
            format!("expected a whole number from 1 to {MAX_OPS}, found {n}"),
        ));
    }
    if let Some(t) = s.time_ms
        && !(t.is_finite() && t > 0.0 && t <= MAX_TIME_MS)
    {
        return Err(fail(
            "scenario.time_ms",
            format!("expected a time above 0 and at most {MAX_TIME_MS} ms, found {t}"),
        ));
    }
    if !(doc.machine.wakeup_ns.is_finite() && doc.machine.wakeup_ns >= 0.0) {
        return Err(fail("machine.wakeup_ns", "expected a time >= 0 ns"));
    }
    Ok(())
}

/// What a scenario's runs report, for [`validate_outputs`].
#[derive(Debug, Clone, Copy)]
pub struct Outputs<'a> {
    /// The metrics of a run at the first point.
    pub metrics: &'a [MetricSpec],
    /// Per expectation, the metrics a run priced on its `measured_on`
    /// profile reports (`None`: the run's own).
    pub expect_metrics: &'a [Option<Vec<MetricSpec>>],
    /// The step axes.
    pub axes: &'a [StepAxis],
}

/// Checks `[[plot]]` and `[[expect]]` against the variants, the sweep and
/// the metrics the workload reports (an expectation measured on another
/// host's profile: the metrics a run priced on it reports).
pub fn validate_outputs(
    doc: &Document,
    variants: &[Variant],
    sweep: &[(String, Vec<toml::Value>)],
    labelled: &[String],
    outputs: &Outputs<'_>,
) -> Result<(), ParamError> {
    let known = Known {
        variants: variants.iter().map(|v| v.name.as_str()).collect(),
        params: sweep.iter().map(|(p, _)| p.as_str()).collect(),
        metrics: outputs.metrics.iter().map(|m| m.name.as_str()).collect(),
        axes: outputs.axes,
    };
    for (i, p) in doc.plot.iter().enumerate() {
        check_plot(i, p, &known, sweep, labelled)?;
    }
    check_stems(&doc.plot)?;
    for (i, e) in doc.expect.iter().enumerate() {
        match outputs.expect_metrics.get(i) {
            Some(Some(on)) => {
                let on: Vec<&str> = on.iter().map(|m| m.name.as_str()).collect();
                known_in(format!("expect[{i}].metric"), &e.metric, &on)?;
            }
            _ => known.metric(format!("expect[{i}].metric"), &e.metric)?,
        }
        check_expect(i, e, &known, sweep)?;
    }
    Ok(())
}

/// The names a plot or an expectation may refer to, each check giving
/// the closest valid one when it fails.
struct Known<'a> {
    variants: Vec<&'a str>,
    params: Vec<&'a str>,
    metrics: Vec<&'a str>,
    axes: &'a [StepAxis],
}

/// `m` must be one of `metrics`.
fn known_in(field: String, m: &str, metrics: &[&str]) -> Result<(), ParamError> {
    if metrics.contains(&m) {
        return Ok(());
    }
    Err(fail(field, format!("no metric `{m}`; this workload reports: {}", metrics.join(", "))).suggest(closest(m, metrics.iter().copied())))
}

impl Known<'_> {
    fn metric(&self, field: String, m: &str) -> Result<(), ParamError> {
        known_in(field, m, &self.metrics)
    }

    fn variant(&self, field: String, v: &str) -> Result<(), ParamError> {
        if self.variants.contains(&v) {
            return Ok(());
        }
        let names = &self.variants;
        Err(fail(field, format!("no variant `{v}`; variants are: {}", names.join(", "))).suggest(closest(v, names.iter().copied())))
    }

    fn param(&self, field: String, p: &str) -> Result<(), ParamError> {
        if self.params.contains(&p) {
            return Ok(());
        }
        let params = &self.params;
        Err(fail(field, format!("`{p}` is not a swept parameter; swept: {}", params.join(", ")))
            .suggest(closest(p, params.iter().copied())))
    }

    /// A plot's `x`: a swept parameter or a step axis.
    fn x(&self, field: String, x: &str) -> Result<(), ParamError> {
        if self.params.contains(&x) {
            return Ok(());
        }
        let mut choices: Vec<&str> = self.params.clone();
        choices.extend(self.axes.iter().map(|a| a.name));
        Err(fail(
            field,
            format!(
                "`{x}` is neither a swept parameter nor a step axis; choose one of: {}",
                choices.join(", ")
            ),
        )
        .suggest(closest(x, choices.iter().copied())))
    }
}

/// Checks `[[plot]]` number `i`.
fn check_plot(
    i: usize,
    p: &PlotConfig,
    known: &Known<'_>,
    sweep: &[(String, Vec<toml::Value>)],
    labelled: &[String],
) -> Result<(), ParamError> {
    if let Some(why) = p.name.as_deref().and_then(crate::text::file_name_problem) {
        return Err(fail(
            format!("plot[{i}].name"),
            format!("{why} (it names the plot's .svg and .png)"),
        ));
    }
    check_plot_texts(i, p)?;
    let axis = known.axes.iter().find(|a| a.name == p.x);
    check_plot_kind(i, p, known, axis)?;
    if p.kind != "heatmap" && (p.metric.is_some() || p.ratio.is_some()) {
        return Err(fail(format!("plot[{i}].metric"), "`metric` and `ratio` are for kind = \"heatmap\""));
    }
    if p.kind != "histogram" && p.share {
        return Err(fail(format!("plot[{i}].share"), "`share` is for kind = \"histogram\""));
    }
    check_kind_keys(i, p)?;
    check_x_scale(i, p, sweep)?;
    check_labelled_x(i, p, labelled)?;
    if p.series != "variant" {
        known.param(format!("plot[{i}].series"), &p.series)?;
    }
    for k in p.at.keys() {
        known.param(format!("plot[{i}].at.{k}"), k)?;
    }
    for v in &p.variants {
        known.variant(format!("plot[{i}].variants"), v)?;
    }
    for (j, m) in p.marks.iter().enumerate() {
        check_mark(&format!("plot[{i}].marks[{j}]"), p, m, axis, sweep)?;
        if let Some(v) = &m.variant {
            known.variant(format!("plot[{i}].marks[{j}].variant"), v)?;
        }
    }
    Ok(())
}

/// What plot `i`'s kind needs of its `x`, `y`, `metric` and `ratio`
/// (`axis`: the step axis its `x` names, if it names one).
fn check_plot_kind(i: usize, p: &PlotConfig, known: &Known<'_>, axis: Option<&StepAxis>) -> Result<(), ParamError> {
    match (p.kind.as_str(), axis) {
        ("line" | "bars", Some(a)) => known_value(format!("plot[{i}].y"), a, &p.y),
        ("line" | "bars", None) => {
            known.x(format!("plot[{i}].x"), &p.x)?;
            known.metric(format!("plot[{i}].y"), &p.y)
        }
        ("histogram", Some(a)) if matches!(a.scale, StepScale::Log2 { .. }) => {
            if p.y.is_empty() {
                Ok(())
            } else {
                known_value(format!("plot[{i}].y"), a, &p.y)
            }
        }
        ("histogram", _) => Err(not_a_log2_axis(i, p, known)),
        ("heatmap", _) => check_heatmap(i, p, known),
        ("utilisation", _) => {
            if known.metrics.iter().any(|m| m.ends_with(".utilisation")) {
                return Ok(());
            }
            Err(fail(
                format!("plot[{i}].kind"),
                "`utilisation` plots need a workload that reports LINE.utilisation / LOCK.utilisation (kind `path`)",
            ))
        }
        (other, _) => Err(fail(
            format!("plot[{i}].kind"),
            format!("expected one of {}, found `{other}`", super::config::PLOT_KINDS.join(", ")),
        )
        .suggest(closest(other, super::config::PLOT_KINDS.iter().copied()))),
    }
}

/// The error of histogram `i` whose `x` is not a log2-bucket step axis,
/// naming those the workload reports.
fn not_a_log2_axis(i: usize, p: &PlotConfig, known: &Known<'_>) -> ParamError {
    let log2: Vec<&str> = known
        .axes
        .iter()
        .filter(|a| matches!(a.scale, StepScale::Log2 { .. }))
        .map(|a| a.name)
        .collect();
    let have = if log2.is_empty() {
        "this workload reports none".to_string()
    } else {
        format!("this workload reports: {}", log2.join(", "))
    };
    fail(
        format!("plot[{i}].x"),
        format!("a histogram's `x` is a log2-bucket step axis; {have}"),
    )
    .suggest(closest(&p.x, log2.iter().copied()))
}

/// Heat map `i`: two different swept parameters, the metric that
/// colours it, the variants of its ratio.
fn check_heatmap(i: usize, p: &PlotConfig, known: &Known<'_>) -> Result<(), ParamError> {
    known.param(format!("plot[{i}].x"), &p.x)?;
    known.param(format!("plot[{i}].y"), &p.y)?;
    if p.x == p.y {
        return Err(fail(format!("plot[{i}].y"), "a heat map needs two different swept parameters"));
    }
    let Some(m) = &p.metric else {
        return Err(fail(
            format!("plot[{i}].metric"),
            "a heat map needs `metric`, the value that colours each cell",
        ));
    };
    known.metric(format!("plot[{i}].metric"), m)?;
    if let Some(r) = &p.ratio {
        known.variant(format!("plot[{i}].ratio.of"), &r.of)?;
        known.variant(format!("plot[{i}].ratio.over"), &r.over)?;
    }
    Ok(())
}

/// Checks `[[expect]]` number `i` but its metric: the variants, points
/// and role it names, its reason when it is a known gap, and its bounds.
fn check_expect(i: usize, e: &ExpectConfig, known: &Known<'_>, sweep: &[(String, Vec<toml::Value>)]) -> Result<(), ParamError> {
    if let Some(v) = &e.variant {
        known.variant(format!("expect[{i}].variant"), v)?;
    }
    if let Some(r) = &e.ratio {
        known.variant(format!("expect[{i}].ratio.of"), &r.of)?;
        known.variant(format!("expect[{i}].ratio.over"), &r.over)?;
    }
    for (k, v) in &e.at {
        known.param(format!("expect[{i}].at.{k}"), k)?;
        let listed = sweep.iter().find(|(p, _)| p == k).is_some_and(|(_, vs)| vs.contains(v));
        if !listed {
            return Err(fail(
                format!("expect[{i}].at.{k}"),
                format!("{v} is not one of the values swept for `{k}`"),
            ));
        }
    }
    if let Some(r) = &e.role
        && !matches!(r.as_str(), "fitted" | "predicted")
    {
        return Err(fail(
            format!("expect[{i}].role"),
            format!("expected `fitted` or `predicted`, found `{r}`"),
        ));
    }
    if e.known_gap.as_deref().is_some_and(|w| w.trim().is_empty()) {
        return Err(fail(format!("expect[{i}].known_gap"), "say why the model cannot reach the figure"));
    }
    check_bounds(i, e)
}

/// An expectation's bounds: `within = [lo, hi]`, or `target` with
/// `tolerance_pct`, each able to fail.
fn check_bounds(i: usize, e: &ExpectConfig) -> Result<(), ParamError> {
    match (e.within.as_deref(), e.target, e.tolerance_pct) {
        (Some(&[lo, hi]), None, None) if lo <= hi && bound_ok(lo) && bound_ok(hi) => Ok(()),
        (Some(_), None, None) => Err(fail(
            format!("expect[{i}].within"),
            format!("expected [lo, hi] with lo <= hi, finite and within +-{MAX_EXPECT_BOUND:e} (a check that cannot fail checks nothing)"),
        )),
        (None, Some(target), Some(_)) if !bound_ok(target) => Err(fail(
            format!("expect[{i}].target"),
            format!("expected a finite number within +-{MAX_EXPECT_BOUND:e}, found {target}"),
        )),
        (None, Some(_), Some(t)) if (0.0..=MAX_TOLERANCE_PCT).contains(&t) => Ok(()),
        (None, Some(_), Some(t)) => Err(fail(
            format!("expect[{i}].tolerance_pct"),
            format!("expected a percentage from 0 to {MAX_TOLERANCE_PCT}, found {t} (a check that cannot fail checks nothing)"),
        )),
        _ => Err(fail(
            format!("expect[{i}]"),
            "give either `within = [lo, hi]` or `target` with `tolerance_pct`",
        )),
    }
}

/// `y` must be a value the step axis `a` reports at each step.
fn known_value(field: String, a: &StepAxis, y: &str) -> Result<(), ParamError> {
    let values: Vec<&str> = a.values.iter().map(|v| v.name.as_str()).collect();
    if values.contains(&y) {
        return Ok(());
    }
    Err(fail(
        field,
        format!("step axis `{}` reports at each step: {}; found `{y}`", a.name, values.join(", ")),
    )
    .suggest(closest(y, values.iter().copied())))
}

/// Keys a plot's kind does not read: `top` off `utilisation` plots, and
/// on them `x`, `y` and `x_log` (their x axis is the busiest resources);
/// `top = 0` would show nothing.
fn check_kind_keys(i: usize, p: &super::config::PlotConfig) -> Result<(), ParamError> {
    if p.kind != "utilisation" {
        return match p.top {
            Some(_) => Err(fail(format!("plot[{i}].top"), "`top` is for kind = \"utilisation\"; remove it")),
            None => Ok(()),
        };
    }
    if p.top == Some(0) {
        return Err(fail(format!("plot[{i}].top"), "expected at least 1 line or lock to show, found 0"));
    }
    let unread = [("x", !p.x.is_empty()), ("y", !p.y.is_empty()), ("x_log", p.x_log)];
    match unread.iter().find(|(_, set)| *set) {
        Some((key, _)) => Err(fail(
            format!("plot[{i}].{key}"),
            format!(
                "`{key}` is not read by kind = \"utilisation\" (its x axis is the busiest lines and locks, its y their utilisation); remove it"
            ),
        )),
        None => Ok(()),
    }
}

/// A plot's title and labels are drawn as one line: a control character
/// in them (an ESC sequence) is refused.
fn check_plot_texts(i: usize, p: &PlotConfig) -> Result<(), ParamError> {
    for (key, text) in [("title", &p.title), ("x_label", &p.x_label), ("y_label", &p.y_label)] {
        if let Some(c) = text.as_deref().and_then(|t| t.chars().find(|c| c.is_control())) {
            return Err(fail(
                format!("plot[{i}].{key}"),
                format!(
                    "holds the control character {}: a plot's text is one line of printable characters",
                    c.escape_unicode()
                ),
            ));
        }
    }
    Ok(())
}

/// Two plots must not write the same file: their stems (`name`, or the
/// default from kind and axes, after `/`, `\\` and spaces become `_`)
/// differ.
fn check_stems(plots: &[super::config::PlotConfig]) -> Result<(), ParamError> {
    for (i, p) in plots.iter().enumerate() {
        let stem = p.file_stem();
        if let Some(j) = plots[..i].iter().position(|q| q.file_stem() == stem) {
            let field = if p.name.is_some() {
                format!("plot[{i}].name")
            } else {
                format!("plot[{i}]")
            };
            return Err(fail(
                field,
                format!("plot[{j}] already writes `{stem}.svg`; give each plot a different `name`"),
            ));
        }
    }
    Ok(())
}

/// Checks one reference mark of plot `p` (on step axis `axis`, if its `x`
/// is one): a histogram's mark is a position on the bucketed axis; any
/// other mark sits at a point that gives the plot's `x`, swept values
/// (or step keys) only.
fn check_mark(
    field: &str,
    p: &PlotConfig,
    m: &MarkConfig,
    axis: Option<&StepAxis>,
    sweep: &[(String, Vec<toml::Value>)],
) -> Result<(), ParamError> {
    if !m.value.is_finite() {
        return Err(fail(format!("{field}.value"), "expected a finite number"));
    }
    match p.kind.as_str() {
        "histogram" => {
            if !m.at.is_empty() {
                return Err(fail(
                    format!("{field}.at"),
                    "a histogram's mark is a position on its axis: give `value` (and `variant`), no `at`",
                ));
            }
            if m.value <= 0.0 {
                return Err(fail(format!("{field}.value"), "expected a value above 0 on the log2 axis"));
            }
            return Ok(());
        }
        "line" | "bars" => {}
        _ => {
            return Err(fail(
                field,
                "reference marks are drawn on `line`, `bars` and `histogram` plots only",
            ));
        }
    }
    if !m.at.contains_key(&p.x) {
        return Err(fail(format!("{field}.at"), format!("give the mark's x: `{}` = a swept value", p.x)));
    }
    for (k, v) in &m.at {
        if let Some(a) = axis.filter(|a| a.name == k) {
            if !a.steps.iter().any(|(key, _)| v.as_str() == Some(key)) {
                let keys: Vec<&str> = a.steps.iter().map(|s| s.0.as_str()).collect();
                return Err(fail(
                    format!("{field}.at.{k}"),
                    format!("{v} is not a step of `{k}`; steps: {}", keys.join(", ")),
                ));
            }
            continue;
        }
        let Some((_, vs)) = sweep.iter().find(|(q, _)| q == k) else {
            let params: Vec<&str> = sweep.iter().map(|(q, _)| q.as_str()).collect();
            return Err(fail(
                format!("{field}.at.{k}"),
                format!("`{k}` is not a swept parameter; swept: {}", params.join(", ")),
            )
            .suggest(closest(k, params.iter().copied())));
        };
        if !vs.contains(v) {
            return Err(fail(
                format!("{field}.at.{k}"),
                format!("{v} is not one of the values swept for `{k}`"),
            ));
        }
    }
    Ok(())
}

/// A labelled swept `x` is drawn as categories, one per label, in the
/// order of the list: a log scale cannot apply to it, so asking for one is
/// an error rather than a key silently ignored.
fn check_labelled_x(i: usize, p: &super::config::PlotConfig, labelled: &[String]) -> Result<(), ParamError> {
    if !labelled.contains(&p.x) || !matches!(p.kind.as_str(), "line" | "bars") {
        return Ok(());
    }
    let (field, what) = match p.x_scale.as_deref() {
        Some(s @ ("log" | "log1m")) => (format!("plot[{i}].x_scale"), format!("x_scale = \"{s}\"")),
        _ if p.x_log => (format!("plot[{i}].x_log"), "x_log".to_string()),
        _ => return Ok(()),
    };
    Err(fail(
        field,
        format!(
            "`{}` is shown by its labels, one category per value in the order of its list, so {what} cannot apply; remove it, or the axis's labels",
            p.x
        ),
    ))
}

/// `x_scale` is `linear`, `log` or `log1m`; `log1m` (a log axis of
/// `1 - x`) needs a line or bar plot over a swept number below 1.
fn check_x_scale(i: usize, p: &super::config::PlotConfig, sweep: &[(String, Vec<toml::Value>)]) -> Result<(), ParamError> {
    const SCALES: &[&str] = &["linear", "log", "log1m"];
    let Some(scale) = p.x_scale.as_deref() else { return Ok(()) };
    let field = format!("plot[{i}].x_scale");
    if !SCALES.contains(&scale) {
        return Err(
            fail(field, format!("expected one of {}, found `{scale}`", SCALES.join(", "))).suggest(closest(scale, SCALES.iter().copied()))
        );
    }
    if scale == "log1m" {
        if !matches!(p.kind.as_str(), "line" | "bars") {
            return Err(fail(field, "`log1m` is for line and bar plots over a swept parameter"));
        }
        let values = sweep
            .iter()
            .find(|(path, _)| *path == p.x)
            .map(|(_, v)| v.as_slice())
            .unwrap_or_default();
        let below_one = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|n| n as f64)).is_some_and(|x| x < 1.0);
        if let Some(bad) = values.iter().find(|v| !below_one(v)) {
            return Err(fail(
                field,
                format!(
                    "`log1m` plots 1 - x on a log axis, so every x must be a number below 1; `{}` takes {bad}",
                    p.x
                ),
            ));
        }
    }
    Ok(())
}
