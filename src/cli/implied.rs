//! `fsmeta fit PROFILE --implied DIR`: the knob each live time or rate of
//! the lab runs in DIR would need on PROFILE (issue 30).
//!
//! A host's one knob (`work_scale`) is fitted on one named figure and
//! every other time is a prediction. Where a prediction misses, the miss
//! is either the knob not carrying to that path (the path's counted
//! straight-line loads cost more or less than the fitted figure's do) or
//! something the knob does not touch (a count, a measured price, work not
//! counted). Each twin figure is a line in the knob, `a + b x work_scale`
//! (a time; a rate's time per operation, `1 / rate`): the twin is run on
//! the profile at its fitted knob `k` and at `2k` (the profile copied with
//! `[knob]` rewritten), and the live median then implies `(live - a) / b`.
//! Figures that agree on one knob are priced alike by it; a figure whose
//! twin does not move with the knob gets none. Where a run has threads
//! sharing lines, the twin is not exactly linear in the knob: the line is
//! the secant through `k` and `2k`.

use super::{CliError, Limits, Status};
use fsmeta::lab::twin::{self, Outputs, Row};
use std::path::{Path, PathBuf};

/// What `fsmeta fit PROFILE --implied DIR` was asked.
pub(super) struct ImpliedArgs<'a> {
    /// The profile whose knob prices the twins.
    pub profile: &'a Path,
    /// The folder of `lab-NAME` runs.
    pub dir: &'a Path,
    /// Where the table is written as `implied-knob.csv`.
    pub out: &'a Path,
}

/// One figure's line in the knob and the knob its live median implies.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Implied {
    /// The twin's part without the knob: time units, or us per operation
    /// for a rate.
    pub a: f64,
    /// The twin's part per unit of knob, in the same units.
    pub b: f64,
    /// The knob's part of the twin at the profile's knob `k`: `b k / (a +
    /// b k)`, a fraction.
    pub share: f64,
    /// The knob at which the twin meets the live median; `None` when the
    /// twin does not move with the knob (|b k| under 0.1% of the twin).
    pub knob: Option<f64>,
}

/// The least share of the twin the knob's term must have for a figure to
/// count in the printed spread of implied knobs: where the knob is a
/// small part of a figure, a small miss elsewhere in it implies a large
/// knob.
pub(super) const MIN_SHARE: f64 = 0.25;

/// The figure as a time: a rate (`*per_sec`) as us per operation.
fn as_time(metric: &str, v: f64) -> f64 {
    if metric.contains("per_sec") { 1e6 / v } else { v }
}

/// Solves the line through the twin's `at_k` (at the first of `knobs`)
/// and `at_k2` (at the second) and the knob at which it gives `live`;
/// `None` for a count (no time or rate), a zero figure or equal knobs.
pub(super) fn implied(metric: &str, knobs: (f64, f64), at_k: f64, at_k2: f64, live: f64) -> Option<Implied> {
    twin::fast_end(metric, &[live])?;
    let (k, k2) = knobs;
    if [at_k, at_k2, live].iter().any(|&v| v == 0.0 || !v.is_finite()) || k <= 0.0 || k2 == k {
        return None;
    }
    let (t1, t2, l) = (as_time(metric, at_k), as_time(metric, at_k2), as_time(metric, live));
    let b = (t2 - t1) / (k2 - k);
    let a = t1 - b * k;
    let moves = (b * k).abs() > 1e-3 * t1.abs();
    Some(Implied {
        a,
        b,
        share: b * k / t1,
        knob: moves.then(|| (l - a) / b),
    })
}

/// Runs every lab run's twin at the profile's knob and twice it, prints
/// each time's and rate's implied knob, writes `OUT/implied-knob.csv`.
pub(super) fn implied_knobs(a: &ImpliedArgs<'_>, jobs: usize, limits: Limits) -> Result<Status, CliError> {
    let profile = fsmeta::machine::load_profile(a.profile).map_err(|e| CliError::msg(format!("{}: {e}", a.profile.display())))?;
    let Some(knob) = profile.knob.as_ref() else {
        return Err(CliError::msg(format!(
            "{} has no [knob]: fit it first (fsmeta fit {})",
            a.profile.display(),
            a.profile.display()
        )));
    };
    let k = knob.work_scale;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = std::env::temp_dir().join(format!("fsmeta-implied-{}-{stamp}", std::process::id()));
    // A folder of its own: refused if anything is there already.
    std::fs::create_dir(&tmp).map_err(|e| CliError::msg(format!("{}: {e}", tmp.display())))?;
    let result = run_all(a, &profile, k, &tmp, jobs, limits);
    let _ = std::fs::remove_dir_all(&tmp);
    let rows = result?;
    if rows.is_empty() {
        return Err(CliError::msg(format!(
            "{}: no lab run (lab-NAME folder) whose twin takes the host's knob",
            a.dir.display()
        )));
    }
    outln!("{}", table(&rows, k, &knob.fitted_on));
    std::fs::create_dir_all(a.out).map_err(|e| CliError::msg(format!("{}: {e}", a.out.display())))?;
    let csv = a.out.join("implied-knob.csv");
    write_csv(&csv, &rows).map_err(|e| CliError::msg(format!("cannot write {}: {e}", csv.display())))?;
    outln!("written: {}", csv.display());
    Ok(Status::Ok)
}

/// A figure of one lab run, its twin and the knob it implies.
struct Figure {
    experiment: String,
    row: Row,
    line: Implied,
}

/// The figures of every lab run in `a.dir` whose twin takes the host's
/// knob, their twins run under `tmp` at the knob `k` and at a second
/// knob ([`second_knob`]).
fn run_all(
    a: &ImpliedArgs<'_>,
    profile: &fsmeta::machine::MachineProfile,
    k: f64,
    tmp: &Path,
    jobs: usize,
    limits: Limits,
) -> Result<Vec<Figure>, CliError> {
    let k2 = second_knob(k);
    let at_k = copy_with_knob(a.profile, k, &tmp.join("at-k.toml"))?;
    let at_k2 = copy_with_knob(a.profile, k2, &tmp.join("at-k2.toml"))?;
    let mut figures = Vec::new();
    for ldir in super::validate::lab_folders(a.dir, "fsmeta fit --implied").map_err(CliError::msg)? {
        let run = Run {
            ldir: &ldir,
            profile,
            knobs: (k, k2),
            profiles: (&at_k, &at_k2),
            tmp,
        };
        figures.extend(folder_figures(&run, a.profile, jobs, limits)?);
    }
    Ok(figures)
}

/// The knob of the second twin run: twice `k`, or half of it where twice
/// would pass the profile's largest knob.
fn second_knob(k: f64) -> f64 {
    if 2.0 * k <= fsmeta::machine::profile::MAX_WORK_SCALE {
        2.0 * k
    } else {
        k / 2.0
    }
}

/// One lab folder's twin runs: the folder, the profile, the two knobs and
/// the profiles' copies with them, the scratch folder.
struct Run<'a> {
    ldir: &'a Path,
    profile: &'a fsmeta::machine::MachineProfile,
    knobs: (f64, f64),
    profiles: (&'a Path, &'a Path),
    tmp: &'a Path,
}

/// The figures of the lab run `r.ldir` (none, said on stderr, where its
/// twin cannot be read or does not take the host's knob).
fn folder_figures(r: &Run<'_>, profile_path: &Path, jobs: usize, limits: Limits) -> Result<Vec<Figure>, CliError> {
    let ldir = r.ldir;
    let live = Outputs::read(ldir)?;
    let field = |key: &str| live.lab_txt.as_deref().and_then(|t| twin::lab_field(t, key)).map(str::to_string);
    let (Some(exp), Some(scenario)) = (field("experiment:"), field("twin:")) else {
        errln!(
            "fsmeta fit --implied: {} has no lab.txt naming its experiment and twin: skipped",
            ldir.display()
        );
        return Ok(Vec::new());
    };
    let doc: toml::Table = match std::fs::read_to_string(&scenario).map(|t| toml::from_str(&t)) {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) => return Err(CliError::msg(format!("{scenario}: {e}"))),
        Err(e) => {
            return Err(CliError::msg(format!(
                "{}: its twin {scenario}: {e} (run from the repository's folder)",
                ldir.display()
            )));
        }
    };
    if !twin::takes_host_knob(&doc) {
        errln!(
            "fsmeta fit --implied: {}: its twin ({scenario}) does not take the host's knob: skipped",
            ldir.display()
        );
        return Ok(Vec::new());
    }
    if let Some(fm) = field("cpu model:")
        && !r.profile.measured_on_cpu(&fm)
    {
        errln!(
            "fsmeta fit --implied: warning: {} ran on {fm}, and {} measured `{}`: the knobs are for that pairing",
            ldir.display(),
            profile_path.display(),
            r.profile.cpu
        );
    }
    let name = ldir.file_name().and_then(|n| n.to_str()).unwrap_or("lab").to_string();
    // The folder names the setup (lab-xfs-alloc-100000), the experiment
    // only the kind (xfs-alloc).
    let setup = name.strip_prefix("lab-").unwrap_or(&exp).to_string();
    let run = |p: &Path, sub: &str| {
        let sets = [("machine.profile".to_string(), toml::Value::String(p.display().to_string()))];
        super::twin::run_twin(&live, Path::new(&scenario), &r.tmp.join(&name).join(sub), &sets, jobs, limits)
    };
    let (t1, t2) = (run(r.profiles.0, "k")?, run(r.profiles.1, "k2")?);
    for why in t1.transfer.iter().chain(&t1.speed) {
        errln!("fsmeta fit --implied: warning: {}: {why}", ldir.display());
    }
    let (t1, t2) = (t1.outputs, t2.outputs);
    let mut figures = Vec::new();
    for row in twin::join(&live, &t1) {
        let v2 = t2.means.get(&(t1_variant(&t1, &row), row.metric.clone())).map(|m| m.0);
        if let Some(line) = v2.and_then(|v2| implied(&row.metric, r.knobs, row.twin, v2, row.live.0)) {
            figures.push(Figure {
                experiment: setup.clone(),
                row,
                line,
            });
        }
    }
    Ok(figures)
}

/// The twin's variant a joined row came from (a one-variant twin's
/// variant may be named otherwise than the live one).
fn t1_variant(t: &Outputs, row: &Row) -> String {
    match t.variants.as_slice() {
        [only] => only.clone(),
        _ => row.variant.clone(),
    }
}

/// A copy of the profile at `from` with `[knob] work_scale = knob`,
/// written to `to` (absolute); the knob's figure is kept.
fn copy_with_knob(from: &Path, knob: f64, to: &Path) -> Result<PathBuf, CliError> {
    let text = std::fs::read_to_string(from).map_err(|e| CliError::msg(format!("{}: {e}", from.display())))?;
    let mut doc: toml::Table = toml::from_str(&text).map_err(|e| CliError::msg(format!("{}: {e}", from.display())))?;
    let Some(toml::Value::Table(k)) = doc.get_mut("knob") else {
        return Err(CliError::msg(format!("{} has no [knob]", from.display())));
    };
    k.insert("work_scale".into(), toml::Value::Float(knob));
    let out = toml::to_string(&doc).map_err(|e| CliError::msg(format!("{}: {e}", from.display())))?;
    std::fs::write(to, out).map_err(|e| CliError::msg(format!("cannot write {}: {e}", to.display())))?;
    std::fs::canonicalize(to).map_err(|e| CliError::msg(format!("{}: {e}", to.display())))
}

/// The printed table: one row a figure, then the spread of the knobs
/// implied where the knob is at least [`MIN_SHARE`] of the twin.
fn table(figures: &[Figure], k: f64, fitted_on: &str) -> String {
    let row = |e: &str, v: &str, m: &str, cols: [&str; 5]| {
        format!(
            "{e:<22} {v:<14} {m:<34} {:>11} {:>11} {:>22} {:>6} {:>8}\n",
            cols[0], cols[1], cols[2], cols[3], cols[4]
        )
    };
    let mut s = row(
        "setup",
        "variant",
        "metric",
        ["live median", "twin", "twin = a + b x knob", "share", "knob"],
    );
    for f in figures {
        let line = format!("{} + {}", twin::num(f.line.a), twin::num(f.line.b));
        let knob = match f.line.knob {
            None => "-".to_string(),
            Some(x) if x <= 0.0 => "< 0".to_string(),
            Some(x) if x > fsmeta::machine::profile::MAX_WORK_SCALE => "> max".to_string(),
            Some(x) => format!("{x:.3}"),
        };
        let share = format!("{:.0}%", 100.0 * f.line.share);
        let (live, tw) = (twin::num(f.row.live.0), twin::num(f.row.twin));
        s.push_str(&row(
            &f.experiment,
            &f.row.variant,
            &f.row.metric,
            [&live, &tw, &line, &share, &knob],
        ));
    }
    let mut knobs: Vec<f64> = figures.iter().filter(|f| in_spread(f)).filter_map(|f| f.line.knob).collect();
    knobs.sort_by(f64::total_cmp);
    s.push_str(&format!(
        "\nthe profile's knob: {k} (fitted on {fitted_on})\na and b in the metric's unit, a rate's as us per operation; share: the knob's part of the twin at {k}; knob: the one at which the twin gives the live median ('-': the twin does not move with the knob; '< 0': the twin's part without it is already over the live figure)\n"
    ));
    if let (Some(lo), Some(hi)) = (knobs.first(), knobs.last()) {
        s.push_str(&format!(
            "implied by the {} figures whose share is at least {:.0}% (not a run's extremes, *_min, *_max, *_p99; no impossible knob): {lo:.3} .. {hi:.3}, median {:.3}\n",
            knobs.len(),
            100.0 * MIN_SHARE,
            fsmeta::report::stats::median(&knobs)
        ));
    }
    s
}

/// Whether a figure counts in the printed spread: the knob at least
/// [`MIN_SHARE`] of its twin, not a run's extreme, its knob possible.
fn in_spread(f: &Figure) -> bool {
    let extreme = ["_min", "_max", "_p99"].iter().any(|e| f.row.metric.ends_with(e));
    let possible = f
        .line
        .knob
        .is_some_and(|x| x > 0.0 && x <= fsmeta::machine::profile::MAX_WORK_SCALE);
    f.line.share >= MIN_SHARE && !extreme && possible
}

/// `implied-knob.csv`: setup, variant, metric, live median, twin, a, b,
/// the knob's share, implied knob (empty where the twin does not move
/// with it).
fn write_csv(path: &Path, figures: &[Figure]) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record([
        "setup",
        "variant",
        "metric",
        "live_median",
        "twin",
        "a",
        "b",
        "share",
        "implied_knob",
    ])?;
    for f in figures {
        let knob = f.line.knob.map(|x| x.to_string()).unwrap_or_default();
        w.write_record([
            f.experiment.as_str(),
            f.row.variant.as_str(),
            f.row.metric.as_str(),
            &f.row.live.0.to_string(),
            &f.row.twin.to_string(),
            &f.line.a.to_string(),
            &f.line.b.to_string(),
            &f.line.share.to_string(),
            &knob,
        ])?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_implies_the_knob_on_the_twins_line() {
        // Twin 4 + 2 x knob us: 6 at knob 1, 8 at knob 2; live 7 -> 1.5.
        let i = implied("alloc_us_p50", (1.0, 2.0), 6.0, 8.0, 7.0).unwrap();
        assert_eq!((i.a, i.b), (4.0, 2.0));
        assert_eq!(i.knob, Some(1.5));
        assert!((i.share - 2.0 / 6.0).abs() < 1e-12, "{i:?}");
    }

    #[test]
    fn a_rate_is_solved_as_time_per_operation() {
        // 10 us + 10 us x knob an operation: 50,000/s at knob 1, 33,333/s
        // at 2; live 40,000/s = 25 us -> 1.5.
        let i = implied("ops_per_sec", (1.0, 2.0), 50_000.0, 1e6 / 30.0, 40_000.0).unwrap();
        assert!((i.a - 10.0).abs() < 1e-9 && (i.b - 10.0).abs() < 1e-9, "{i:?}");
        assert!((i.knob.unwrap() - 1.5).abs() < 1e-9);
    }

    #[test]
    fn a_count_or_a_figure_the_knob_does_not_move_gets_none() {
        assert_eq!(implied("buffer_reads", (1.0, 2.0), 4.0, 4.0, 4.0), None, "a count");
        let flat = implied("phase.sync.io_flush_us", (1.876, 3.752), 2365.0, 2365.0, 2639.0).unwrap();
        assert_eq!(flat.knob, None, "{flat:?}");
        assert_eq!(implied("alloc_us_p50", (1.0, 2.0), 6.0, 8.0, 0.0), None, "a zero live figure");
        assert_eq!(implied("alloc_us_p50", (2.0, 2.0), 6.0, 8.0, 7.0), None, "one knob gives no line");
    }

    #[test]
    fn the_second_knob_stays_within_the_profiles_range() {
        assert_eq!(second_knob(1.876), 3.752);
        assert_eq!(second_knob(800.0), 400.0);
        // Half a knob gives the same line: 4 + 2 x knob at 2 and 1.
        let i = implied("alloc_us_p50", (2.0, 1.0), 8.0, 6.0, 7.0).unwrap();
        assert_eq!((i.a, i.b, i.knob), (4.0, 2.0, Some(1.5)));
    }
}
