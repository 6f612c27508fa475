//! Arrays where tables are expected. serde maps an array onto a struct
//! field by field, so `scenario = ["seqtest", "about", 7, 2, 1000]` would
//! become a name, an about, a seed, ... (issue 33). Which keys hold tables
//! is read from the parameter reference (the shared keys and the
//! workload's own): a key with parameters below it (`path[].work.dist`
//! makes `path`'s elements and `path[].work` tables) or declared as
//! `a table`.

use super::reference::SHARED;
use super::{Ctx, ScenarioError};
use crate::workload::Workload;
use std::collections::BTreeSet;

/// The key patterns (`path[]`, `locks.NAME`, `machine.topology`) whose
/// values must be tables.
fn table_patterns(workload: &dyn Workload) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut keys = BTreeSet::new();
    let own = workload.params();
    for spec in SHARED.iter().chain(own.iter()) {
        let mut first: Option<String> = None;
        for (i, piece) in spec.path.split(" / ").enumerate() {
            let piece = piece.split(" + ").next().unwrap_or("").trim();
            let full = match (&first, i) {
                (Some(f), _) => match f.rsplit_once('.') {
                    Some((parent, _)) => format!("{parent}.{piece}"),
                    None => piece.to_string(),
                },
                (None, _) => piece.to_string(),
            };
            first.get_or_insert_with(|| full.clone());
            keys.insert((full, spec.kind == "a table"));
        }
    }
    let mut tables = BTreeSet::new();
    let mut known = BTreeSet::new();
    for (path, is_table) in keys {
        if is_table {
            tables.insert(path.clone());
        }
        for (i, c) in path.char_indices() {
            if c == '.' {
                tables.insert(path[..i].to_string());
            }
            if c == '.' || c == '[' {
                known.insert(path[..i].to_string());
            }
        }
        known.insert(path);
    }
    (tables, known)
}

/// Refuses an array written where a table is expected, with its place.
pub(super) fn arrays_for_tables(ctx: &Ctx<'_>, base: &toml::Table, workload: &dyn Workload) -> Result<(), ScenarioError> {
    let (tables, known) = table_patterns(workload);
    for (k, v) in base {
        walk(ctx, &tables, &known, k, k, v)?;
    }
    Ok(())
}

fn walk(
    ctx: &Ctx<'_>,
    tables: &BTreeSet<String>,
    known: &BTreeSet<String>,
    pattern: &str,
    at: &str,
    value: &toml::Value,
) -> Result<(), ScenarioError> {
    match value {
        toml::Value::Array(items) => {
            let element = format!("{pattern}[]");
            if tables.contains(pattern) && !tables.contains(&element) {
                return Err(ctx.error_at(at, at, "expected a table, found an array".into(), None));
            }
            if tables.contains(&element) {
                for (i, item) in items.iter().enumerate() {
                    let at = format!("{at}[{i}]");
                    if !item.is_table() {
                        return Err(ctx.error_at(&at, &at, format!("expected a table, found {}", item.type_str()), None));
                    }
                    walk(ctx, tables, known, &element, &at, item)?;
                }
            }
        }
        toml::Value::Table(t) => {
            for (k, v) in t {
                let child = format!("{pattern}.{k}");
                let named = format!("{pattern}.NAME");
                let at = format!("{at}.{k}");
                if pattern == "variant[]" {
                    // A variant's keys are parameter paths of the document.
                    walk(ctx, tables, known, k, &at, v)?;
                } else if known.contains(&child) {
                    walk(ctx, tables, known, &child, &at, v)?;
                } else if known.contains(&named) {
                    walk(ctx, tables, known, &named, &at, v)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}
