//! Scenario files: TOML text -> a validated [`Scenario`] whose every run
//! point is a fully resolved [`config::Document`].
//!
//! Two stages: the text is parsed into typed structs with
//! unknown keys denied (syntax, type and unknown-key errors carry toml's
//! span); then every point of the sweep grid and every variant is resolved
//! by applying overrides to the parsed table and checked by
//! [`validate::validate`]. Errors found in the second stage are traced back
//! to the override or base key that produced them, so they still name a
//! line and column.

pub mod applied;
mod checks;
mod cli_sets;
pub mod config;
pub mod error;
mod hidden;
pub mod labels;
pub mod meaning;
pub mod names;
pub mod overrides;
mod point;
pub mod reference;
pub mod resolved;
pub mod schema;
mod shape;
pub mod source;
pub mod spans;
pub mod sweep;
pub mod validate;

use crate::param::ParamError;
use crate::workload::registry::{self, REGISTRY};
use crate::workload::{Prepared, Sections, Workload};
use checks::{apply_quick, check_overrides, check_run_count, check_variants_vs_sweep, quick_sets, variants};
use config::{Document, SHARED_SECTIONS};
use error::Location;
pub use error::ScenarioError;
use overrides::set_path;
use spans::SpanIndex;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toml::Spanned;
use toml::de::DeTable;

/// How a scenario is loaded.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Apply the scenario's `[scenario.quick]` overrides.
    pub quick: bool,
    /// `--set PATH=VALUE` values, applied over the file's base document
    /// (after quick), checked as the file's keys are.
    pub sets: Vec<(String, toml::Value)>,
    /// Replace the scenario's seed.
    pub seed: Option<u64>,
    /// The workloads `workload.kind` may name (default: the built-in
    /// [`REGISTRY`]).
    pub registry: &'static [&'static dyn Workload],
    /// The most runs (points x variants x replications) a scenario may
    /// plan (default [`DEFAULT_MAX_RUNS`]).
    pub max_runs: u64,
    /// The memory the runs in flight may be estimated to need together,
    /// in bytes (default: half of this machine's RAM): a point whose one
    /// run needs more is refused, and the runner keeps the runs in flight
    /// within it.
    pub max_memory_bytes: u64,
    /// Validate every point and variant, but keep only the first point
    /// in [`Scenario::points`] (`fsmeta check`): the memory a check holds
    /// no longer grows with the number of points (issue 33: 10^6 points
    /// held 5.6 GB). [`Scenario::point_count`] and [`Scenario::run_count`]
    /// still count them all.
    pub check_only: bool,
}

/// Default cap on the runs of one scenario.
pub const DEFAULT_MAX_RUNS: u64 = 100_000;

/// Half of this machine's RAM (from `/proc/meminfo`), or 8 GiB when unknown.
pub fn default_max_memory() -> u64 {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
    });
    total_kib.map_or(8 << 30, |k| k.saturating_mul(1024) / 2)
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            quick: false,
            sets: Vec::new(),
            seed: None,
            registry: REGISTRY,
            max_runs: DEFAULT_MAX_RUNS,
            max_memory_bytes: default_max_memory(),
            check_only: false,
        }
    }
}

/// A variant: a name and the overrides it applies.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The variant's name.
    pub name: String,
    /// Its overrides, as a table to merge over the base.
    pub overrides: toml::Table,
}

/// One resolved (point, variant): the shared sections and the workload
/// prepared from its own sections.
#[derive(Debug, Clone)]
pub struct Config {
    /// The shared sections, every default filled.
    pub doc: Document,
    /// The workload, validated and ready to run.
    pub prepared: Arc<dyn Prepared>,
    /// Every parameter the variant and the sweep set here, with the value
    /// read back from this run's resolved document (variant keys first).
    pub applied: Vec<(String, toml::Value)>,
    /// This point's resolved document (every default filled, no sweep,
    /// variants, plots or expectations), as TOML text that loads again.
    pub resolved_toml: String,
}

/// One point of the sweep grid: the swept values and, per variant, the
/// resolved configuration.
#[derive(Debug, Clone)]
pub struct Point {
    /// Values of the swept parameters, in [`Scenario::sweep`] order.
    pub values: Vec<toml::Value>,
    /// The step of each swept parameter (the index of its value in its
    /// list), in [`Scenario::sweep`] order.
    pub steps: Vec<usize>,
    /// The resolved configuration for each variant, in variant order.
    pub configs: Vec<Config>,
}

/// A loaded, validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The scenario file.
    pub file: PathBuf,
    /// Its directory (relative paths inside it resolve from here).
    pub dir: PathBuf,
    /// The base document (after quick-mode and seed overrides).
    pub doc: Document,
    /// The workload `workload.kind` names.
    pub workload: &'static dyn Workload,
    /// The base document with every default filled, as TOML text.
    pub resolved_toml: String,
    /// The variants, in declaration order (one called `base` if none).
    pub variants: Vec<Variant>,
    /// Swept parameter paths and their values, in grid order: plain
    /// lists sorted by path, then the `[[sweep.zip]]` groups.
    pub sweep: Vec<(String, Vec<toml::Value>)>,
    /// The axes of the grid (a plain list, or a `[[sweep.zip]]` group),
    /// with their labels; their parameters, in order, are [`Self::sweep`].
    pub axes: Vec<sweep::Axis>,
    /// Every point of the grid, first parameter slowest (only the first
    /// when loaded with [`LoadOptions::check_only`]).
    pub points: Vec<Point>,
    /// The number of points of the grid, all validated.
    pub point_count: u64,
    /// The number of runs the plan has (points x variants x each
    /// variant's replications).
    pub run_count: u64,
    /// Where each key of the file is, for errors found while running.
    pub spans: SpanIndex,
    /// The most memory the runs in flight may be estimated to need
    /// together, bytes (`--max-memory`; [`LoadOptions::max_memory_bytes`]):
    /// the runner starts no run that would take them over it.
    pub memory_budget: u64,
}

impl Scenario {
    /// The prepared workload of the first point and variant (its metric
    /// schema and key metrics hold for every point).
    pub fn first(&self) -> Option<&Arc<dyn Prepared>> {
        self.points.first().and_then(|p| p.configs.first()).map(|c| &c.prepared)
    }

    /// Where `key` (or its nearest enclosing key) is in the scenario file.
    pub fn locate(&self, key: &str) -> Option<Location> {
        self.spans.locate(&self.file, key)
    }
}

struct Ctx<'a> {
    file: &'a Path,
    spans: SpanIndex,
    /// The `--set` values: an error on a value one of them set names it.
    sets: &'a [(String, toml::Value)],
}

impl Ctx<'_> {
    /// Where `path` is written, else (a missing section or key that the
    /// workload requires) the `workload.kind` that requires it, else the
    /// top of the file.
    fn place(&self, path: &str) -> Location {
        self.spans
            .locate(self.file, path)
            .or_else(|| self.spans.locate(self.file, "workload.kind"))
            .unwrap_or_else(|| self.spans.location(self.file, 0))
    }

    fn error_at(&self, path: &str, field: &str, message: String, suggestion: Option<String>) -> ScenarioError {
        // A `--set` value has no place in the file: the error names it.
        let set = path.starts_with(cli_sets::AT);
        ScenarioError {
            location: (!set).then(|| self.place(path)),
            file: self.file.to_path_buf(),
            field: if set { path.to_string() } else { field.to_string() },
            message,
            suggestion,
        }
    }

    fn toml_error(&self, e: &toml::de::Error) -> ScenarioError {
        let p = ParamError::from_toml("", e);
        self.param_error(p)
    }

    /// A parameter error that carries a span (from the text itself).
    fn param_error(&self, e: ParamError) -> ScenarioError {
        let offset = e.span.as_ref().map_or(0, |s| s.start);
        let field = if e.span.is_some() {
            self.spans.path_at(offset).unwrap_or(e.field)
        } else {
            e.field
        };
        // A misspelt key is suggested with its full path (`workload.threads`).
        let suggestion = match (&e.span, e.suggestion) {
            (Some(_), Some(sug)) if e.message.starts_with("unknown field") => match field.rsplit_once('.') {
                Some((parent, _)) => Some(format!("{parent}.{sug}")),
                None => Some(sug),
            },
            (_, sug) => sug,
        };
        ScenarioError {
            location: Some(match e.span {
                Some(s) => self.spans.location_span(self.file, s),
                None => self.place(&field),
            }),
            file: self.file.to_path_buf(),
            field,
            message: e.message,
            suggestion,
        }
    }
}

/// Reads, parses and validates a scenario file.
pub fn load(file: &Path, opts: &LoadOptions) -> Result<Scenario, ScenarioError> {
    let text = source::read_scenario(file)?;
    load_str(file, &text, opts)
}

/// Splits a document table into its shared sections and the rest (the
/// workload's sections).
fn split(table: &toml::Table) -> (toml::Table, toml::Table) {
    let (shared, rest): (Vec<_>, Vec<_>) = table.iter().partition(|(k, _)| SHARED_SECTIONS.contains(&k.as_str()));
    let own = |v: Vec<(&String, &toml::Value)>| v.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    (own(shared), own(rest))
}

/// Every top-level key must be a shared section or a section of the
/// scenario's workload.
fn check_top_level(ctx: &Ctx<'_>, table: &toml::Table, opts: &LoadOptions, workload: &dyn Workload) -> Result<(), ScenarioError> {
    for key in table.keys() {
        if SHARED_SECTIONS.contains(&key.as_str()) || workload.sections().contains(&key.as_str()) {
            continue;
        }
        if let Some(owner) = registry::owner_of(opts.registry, key) {
            let message = format!(
                "`[{key}]` is read by workload `{}`, not by this scenario's `{}`",
                owner.kind(),
                workload.kind()
            );
            return Err(ctx.error_at(key, key, message, None));
        }
        let mut known: Vec<&str> = SHARED_SECTIONS.to_vec();
        known.extend(workload.sections());
        let message = format!("unknown section `{key}`; sections are: {}", known.join(", "));
        return Err(ctx.error_at(key, key, message, crate::text::closest(key, known.iter().copied())));
    }
    Ok(())
}

/// Parses the shared sections from the text (errors keep their spans).
fn parse_shared(ctx: &Ctx<'_>, de: &Spanned<DeTable<'_>>) -> Result<Document, ScenarioError> {
    let mut table = DeTable::new();
    for (k, v) in de.get_ref().iter() {
        if SHARED_SECTIONS.contains(&k.get_ref().as_ref()) {
            table.insert(k.clone(), v.clone());
        }
    }
    let shared = Spanned::new(de.span(), table);
    let deser = toml::de::Deserializer::from(shared);
    serde::Deserialize::deserialize(deser).map_err(|e: toml::de::Error| ctx.toml_error(&e))
}

/// Parses and validates scenario `text` as if read from `file`.
pub fn load_str(file: &Path, text: &str, opts: &LoadOptions) -> Result<Scenario, ScenarioError> {
    let parsed = DeTable::parse(text);
    let ctx = Ctx {
        file,
        spans: SpanIndex::of(text, parsed.as_ref().ok().map(|d| d.get_ref())),
        sets: &opts.sets,
    };
    let de = parsed.map_err(|e| ctx.toml_error(&e))?;
    let mut base: toml::Table = toml::from_str(text).map_err(|e| ctx.toml_error(&e))?;
    let parsed = parse_shared(&ctx, &de)?;
    let workload = registry::find(opts.registry, &parsed.workload.kind).map_err(|e| ctx.param_error(e))?;
    check_top_level(&ctx, &base, opts, workload)?;
    shape::arrays_for_tables(&ctx, &base, workload)?;
    workload.resolved_toml(&Sections::Text(&de)).map_err(|e| ctx.param_error(e))?;
    meaning::check_base(&base, workload).map_err(|e| ctx.param_error(e))?;
    // The sweep's axes as written (quick may change them).
    let written_axes = check_overrides(&ctx, &parsed, &base, workload, opts.registry)?;
    // The base as written, before quick replaces some of its values.
    let full_base = opts.quick.then(|| base.clone());
    if opts.quick {
        // The values quick replaces are checked as written (issue 33).
        validate::validate(&parsed).map_err(|e| locate(&ctx, &[], false, e))?;
        apply_quick(&ctx, &parsed, &mut base)?;
    }
    cli_sets::apply(&ctx, &opts.sets, &mut base)?;
    if let Some(seed) = opts.seed {
        let seed =
            i64::try_from(seed).map_err(|_| ctx.error_at("scenario.seed", "scenario.seed", "--seed must be below 2^63".into(), None))?;
        set_path(&mut base, "scenario.seed", toml::Value::Integer(seed)).ok();
    }
    let doc = resolve(&ctx, &base, &[], None)?.0;
    let resolved_toml = resolved::resolved_text(&doc, workload, &split(&base).1).map_err(|e| locate(&ctx, &[], opts.quick, e))?;
    if opts.quick {
        applied::read_back(&resolved_toml, &quick_sets(&parsed)).map_err(|(at, path, m)| ctx.error_at(&at, &path, m, None))?;
    }
    if !opts.sets.is_empty() {
        applied::read_back(&resolved_toml, &cli_sets::as_sets(&opts.sets)).map_err(|(at, path, m)| ctx.error_at(&at, &path, m, None))?;
    }
    let variants = variants(&ctx, &doc)?;
    let axes = match opts.quick {
        true => sweep::axes(base.get("sweep")).map_err(|e| ctx.error_at(&e.at, &e.at, e.message, e.suggestion))?,
        false => written_axes,
    };
    let swept = sweep::flatten(&axes);
    check_variants_vs_sweep(&ctx, &variants, &swept)?;
    let swept_paths: Vec<String> = swept.iter().map(|(p, _, _)| p.clone()).collect();
    cli_sets::not_hidden(&ctx, &opts.sets, &swept_paths, &variants)?;
    let sweep: Vec<(String, Vec<toml::Value>)> = swept.iter().map(|(p, _, v)| (p.clone(), v.clone())).collect();
    let dir = file.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    check_run_count(&ctx, &doc, &variants, &axes, opts)?;
    let machines = crate::machine::MachineCache::default();
    let hidden = hidden::Hidden {
        base: &base,
        variants: &variants,
        axes: &axes,
        swept: &swept,
        workload,
        dir: &dir,
        machines: &machines,
        quick: opts.quick,
    };
    hidden::base_hidden_by_the_sweep(&ctx, &hidden)?;
    if let Some(full) = &full_base {
        hidden::base_hidden_by_quick(&ctx, full, &hidden)?;
    }
    // Each point resolves a copy of the base: without the sweep's lists,
    // which no point reads (a copy holding them made `check` quadratic in
    // a list's length, issue 33).
    let mut point_base = base.clone();
    // Nor the scenario-wide lists, which a point's document drops
    // ([`point::point_doc`]) and nothing may override.
    for key in ["sweep", "variant", "plot", "expect"] {
        point_base.remove(key);
    }
    let here = point::Here {
        ctx: &ctx,
        base: &point_base,
        swept: &swept,
        workload,
        machines: &machines,
        dir: &dir,
        opts,
        docs: point::Here::shared_docs(&swept),
    };
    let (points, point_count, run_count) = here.points(&variants, &axes)?;
    let first = points.first().and_then(|p| p.configs.first());
    let metrics = first.map(|c| c.prepared.metrics()).unwrap_or_default();
    let step_axes = first.map(|c| c.prepared.step_axes()).unwrap_or_default();
    let labelled = sweep::labelled(&axes);
    let on_metrics = expect_metrics(&ctx, &doc, &dir, first)?;
    let outputs = validate::Outputs {
        metrics: &metrics,
        expect_metrics: &on_metrics,
        axes: &step_axes,
    };
    validate::validate_outputs(&doc, &variants, &sweep, &labelled, &outputs).map_err(|e| locate(&ctx, &[], false, e))?;
    Ok(Scenario {
        file: file.to_path_buf(),
        dir,
        doc,
        workload,
        resolved_toml,
        variants,
        sweep,
        axes,
        points,
        point_count,
        run_count,
        spans: ctx.spans,
        memory_budget: opts.max_memory_bytes,
    })
}

/// Per expectation, the metrics it is checked against when it is
/// measured on another host (`measured_on`): those a run of `first`
/// priced on that host's profile reports; `None` for the others (the
/// run's own metrics).
fn expect_metrics(
    ctx: &Ctx<'_>,
    doc: &Document,
    dir: &Path,
    first: Option<&Config>,
) -> Result<Vec<Option<Vec<crate::workload::MetricSpec>>>, ScenarioError> {
    let mut on_metrics = Vec::with_capacity(doc.expect.len());
    for (i, e) in doc.expect.iter().enumerate() {
        let Some(on) = &e.measured_on else {
            on_metrics.push(None);
            continue;
        };
        let m = crate::machine::MachineConfig {
            profile: on.clone(),
            ..Default::default()
        };
        let profile = crate::machine::build::resolve_profile(&m, dir).map_err(|err| {
            let at = format!("expect[{i}].measured_on");
            locate(ctx, &[], false, ParamError::new(at, format!("not a machine profile: {err}")))
        })?;
        on_metrics.push(first.map(|c| c.prepared.metrics_on(&profile)));
    }
    Ok(on_metrics)
}

/// `base` with `layers` merged on top: its shared sections as a
/// [`Document`] (`known`, when the caller knows them already: no layer
/// sets a shared key that differs between its calls), and the workload's
/// sections. Errors are located at the layer that made them.
fn resolve(
    ctx: &Ctx<'_>,
    base: &toml::Table,
    layers: &[(String, toml::Table)],
    known: Option<Document>,
) -> Result<(Document, toml::Table), ScenarioError> {
    // With the shared sections known, only the workload's are merged.
    let mut table: toml::Table = match known {
        Some(_) => base
            .iter()
            .filter(|(k, _)| !SHARED_SECTIONS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        None => base.clone(),
    };
    for (name, layer) in layers {
        overrides::merge(&mut table, layer).map_err(|m| {
            let field = overrides::leaf_paths(layer).into_iter().next().unwrap_or_default();
            let at = if name.starts_with("sweep.") {
                name.clone()
            } else {
                format!("{name}.{field}")
            };
            ctx.error_at(&at, &field, m, None)
        })?;
    }
    let (shared, sections): (toml::Table, toml::Table) = table.into_iter().partition(|(k, _)| SHARED_SECTIONS.contains(&k.as_str()));
    if let Some(doc) = known {
        return Ok((doc, sections));
    }
    match toml::Value::Table(shared).try_into::<Document>() {
        Ok(d) => Ok((d, sections)),
        Err(e) => {
            let (path, message) = blame(base, layers, &e);
            let suggestion = crate::text::suggestion_from_serde(&message).map(|(_, c)| c);
            let field = path.split_once('.').map_or(path.as_str(), |(_, f)| f).to_string();
            Err(ctx.error_at(&path, &field, crate::text::plain(&message), suggestion))
        }
    }
}

/// Finds which layer makes the shared sections fail to deserialise:
/// returns the span path to blame and the message.
fn blame(base: &toml::Table, layers: &[(String, toml::Table)], err: &toml::de::Error) -> (String, String) {
    let message = err.message().trim().to_string();
    let try_doc = |t: &toml::Table| toml::Value::Table(split(t).0).try_into::<Document>();
    let mut table = base.clone();
    if try_doc(&table).is_err() {
        return (String::new(), message);
    }
    for (name, layer) in layers {
        if overrides::merge(&mut table, layer).is_err() {
            return (name.clone(), message);
        }
        if let Err(e) = try_doc(&table) {
            return (name.clone(), e.message().trim().to_string());
        }
    }
    (String::new(), message)
}

/// Turns a semantic error on field `e.field` into a located one: the sweep
/// key, variant override or quick override that set it, else the base key.
fn locate(ctx: &Ctx<'_>, layers: &[(String, toml::Table)], quick: bool, e: ParamError) -> ScenarioError {
    if e.span.is_some() {
        return ctx.param_error(e);
    }
    let mut at = e.field.clone();
    let mut field = e.field.clone();
    if quick && let Some(k) = quick_key_for(ctx, &e.field) {
        at = k;
    }
    if let Some(k) = cli_sets::key_for(ctx.sets, &e.field) {
        at = cli_sets::at(k);
    }
    for (name, layer) in layers {
        if let Some(v) = overrides::get_path(layer, &e.field) {
            // An error on a whole section (a value of the wrong type or an
            // unknown word, found deserialising the section) names the one
            // key the layer sets inside it, when there is just one.
            field = match one_leaf(v).filter(|_| !e.field.contains('.')) {
                Some(leaf) => format!("{}.{leaf}", e.field),
                None => e.field.clone(),
            };
            at = if name.starts_with("sweep.") {
                name.clone()
            } else {
                format!("{name}.{field}")
            };
        } else if let Some(leaf) = indexed_leaf(layer, &e.field, &e.message) {
            // An error on a whole list (`path`: unknown field `bogus`) that
            // a layer's indexed key (`path[4].bogus`) caused.
            field = leaf;
            at = if name.starts_with("sweep.") {
                name.clone()
            } else {
                format!("{name}.{field}")
            };
        }
    }
    // A misspelt field inside a list element is suggested with its path.
    let suggestion = match (&e.suggestion, field.rsplit_once('.')) {
        (Some(s), Some((parent, _))) if parent.ends_with(']') && e.message.starts_with("unknown field") => Some(format!("{parent}.{s}")),
        _ => e.suggestion,
    };
    ctx.error_at(&at, &field, e.message, suggestion)
}

/// The leaf path of `layer` that indexes into list `field` (`path[4].x`
/// for `path`), preferring the one whose last key an "unknown field"
/// `message` names.
fn indexed_leaf(layer: &toml::Table, field: &str, message: &str) -> Option<String> {
    let prefix = format!("{field}[");
    let leaves: Vec<String> = overrides::leaf_paths(layer)
        .into_iter()
        .filter(|p| p.starts_with(&prefix))
        .collect();
    let named = crate::text::suggestion_from_serde(message)
        .map(|(word, _)| word)
        .or_else(|| message.split('`').nth(1).map(str::to_string));
    let by_name = named.and_then(|w| leaves.iter().find(|p| p.ends_with(&format!(".{w}"))).cloned());
    by_name.or_else(|| leaves.first().cloned())
}

/// The dotted path of the only non-table value inside `v`, if `v` is a
/// table holding exactly one.
fn one_leaf(v: &toml::Value) -> Option<String> {
    let toml::Value::Table(t) = v else { return None };
    let mut entries = t.iter();
    let (k, inner) = entries.next()?;
    if entries.next().is_some() {
        return None;
    }
    match inner {
        toml::Value::Table(_) => one_leaf(inner).map(|rest| format!("{k}.{rest}")),
        _ => Some(k.clone()),
    }
}

/// The `[scenario.quick]` key that sets `field` or a parameter inside it.
fn quick_key_for(ctx: &Ctx<'_>, field: &str) -> Option<String> {
    let exact = format!("scenario.quick.{field}");
    if ctx.spans.contains(&exact) {
        return Some(exact);
    }
    let inside = format!("scenario.quick.{field}.");
    ctx.spans.paths().find(|p| p.starts_with(&inside)).map(str::to_string)
}
