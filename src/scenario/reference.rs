//! The scenario reference: every parameter (path, type in plain words,
//! range, default, meaning) and every metric (name, unit, meaning) of the
//! shared sections and of each workload, from the schema the workloads
//! declare. `fsmeta keys` prints it; `docs/scenario-reference.md` is the
//! same text (a test keeps it current).

use super::config::{MachineConfig, ScenarioMeta, WorkloadConfig};
use crate::workload::contract::param as p;
use crate::workload::{ParamSpec, Sections, Workload};
use std::fmt::Write;

/// The keys every scenario may write.
pub const SHARED: &[ParamSpec] = &[
    p(
        "scenario.name",
        "a word",
        "letters, digits, - _ .; 1 to 100 bytes, not starting with .",
        "the study's name and output folder",
    ),
    p("scenario.about", "text", "any", "one line on what the study shows"),
    p(
        "scenario.seed",
        "a whole number",
        "0 to 2^63 - 1",
        "master seed: same seed, same bytes",
    ),
    p("scenario.replications", "a whole number", "1 or more", "runs per point and variant"),
    p(
        "scenario.ops",
        "a whole number",
        "1 to 10^10 (path)",
        "stop a run after this many operations",
    ),
    p(
        "scenario.time_ms",
        "a time in ms",
        "above 0, at most 10^7 (path)",
        "stop a run at this simulated time",
    ),
    p(
        "scenario.quick",
        "a table",
        "parameter path -> value; sweep.PATH -> list, or { values, labels } (a plain list over a labelled sweep keeps the labels of its values)",
        "what --quick changes ({} = already quick)",
    ),
    p(
        "machine.profile",
        "a name or a path",
        "a built-in (fsmeta machines) or NAME.toml relative to the scenario",
        "the machine (path, fsmark; btrfs-dir and xfs-alloc price their counted events with it)",
    ),
    p(
        "machine.topology",
        "a table",
        "sockets, cores_per_socket, smt, llcs_per_socket",
        "replaces the profile's topology (path, fsmark)",
    ),
    p(
        "machine.topology.sockets / cores_per_socket / smt / llcs_per_socket",
        "whole numbers",
        "1 or more each",
        "one field of the profile's topology, the others kept (path, fsmark)",
    ),
    p(
        "machine.placement",
        "a word",
        "spread, compact, interleave",
        "threads on CPUs: spread = CPU i for thread i (Linux numbering); compact = fill SMT siblings first; interleave = alternate sockets (path, fsmark)",
    ),
    p(
        "machine.wakeup_ns",
        "a time in ns",
        "0 or more",
        "wake-up latency of a sleeping mutex waiter (path)",
    ),
    p(
        "machine.online_cpus",
        "a whole number",
        "at least the thread count",
        "CPUs the kernel under test sees (a VM's vCPUs); sizes the default percpu_counter batch (path; default all CPUs)",
    ),
    p(
        "workload.kind",
        "a word",
        "a registered workload (see below)",
        "the kind of study; cannot be overridden",
    ),
    p(
        "workload.threads",
        "a whole number",
        "1 to the machine's CPUs (path)",
        "simulated threads, one per CPU",
    ),
    p(
        "variant[].name",
        "a word",
        "unique; a file name: 1 to 100 bytes, no / \\ or control characters, not starting with .",
        "a named set of overrides of any parameter path; an element of a list of tables is `NAME[N]` (`\"path[2]\".every = 8`)",
    ),
    p(
        "variant[].PATH[]",
        "a list of tables",
        "as the key PATH takes",
        "an override that is a whole list of tables (`path = [{ work = \"w\" }, ...]`) replaces the base's list",
    ),
    p(
        "sweep.PATH",
        "a list, or a table",
        "values of PATH; PATH may name an element of a list of tables: `\"path[2].every\"`, `\"xfs_alloc.histogram[1].extents\"` (index from 0)",
        "the what-if grid: the cross product of every list; each point's values, read back from its resolved document, are in points.resolved.toml; `{ values = [...], labels = [...] }` names the points (see `sweep.PATH.labels`)",
    ),
    p(
        "sweep.PATH.values",
        "a list",
        "as `sweep.PATH`",
        "the values, when the axis names them: `\"PATH\" = { values = [...], labels = [...] }`",
    ),
    p(
        "sweep.PATH.labels",
        "a list of text",
        "one per value; unique; 1 to 32 characters; no `/`, `\\`, control characters or leading `.` (usable as a file name)",
        "names of the axis's points, shown instead of the values in plot ticks (the axis is drawn as categories, so no log x), titles, reports, patch.txt and a `PATH:label` column of runs.csv, summary.csv and summary.json (the value columns stay); the values still select points (`at`) and seed the random numbers. Without labels, a list of lists or tables is named by what tells its values apart (`[3]=5`: element 3 is 5; `[0].extents=1000`; at most two elements and 32 characters), else by place (`#1`, `#2`, ...)",
    ),
    p(
        "sweep.zip[].PATH",
        "a list",
        "values of PATH; every list of one [[sweep.zip]] has the same length",
        "lists that advance together as one axis (a machine with its thread count)",
    ),
    p(
        "sweep.zip[].labels",
        "a list of text",
        "as `sweep.PATH.labels`, one per step of the group",
        "names of the group's steps (`[\"host-a\", \"host-b\"]`), shown alone for the whole step, in one `PATH:label` column after the group's values (PATH its first path)",
    ),
    p(
        "plot[].kind",
        "a word",
        "line, bars, heatmap, utilisation, histogram",
        "line: metric `y` against swept `x`, one series per variant, 95% CI bars; bars: the same as grouped bars; heatmap: `metric` over swept `x` and `y`, one map per variant or the `ratio = { of, over }`; utilisation: the `top` (default 8) busiest lines and locks per variant at the first point `at` selects (path); histogram: a log2-bucket step axis `x` (e.g. `insert_hist`), one series of bars per variant side by side in each bucket, at the first point `at` selects",
    ),
    p(
        "plot[].name",
        "a word",
        "unique among the plots; a file name: 1 to 100 bytes, no / \\ or control characters, not starting with .",
        "the file stem of the plot's .svg and .png (default `<y>-vs-<x>`)",
    ),
    p(
        "plot[].x / y / series",
        "names",
        "a swept path or a step axis of the workload (`phase`, `insert_hist`) / a metric (on a step axis: a value it reports at each step, e.g. `batches_per_flush`; heatmap: a swept path) / variant or a swept path",
        "a metric against a swept parameter, or a value at each step of a step axis (the metrics `AXIS.STEP.VALUE` below)",
    ),
    p(
        "plot[].metric / ratio / top",
        "a metric / a table / a whole number",
        "heatmap: a metric and { of = VARIANT, over = VARIANT }; utilisation: 1 or more",
        "what a heat map colours; how many resources a utilisation plot shows",
    ),
    p(
        "plot[].at / variants / title / x_label / y_label / x_log / y_log / share",
        "a table / names / text / true or false",
        "swept path -> value; variant names",
        "which points and variants; the words on the plot; log axes; histogram: each variant's share of its samples (%) instead of counts",
    ),
    p(
        "plot[].x_scale",
        "a word",
        "linear, log, log1m",
        "the x axis: log is x_log; log1m plots 1 - x on a log axis, for swept levels near 1 (0.99, 0.999, 0.9999; line and bars)",
    ),
    p(
        "plot[].marks",
        "a list of tables",
        "{ at = { PATH = VALUE, ... }, variant = NAME, value = NUMBER, label = TEXT }",
        "reference marks (e.g. published figures, label default `published`) drawn as hollow diamonds on line and bar plots, where `at` must give the plot's x (a step key on a step axis); on a histogram, vertical lines at `value` (in the bucketed unit, no `at`) in the variant's colour, one dash pattern per label",
    ),
    p(
        "plot[].marks[].at / variant / value / label",
        "a table / a name / a number / text",
        "swept path -> value (must give the plot's x; none on a histogram) / a variant / in the metric's unit / any",
        "one reference mark: where, which series, the figure, its legend (default `published`)",
    ),
    p(
        "expect[].metric",
        "a metric name",
        "a metric of the workload",
        "checked after the run; a failure exits 1",
    ),
    p(
        "expect[].variant",
        "a variant name",
        "a declared variant",
        "check this variant only (default: every variant)",
    ),
    p(
        "expect[].at",
        "a table",
        "swept path -> one of its values",
        "check only the points with these values (default: every point)",
    ),
    p(
        "expect[].within / target + tolerance_pct",
        "bounds",
        "[lo, hi] or a value and a percentage",
        "the accepted range",
    ),
    p(
        "expect[].role",
        "a word",
        "fitted, predicted",
        "for fsmeta validate: `fitted` = a knob was fitted on this figure; default predicted",
    ),
    p(
        "expect[].note",
        "text",
        "any",
        "printed with the check (e.g. the published figure's source)",
    ),
    p(
        "expect[].known_gap",
        "text",
        "why the model misses",
        "an honest miss: reported as `[gap]` with its value, never a pass, and does not fail the run",
    ),
    p(
        "expect[].measured_on",
        "a machine profile",
        "a built-in name or a profile file relative to the scenario",
        "the host the figure was measured on (a lab time): a run priced on another profile (--set machine.profile) reports the check `[n/a]`, neither passed nor failed; `metric` may name one only that profile makes the workload report (the btrfs twin's wall times need its [storage] table)",
    ),
    p(
        "expect[].ratio",
        "a table",
        "{ of = VARIANT, over = VARIANT }",
        "check the ratio of means between two variants",
    ),
    p(
        "expect[].ratio.of / over",
        "variant names",
        "declared variants",
        "numerator and denominator of the ratio",
    ),
];

fn table_row(out: &mut String, spec: &ParamSpec, default: &str) {
    let _ = writeln!(
        out,
        "| `{}` | {} | {} | {} | {} |",
        spec.path, spec.kind, spec.range, default, spec.meaning
    );
}

/// The default of `path` in `defaults`, as TOML text, or `-`.
fn default_of(defaults: &toml::Table, path: &str) -> String {
    let mut v: Option<&toml::Value> = None;
    for (i, part) in path.split('.').enumerate() {
        v = if i == 0 { defaults.get(part) } else { v.and_then(|x| x.get(part)) };
    }
    v.map_or("-".into(), |x| format!("`{x}`"))
}

/// The shared defaults as a table.
fn shared_defaults() -> toml::Table {
    let text = "[scenario]\nname = \"x\"\n[workload]\nkind = \"path\"\n";
    let meta: Result<toml::Table, _> = toml::from_str(text);
    let mut t = meta.unwrap_or_default();
    let scenario: Option<ScenarioMeta> = t.get("scenario").cloned().and_then(|v| v.try_into().ok());
    let workload: Option<WorkloadConfig> = t.get("workload").cloned().and_then(|v| v.try_into().ok());
    for (k, v) in [
        ("scenario", scenario.and_then(|s| toml::Value::try_from(s).ok())),
        ("workload", workload.and_then(|w| toml::Value::try_from(w).ok())),
        ("machine", toml::Value::try_from(MachineConfig::default()).ok()),
    ] {
        if let Some(v) = v {
            t.insert(k.into(), v);
        }
    }
    t
}

/// A workload's defaults: its sections resolved from empty tables.
fn workload_defaults(w: &dyn Workload) -> toml::Table {
    let empty: toml::Table = w
        .sections()
        .iter()
        .map(|s| (s.to_string(), toml::Value::Table(toml::Table::new())))
        .collect();
    w.resolved_toml(&Sections::Defaults(&empty))
        .ok()
        .and_then(|t| toml::from_str(&t).ok())
        .unwrap_or_default()
}

/// The reference as Markdown, for every workload in `registry` (or only
/// `only`).
pub fn reference(registry: &[&dyn Workload], only: Option<&str>) -> String {
    let mut out = String::from("# Scenario reference\n\nGenerated by `fsmeta keys > docs/scenario-reference.md`; do not edit by hand.\n");
    out.push_str("`±` in reports is the 95% confidence half-width of a mean over replications (Student's t).\n");
    if only.is_none() {
        out.push_str("\n## Shared sections\n\n| key | type | allowed | default | meaning |\n| --- | --- | --- | --- | --- |\n");
        let d = shared_defaults();
        for spec in SHARED {
            table_row(&mut out, spec, &default_of(&d, spec.path));
        }
    }
    for w in registry.iter().filter(|w| only.is_none_or(|k| k == w.kind())) {
        let _ = writeln!(out, "\n## Workload `{}`\n\n{}.\n", w.kind(), w.about());
        let _ = writeln!(
            out,
            "Sections: {}.\n",
            w.sections().iter().map(|s| format!("`[{s}]`")).collect::<Vec<_>>().join(", ")
        );
        out.push_str("| key | type | allowed | default | meaning |\n| --- | --- | --- | --- | --- |\n");
        let d = workload_defaults(*w);
        for spec in w.params() {
            table_row(&mut out, &spec, &default_of(&d, spec.path));
        }
        out.push_str("\n| metric | unit | meaning |\n| --- | --- | --- |\n");
        for m in w.metric_docs() {
            let _ = writeln!(out, "| `{}` | {} | {} |", m.name, m.unit, m.meaning);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::SHARED;
    use crate::machine::MachineConfig;

    /// Every sub-key `machine.topology` documents is one `[machine]` accepts.
    #[test]
    fn documented_topology_keys_parse() {
        let spec = SHARED.iter().find(|s| s.path == "machine.topology").expect("documented");
        for key in spec.range.split(", ") {
            let text = format!("topology = {{ {key} = 1 }}");
            if let Err(e) = toml::from_str::<MachineConfig>(&text) {
                panic!("documented `machine.topology.{key}` is refused: {e}");
            }
        }
    }
}
