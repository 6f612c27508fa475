//! Scenario files: TOML text -> a validated [`Scenario`] whose every run
//! point is a fully resolved [`config::Document`].
//!
//! Two stages, as STYLE.md asks: the text is parsed into typed structs with
//! unknown keys denied (syntax, type and unknown-key errors carry toml's
//! span); then every point of the sweep grid and every variant is resolved
//! by applying overrides to the parsed table and checked by
//! [`validate::validate`]. Errors found in the second stage are traced back
//! to the override or base key that produced them, so they still name a
//! line and column.

pub mod config;
pub mod error;
pub mod overrides;
pub mod spans;
pub mod validate;

use config::Document;
pub use error::ScenarioError;
use error::suggestion_from_serde;
use overrides::{blame, set_path};
use spans::SpanIndex;
use std::path::{Path, PathBuf};
use validate::FieldError;

/// How a scenario is loaded.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Apply the scenario's `[scenario.quick]` overrides.
    pub quick: bool,
    /// Replace the scenario's seed.
    pub seed: Option<u64>,
}

/// A variant: a name and the overrides it applies.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The variant's name.
    pub name: String,
    /// Its overrides, as a table to merge over the base.
    pub overrides: toml::Table,
}

/// One point of the sweep grid: the swept values and, per variant, the
/// resolved document.
#[derive(Debug, Clone)]
pub struct Point {
    /// Values of the swept parameters, in [`Scenario::sweep`] order.
    pub values: Vec<toml::Value>,
    /// The resolved document for each variant, in variant order.
    pub configs: Vec<Document>,
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
    /// The variants, in declaration order (one called `base` if none).
    pub variants: Vec<Variant>,
    /// Swept parameter paths and their values, in sorted path order.
    pub sweep: Vec<(String, Vec<toml::Value>)>,
    /// Every point of the grid, first parameter slowest.
    pub points: Vec<Point>,
}

struct Ctx<'a> {
    file: &'a Path,
    spans: SpanIndex,
}

impl Ctx<'_> {
    fn error_at(&self, path: &str, field: &str, message: String, suggestion: Option<String>) -> ScenarioError {
        ScenarioError {
            location: self.spans.locate(self.file, path),
            file: self.file.to_path_buf(),
            field: field.to_string(),
            message,
            suggestion,
        }
    }

    fn toml_error(&self, e: &toml::de::Error) -> ScenarioError {
        let offset = e.span().map_or(0, |s| s.start);
        let field = self.spans.path_at(offset).unwrap_or_default();
        let message = e.message().trim().to_string();
        let suggestion = suggestion_from_serde(&message).map(|(_, c)| c);
        ScenarioError {
            location: e.span().map(|s| self.spans.location(self.file, s.start)),
            file: self.file.to_path_buf(),
            field,
            message,
            suggestion,
        }
    }
}

/// Reads, parses and validates a scenario file.
pub fn load(file: &Path, opts: &LoadOptions) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(file).map_err(|e| ScenarioError {
        location: None,
        file: file.to_path_buf(),
        field: String::new(),
        message: format!("cannot read the scenario file: {e}"),
        suggestion: None,
    })?;
    load_str(file, &text, opts)
}

/// Parses and validates scenario `text` as if read from `file`.
pub fn load_str(file: &Path, text: &str, opts: &LoadOptions) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx {
        file,
        spans: SpanIndex::build(text),
    };
    let parsed: Document = toml::from_str(text).map_err(|e| ctx.toml_error(&e))?;
    let mut base: toml::Table = toml::from_str(text).map_err(|e| ctx.toml_error(&e))?;
    if opts.quick {
        apply_quick(&ctx, &parsed, &mut base)?;
    }
    if let Some(seed) = opts.seed {
        let seed =
            i64::try_from(seed).map_err(|_| ctx.error_at("scenario.seed", "scenario.seed", "--seed must be below 2^63".into(), None))?;
        set_path(&mut base, "scenario.seed", toml::Value::Integer(seed)).ok();
    }
    let doc = resolve(&ctx, &base, &[])?;
    let variants = variants(&ctx, &doc)?;
    let sweep = sweep(&ctx, &base)?;
    let dir = file.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut points = Vec::new();
    for values in grid(&sweep) {
        let mut configs = Vec::with_capacity(variants.len());
        for (vi, v) in variants.iter().enumerate() {
            let mut layers: Vec<(String, toml::Table)> = vec![(format!("variant[{vi}]"), v.overrides.clone())];
            for ((path, _), value) in sweep.iter().zip(&values) {
                let mut t = toml::Table::new();
                set_path(&mut t, path, value.clone()).map_err(|m| ctx.error_at(&format!("sweep.{path}"), path, m, None))?;
                layers.push((format!("sweep.{path}"), t));
            }
            let resolved = resolve(&ctx, &base, &layers)?;
            validate::validate(&resolved, &dir).map_err(|e| locate(&ctx, &layers, opts.quick, e))?;
            configs.push(resolved);
        }
        points.push(Point { values, configs });
    }
    validate::validate_outputs(&doc, &dir, &variants, &sweep, &points).map_err(|e| locate(&ctx, &[], false, e))?;
    Ok(Scenario {
        file: file.to_path_buf(),
        dir,
        doc,
        variants,
        sweep,
        points,
    })
}

/// Applies `[scenario.quick]` to the base table.
fn apply_quick(ctx: &Ctx<'_>, parsed: &Document, base: &mut toml::Table) -> Result<(), ScenarioError> {
    for (key, value) in &parsed.scenario.quick {
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
    }
    Ok(())
}

/// Merges `layers` over `base` and deserialises the result; a failure is
/// blamed on the first layer whose addition makes it fail.
fn resolve(ctx: &Ctx<'_>, base: &toml::Table, layers: &[(String, toml::Table)]) -> Result<Document, ScenarioError> {
    let mut table = base.clone();
    for (_, layer) in layers {
        overrides::merge(&mut table, layer);
    }
    match toml::Value::Table(table).try_into::<Document>() {
        Ok(d) => Ok(d),
        Err(e) => {
            let (path, message) = blame(base, layers, &e);
            let suggestion = suggestion_from_serde(&message).map(|(_, c)| c);
            let field = path.split_once('.').map_or(path.as_str(), |(_, f)| f).to_string();
            Err(ctx.error_at(&path, &field, message, suggestion))
        }
    }
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

fn sweep(ctx: &Ctx<'_>, base: &toml::Table) -> Result<Vec<(String, Vec<toml::Value>)>, ScenarioError> {
    let Some(toml::Value::Table(t)) = base.get("sweep") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (path, values) in t {
        let at = format!("sweep.{path}");
        match values {
            toml::Value::Array(a) if !a.is_empty() => out.push((path.clone(), a.clone())),
            _ => return Err(ctx.error_at(&at, path, "a sweep takes a non-empty list of values".into(), None)),
        }
        let head = path.split(['.', '[']).next().unwrap_or("");
        if ["scenario", "variant", "sweep", "plot", "expect"].contains(&head) && path != "scenario.ops" && path != "scenario.time_ms" {
            return Err(ctx.error_at(&at, path, format!("`{head}` cannot be swept"), None));
        }
    }
    Ok(out)
}

/// The cartesian product of the sweep lists, first list slowest.
fn grid(sweep: &[(String, Vec<toml::Value>)]) -> Vec<Vec<toml::Value>> {
    let mut out: Vec<Vec<toml::Value>> = vec![Vec::new()];
    for (_, values) in sweep {
        out = out
            .into_iter()
            .flat_map(|prefix| values.iter().map(move |v| [prefix.clone(), vec![v.clone()]].concat()))
            .collect();
    }
    out
}

/// Turns a semantic error on field `e.field` into a located one: the sweep
/// key, variant override or quick override that set it, else the base key.
fn locate(ctx: &Ctx<'_>, layers: &[(String, toml::Table)], quick: bool, e: FieldError) -> ScenarioError {
    let mut at = e.field.clone();
    if quick && ctx.spans.find(&format!("scenario.quick.{}", e.field)).is_some() {
        at = format!("scenario.quick.{}", e.field);
    }
    for (name, layer) in layers {
        if overrides::get_path(layer, &e.field).is_some() {
            at = if name.starts_with("sweep.") {
                name.clone()
            } else {
                format!("{name}.{}", e.field)
            };
        }
    }
    ctx.error_at(&at, &e.field, e.message, e.suggestion)
}
