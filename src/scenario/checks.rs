//! What the overrides of a scenario (`[[variant]]`, `[sweep]`,
//! `[scenario] quick`) may set, and the values each sets; and the limits
//! on a plan (runs, memory) checked before it is built.

use super::applied::{Set, check_indices};
use super::overrides::{get_path, leaf_paths, merge, normalise, set_path};
use super::{Ctx, Document, LoadOptions, ScenarioError, Variant, meaning, split, sweep};
use crate::workload::Workload;

/// Every key a `[[variant]]`, `[sweep]` or `quick` sets must be read by the
/// workload, and every list index in it must name an element of `base`.
/// Returns the axes of the sweep as written.
pub(super) fn check_overrides(
    ctx: &Ctx<'_>,
    doc: &Document,
    base: &toml::Table,
    workload: &dyn Workload,
    registry: &[&dyn Workload],
) -> Result<Vec<sweep::Axis>, ScenarioError> {
    let check = |path: &str, at: &str, what: &str| -> Result<(), ScenarioError> {
        meaning::check_override(path, what, workload, registry).map_err(|e| ctx.error_at(at, &e.field, e.message, e.suggestion))?;
        check_indices(base, path).map_err(|(m, s)| ctx.error_at(at, path, m, s))
    };
    for (i, v) in doc.variant.iter().enumerate() {
        let mut t = v.clone();
        t.remove("name");
        for path in leaf_paths(&t) {
            check(&path, &format!("variant[{i}].{path}"), "a [[variant]]")?;
        }
    }
    let axes = sweep::axes(base.get("sweep")).map_err(|e| ctx.error_at(&e.at, &e.at, e.message, e.suggestion))?;
    for (path, at, _) in sweep::flatten(&axes) {
        check(&path, &at, "[sweep]")?;
    }
    for key in doc.scenario.quick.iter().flat_map(|q| q.keys()) {
        let path = key.strip_prefix("sweep.").unwrap_or(key);
        if path == "scenario.replications" {
            continue;
        }
        check(path, &format!("scenario.quick.{key}"), "quick mode")?;
    }
    Ok(axes)
}

/// Applies `[scenario.quick]` to the base table.
pub(super) fn apply_quick(ctx: &Ctx<'_>, parsed: &Document, base: &mut toml::Table) -> Result<(), ScenarioError> {
    for (key, value) in parsed.scenario.quick.iter().flatten() {
        let span = format!("scenario.quick.{key}");
        let res = match key.strip_prefix("sweep.") {
            Some(p) => {
                let sweep = base.entry("sweep").or_insert_with(|| toml::Value::Table(toml::Table::new()));
                match sweep {
                    toml::Value::Table(t) => quick_entry(key, t.get(p), value).map(|v| {
                        t.insert(p.to_string(), v);
                    }),
                    _ => Err("`sweep` is not a table".to_string()),
                }
            }
            None => {
                let mut layer = toml::Table::new();
                set_path(&mut layer, key, value.clone()).and_then(|()| merge(base, &layer))
            }
        };
        res.map_err(|m| ctx.error_at(&span, key, m, None))?;
        shared_sections_read(ctx, base, &span, key)?;
    }
    Ok(())
}

/// Checks that `base`'s shared sections still read as a [`Document`]
/// after an override of `key` (written at `at`): the error names it.
pub(super) fn shared_sections_read(ctx: &Ctx<'_>, base: &toml::Table, at: &str, key: &str) -> Result<(), ScenarioError> {
    let Err(e) = toml::Value::Table(split(base).0).try_into::<Document>() else {
        return Ok(());
    };
    let message = e.message().trim().to_string();
    let suggestion = crate::text::suggestion_from_serde(&message).map(|(_, c)| c);
    Err(ctx.error_at(at, key, crate::text::plain(&message), suggestion))
}

/// What quick's `key` (`sweep.PATH`) puts in place of the base's entry
/// `old`: `new` as written, but a plain list over a labelled entry keeps
/// the labels of its values (each must be one of the base's values, so
/// that it has one).
fn quick_entry(key: &str, old: Option<&toml::Value>, new: &toml::Value) -> Result<toml::Value, String> {
    let (Some(old @ toml::Value::Table(_)), toml::Value::Array(values)) = (old, new) else {
        return Ok(new.clone());
    };
    let Ok((base_values, Some(base_labels))) = sweep::entry(key, old) else {
        return Ok(new.clone());
    };
    let mut labels = Vec::with_capacity(values.len());
    for v in values {
        let Some(i) = base_values.iter().position(|b| b == v) else {
            return Err(format!(
                "`{key}` names its values with `labels`, and {v} is not one of them, so it has no label: write `{{ values = [...], labels = [...] }}`"
            ));
        };
        labels.push(toml::Value::String(base_labels[i].clone()));
    }
    let mut t = toml::Table::new();
    t.insert("values".into(), new.clone());
    t.insert("labels".into(), toml::Value::Array(labels));
    Ok(toml::Value::Table(t))
}

/// The values `[scenario.quick]` sets on the base document (its sweep
/// lists and `scenario.replications` aside, which the grid and the plan
/// show).
pub(super) fn quick_sets(parsed: &Document) -> Vec<Set> {
    parsed
        .scenario
        .quick
        .iter()
        .flatten()
        .filter(|(k, _)| !k.starts_with("sweep."))
        .map(|(k, v)| Set {
            at: format!("scenario.quick.{k}"),
            path: k.clone(),
            value: v.clone(),
        })
        .collect()
}

/// The values variant `vi` sets, one per leaf parameter path.
pub(super) fn variant_sets(vi: usize, v: &Variant) -> Vec<Set> {
    leaf_paths(&v.overrides)
        .into_iter()
        .map(|path| Set {
            at: format!("variant[{vi}].{path}"),
            value: get_path(&v.overrides, &path)
                .cloned()
                .unwrap_or_else(|| toml::Value::Table(toml::Table::new())),
            path,
        })
        .collect()
}

/// The variants of `doc` (one called `base` if none), their overrides
/// normalised (see [`normalise`]).
pub(super) fn variants(ctx: &Ctx<'_>, doc: &Document) -> Result<Vec<Variant>, ScenarioError> {
    let mut out: Vec<Variant> = Vec::new();
    for (i, t) in doc.variant.iter().enumerate() {
        let at = format!("variant[{i}]");
        let name = match t.get("name") {
            Some(toml::Value::String(s)) if !s.is_empty() => s.clone(),
            Some(_) => return Err(ctx.error_at(&format!("{at}.name"), "variant.name", "expected a non-empty string".into(), None)),
            None => return Err(ctx.error_at(&at, "variant.name", "every [[variant]] needs a `name`".into(), None)),
        };
        if let Some(why) = crate::text::file_name_problem(&name) {
            let why = format!("{why} (it names the variant's text outputs, VARIANT.txt)");
            return Err(ctx.error_at(&format!("{at}.name"), "variant.name", why, None));
        }
        if out.iter().any(|v| v.name == name) {
            return Err(ctx.error_at(
                &format!("{at}.name"),
                "variant.name",
                format!("variant `{}` is declared twice", crate::text::quote_short(&name)),
                None,
            ));
        }
        let mut overrides = t.clone();
        overrides.remove("name");
        let overrides = normalise(&overrides).map_err(|(path, m)| ctx.error_at(&format!("{at}.{path}"), &path, m, None))?;
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
pub(super) fn check_variants_vs_sweep(
    ctx: &Ctx<'_>,
    variants: &[Variant],
    swept: &[(String, String, Vec<toml::Value>)],
) -> Result<(), ScenarioError> {
    for (vi, v) in variants.iter().enumerate() {
        for (path, at, _) in swept {
            if get_path(&v.overrides, path).is_some() {
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

/// Refuses a plan of more than `opts.max_runs` runs before building it.
pub(super) fn check_run_count(
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

/// Refuses a point whose one run is estimated to need more memory than
/// `opts.max_memory_bytes` (the runner keeps the runs in flight together
/// within it, so more jobs never make a point fail).
pub(super) fn check_memory(ctx: &Ctx<'_>, per_run: u64, opts: &LoadOptions, layers: &[(String, toml::Table)]) -> Result<(), ScenarioError> {
    if per_run <= opts.max_memory_bytes {
        return Ok(());
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let message = format!(
        "a run is estimated to need {:.2} GiB, over the memory budget of {:.2} GiB (--max-memory)",
        gib(per_run),
        gib(opts.max_memory_bytes)
    );
    let at = layers
        .iter()
        .rev()
        .find(|(n, _)| n.starts_with("sweep."))
        .map_or("workload", |(n, _)| n.as_str());
    Err(ctx.error_at(at, at, message, None))
}
