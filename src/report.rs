//! Turns run results into outputs: summary statistics, CSV and JSON, plots,
//! the printed report, and the expectation checks.

pub mod compare;
pub mod compare_out;
pub mod csv;
pub mod expect;
pub mod json;
pub mod model;
pub mod plot;
pub mod plots;
pub mod speedup;
pub mod stats;
pub mod steps;
pub mod text;
pub mod validation;
pub mod warnings;
pub mod write;

use crate::runner::RunResult;
use crate::scenario::Scenario;
use crate::scenario::names::LABEL_COLUMN_SUFFIX;
use std::path::{Path, PathBuf};

/// Why outputs could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A result file could not be serialized.
    #[error("cannot write {}: {source}", path.display())]
    Model {
        /// The file.
        path: PathBuf,
        /// What the serializer said.
        source: model::ModelError,
    },
    /// A plot could not be drawn.
    #[error("cannot draw {}: {source}", path.display())]
    Plot {
        /// The plot file.
        path: PathBuf,
        /// The plotting error.
        source: plot::PlotError,
    },
}

/// What a finished run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The printed report.
    pub text: String,
    /// The expectation checks.
    pub checks: Vec<expect::Check>,
    /// The folder the outputs went to.
    pub dir: PathBuf,
    /// Warnings about degenerate results (also in the text).
    pub warnings: Vec<String>,
    /// The before / after tables for a patch description (`patch.txt`).
    pub patch: String,
}

impl Outcome {
    /// True when every expectation held.
    pub fn passed(&self) -> bool {
        !self.checks.iter().any(expect::Check::fails)
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes every output of scenario `s` as the set `out/<name>/`, all or
/// nothing: `out/<name>` keeps naming the complete previous set until the
/// new one is complete and on disk (see [`write::Staging`]).
pub fn write_outputs(s: &Scenario, results: &[RunResult], out: &Path) -> Result<Outcome, ReportError> {
    let rows = stats::summarise(s, results);
    let checks = expect::check_all(s, &rows);
    // What a scenario file wrote (its `about`, a data file's path) is
    // quoted in the texts: control characters escaped, in the files as on
    // the terminal.
    let text = crate::text::escape_controls(&text::report(s, &rows, &checks)).into_owned();
    let patch = crate::text::escape_controls(&patch_report(s, results)).into_owned();
    let mut set = write::Staging::begin(out, &s.doc.scenario.name)?;
    stage_all(s, results, &rows, &text, &mut set)?;
    set.write("patch.txt", patch.as_bytes())?;
    let dir = set.commit()?;
    let warnings = warnings::warnings(s, &rows);
    Ok(Outcome {
        text,
        checks,
        dir,
        warnings,
        patch,
    })
}

/// The before / after tables of a scenario: the first variant against
/// each other one (see [`compare::patch_text`]).
pub fn patch_report(s: &Scenario, results: &[RunResult]) -> String {
    let d = &s.doc.scenario;
    if s.variants.len() < 2 {
        return format!("{}: one variant only; a before / after table needs two\n", d.name);
    }
    let mut out = String::new();
    for b in 1..s.variants.len() {
        let (before, after) = (&s.variants[0].name, &s.variants[b].name);
        let heading = format!(
            "{}: {before} (before) vs {after} (after)\nfsmeta {}, seed {}, {} run(s) per side, same random numbers",
            d.name,
            env!("CARGO_PKG_VERSION"),
            d.seed,
            d.replications
        );
        if b > 1 {
            out.push('\n');
        }
        out.push_str(&compare::patch_text(
            &heading,
            before,
            after,
            &compare::variant_pairs(s, results, 0, b),
        ));
    }
    out
}

fn stage_all(
    s: &Scenario,
    results: &[RunResult],
    rows: &[stats::Summary],
    text: &str,
    set: &mut write::Staging,
) -> Result<(), ReportError> {
    let model = |file: &str| {
        let path = PathBuf::from(file);
        move |e: model::ModelError| ReportError::Model { path, source: e }
    };
    set.write("runs.csv", csv::runs_csv(s, results).map_err(model("runs.csv"))?.as_bytes())?;
    set.write("summary.csv", csv::summary_csv(s, rows).map_err(model("summary.csv"))?.as_bytes())?;
    set.write(
        "summary.json",
        json::summary_json(s, rows).map_err(model("summary.json"))?.as_bytes(),
    )?;
    set.write("report.txt", text.as_bytes())?;
    set.write("scenario.resolved.toml", s.resolved_toml.as_bytes())?;
    set.write("points.resolved.toml", points_resolved(s).as_bytes())?;
    for r in results.iter().filter(|r| r.plan.replication == 0) {
        let prepared = &s.points[r.plan.point].configs[r.plan.variant].prepared;
        if let Some(text) = prepared.text_outputs(&r.metrics) {
            let variant = &s.variants[r.plan.variant].name;
            let name = if s.points.len() > 1 {
                format!("{variant}.p{}.txt", r.plan.point)
            } else {
                format!("{variant}.txt")
            };
            set.write(&name, text.as_bytes())?;
        }
    }
    for p in &s.doc.plot {
        let spec = plots::figure(s, p, rows);
        let stem = plots::stem(p);
        let (svg_name, png_name) = (format!("{stem}.svg"), format!("{stem}.png"));
        let plot_err = |path: PathBuf| move |source| ReportError::Plot { path, source };
        let svg = plot::render_figure_svg(&spec).map_err(plot_err(set.path(&svg_name)))?;
        set.write(&svg_name, svg.as_bytes())?;
        let png = set.path(&png_name);
        plot::render_figure_png(&spec, &png).map_err(plot_err(png.clone()))?;
        set.adopt(&png_name)?;
    }
    Ok(())
}

/// `points.resolved.toml`: for every point and variant, each parameter
/// the sweep and the variant set, with the value read back from that
/// run's resolved document (the value the run used), and the point's
/// labels (`labels`, by swept path) where its axes have them.
pub fn points_resolved(s: &Scenario) -> String {
    let mut out = String::from(
        "# Every point and variant: the parameters its sweep values and variant set,\n# as read back from the run's resolved document (the values the run used).\n",
    );
    for (pi, p) in s.points.iter().enumerate() {
        // The point's labels, by the path their label column names.
        let labels: toml::Table = s
            .point_columns()
            .into_iter()
            .zip(s.point_cells(pi))
            .filter_map(|(c, v)| Some((c.strip_suffix(LABEL_COLUMN_SUFFIX)?.to_string(), toml::Value::String(v))))
            .collect();
        for (vi, c) in p.configs.iter().enumerate() {
            let mut set = toml::Table::new();
            for (path, v) in &c.applied {
                set.insert(path.clone(), v.clone());
            }
            let mut entry = toml::Table::new();
            entry.insert("point".into(), toml::Value::Integer(pi as i64));
            entry.insert("variant".into(), toml::Value::String(s.variants[vi].name.clone()));
            if !labels.is_empty() {
                entry.insert("labels".into(), toml::Value::Table(labels.clone()));
            }
            entry.insert("set".into(), toml::Value::Table(set));
            let one = toml::Table::from_iter([("point".to_string(), toml::Value::Array(vec![toml::Value::Table(entry)]))]);
            out.push('\n');
            out.push_str(&toml::to_string(&one).unwrap_or_default());
        }
    }
    out
}
