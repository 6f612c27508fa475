//! `scenario.resolved.toml`: the base document with every default filled,
//! shared sections and the workload's own in the order a reader expects.

use super::config::{self, Document};
use crate::param::ParamError;
use crate::workload::{Sections, Workload};

/// The shared sections a workload reads, with every default filled.
#[derive(serde::Serialize)]
struct Head<'a> {
    scenario: &'a config::ScenarioMeta,
    #[serde(skip_serializing_if = "Option::is_none")]
    machine: Option<MachineHead<'a>>,
    workload: WorkloadHead<'a>,
}

/// The whole `[machine]`, or the keys of it the workload reads (its
/// profile alone for one that reads only `machine.profile`).
#[derive(serde::Serialize)]
#[serde(untagged)]
enum MachineHead<'a> {
    Whole(&'a config::MachineConfig),
    Part(toml::Table),
}

#[derive(serde::Serialize)]
struct WorkloadHead<'a> {
    kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    threads: Option<crate::machine::Threads>,
}

/// The scenario-wide lists (empty in a point's document).
#[derive(serde::Serialize)]
struct Tail<'a> {
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    variant: &'a [toml::Table],
    #[serde(skip_serializing_if = "toml::Table::is_empty")]
    sweep: &'a toml::Table,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    plot: &'a [config::PlotConfig],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    expect: &'a [config::ExpectConfig],
}

/// Only what the workload reads of the shared sections, so the resolved
/// file loads again.
fn head<'a>(doc: &'a Document, workload: &dyn Workload) -> Head<'a> {
    let reads = workload.reads_shared();
    Head {
        scenario: &doc.scenario,
        machine: if reads.contains(&"machine") {
            Some(MachineHead::Whole(&doc.machine))
        } else {
            machine_part(&doc.machine, reads).map(MachineHead::Part)
        },
        workload: WorkloadHead {
            kind: &doc.workload.kind,
            threads: reads.contains(&"workload.threads").then_some(doc.workload.threads),
        },
    }
}

fn tail(doc: &Document) -> Tail<'_> {
    Tail {
        variant: &doc.variant,
        sweep: &doc.sweep,
        plot: &doc.plot,
        expect: &doc.expect,
    }
}

/// The base document with every default filled: the shared sections
/// before the workload's (`[scenario]`, `[machine]`, `[workload]`), the
/// workload's own, then the rest (`[[variant]]`, `[sweep]`, `[[plot]]`,
/// `[[expect]]`).
pub fn resolved_text(doc: &Document, workload: &dyn Workload, sections: &toml::Table) -> Result<String, ParamError> {
    let own = workload.resolved_toml(&Sections::Table(sections))?;
    let head_text = toml::to_string_pretty(&head(doc, workload)).unwrap_or_default();
    let rest = toml::to_string_pretty(&tail(doc)).unwrap_or_default();
    Ok(join_toml(&[&head_text, &own, &rest]))
}

/// What [`resolved_text`] parses back to, built without the text (a
/// check of many points reads each point's values back from this), with
/// only the parts `paths` (parameter paths) fall in: the shared sections
/// when one of them is in one, the workload's sections (`own`, when the
/// prepared point kept them, else read from `sections`) when one is not.
pub fn resolved_table<'p>(
    doc: &Document,
    workload: &dyn Workload,
    sections: &toml::Table,
    own: Option<Result<toml::Table, ParamError>>,
    paths: impl Iterator<Item = &'p str> + Clone,
) -> Result<toml::Table, ParamError> {
    let bad = |e: toml::ser::Error| ParamError::new("", format!("the resolved document cannot be written: {e}"));
    let shared = |p: &str| config::SHARED_SECTIONS.contains(&p.split(['.', '[']).next().unwrap_or(p));
    let mut table = toml::Table::new();
    if paths.clone().any(|p| !shared(p)) {
        table = own.unwrap_or_else(|| workload.resolved_table(&Sections::Table(sections)))?;
    }
    if paths.clone().any(shared) {
        table.extend(toml::Table::try_from(head(doc, workload)).map_err(bad)?);
        table.extend(toml::Table::try_from(tail(doc)).map_err(bad)?);
    }
    Ok(table)
}

/// The keys of `[machine]` a workload reading `reads` (some
/// `machine.KEY` entries) reads, or `None` when it reads none.
fn machine_part(machine: &config::MachineConfig, reads: &[&str]) -> Option<toml::Table> {
    let whole = toml::Table::try_from(machine).ok()?;
    let part: toml::Table = whole
        .into_iter()
        .filter(|(k, _)| reads.iter().any(|r| r.strip_prefix("machine.") == Some(k.as_str())))
        .collect();
    (!part.is_empty()).then_some(part)
}

/// Joins TOML documents made of tables, one blank line between them.
fn join_toml(parts: &[&str]) -> String {
    let mut out = String::new();
    for p in parts.iter().map(|p| p.trim_matches('\n')).filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(p);
    }
    out.push('\n');
    out
}
