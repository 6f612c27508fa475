//! Semantic checks of a resolved document: ranges, references between
//! sections, and that plots and expectations name real variants, swept
//! parameters and metrics.

use super::config::{Document, WorkloadKind};
use super::error::closest;
use super::{Point, Variant};
use crate::workload;
use std::path::Path;

/// A semantic error on one field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Dotted path of the field.
    pub field: String,
    /// What was expected.
    pub message: String,
    /// The closest valid name, for a misspelling.
    pub suggestion: Option<String>,
}

fn fail(field: impl Into<String>, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        message: message.into(),
        suggestion: None,
    }
}

impl From<workload::path::BuildError> for FieldError {
    fn from(e: workload::path::BuildError) -> Self {
        let (message, suggestion) = split_hint(&e.message);
        FieldError {
            field: e.field,
            message,
            suggestion,
        }
    }
}

impl From<crate::kernel::ModelError> for FieldError {
    fn from(e: crate::kernel::ModelError) -> Self {
        match e {
            crate::kernel::ModelError::InvalidParam { field, message } => FieldError {
                field,
                message,
                suggestion: None,
            },
            other => fail("", other.to_string()),
        }
    }
}

/// Splits a trailing " (did you mean `x`?)" off a message.
fn split_hint(m: &str) -> (String, Option<String>) {
    match m.split_once(" (did you mean `") {
        Some((msg, rest)) => (msg.to_string(), rest.split('`').next().map(str::to_string)),
        None => (m.to_string(), None),
    }
}

/// Checks one resolved document.
pub fn validate(doc: &Document, dir: &Path) -> Result<(), FieldError> {
    let s = &doc.scenario;
    if s.name.is_empty() || !s.name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) || s.name.starts_with('.') {
        return Err(fail(
            "scenario.name",
            "expected a non-empty name of letters, digits, '-', '_' or '.' (it names the output folder)",
        ));
    }
    if s.replications == 0 {
        return Err(fail("scenario.replications", "expected an integer >= 1, found 0"));
    }
    if s.ops == Some(0) {
        return Err(fail("scenario.ops", "expected an integer >= 1, found 0"));
    }
    if let Some(t) = s.time_ms
        && !(t.is_finite() && t > 0.0)
    {
        return Err(fail("scenario.time_ms", format!("expected a time > 0 ms, found {t}")));
    }
    if doc.workload.threads == 0 {
        return Err(fail("workload.threads", "expected an integer >= 1, found 0"));
    }
    if !(doc.machine.wakeup_ns.is_finite() && doc.machine.wakeup_ns >= 0.0) {
        return Err(fail("machine.wakeup_ns", "expected a time >= 0 ns"));
    }
    match doc.workload.kind {
        WorkloadKind::Path => validate_path(doc, dir),
        WorkloadKind::BtrfsDir => workload::btrfs_dir_params(doc)?
            .validate()
            .map_err(|e| prefix("btrfs_dir", e.into())),
        WorkloadKind::XfsAlloc => workload::xfs_alloc_params(doc)?
            .validate()
            .map_err(|e| prefix("xfs_alloc", e.into())),
    }
}

fn prefix(section: &str, mut e: FieldError) -> FieldError {
    e.field = if e.field.is_empty() {
        section.to_string()
    } else {
        format!("{section}.{}", e.field)
    };
    e
}

fn validate_path(doc: &Document, dir: &Path) -> Result<(), FieldError> {
    if doc.path.is_empty() {
        return Err(fail("path", "a `path` workload needs at least one [[path]] step"));
    }
    if doc.scenario.ops.is_none() && doc.scenario.time_ms.is_none() {
        return Err(fail(
            "scenario.ops",
            "a `path` workload needs a stop condition: scenario.ops or scenario.time_ms",
        ));
    }
    workload::path::build(doc, dir, None)?;
    Ok(())
}

/// Checks `[[plot]]` and `[[expect]]` against the variants, the sweep and
/// the metrics the workload reports.
pub fn validate_outputs(
    doc: &Document,
    dir: &Path,
    variants: &[Variant],
    sweep: &[(String, Vec<toml::Value>)],
    points: &[Point],
) -> Result<(), FieldError> {
    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    let params: Vec<&str> = sweep.iter().map(|(p, _)| p.as_str()).collect();
    let metrics = points
        .first()
        .and_then(|p| p.configs.first())
        .map(|d| workload::metric_names_of(d, dir))
        .unwrap_or_default();
    let known_metric = |field: String, m: &str| -> Result<(), FieldError> {
        if metrics.iter().any(|k| k == m) {
            return Ok(());
        }
        Err(FieldError {
            field,
            message: format!("no metric `{m}`; this workload reports: {}", metrics.join(", ")),
            suggestion: closest(m, metrics.iter().map(String::as_str)),
        })
    };
    let known_variant = |field: String, v: &str| -> Result<(), FieldError> {
        if names.contains(&v) {
            return Ok(());
        }
        Err(FieldError {
            field,
            message: format!("no variant `{v}`; variants are: {}", names.join(", ")),
            suggestion: closest(v, names.iter().copied()),
        })
    };
    let known_param = |field: String, p: &str| -> Result<(), FieldError> {
        if params.contains(&p) {
            return Ok(());
        }
        Err(FieldError {
            field,
            message: format!("`{p}` is not a swept parameter; swept: {}", params.join(", ")),
            suggestion: closest(p, params.iter().copied()),
        })
    };
    for (i, p) in doc.plot.iter().enumerate() {
        known_param(format!("plot[{i}].x"), &p.x)?;
        known_metric(format!("plot[{i}].y"), &p.y)?;
        if p.series != "variant" {
            known_param(format!("plot[{i}].series"), &p.series)?;
        }
        for k in p.at.keys() {
            known_param(format!("plot[{i}].at.{k}"), k)?;
        }
        for v in &p.variants {
            known_variant(format!("plot[{i}].variants"), v)?;
        }
    }
    for (i, e) in doc.expect.iter().enumerate() {
        known_metric(format!("expect[{i}].metric"), &e.metric)?;
        if let Some(v) = &e.variant {
            known_variant(format!("expect[{i}].variant"), v)?;
        }
        if let Some(r) = &e.ratio {
            known_variant(format!("expect[{i}].ratio.of"), &r.of)?;
            known_variant(format!("expect[{i}].ratio.over"), &r.over)?;
        }
        for (k, v) in &e.at {
            known_param(format!("expect[{i}].at.{k}"), k)?;
            let listed = sweep.iter().find(|(p, _)| p == k).is_some_and(|(_, vs)| vs.contains(v));
            if !listed {
                return Err(fail(
                    format!("expect[{i}].at.{k}"),
                    format!("{v} is not one of the values swept for `{k}`"),
                ));
            }
        }
        match (e.within, e.target, e.tolerance_pct) {
            (Some([lo, hi]), None, None) if lo <= hi => {}
            (Some(_), None, None) => return Err(fail(format!("expect[{i}].within"), "expected [lo, hi] with lo <= hi")),
            (None, Some(_), Some(t)) if t >= 0.0 => {}
            _ => {
                return Err(fail(
                    format!("expect[{i}]"),
                    "give either `within = [lo, hi]` or `target` with `tolerance_pct`",
                ));
            }
        }
    }
    Ok(())
}
