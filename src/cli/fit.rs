//! `fsmeta fit PROFILE`: fits a measured host's one knob on its one named
//! figure and writes it into the profile as `[knob]` (issue 30).
//!
//! The figure is the lab's `le` by-size allocation at 10^5 one-block free
//! extents (`fsmeta lab xfs-alloc -p extents=100000`): variant `le`,
//! `alloc_us_p50`, the median over the runs (or their 10th percentile,
//! `--statistic p10`, on a VM that runs at two speeds). The twin
//! (`scenarios/lab/xfs-alloc-100000.toml`) prices that call on the profile
//! as `a + b x work_scale` (every counted event priced by the profile, the
//! straight-line loads at `hit_ns x work_scale`), so the knob is `(figure
//! - a) / b`. Every other time on the host is then a prediction.

use super::{CliError, Limits, Status};
use fsmeta::Study;
use fsmeta::lab::twin::Outputs;
use std::path::{Path, PathBuf};

/// The twin the knob is fitted on, relative to the repository.
const TWIN: &str = "scenarios/lab/xfs-alloc-100000.toml";
/// The variant and metric of the figure.
const FIGURE: (&str, &str) = ("le", "alloc_us_p50");
/// The lab parameters of the figure.
const EXTENTS: &str = "100000";

/// Which statistic of the runs is the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Statistic {
    /// The median over the runs.
    Median,
    /// The 10th percentile (nearest rank): a VM's fast mode.
    P10,
}

impl Statistic {
    fn name(self) -> &'static str {
        match self {
            Statistic::Median => "the live median",
            Statistic::P10 => "the live 10th percentile (the fast runs)",
        }
    }
    fn of(self, xs: &[f64]) -> f64 {
        match self {
            Statistic::Median => fsmeta::report::stats::median(xs),
            Statistic::P10 => fsmeta::lab::twin::p10(xs),
        }
    }
}

/// What `fsmeta fit` was asked.
pub(super) struct FitArgs<'a> {
    /// The profile to fit and rewrite.
    pub profile: &'a Path,
    /// Live runs of the figure.
    pub runs: u32,
    /// Which statistic of the runs.
    pub statistic: Statistic,
    /// Where the lab run's outputs go.
    pub out: &'a Path,
    /// Earlier live runs of the figure to fit on instead of new ones: a
    /// `lab-xfs-alloc-100000` folder (or a folder holding one) that
    /// `fsmeta lab xfs-alloc -p extents=100000` or `fsmeta fit` wrote on
    /// this host.
    pub from: Option<&'a Path>,
}

/// Runs the figure live (or reads earlier runs of it, `--from`), solves
/// the knob on the twin, writes `[knob]`.
pub(super) fn fit(a: &FitArgs<'_>) -> Result<Status, CliError> {
    let profile = fsmeta::machine::load_profile(a.profile).map_err(|e| CliError::msg(format!("{}: {e}", a.profile.display())))?;
    let here = fsmeta::hostinfo::HostInfo::read();
    if a.from.is_none() && !profile.measured_on_cpu(&here.family) {
        return Err(CliError::msg(format!(
            "{} was measured on `{}`, and this host is {} ({}): a knob is fitted on the host its profile measured; run `fsmeta calibrate --out scenarios/machines/NAME.toml` here first",
            a.profile.display(),
            profile.cpu,
            here.model,
            here.family
        )));
    }
    if !Path::new(TWIN).is_file() {
        return Err(CliError::msg(format!("no {TWIN} here: run from the repository's folder")));
    }
    let abs = std::fs::canonicalize(a.profile).map_err(|e| CliError::msg(format!("{}: {e}", a.profile.display())))?;
    // Earlier runs are read and checked before anything is run.
    let earlier = a.from.map(|from| earlier_figure(from, &profile)).transpose()?;
    // The twin first: a profile it cannot price is refused before the lab.
    let tmp = std::env::temp_dir().join(format!("fsmeta-fit-{}", std::process::id()));
    let line = Line::of(&abs, &tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    let line = line?;
    let (live, dir) = match earlier {
        Some(runs) => runs,
        None => live_figure(a)?,
    };
    let figure = a.statistic.of(&live);
    if !(line.b.is_finite() && line.b > 0.0 && line.a.is_finite()) {
        return Err(CliError::msg(format!(
            "{TWIN} prices the figure at {:.3} + {:.3} x work_scale us on this profile: it does not grow with the knob, so no knob can be fitted",
            line.a, line.b
        )));
    }
    // Written to 3 decimals: a knob that rounds to 0 is refused too.
    let exact = (figure - line.a) / line.b;
    let knob = (exact * 1000.0).round() / 1000.0;
    if !(knob > 0.0 && knob <= fsmeta::machine::profile::MAX_WORK_SCALE) {
        let asked = Asked {
            runs: live.len(),
            statistic: a.statistic,
            from: a.from.is_some(),
        };
        return Err(CliError::msg(refusal(figure, exact, &line, &asked)));
    }
    let speeds = speeds(&live, figure, a.statistic);
    if let Some(s) = &speeds {
        errln!("fsmeta fit: warning: {s}");
    }
    let block = knob_block(a, &line, &live, figure, knob, speeds.as_deref());
    write_knob(a.profile, &block)?;
    outln!(
        "work_scale = {knob} fitted on {} of le alloc_us_p50 at 10^5 extents: {figure:.3} us over {} runs ({}); the twin there is {:.6} + {:.6} x work_scale us",
        a.statistic.name(),
        live.len(),
        dir.display(),
        line.a,
        line.b
    );
    outln!(
        "written: [knob] in {}; every other time on this host is a prediction: fsmeta lab EXPERIMENT prices its twin with it",
        a.profile.display()
    );
    Ok(Status::Ok)
}

/// When the runs `live` fall at two speeds ([`fsmeta::lab::twin::speed_groups`]),
/// what to say of the `figure` that `statistic` took from them: which
/// group it prices, and what a knob fitted there predicts.
fn speeds(live: &[f64], figure: f64, statistic: Statistic) -> Option<String> {
    let g = fsmeta::lab::twin::speed_groups(live)?;
    let range = |v: &[f64]| match (v.first(), v.last()) {
        (Some(a), Some(b)) if a < b => format!("{a:.3} .. {b:.3} us"),
        (Some(a), _) => format!("{a:.3} us"),
        _ => String::new(),
    };
    let advice = match statistic {
        Statistic::P10 if !g.in_fast(figure) => {
            "fewer than a tenth of the runs were fast, so this knob prices the slow speed; fit again with more runs (--runs) to price the fast one, or say in its figure that it is the slow one (docs/lab-hosts.md)"
        }
        Statistic::Median => {
            "a knob fitted on a median prices whichever speed most runs of this set had, and the next set (another size, another day) may sit in the other; on such a host fit the fast runs with --statistic p10 and compare the fast figures (docs/lab-hosts.md)"
        }
        Statistic::P10 => {
            "a knob fitted on the 10th percentile prices the fast runs when at least a tenth of the runs are fast; compare the other figures' fast runs with it (docs/lab-hosts.md)"
        }
    };
    Some(format!(
        "the {} runs fall at two speeds, {} fast at {} and {} slow at {} ({:.0}% apart): {} ({figure:.3} us) is in {}; {advice}",
        g.fast.len() + g.slow.len(),
        g.fast.len(),
        range(&g.fast),
        g.slow.len(),
        range(&g.slow),
        g.gap * 100.0,
        statistic.name(),
        g.side(figure)
    ))
}

/// What the figure was taken from, for a refusal's advice.
struct Asked {
    /// Live runs of the figure.
    runs: usize,
    /// Which statistic of them.
    statistic: Statistic,
    /// Earlier runs (`--from`), not new ones.
    from: bool,
}

/// Why no knob in (0, 1000] (to 3 decimals) gives back `figure`: the
/// knob it would take (`exact`), the twin's part without the knob, and
/// what to do about it.
fn refusal(figure: f64, exact: f64, line: &Line, asked: &Asked) -> String {
    let head = format!(
        "the live figure {figure:.3} us gives work_scale {exact:.3}, outside (0, 1000]: the twin's part without the knob is {:.3} us on this profile",
        line.a
    );
    if exact > fsmeta::machine::profile::MAX_WORK_SCALE {
        return format!("{head}, and the figure is far above it. Was the host busy, or is the profile another machine's?");
    }
    let why = if figure <= line.a {
        "above the figure, so no knob gives it back"
    } else {
        "a hair under the figure, so the knob rounds to 0 (it is written to 3 decimals)"
    };
    let more = if asked.runs < 9 {
        let how = if asked.from {
            "fit on a folder of more runs (9 or more)"
        } else {
            "fit on more (--runs 9 or more)"
        };
        let name = asked.statistic.name();
        let name = name.strip_prefix("the ").unwrap_or(name);
        format!(" The {name} of {} run(s) is a noisy figure: {how}.", asked.runs)
    } else {
        String::new()
    };
    format!(
        "{head}, {why}.{more} On a VM whose speed changes, calibrate and fit in one quiet spell (fsmeta calibrate warns of a shared core); if it stays so, the counted part is priced too high on this host (docs/lab-hosts.md, session 67)"
    )
}

/// The twin's figure as a line in the knob: `a + b x work_scale`, us.
struct Line {
    a: f64,
    b: f64,
}

impl Line {
    /// The twin's figure at two knobs on the profile at `abs`.
    fn of(abs: &Path, tmp: &Path) -> Result<Line, CliError> {
        let at = |w: f64| twin_figure(abs, w, &tmp.join(format!("w{w}")));
        let (t1, t2) = (at(1.0)?, at(2.0)?);
        Ok(Line {
            a: t1 - (t2 - t1),
            b: t2 - t1,
        })
    }
}

/// The twin's `le` `alloc_us_p50` on the profile at `abs` with the knob
/// `w`, run into `out`.
fn twin_figure(abs: &Path, w: f64, out: &Path) -> Result<f64, CliError> {
    let mut opts = Limits::default().options();
    opts.sets
        .push(("machine.profile".into(), toml::Value::String(abs.display().to_string())));
    opts.sets.push(("xfs_alloc.work_scale".into(), toml::Value::Float(w)));
    let study = Study::load(Path::new(TWIN), &opts)?;
    let results = study.run(1, &|| {})?;
    let outcome = study.write(&results, out)?;
    let o = Outputs::read(&outcome.dir)?;
    o.means
        .get(&(FIGURE.0.to_string(), FIGURE.1.to_string()))
        .map(|m| m.0)
        .ok_or_else(|| CliError::msg(format!("{TWIN} gave no {} {}", FIGURE.0, FIGURE.1)))
}

/// The live runs of the figure, written to `OUT/lab-xfs-alloc-100000/`:
/// each run's value and the folder.
fn live_figure(a: &FitArgs<'_>) -> Result<(Vec<f64>, PathBuf), CliError> {
    use fsmeta::lab;
    let e = lab::find("xfs-alloc")?;
    let opts = lab::LabOptions {
        runs: a.runs,
        params: [("extents".to_string(), EXTENTS.to_string())].into(),
        verbose: true,
        sample_us: None,
    };
    let run = lab::run(e, &opts)?;
    let (dir, _) = lab::output::write(&run, a.out)?;
    let v = run
        .variants
        .iter()
        .position(|n| n == FIGURE.0)
        .ok_or_else(|| CliError::msg("the lab run has no le"))?;
    let xs: Vec<f64> = run.runs[v].iter().filter_map(|m| m.get(FIGURE.1).copied()).collect();
    if xs.is_empty() {
        return Err(CliError::msg("the lab run gave no le alloc_us_p50"));
    }
    Ok((xs, dir))
}

/// The runs of the figure in an earlier lab folder `from` (or its
/// `lab-xfs-alloc-100000/`): each run's value and the folder. The folder
/// must be that experiment at 10^5 extents with the figure's other
/// parameters at their defaults, have run on the CPU the profile
/// measured, and hold a positive time for every run.
fn earlier_figure(from: &Path, profile: &fsmeta::machine::MachineProfile) -> Result<(Vec<f64>, PathBuf), CliError> {
    let inner = from.join(format!("lab-xfs-alloc-{EXTENTS}"));
    let dir = if inner.is_dir() { inner } else { from.to_path_buf() };
    let expected = format!(
        "--from takes a folder `fsmeta lab xfs-alloc -p extents={EXTENTS}` or `fsmeta fit` wrote (its lab.txt, summary.csv and runs.csv)"
    );
    let o = Outputs::read(&dir).map_err(|e| CliError::msg(format!("{e}: {expected}")))?;
    let txt = o
        .lab_txt
        .as_deref()
        .ok_or_else(|| CliError::msg(format!("{}: no lab.txt: {expected}", dir.display())))?;
    let field = |key: &str| fsmeta::lab::twin::lab_field(txt, key);
    let params = field("parameters:").unwrap_or("");
    let wanted = default_params();
    let off: Vec<&str> = params.split_whitespace().filter(|p| !wanted.contains(&p.to_string())).collect();
    if field("experiment:") != Some("xfs-alloc") || !params.split_whitespace().any(|p| p == format!("extents={EXTENTS}")) || !off.is_empty()
    {
        return Err(CliError::msg(format!(
            "{}: the runs are `{} {params}`, and the figure is xfs-alloc with {}",
            dir.display(),
            field("experiment:").unwrap_or("(no experiment: line)"),
            wanted.join(" ")
        )));
    }
    let Some(model) = field("cpu model:").filter(|m| !m.is_empty()) else {
        return Err(CliError::msg(format!(
            "{}/lab.txt has no `cpu model:` line: {expected}",
            dir.display()
        )));
    };
    if !profile.measured_on_cpu(model) {
        return Err(CliError::msg(format!(
            "{} ran on `{model}`, and the profile measured `{}`: a knob is fitted on runs of the host its profile measured",
            dir.display(),
            profile.cpu
        )));
    }
    let xs = o
        .values
        .get(&(FIGURE.0.to_string(), FIGURE.1.to_string()))
        .filter(|v| !v.is_empty())
        .cloned()
        .ok_or_else(|| CliError::msg(format!("{}/runs.csv: no le alloc_us_p50: {expected}", dir.display())))?;
    if let Some((i, x)) = xs.iter().enumerate().find(|(_, x)| !(x.is_finite() && **x > 0.0)) {
        return Err(CliError::msg(format!(
            "{}/runs.csv: le alloc_us_p50 of run {} is {x}: expected a positive time in us",
            dir.display(),
            i + 1
        )));
    }
    Ok((xs, dir))
}

/// The lab parameters of the figure, `NAME=VALUE` each: the experiment's
/// defaults with `extents` set, as the lab writes them
/// ([`fsmeta::lab::Params::describe`]).
fn default_params() -> Vec<String> {
    let given = std::collections::BTreeMap::from([("extents".to_string(), EXTENTS.to_string())]);
    fsmeta::lab::find("xfs-alloc")
        .and_then(|e| fsmeta::lab::resolve(e, &given))
        .map_or_else(
            |_| vec![format!("extents={EXTENTS}")],
            |p| p.describe().split_whitespace().map(str::to_string).collect(),
        )
}

/// The `[knob]` table and its comment: the command, date, figure and
/// arithmetic.
fn knob_block(a: &FitArgs<'_>, line: &Line, live: &[f64], figure: f64, knob: f64, speeds: Option<&str>) -> String {
    let command: Vec<String> = std::iter::once("fsmeta".to_string()).chain(std::env::args().skip(1)).collect();
    let mut sorted = live.to_vec();
    sorted.sort_by(f64::total_cmp);
    let runs: Vec<String> = sorted.iter().map(|x| format!("{x:.3}")).collect();
    let speeds = speeds.map(|s| comment(&format!("Warned: {s}."))).unwrap_or_default();
    format!(
        "# The host's one knob (issue 30), fitted by `{}` ({}).\n\
         # The figure: {} of `le` alloc_us_p50 at 10^5 extents (fsmeta lab\n\
         # xfs-alloc -p extents=100000), {figure:.4} us over {} runs ({} us).\n\
         # The twin ({TWIN}) on this profile: {:.6} + {:.6} x work_scale us,\n\
         # so work_scale = ({figure:.4} - {:.6}) / {:.6} = {knob}.\n\
         {speeds}\
         # Every other time on this host is a prediction; the lab's twins read\n\
         # it with work_scale = \"host\".\n\
         [knob]\nwork_scale = {knob}\nfitted_on = \"fsmeta lab xfs-alloc -p extents=100000 (calls 19, busy 256): variant le, alloc_us_p50, {}\"\n",
        command.join(" "),
        fsmeta::calibrate::host::utc_now(),
        a.statistic.name(),
        live.len(),
        runs.join(" "),
        line.a,
        line.b,
        line.a,
        line.b,
        a.statistic.name()
    )
}

/// `text` as TOML comment lines of at most 72 characters (a word longer
/// than a line gets a line of its own), each ending in a newline.
fn comment(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("#");
    for word in text.split_whitespace() {
        if line.len() > 1 && line.len() + 1 + word.len() > 72 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    if line.len() > 1 {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Writes `block` as the profile's last table: an earlier `[knob]` (the
/// last table, with the comment lines right above it) is replaced; the
/// file is replaced whole (a temporary file renamed over it) and read
/// back as a profile.
fn write_knob(path: &Path, block: &str) -> Result<(), CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::msg(format!("{}: {e}", path.display())))?;
    let base = match text.find("\n[knob]") {
        None => text.trim_end().to_string(),
        Some(at) => {
            if text[at + 1..].lines().skip(1).any(|l| l.trim_start().starts_with('[')) {
                return Err(CliError::msg(format!(
                    "{}: a table follows [knob]: move [knob] to the end of the file to refit it",
                    path.display()
                )));
            }
            let mut head: Vec<&str> = text[..at].lines().collect();
            while head.last().is_some_and(|l| l.starts_with('#') || l.trim().is_empty()) {
                head.pop();
            }
            head.join("\n")
        }
    };
    let new = format!("{base}\n\n{block}");
    let tmp = path.with_extension("toml.fit-tmp");
    std::fs::write(&tmp, &new).map_err(|e| CliError::msg(format!("cannot write {}: {e}", tmp.display())))?;
    if let Err(e) = fsmeta::machine::load_profile(&tmp) {
        let _ = std::fs::remove_file(&tmp);
        return Err(CliError::msg(format!("the profile with its knob does not load: {e}")));
    }
    std::fs::rename(&tmp, path).map_err(|e| CliError::msg(format!("cannot replace {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/machines").join(name)
    }

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fsmeta-fit-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    const BLOCK: &str = "# fitted\n[knob]\nwork_scale = 2.5\nfitted_on = \"a figure\"\n";

    #[test]
    fn the_knob_is_appended_then_replaced_and_a_bad_one_leaves_the_file() {
        let d = temp("write");
        let text = std::fs::read_to_string(shipped("lab-xeon-6-207.toml")).unwrap();
        let bare = &text[..text.find("\n[knob]").unwrap()];
        let bare = &bare[..bare.rfind("\n\n").unwrap()];
        let p = d.join("p.toml");
        std::fs::write(&p, bare).unwrap();
        write_knob(&p, BLOCK).unwrap();
        let k = fsmeta::machine::load_profile(&p).unwrap().knob.unwrap();
        assert_eq!((k.work_scale, k.fitted_on.as_str()), (2.5, "a figure"));
        // Refitted: one [knob], the new one, the comment above it replaced.
        write_knob(&p, &BLOCK.replace("2.5", "3.5")).unwrap();
        let after = std::fs::read_to_string(&p).unwrap();
        assert_eq!(after.matches("[knob]").count(), 1, "{after}");
        assert_eq!(after.matches("# fitted").count(), 1, "{after}");
        assert_eq!(fsmeta::machine::load_profile(&p).unwrap().knob.unwrap().work_scale, 3.5);
        assert!(after.starts_with(bare));
        // A knob the profile refuses: the file is as it was.
        assert!(write_knob(&p, &BLOCK.replace("2.5", "0")).is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), after);
        assert!(!p.with_extension("toml.fit-tmp").exists());
        // A table after [knob]: refused, not cut off.
        std::fs::write(&p, format!("{after}\n[later]\nx = 1\n")).unwrap();
        let e = write_knob(&p, BLOCK).expect_err("a table follows");
        assert!(e.to_string().contains("a table follows [knob]"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn two_speeds_are_named_in_the_warning_and_the_comment_wraps() {
        // Session 53's first set on the AMD family 25 model 1 VM.
        let first = [15.08, 15.689, 14.138, 15.009, 15.219, 14.663, 13.426, 14.48, 11.273];
        let median = Statistic::Median.of(&first);
        let w = speeds(&first, median, Statistic::Median).expect("two speeds");
        assert!(
            w.starts_with("the 9 runs fall at two speeds, 1 fast at 11.273 us and 8 slow at 13.426 .. 15.689 us (19% apart): the live median (14.663 us) is in the slower group; a knob fitted on a median"),
            "{w}"
        );
        assert!(w.contains("--statistic p10"), "{w}");
        let p10 = Statistic::P10.of(&first);
        let w = speeds(&first, p10, Statistic::P10).expect("two speeds");
        assert!(w.contains("(11.273 us) is in the faster group"), "{w}");
        // 18 runs, one fast: the 10th percentile (the 2nd) is a slow run.
        let mut one_fast = vec![14.0; 17];
        one_fast.push(11.0);
        let w = speeds(&one_fast, Statistic::P10.of(&one_fast), Statistic::P10).expect("two speeds");
        assert!(w.contains("(14.000 us) is in the slower group; fewer than a tenth"), "{w}");
        // Unusable runs are not counted among the groups' runs.
        let w = speeds(&[10.0, 10.1, 14.0, f64::NAN], 10.1, Statistic::Median).expect("two speeds");
        assert!(w.starts_with("the 3 runs fall at two speeds, 2 fast"), "{w}");
        assert_eq!(speeds(&[10.0, 10.4, 10.9, 11.1], 10.6, Statistic::Median), None);
        // The comment: every line a comment within 72 characters, the
        // words in order.
        let c = comment(&format!("Warned: {w}."));
        assert!(c.ends_with('\n'));
        for l in c.lines() {
            assert!(l.starts_with("# ") && l.len() <= 72, "{l:?}");
        }
        let words: Vec<&str> = c.lines().flat_map(|l| l[1..].split_whitespace()).collect();
        assert_eq!(words.join(" "), format!("Warned: {w}."));
        assert_eq!(comment(""), "");
    }

    #[test]
    fn the_twins_figure_is_a_line_in_the_knob() {
        let d = temp("line");
        let abs = shipped("lab-xeon-6-207.toml");
        let line = Line::of(&abs, &d).unwrap();
        assert!(line.a > 0.0 && line.b > 0.0, "{} {}", line.a, line.b);
        for w in [0.5, 3.0, 7.0] {
            let t = twin_figure(&abs, w, &d.join(format!("check{w}"))).unwrap();
            let want = line.a + line.b * w;
            assert!((t - want).abs() < 1e-5 * want, "w {w}: twin {t}, line {want}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
