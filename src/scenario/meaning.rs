//! A scenario means what it says: every section, override and sweep key
//! must be something the scenario's workload reads. A parameter nobody
//! reads is an error, not a silent no-op (a typo in a variant would
//! otherwise make "percpu" equal "atomic").

use super::config::SHARED_SECTIONS;
use crate::param::ParamError;
use crate::text::closest;
use crate::workload::Workload;
use crate::workload::registry::owner_of;

/// Shared parameters that only some workloads read (see
/// [`Workload::reads_shared`]). The keys of `[machine]` come before
/// `machine` so a workload may read some of them alone (`machine.profile`
/// to price its counted work; `machine.topology` and `machine.placement`
/// to place threads without wake-ups or `num_online_cpus()`).
pub const OPTIONAL_SHARED: &[&str] = &[
    "machine.profile",
    "machine.topology",
    "machine.placement",
    "machine.wakeup_ns",
    "machine.online_cpus",
    "machine",
    "workload.threads",
    "scenario.ops",
    "scenario.time_ms",
];

/// Whether `workload` reads the shared parameter at `path` (or inside it):
/// it lists that key, or a section the key is in (`machine` covers
/// `machine.profile`).
fn reads(workload: &dyn Workload, path: &str) -> bool {
    match OPTIONAL_SHARED.iter().find(|k| path == **k || path.starts_with(&format!("{k}."))) {
        Some(k) => workload.reads_shared().iter().any(|r| r == k || k.starts_with(&format!("{r}."))),
        None => true,
    }
}

/// Checks a parameter path set by a `[[variant]]`, a `[sweep]` key or a
/// `[scenario] quick` key (`what` says which, for the message).
pub fn check_override(path: &str, what: &str, workload: &dyn Workload, registry: &[&dyn Workload]) -> Result<(), ParamError> {
    let head = path.split(['.', '[']).next().unwrap_or("");
    if workload.sections().contains(&head) {
        return Ok(());
    }
    if SHARED_SECTIONS.contains(&head) {
        let allowed = OPTIONAL_SHARED.iter().any(|k| path == *k || path.starts_with(&format!("{k}.")));
        if !allowed {
            let settable: Vec<&str> = OPTIONAL_SHARED.iter().copied().filter(|k| reads(workload, k)).collect();
            let hint = closest(path, settable.iter().copied());
            let message = match &hint {
                Some(_) => format!("no parameter `{path}`"),
                None => format!("`{path}` cannot be set by {what}"),
            };
            return Err(ParamError::new(path, message).suggest(hint));
        }
        if !reads(workload, path) {
            return Err(not_read(path, workload));
        }
        return Ok(());
    }
    if let Some(owner) = owner_of(registry, head) {
        return Err(ParamError::new(
            path,
            format!(
                "`{head}` is read by workload `{}`, not by this scenario's `{}`",
                owner.kind(),
                workload.kind()
            ),
        ));
    }
    let mut known: Vec<&str> = OPTIONAL_SHARED.to_vec();
    known.extend(workload.sections());
    Err(
        ParamError::new(path, format!("no parameter `{path}`; {what} may set: {}", known.join(", ")))
            .suggest(closest(path, known.iter().copied())),
    )
}

fn not_read(path: &str, workload: &dyn Workload) -> ParamError {
    ParamError::new(path, format!("workload `{}` does not read `{path}`; remove it", workload.kind()))
}

/// Checks the base document: shared parameters the workload does not read
/// must not be written. A section it reads nothing of is named whole
/// (`machine`); inside one it reads in part, each key written is checked
/// (`machine.placement` for a workload reading `machine.profile` only).
pub fn check_base(table: &toml::Table, workload: &dyn Workload) -> Result<(), ParamError> {
    let tops = OPTIONAL_SHARED
        .iter()
        .filter(|k| !OPTIONAL_SHARED.iter().any(|p| k.starts_with(&format!("{p}."))));
    for path in tops {
        let Some(value) = super::overrides::get_path(table, path) else {
            continue;
        };
        let any = workload
            .reads_shared()
            .iter()
            .any(|r| r == path || r.starts_with(&format!("{path}.")) || path.starts_with(&format!("{r}.")));
        if !any {
            return Err(not_read(path, workload));
        }
        if let toml::Value::Table(t) = value {
            for leaf in leaf_paths(t) {
                let full = format!("{path}.{leaf}");
                if !reads(workload, &full) {
                    return Err(not_read(&full, workload));
                }
            }
        }
    }
    Ok(())
}

pub use super::overrides::leaf_paths;
