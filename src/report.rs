//! Turns run results into outputs: summary statistics, CSV and JSON, plots,
//! the printed report, and the expectation checks.

pub mod csv;
pub mod expect;
pub mod json;
pub mod plot;
pub mod plots;
pub mod stats;
pub mod text;
pub mod write;

use crate::runner::RunResult;
use crate::scenario::Scenario;
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
}

impl Outcome {
    /// True when every expectation held.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.pass)
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes every output of scenario `s` under `out/<name>/`.
pub fn write_outputs(s: &Scenario, results: &[RunResult], out: &Path) -> Result<Outcome, ReportError> {
    let dir = out.join(&s.doc.scenario.name);
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let rows = stats::summarise(s, results);
    let checks = expect::check_all(s, &rows);
    let text = text::report(s, &rows, &checks);
    let mut staged = write::Staged::default();
    let res = stage_all(s, results, &rows, &text, &dir, &mut staged);
    if let Err(e) = res {
        staged.abort();
        return Err(e);
    }
    staged.commit().map_err(io(&dir))?;
    Ok(Outcome { text, checks, dir })
}

fn stage_all(
    s: &Scenario,
    results: &[RunResult],
    rows: &[stats::Summary],
    text: &str,
    dir: &Path,
    staged: &mut write::Staged,
) -> Result<(), ReportError> {
    let put = |name: &str, body: String, staged: &mut write::Staged| -> Result<(), ReportError> {
        let p = dir.join(name);
        staged.write(&p, body.as_bytes()).map_err(io(&p))
    };
    put("runs.csv", csv::runs_csv(s, results), staged)?;
    put("summary.csv", csv::summary_csv(s, rows), staged)?;
    put("summary.json", json::summary_json(s, rows), staged)?;
    put("report.txt", text.to_string(), staged)?;
    put("scenario.resolved.toml", s.resolved_toml.clone(), staged)?;
    for p in &s.doc.plot {
        let spec = plots::spec(s, p, rows);
        let stem = plots::stem(p);
        let svg_path = dir.join(format!("{stem}.svg"));
        let svg = plot::render_svg(&spec).map_err(|source| ReportError::Plot {
            path: svg_path.clone(),
            source,
        })?;
        put(&format!("{stem}.svg"), svg, staged)?;
        let png_path = dir.join(format!("{stem}.png"));
        plot::render_png(&spec, &write::temp_name(&png_path)).map_err(|source| ReportError::Plot {
            path: png_path.clone(),
            source,
        })?;
        staged.adopt(&png_path);
    }
    Ok(())
}
