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

pub mod config;
pub mod error;
mod hidden;
pub mod meaning;
pub mod overrides;
pub mod reference;
pub mod resolved;
mod shape;
pub mod source;
pub mod spans;
pub mod sweep;
pub mod validate;

use crate::param::ParamError;
use crate::workload::registry::{self, REGISTRY};
use crate::workload::{Input, Prepared, Sections, StopConfig, Workload};
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
    /// Replace the scenario's seed.
    pub seed: Option<u64>,
    /// The workloads `workload.kind` may name (default: the built-in
    /// [`REGISTRY`]).
    pub registry: &'static [&'static dyn Workload],
    /// The most runs (points x variants x replications) a scenario may
    /// plan (default [`DEFAULT_MAX_RUNS`]).
    pub max_runs: u64,
    /// The memory one run may be estimated to need, in bytes, times the
    /// number of runs in flight (default: half of this machine's RAM).
    pub max_memory_bytes: u64,
    /// Runs in flight at once (`--jobs`), for the memory check.
    pub jobs: u64,
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
            seed: None,
            registry: REGISTRY,
            max_runs: DEFAULT_MAX_RUNS,
            max_memory_bytes: default_max_memory(),
            jobs: 1,
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
}

/// One point of the sweep grid: the swept values and, per variant, the
/// resolved configuration.
#[derive(Debug, Clone)]
pub struct Point {
    /// Values of the swept parameters, in [`Scenario::sweep`] order.
    pub values: Vec<toml::Value>,
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
    /// Swept parameter paths and their values, in sorted path order.
    pub sweep: Vec<(String, Vec<toml::Value>)>,
    /// Every point of the grid, first parameter slowest.
    pub points: Vec<Point>,
}

impl Scenario {
    /// The prepared workload of the first point and variant (its metric
    /// schema and key metrics hold for every point).
    pub fn first(&self) -> Option<&Arc<dyn Prepared>> {
        self.points.first().and_then(|p| p.configs.first()).map(|c| &c.prepared)
    }
}

struct Ctx<'a> {
    file: &'a Path,
    spans: SpanIndex,
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
        ScenarioError {
            location: Some(self.place(path)),
            file: self.file.to_path_buf(),
            field: field.to_string(),
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
    let ctx = Ctx {
        file,
        spans: SpanIndex::build(text),
    };
    let de = DeTable::parse(text).map_err(|e| ctx.toml_error(&e))?;
    let mut base: toml::Table = toml::from_str(text).map_err(|e| ctx.toml_error(&e))?;
    let parsed = parse_shared(&ctx, &de)?;
    let workload = registry::find(opts.registry, &parsed.workload.kind).map_err(|e| ctx.param_error(e))?;
    check_top_level(&ctx, &base, opts, workload)?;
    shape::arrays_for_tables(&ctx, &base, workload)?;
    workload.resolved_toml(&Sections::Text(&de)).map_err(|e| ctx.param_error(e))?;
    meaning::check_base(&base, workload).map_err(|e| ctx.param_error(e))?;
    check_overrides(&ctx, &parsed, workload, opts.registry)?;
    if opts.quick {
        // The values quick replaces are checked as written (issue 33).
        validate::validate(&parsed).map_err(|e| locate(&ctx, &[], false, e))?;
        apply_quick(&ctx, &parsed, &mut base)?;
    }
    if let Some(seed) = opts.seed {
        let seed =
            i64::try_from(seed).map_err(|_| ctx.error_at("scenario.seed", "scenario.seed", "--seed must be below 2^63".into(), None))?;
        set_path(&mut base, "scenario.seed", toml::Value::Integer(seed)).ok();
    }
    let doc = resolve(&ctx, &base, &[])?.0;
    let resolved_toml = resolved::resolved_text(&doc, workload, &split(&base).1).map_err(|e| locate(&ctx, &[], opts.quick, e))?;
    let variants = variants(&ctx, &doc)?;
    let axes = sweep::axes(base.get("sweep")).map_err(|(at, m)| ctx.error_at(&at, &at, m, None))?;
    let swept = sweep::flatten(&axes);
    check_variants_vs_sweep(&ctx, &variants, &swept)?;
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
    // Each point resolves a copy of the base: without the sweep's lists,
    // which no point reads (a copy holding them made `check` quadratic in
    // a list's length, issue 33).
    let mut point_base = base.clone();
    point_base.remove("sweep");
    let mut points = Vec::new();
    for index in 0..sweep::count(&axes).unwrap_or(0) {
        let values = sweep::point(&axes, index);
        let mut configs = Vec::with_capacity(variants.len());
        for (vi, v) in variants.iter().enumerate() {
            let mut layers: Vec<(String, toml::Table)> = vec![(format!("variant[{vi}]"), v.overrides.clone())];
            for ((path, at, _), value) in swept.iter().zip(&values) {
                let mut t = toml::Table::new();
                set_path(&mut t, path, value.clone()).map_err(|m| ctx.error_at(at, path, m, None))?;
                layers.push((at.clone(), t));
            }
            let (resolved, sections) = resolve(&ctx, &point_base, &layers)?;
            validate::validate(&resolved).map_err(|e| locate(&ctx, &layers, opts.quick, e))?;
            let input = Input {
                sections: Sections::Table(&sections),
                machine: &resolved.machine,
                machines: &machines,
                threads: resolved.workload.threads,
                stop: StopConfig {
                    ops: resolved.scenario.ops,
                    time_ms: resolved.scenario.time_ms,
                },
                dir: &dir,
            };
            let prepared = workload.prepare(&input).map_err(|e| locate(&ctx, &layers, opts.quick, e))?;
            check_memory(&ctx, prepared.memory_bytes(), opts, &layers)?;
            configs.push(Config {
                doc: point_doc(resolved),
                prepared: Arc::from(prepared),
            });
        }
        points.push(Point { values, configs });
    }
    let first = points.first().and_then(|p| p.configs.first());
    let metrics = first.map(|c| c.prepared.metrics()).unwrap_or_default();
    let axes = first.map(|c| c.prepared.step_axes()).unwrap_or_default();
    validate::validate_outputs(&doc, &variants, &sweep, &metrics, &axes).map_err(|e| locate(&ctx, &[], false, e))?;
    Ok(Scenario {
        file: file.to_path_buf(),
        dir,
        doc,
        workload,
        resolved_toml,
        variants,
        sweep,
        points,
    })
}

/// A point's document without the scenario-wide lists (variants, sweep,
/// plots, expectations): they live once in [`Scenario::doc`], so a large
/// sweep does not hold a copy of itself per point.
fn point_doc(mut d: Document) -> Document {
    d.variant = Vec::new();
    d.sweep = toml::Table::new();
    d.plot = Vec::new();
    d.expect = Vec::new();
    d
}

/// Refuses a plan of more than `opts.max_runs` runs before building it.
fn check_run_count(
    ctx: &Ctx<'_>,
    doc: &Document,
    variants: &[Variant],
    axes: &[sweep::Axis],
    opts: &LoadOptions,
) -> Result<(), ScenarioError> {
    let points = sweep::count(axes);
    let runs = points
        .and_then(|p| p.checked_mul(variants.len() as u64))
        .and_then(|p| p.checked_mul(u64::from(doc.scenario.replications)));
    match runs {
        Some(n) if n <= opts.max_runs => Ok(()),
        _ => {
            let n = runs.map_or("more than 2^64".to_string(), |n| n.to_string());
            let plan = if opts.quick {
                "the quick plan (with [scenario] quick applied)"
            } else {
                "the plan"
            };
            let message = format!(
                "{plan} has {n} runs (sweep points x variants x replications), over the limit of {} (--max-runs)",
                opts.max_runs
            );
            let at = if axes.is_empty() { "scenario.replications" } else { "sweep" };
            Err(ctx.error_at(at, at, message, None))
        }
    }
}

/// Refuses a point whose runs, `opts.jobs` at a time, are estimated to need
/// more memory than `opts.max_memory_bytes`.
fn check_memory(ctx: &Ctx<'_>, per_run: u64, opts: &LoadOptions, layers: &[(String, toml::Table)]) -> Result<(), ScenarioError> {
    let need = per_run.saturating_mul(opts.jobs.max(1));
    if need <= opts.max_memory_bytes {
        return Ok(());
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let message = format!(
        "a run is estimated to need {:.2} GiB ({} at once: {:.2} GiB), over the memory budget of {:.2} GiB (--max-memory)",
        gib(per_run),
        opts.jobs.max(1),
        gib(need),
        gib(opts.max_memory_bytes)
    );
    let at = layers
        .iter()
        .rev()
        .find(|(n, _)| n.starts_with("sweep."))
        .map_or("workload", |(n, _)| n.as_str());
    Err(ctx.error_at(at, at, message, None))
}

/// Every key a `[[variant]]`, `[sweep]` or `quick` sets must be read by the
/// workload.
fn check_overrides(ctx: &Ctx<'_>, doc: &Document, workload: &dyn Workload, registry: &[&dyn Workload]) -> Result<(), ScenarioError> {
    for (i, v) in doc.variant.iter().enumerate() {
        let mut t = v.clone();
        t.remove("name");
        for path in meaning::leaf_paths(&t) {
            meaning::check_override(&path, "a [[variant]]", workload, registry)
                .map_err(|e| ctx.error_at(&format!("variant[{i}].{path}"), &e.field, e.message, e.suggestion))?;
        }
    }
    let axes = sweep::axes(Some(&toml::Value::Table(doc.sweep.clone()))).map_err(|(at, m)| ctx.error_at(&at, &at, m, None))?;
    for (path, at, _) in sweep::flatten(&axes) {
        meaning::check_override(&path, "[sweep]", workload, registry).map_err(|e| ctx.error_at(&at, &e.field, e.message, e.suggestion))?;
    }
    for key in doc.scenario.quick.iter().flat_map(|q| q.keys()) {
        let path = key.strip_prefix("sweep.").unwrap_or(key);
        if path == "scenario.replications" {
            continue;
        }
        meaning::check_override(path, "quick mode", workload, registry)
            .map_err(|e| ctx.error_at(&format!("scenario.quick.{key}"), &e.field, e.message, e.suggestion))?;
    }
    Ok(())
}

/// Applies `[scenario.quick]` to the base table.
fn apply_quick(ctx: &Ctx<'_>, parsed: &Document, base: &mut toml::Table) -> Result<(), ScenarioError> {
    for (key, value) in parsed.scenario.quick.iter().flatten() {
        let span = format!("scenario.quick.{key}");
        let res = match key.strip_prefix("sweep.") {
            Some(p) => {
                let sweep = base.entry("sweep").or_insert_with(|| toml::Value::Table(toml::Table::new()));
                match sweep {
                    toml::Value::Table(t) => {
                        t.insert(p.to_string(), value.clone());
                        Ok(())
                    }
                    _ => Err("`sweep` is not a table".to_string()),
                }
            }
            None => set_path(base, key, value.clone()),
        };
        res.map_err(|m| ctx.error_at(&span, key, m, None))?;
        if let Err(e) = toml::Value::Table(split(base).0).try_into::<Document>() {
            let message = e.message().trim().to_string();
            let suggestion = crate::text::suggestion_from_serde(&message).map(|(_, c)| c);
            return Err(ctx.error_at(&span, key, crate::text::plain(&message), suggestion));
        }
    }
    Ok(())
}

/// Merges `layers` over `base` and deserialises the shared sections; a
/// failure is blamed on the first layer whose addition makes it fail.
/// Returns the shared document and the workload's sections.
fn resolve(ctx: &Ctx<'_>, base: &toml::Table, layers: &[(String, toml::Table)]) -> Result<(Document, toml::Table), ScenarioError> {
    let mut table = base.clone();
    for (_, layer) in layers {
        overrides::merge(&mut table, layer);
    }
    let (shared, sections) = split(&table);
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
        overrides::merge(&mut table, layer);
        if let Err(e) = try_doc(&table) {
            return (name.clone(), e.message().trim().to_string());
        }
    }
    (String::new(), message)
}

fn variants(ctx: &Ctx<'_>, doc: &Document) -> Result<Vec<Variant>, ScenarioError> {
    let mut out: Vec<Variant> = Vec::new();
    for (i, t) in doc.variant.iter().enumerate() {
        let at = format!("variant[{i}]");
        let name = match t.get("name") {
            Some(toml::Value::String(s)) if !s.is_empty() => s.clone(),
            Some(_) => return Err(ctx.error_at(&format!("{at}.name"), "variant.name", "expected a non-empty string".into(), None)),
            None => return Err(ctx.error_at(&at, "variant.name", "every [[variant]] needs a `name`".into(), None)),
        };
        if out.iter().any(|v| v.name == name) {
            return Err(ctx.error_at(
                &format!("{at}.name"),
                "variant.name",
                format!("variant `{name}` is declared twice"),
                None,
            ));
        }
        let mut overrides = t.clone();
        overrides.remove("name");
        out.push(Variant { name, overrides });
    }
    if out.is_empty() {
        out.push(Variant {
            name: "base".into(),
            overrides: toml::Table::new(),
        });
    }
    Ok(out)
}

/// A variant may not set a parameter the sweep sets: the sweep's value
/// would replace the variant's at every point, so the variant's would be
/// silently ignored.
fn check_variants_vs_sweep(ctx: &Ctx<'_>, variants: &[Variant], swept: &[(String, String, Vec<toml::Value>)]) -> Result<(), ScenarioError> {
    for (vi, v) in variants.iter().enumerate() {
        for (path, at, _) in swept {
            if overrides::get_path(&v.overrides, path).is_some() {
                return Err(ctx.error_at(
                    &format!("variant[{vi}].{path}"),
                    path,
                    format!(
                        "variant `{}` sets {path}, which the sweep ({at}) also sets: the sweep's values would replace the variant's at every point; set it in one place",
                        v.name
                    ),
                    None,
                ));
            }
        }
    }
    Ok(())
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
        }
    }
    ctx.error_at(&at, &field, e.message, e.suggestion)
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
