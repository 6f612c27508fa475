//! One (point, variant) of a scenario built from the base table and the
//! point's swept values: resolved, validated, prepared and its values read
//! back. [`Here::config`] keeps all of it (a run needs it);
//! [`Here::check`] only validates (what `fsmeta check` needs for every
//! point but the first), without the resolved text.

use super::checks::{check_memory, variant_sets};
use super::config::Document;
use super::overrides::set_path;
use super::{Config, Ctx, LoadOptions, Point, ScenarioError, Variant, applied, locate, resolve, resolved, sweep, validate};
use crate::machine::MachineCache;
use crate::workload::{Input, Prepared, Sections, StopConfig, Workload};
use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

/// What building one (point, variant) needs.
pub(super) struct Here<'a> {
    pub(super) ctx: &'a Ctx<'a>,
    pub(super) base: &'a toml::Table,
    pub(super) swept: &'a [(String, String, Vec<toml::Value>)],
    pub(super) workload: &'static dyn Workload,
    pub(super) machines: &'a MachineCache,
    pub(super) dir: &'a Path,
    pub(super) opts: &'a LoadOptions,
    /// Each variant's shared sections, once read, when no swept path is
    /// in a shared section (else `None`): see [`Here::shared_docs`].
    pub(super) docs: Option<RefCell<Vec<Option<Document>>>>,
}

/// A (point, variant) resolved, validated and prepared.
struct Built {
    layers: Vec<(String, toml::Table)>,
    sets: Vec<applied::Set>,
    doc: Document,
    sections: toml::Table,
    prepared: Box<dyn Prepared>,
}

impl Here<'_> {
    /// Every point of the sweep `axes` for each of `variants`, in order,
    /// with the point count and the runs they plan. A check
    /// (`opts.check_only`) keeps only the first point and validates the
    /// rest without keeping them.
    pub(super) fn points(&self, variants: &[Variant], axes: &[sweep::Axis]) -> Result<(Vec<Point>, u64, u64), ScenarioError> {
        let mut points = Vec::new();
        let (point_count, mut run_count) = (sweep::count(axes).unwrap_or(0), 0u64);
        for index in 0..point_count {
            let values = sweep::point(axes, index);
            let mut configs = Vec::with_capacity(variants.len());
            for (vi, v) in variants.iter().enumerate() {
                // A check keeps the first point, and only validates the rest.
                if self.opts.check_only && !points.is_empty() {
                    run_count += u64::from(self.check(vi, v, &values)?);
                    continue;
                }
                let config = self.config(vi, v, &values)?;
                run_count += u64::from(config.doc.scenario.replications);
                configs.push(config);
            }
            // A check holds one point at a time (and the first, for the
            // metrics the outputs are checked against).
            if !self.opts.check_only || points.is_empty() {
                let steps = sweep::steps(axes, index);
                points.push(Point { values, steps, configs });
            }
        }
        Ok((points, point_count, run_count))
    }

    /// The memo of each variant's shared sections, for a sweep that sets
    /// no shared key (`swept` holds its paths).
    pub(super) fn shared_docs(swept: &[(String, String, Vec<toml::Value>)]) -> Option<RefCell<Vec<Option<Document>>>> {
        let shared = |p: &str| super::config::SHARED_SECTIONS.contains(&p.split(['.', '[']).next().unwrap_or(p));
        (!swept.iter().any(|(p, _, _)| shared(p))).then(|| RefCell::new(Vec::new()))
    }

    /// Variant `vi` at the point whose swept values are `values`: its
    /// overrides applied, validated, prepared, and every value it sets
    /// read back from its resolved document.
    pub(super) fn config(&self, vi: usize, v: &Variant, values: &[toml::Value]) -> Result<Config, ScenarioError> {
        let b = self.build(vi, v, values)?;
        let text =
            resolved::resolved_text(&b.doc, self.workload, &b.sections).map_err(|e| locate(self.ctx, &b.layers, self.opts.quick, e))?;
        let applied = applied::read_back(&text, &b.sets).map_err(|(at, path, m)| self.ctx.error_at(&at, &path, m, None))?;
        Ok(Config {
            doc: b.doc,
            prepared: Arc::from(b.prepared),
            applied,
            resolved_toml: text,
        })
    }

    /// What [`Here::config`] checks, without keeping the result or
    /// writing the resolved text (values are read back from the resolved
    /// document as a table): the runs this (point, variant) plans.
    pub(super) fn check(&self, vi: usize, v: &Variant, values: &[toml::Value]) -> Result<u32, ScenarioError> {
        let b = self.build(vi, v, values)?;
        let paths = b.sets.iter().map(|s| s.path.as_str());
        let own = b.prepared.resolved_sections();
        let table = resolved::resolved_table(&b.doc, self.workload, &b.sections, own, paths)
            .map_err(|e| locate(self.ctx, &b.layers, self.opts.quick, e))?;
        applied::read_back_table(&table, &b.sets).map_err(|(at, path, m)| self.ctx.error_at(&at, &path, m, None))?;
        Ok(b.doc.scenario.replications)
    }

    /// The overrides applied, validated and prepared, its memory checked.
    fn build(&self, vi: usize, v: &Variant, values: &[toml::Value]) -> Result<Built, ScenarioError> {
        let (ctx, opts) = (self.ctx, self.opts);
        let mut layers: Vec<(String, toml::Table)> = vec![(format!("variant[{vi}]"), v.overrides.clone())];
        let mut sets = variant_sets(vi, v);
        for ((path, at, _), value) in self.swept.iter().zip(values) {
            let mut t = toml::Table::new();
            set_path(&mut t, path, value.clone()).map_err(|m| ctx.error_at(at, path, m, None))?;
            layers.push((at.clone(), t));
            sets.push(applied::Set {
                at: at.clone(),
                path: path.clone(),
                value: value.clone(),
            });
        }
        // The shared sections of a variant are the same at every point
        // when the sweep sets none of them: read once.
        let known = self.docs.as_ref().and_then(|d| d.borrow().get(vi).cloned().flatten());
        let first = known.is_none();
        let prep = Prep {
            workload: self.workload,
            machines: self.machines,
            dir: self.dir,
            quick: opts.quick,
        };
        let (resolved, sections, prepared) = prepare_layered(ctx, self.base, &layers, &prep, known)?;
        if let Some(docs) = self.docs.as_ref().filter(|_| first) {
            let mut docs = docs.borrow_mut();
            let len = docs.len().max(vi + 1);
            docs.resize(len, None);
            docs[vi] = Some(resolved.clone());
        }
        check_memory(ctx, prepared.memory_bytes(), opts, &layers)?;
        Ok(Built {
            layers,
            sets,
            doc: point_doc(resolved),
            sections,
            prepared,
        })
    }
}

/// A point's document without the scenario-wide lists (variants, sweep,
/// plots, expectations): they live once in [`Scenario::doc`](super::Scenario::doc), so a large
/// sweep does not hold a copy of itself per point.
fn point_doc(mut d: Document) -> Document {
    d.variant = Vec::new();
    d.sweep = toml::Table::new();
    d.plot = Vec::new();
    d.expect = Vec::new();
    d
}

/// What preparing a document needs besides the document.
pub(super) struct Prep<'a> {
    /// The scenario's workload.
    pub(super) workload: &'static dyn Workload,
    /// Machines built so far.
    pub(super) machines: &'a MachineCache,
    /// The scenario's folder.
    pub(super) dir: &'a Path,
    /// Quick mode (errors may be located at a quick override).
    pub(super) quick: bool,
}

/// `base` with `layers` merged on top, validated and prepared by
/// `workload`: the resolved document (its shared sections `known` when
/// given), its sections and the prepared run. Errors are located at the
/// layer that set the offending value.
pub(super) fn prepare_layered(
    ctx: &Ctx<'_>,
    base: &toml::Table,
    layers: &[(String, toml::Table)],
    prep: &Prep<'_>,
    known: Option<Document>,
) -> Result<(Document, toml::Table, Box<dyn Prepared>), ScenarioError> {
    let Prep {
        workload,
        machines,
        dir,
        quick,
    } = *prep;
    let (resolved, sections) = resolve(ctx, base, layers, known)?;
    validate::validate(&resolved).map_err(|e| locate(ctx, layers, quick, e))?;
    let input = Input {
        sections: Sections::Table(&sections),
        machine: &resolved.machine,
        machines,
        threads: resolved.workload.threads,
        stop: StopConfig {
            ops: resolved.scenario.ops,
            time_ms: resolved.scenario.time_ms,
        },
        dir,
    };
    let prepared = workload.prepare(&input).map_err(|e| locate(ctx, layers, quick, e))?;
    Ok((resolved, sections, prepared))
}
