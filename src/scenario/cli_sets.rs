//! `--set PATH=VALUE`: parameter values given on the command line, a
//! layer over the scenario file's base document (after `[scenario.quick]`),
//! checked as the file's own keys are: an unknown or misspelt path, a value
//! of the wrong type or out of range is an error naming `--set PATH`; a
//! value the resolved document does not read back (a key the workload
//! ignores) is refused; so is a path a sweep axis or a variant sets at
//! every point, which would hide the value everywhere.

use super::applied::Set;
use super::overrides::{get_path, merge, set_path};
use super::{Ctx, ScenarioError, Variant};

/// What an error's place starts with when a `--set` value caused it (it
/// has no place in the file).
pub(super) const AT: &str = "--set ";

/// How an error at a `--set` path is named (no file location).
pub(super) fn at(path: &str) -> String {
    format!("{AT}{path}")
}

/// Whether parameter path `x` is `y` or lies inside it (`y.k`, `y[n]`).
fn within(x: &str, y: &str) -> bool {
    x == y || x.starts_with(&format!("{y}.")) || x.starts_with(&format!("{y}["))
}

/// The sections a `--set` may not reach: the scenario's lists, the sweep
/// and quick mode (write those in the file), and the workload's kind,
/// which decides what the file's other sections mean.
const NOT_SETTABLE: [&str; 7] = [
    "sweep",
    "variant",
    "expect",
    "plot",
    "scenario.quick",
    "scenario.name",
    "workload.kind",
];

/// Whether setting `path` to `value` sets `protected` or a value inside
/// it: `path` is `protected` or lies inside it, or `value` is a table
/// that holds it (`--set workload={kind="x"}`).
fn reaches(path: &str, value: &toml::Value, protected: &str) -> bool {
    let holds = protected
        .strip_prefix(path)
        .and_then(|rest| rest.strip_prefix('.'))
        .is_some_and(|rest| matches!(value, toml::Value::Table(t) if get_path(t, rest).is_some()));
    within(path, protected) || holds
}

/// Merges each `(path, value)` into `base`, in order.
pub(super) fn apply(ctx: &Ctx<'_>, sets: &[(String, toml::Value)], base: &mut toml::Table) -> Result<(), ScenarioError> {
    for (path, value) in sets {
        let here = at(path);
        if let Some(s) = NOT_SETTABLE.iter().find(|s| reaches(path, value, s)) {
            let message = format!("`{s}` is not set from the command line: write it in the scenario file");
            return Err(ctx.error_at(&here, path, message, None));
        }
        let mut layer = toml::Table::new();
        set_path(&mut layer, path, value.clone())
            .and_then(|()| merge(base, &layer))
            .map_err(|m| ctx.error_at(&here, path, m, None))?;
        super::checks::shared_sections_read(ctx, base, &here, path)?;
    }
    Ok(())
}

/// The values set, for the read-back check.
pub(super) fn as_sets(sets: &[(String, toml::Value)]) -> Vec<Set> {
    sets.iter()
        .map(|(path, value)| Set {
            at: at(path),
            path: path.clone(),
            value: value.clone(),
        })
        .collect()
}

/// Whether parameter paths `a` and `b` name the same value or one holds
/// the other.
fn overlap(a: &str, b: &str) -> bool {
    within(a, b) || within(b, a)
}

/// Refuses a `--set` path that a sweep axis (`swept`) or a variant sets:
/// its value would be replaced at every point or in that variant.
pub(super) fn not_hidden(
    ctx: &Ctx<'_>,
    sets: &[(String, toml::Value)],
    swept: &[String],
    variants: &[Variant],
) -> Result<(), ScenarioError> {
    for (path, _) in sets {
        if let Some(axis) = swept.iter().find(|s| overlap(path, s)) {
            let message = format!("the sweep sets `{axis}` at every point, so this value would be used by none: change the sweep instead");
            return Err(ctx.error_at(&at(path), path, message, None));
        }
        if let Some(v) = variants
            .iter()
            .find(|v| get_path(&v.overrides, path).is_some() || overlaps_any(&v.overrides, path))
        {
            let message = format!(
                "variant `{}` sets it, so that variant would not use this value: change the variant instead",
                v.name
            );
            return Err(ctx.error_at(&at(path), path, message, None));
        }
    }
    Ok(())
}

/// Whether a leaf path of `layer` overlaps `path`.
fn overlaps_any(layer: &toml::Table, path: &str) -> bool {
    super::overrides::leaf_paths(layer).iter().any(|leaf| overlap(leaf, path))
}

/// The `--set` path that sets `field` or a value inside it.
pub(super) fn key_for<'a>(sets: &'a [(String, toml::Value)], field: &str) -> Option<&'a String> {
    sets.iter().map(|(p, _)| p).find(|p| overlap(p, field))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_that_holds_a_protected_key_reaches_it() {
        let kind: toml::Table = toml::from_str("kind = \"fsmark\"").expect("toml");
        let threads: toml::Table = toml::from_str("threads = 4").expect("toml");
        let int = toml::Value::Integer(1);
        assert!(reaches("workload", &toml::Value::Table(kind), "workload.kind"));
        assert!(!reaches("workload", &toml::Value::Table(threads), "workload.kind"));
        assert!(reaches("workload.kind", &int, "workload.kind"));
        assert!(reaches("sweep.x", &int, "sweep"));
        assert!(reaches("path[0]", &int, "path") && !reaches("paths", &int, "path"));
        assert!(!reaches("workload.threads", &int, "workload.kind"));
    }

    #[test]
    fn paths_overlap_when_one_holds_the_other() {
        assert!(overlap("xfs_alloc.work_scale", "xfs_alloc"));
        assert!(overlap("path[2].every", "path"));
        assert!(overlap("machine.profile", "machine.profile"));
        assert!(!overlap("machine.profile", "machine.placement"));
        assert!(!overlap("xfs_alloc.work", "xfs_alloc.work_scale"));
    }
}
