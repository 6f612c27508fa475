//! Values of the file that no run reads, checked all the same: a base
//! value every sweep point replaces, and a value `[scenario.quick]`
//! replaces in a quick run. A bad one would otherwise pass `check` and
//! fail, or be used, the day the sweep or the quick override is removed
//! (issue 33: `machine.profile = "/dev/zero"` passed when swept).

use super::point::{Prep, prepare_layered};
use super::{Ctx, Variant, overrides, sweep};
use crate::machine::MachineCache;
use crate::workload::Workload;
use std::path::Path;

/// What [`base_hidden_by_the_sweep`] needs of the loading scenario.
pub(super) struct Hidden<'a> {
    /// The base table (with any quick overrides applied).
    pub base: &'a toml::Table,
    /// The variants; the first one is resolved with the base.
    pub variants: &'a [Variant],
    /// The sweep's axes and flattened `(path, span path, values)`.
    pub axes: &'a [sweep::Axis],
    /// The flattened sweep.
    pub swept: &'a [(String, String, Vec<toml::Value>)],
    /// The scenario's workload.
    pub workload: &'static dyn Workload,
    /// The scenario's folder (relative data files).
    pub dir: &'a Path,
    /// Machines built so far.
    pub machines: &'a MachineCache,
    /// Whether quick overrides are applied (for locating errors).
    pub quick: bool,
}

/// Checks the base values that every sweep point replaces: the first
/// variant at the sweep's first point, but with each swept key the base
/// sets put back to the base's value, is validated and prepared like a
/// run. Nothing to do when the base sets no swept key.
pub(super) fn base_hidden_by_the_sweep(ctx: &Ctx<'_>, h: &Hidden<'_>) -> Result<(), super::ScenarioError> {
    if !h.swept.iter().any(|(path, _, _)| overrides::get_path(h.base, path).is_some()) {
        return Ok(());
    }
    first_point_with_the_base(ctx, h.base, h, h.axes, h.swept, h.quick)
}

/// Checks the values `[scenario.quick]` replaces in a quick run (issue 33:
/// `run --quick` accepted `machine.profile = "/dev/zero"` when quick set
/// the profile): the first variant at the first point of the file's own
/// sweep, on `full`, the base as written (before quick), is validated and
/// prepared like a run, its errors located at the file's values.
pub(super) fn base_hidden_by_quick(ctx: &Ctx<'_>, full: &toml::Table, h: &Hidden<'_>) -> Result<(), super::ScenarioError> {
    let axes = sweep::axes(full.get("sweep")).map_err(|e| ctx.error_at(&e.at, &e.at, e.message, e.suggestion))?;
    if sweep::count(&axes) == Some(0) {
        return Ok(()); // an empty list is refused with the quick plan
    }
    let swept = sweep::flatten(&axes);
    first_point_with_the_base(ctx, full, h, &axes, &swept, false)
}

/// Prepares the first variant at the sweep's first point, each swept key
/// the base sets keeping the base's value.
fn first_point_with_the_base(
    ctx: &Ctx<'_>,
    base: &toml::Table,
    h: &Hidden<'_>,
    axes: &[sweep::Axis],
    swept: &[(String, String, Vec<toml::Value>)],
    quick: bool,
) -> Result<(), super::ScenarioError> {
    let mut layers: Vec<(String, toml::Table)> = Vec::new();
    if let Some(v) = h.variants.first() {
        layers.push(("variant[0]".into(), v.overrides.clone()));
    }
    // Swept keys the base does not set take the first point's value.
    let first = sweep::point(axes, 0);
    for ((path, at, _), value) in swept.iter().zip(first) {
        if overrides::get_path(base, path).is_none() {
            let mut t = toml::Table::new();
            overrides::set_path(&mut t, path, value).map_err(|m| ctx.error_at(at, path, m, None))?;
            layers.push((at.clone(), t));
        }
    }
    let mut base = base.clone();
    base.remove("sweep");
    let prep = Prep {
        workload: h.workload,
        machines: h.machines,
        dir: h.dir,
        quick,
    };
    prepare_layered(ctx, &base, &layers, &prep, None)?;
    Ok(())
}
