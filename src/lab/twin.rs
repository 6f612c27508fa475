//! A lab run beside its simulated twin: both output folders are read back
//! (`summary.csv` for means, `runs.csv` for the live ranges, `lab.txt` for
//! the setup) and joined on (variant, metric).

use super::LabError;
use crate::report::model::{RunsTable, SummaryTable};
use crate::report::stats::nearest_rank;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::profiles::{mechanism, spectre_v2};

/// One output folder read back.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// The folder.
    pub dir: PathBuf,
    /// (variant, metric) -> (mean, n), in the file's order of variants.
    pub means: BTreeMap<(String, String), (f64, usize)>,
    /// Variant names in first-seen order.
    pub variants: Vec<String>,
    /// (variant, metric) -> every run's value (from runs.csv).
    pub values: BTreeMap<(String, String), Vec<f64>>,
    /// `lab.txt`, for a lab run.
    pub lab_txt: Option<String>,
}

fn bad(path: &Path, what: impl std::fmt::Display) -> LabError {
    LabError::Param(format!("{}: {what}", path.display()))
}

/// The largest summary or runs file read back, bytes.
const MAX_CSV_BYTES: u64 = 256 << 20;

/// A result file's text, at most [`MAX_CSV_BYTES`].
pub(crate) fn read_text(path: &Path) -> Result<String, LabError> {
    let meta = std::fs::metadata(path).map_err(|e| bad(path, e))?;
    if !meta.is_file() || meta.len() > MAX_CSV_BYTES {
        return Err(bad(path, format!("not a regular file of at most {MAX_CSV_BYTES} bytes")));
    }
    std::fs::read_to_string(path).map_err(|e| bad(path, e))
}

/// The value of the `lab.txt` line starting with `key` (e.g. `twin:`),
/// trimmed; `None` when there is none.
pub fn lab_field<'a>(lab_txt: &'a str, key: &str) -> Option<&'a str> {
    lab_txt.lines().find_map(|l| l.strip_prefix(key)).map(str::trim)
}

/// When a lab run and its twin were priced for different CPUs, what to
/// say: the lab's `lab.txt` names its CPU (`cpu:` and `cpu model: family
/// F model M`) and its twin (`twin: scenarios/lab/X.toml`); the twin's
/// `scenario.resolved.toml` names its machine profile, whose `cpu` names
/// the host `fsmeta calibrate` measured. Counts do not depend on the host;
/// times do. The same for the `spectre_v2` mitigation's [`mechanism`] on
/// one CPU model ([`super::profiles::host_profile`]). `None` when they agree, or when either side does
/// not say (a built-in profile, an older lab run).
pub fn host_mismatch(live: &Outputs, twin: &Outputs) -> Option<String> {
    let lab = live.lab_txt.as_deref()?;
    let line = |key: &str| lab_field(lab, key);
    let family_model = line("cpu model:")?;
    let (path, p) = twin_profile(live, twin)?;
    if p.measured_on_cpu(family_model) {
        let here = line("mitigations:").and_then(spectre_v2)?;
        let priced = p.spectre_v2()?;
        return (mechanism(here) != mechanism(priced)).then(|| {
            format!(
                "the twin is priced on {}, measured under spectre_v2 `{priced}`, but this host runs `{here}`: the same CPU model under another mitigation pays another price on every indirect call (indirect_call_ns); calibrate this host (fsmeta calibrate --out scenarios/machines/NAME.toml) and fit its knob (fsmeta fit scenarios/machines/NAME.toml)",
                path.display()
            )
        });
    }
    Some(format!(
        "the twin is priced for `{}` ({}), but the lab ran on `{}` ({family_model}): its times are not predictions for this host (its counts are); calibrate this host (fsmeta calibrate --out scenarios/machines/NAME.toml) and fit its knob (fsmeta fit scenarios/machines/NAME.toml)",
        p.cpu,
        path.display(),
        line("cpu:").unwrap_or("?")
    ))
}

/// The profile file the twin (`twin`, of the lab run `live`) was priced
/// on, and the profile: the twin's `scenario.resolved.toml` names it
/// relative to the twin's scenario, which the lab's `lab.txt` names.
pub(crate) fn twin_profile(live: &Outputs, twin: &Outputs) -> Option<(PathBuf, crate::machine::MachineProfile)> {
    let scenario = Path::new(lab_field(live.lab_txt.as_deref()?, "twin:")?);
    let resolved = std::fs::read_to_string(twin.dir.join("scenario.resolved.toml")).ok()?;
    let table: toml::Table = toml::from_str(&resolved).ok()?;
    let profile = table.get("machine")?.get("profile")?.as_str()?;
    let path = scenario.parent()?.join(profile);
    let p = crate::machine::load_profile(&path).ok()?;
    Some((path, p))
}

/// When the line transfer between CPUs 0 and 1 that the lab run measured
/// around its runs ([`super::LabRun::transfer`]) and the one the twin's
/// profile prices differ by more than [`TRANSFER_TOLERANCE`] either way,
/// what to say. The profile's price for that pair is `same_llc_ns` on a
/// host of one thread per core (the lab hosts); elsewhere (SMT, where the
/// pair's distance depends on the numbering) nothing is said.
pub fn transfer_mismatch(live: &Outputs, twin: &Outputs) -> Option<String> {
    let text = lab_field(live.lab_txt.as_deref()?, super::output::TRANSFER_KEY)?;
    let (before, after) = super::output::transfer_figures(text)?;
    let (path, p) = twin_profile(live, twin)?;
    if p.topology.smt != 1 {
        return None;
    }
    let priced = p.same_llc_ns;
    let off = |x: f64| priced > TRANSFER_TOLERANCE * x || x > TRANSFER_TOLERANCE * priced;
    if !off(before) && !off(after) {
        return None;
    }
    Some(format!(
        "the twin prices a line transfer between CPUs 0 and 1 at {priced:.1} ns (same_llc_ns of {}), and this lab run measured {before:.1} ns before its runs and {after:.1} after: a virtual machine's vCPUs are SMT siblings in one session and further apart in another, and every time with a transfer in it follows (btrfs's delayed-item batches, the 2-thread rates); for predictions of this placement, calibrate while it holds",
        path.display()
    ))
}

/// How far apart ([`transfer_mismatch`]) the lab's measured transfer and
/// the profile's may be before the table warns: a factor of 2 (two
/// calibrate runs in one placement agree within about 20%; the two
/// placements seen on the Xeon 6 VM are 8 and 60-77 ns).
pub const TRANSFER_TOLERANCE: f64 = 2.0;

/// Whether a scenario document asks for the host's knob
/// (`work_scale = "host"` in any table): its times are for whichever
/// measured host its `[machine] profile` names, so pricing it for
/// another host is one change of that profile.
pub fn takes_host_knob(doc: &toml::Table) -> bool {
    doc.iter().any(|(k, v)| match v {
        toml::Value::String(s) => k == "work_scale" && s == "host",
        toml::Value::Table(t) => takes_host_knob(t),
        toml::Value::Array(a) => a.iter().any(|x| x.as_table().is_some_and(takes_host_knob)),
        _ => false,
    })
}

impl Outputs {
    /// Reads `dir/summary.csv` (required), `dir/runs.csv` and
    /// `dir/lab.txt` (if there) through the typed result model. A swept
    /// scenario is refused: twins have one point.
    pub fn read(dir: &Path) -> Result<Outputs, LabError> {
        let mut o = Outputs {
            dir: dir.to_path_buf(),
            ..Outputs::default()
        };
        let sp = dir.join("summary.csv");
        let summary = SummaryTable::from_csv(&read_text(&sp)?).map_err(|e| bad(&sp, e))?;
        if !summary.params.is_empty() {
            return Err(bad(&sp, "a swept scenario: a lab twin has one point"));
        }
        for r in summary.rows {
            if !o.variants.contains(&r.variant) {
                o.variants.push(r.variant.clone());
            }
            o.means.insert((r.variant, r.metric), (r.mean.0, r.n));
        }
        let rp = dir.join("runs.csv");
        if rp.exists() {
            let runs = RunsTable::from_csv(&read_text(&rp)?).map_err(|e| bad(&rp, e))?;
            for r in runs.rows {
                for (name, x) in runs.metrics.iter().zip(&r.metrics) {
                    if let Some(x) = x {
                        o.values.entry((r.variant.clone(), name.clone())).or_default().push(x.0);
                    }
                }
            }
        }
        o.lab_txt = std::fs::read_to_string(dir.join("lab.txt")).ok();
        Ok(o)
    }
}

/// One metric of one variant on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The variant (the twin's name).
    pub variant: String,
    /// The metric.
    pub metric: String,
    /// The live median over runs, its lowest and highest run, and runs.
    pub live: (f64, f64, f64, usize),
    /// The fast runs' figure of a time or a rate ([`fast_end`]); `None`
    /// for a count.
    pub live_fast: Option<f64>,
    /// The twin's mean.
    pub twin: f64,
}

impl Row {
    /// (twin - live median) / live median, in percent (`None` for a live 0).
    pub fn diff_pct(&self) -> Option<f64> {
        rel_pct(self.twin, self.live.0)
    }

    /// (twin - the live fast runs' figure) / that figure, in percent
    /// (`None` for a count or a 0).
    pub fn diff_fast_pct(&self) -> Option<f64> {
        rel_pct(self.twin, self.live_fast?)
    }

    /// True when the twin's value lies within the live runs' range (or
    /// equals the single live value to 1e-9).
    pub fn within_range(&self) -> bool {
        let eps = 1e-9 * self.live.0.abs().max(1.0);
        self.twin >= self.live.1 - eps && self.twin <= self.live.2 + eps
    }
}

/// (x - base) / |base| in percent; `None` for a zero base.
fn rel_pct(x: f64, base: f64) -> Option<f64> {
    (base != 0.0).then(|| (x - base) / base.abs() * 100.0)
}

/// The median of `xs` (the mean of the middle two for an even count;
/// NaN for none).
pub fn median(xs: &[f64]) -> f64 {
    crate::report::stats::median(xs)
}

/// The 10th percentile of `xs`, nearest rank (the minimum up to 10
/// runs; NaN for none).
/// Where a host runs at two speeds from run to run (docs/lab-hosts.md:
/// the AMD lab VM, 30-50% apart, neither pinning nor a syscall probe
/// telling them apart), a set's median is whichever speed most of its
/// runs had, and this is the fast runs' figure: timing noise only adds
/// time.
pub fn p10(xs: &[f64]) -> f64 {
    quantile(xs, 0.1)
}

/// The smallest gap, as a fraction of the faster side, between two
/// neighbouring runs of a sorted set that [`speed_groups`] takes for two
/// speeds: 15%. Within one speed, neighbouring runs of a set of 9 to 18
/// sit a few per cent apart; the AMD family 25 model 1 VM's two speeds of
/// `le` at 10^5 were 19% and 21% apart (10.5-11.4 us against 13.4-15.8,
/// docs/lab-hosts.md, session 53). A host whose speeds sit closer (the
/// family 25 model 17 VM's 7.29-7.73 and 8.05-11.98 us, 4% apart) is not told
/// apart this way. Nor is one run slowed by other work told from a
/// second speed: the warning names the groups' sizes, and a group of one
/// run is the reader's to judge.
pub const SPEED_GAP: f64 = 0.15;

/// A set of runs' times split at the widest gap between neighbours
/// ([`speed_groups`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedGroups {
    /// The runs below the gap, sorted.
    pub fast: Vec<f64>,
    /// The runs above it, sorted.
    pub slow: Vec<f64>,
    /// The gap as a fraction of the fast side's slowest run.
    pub gap: f64,
}

impl SpeedGroups {
    /// Whether `x` (a statistic of the runs) is within the fast group.
    pub fn in_fast(&self, x: f64) -> bool {
        self.fast.last().is_some_and(|&f| x <= f)
    }

    /// Which group `x` falls in, or between, in words.
    pub fn side(&self, x: f64) -> &'static str {
        if self.in_fast(x) {
            "the faster group"
        } else if self.slow.first().is_some_and(|&s| x >= s) {
            "the slower group"
        } else {
            "the gap between the groups"
        }
    }
}

/// The runs' times `xs` (us, positive) as two speeds: split at the
/// widest gap between neighbouring sorted runs when that gap is at least
/// [`SPEED_GAP`] of the run below it; `None` when no gap is that wide
/// (one speed, or speeds closer than that) or fewer than two runs are
/// finite and positive. A median over such a set prices whichever speed
/// most of its runs had, which the next set's runs need not share.
pub fn speed_groups(xs: &[f64]) -> Option<SpeedGroups> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite() && *x > 0.0).collect();
    v.sort_by(f64::total_cmp);
    let (at, gap) = v
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i + 1, w[1] / w[0] - 1.0))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    // `b >= a x (1 + gap)`, not `b / a - 1 >= gap`: 11.5 / 10 - 1 rounds
    // below 0.15.
    (v[at] >= v[at - 1] * (1.0 + SPEED_GAP)).then(|| {
        let slow = v.split_off(at);
        SpeedGroups { fast: v, slow, gap }
    })
}

/// The `p` quantile of `xs`, nearest rank ([`nearest_rank`]).
fn quantile(xs: &[f64], p: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    nearest_rank(&v, p)
}

/// The fast runs' figure of `metric` over the runs `xs`: a time's
/// (`*_us`, `*_ns`, `*_s`, `*_us_p50`, `*us_per_*`) 10th percentile, a
/// rate's (`*per_sec`) 90th, nearest rank; `None` for a count, which the
/// host's speed does not move.
pub fn fast_end(metric: &str, xs: &[f64]) -> Option<f64> {
    let time = ["_us", "_ns", "_s"].iter().any(|u| metric.ends_with(u)) || metric.contains("_us_") || metric.contains("us_per_");
    if metric.contains("per_sec") {
        Some(quantile(xs, 0.9))
    } else if time {
        Some(p10(xs))
    } else {
        None
    }
}

/// The metrics both sides report, joined on (variant, metric); when each
/// side has exactly one variant, their names need not agree.
pub fn join(live: &Outputs, twin: &Outputs) -> Vec<Row> {
    let one = live.variants.len() == 1 && twin.variants.len() == 1;
    let mut rows = Vec::new();
    for ((v, m), (mean, n)) in &live.means {
        let tv = if one { twin.variants[0].clone() } else { v.clone() };
        let Some((t, _)) = twin.means.get(&(tv, m.clone())) else {
            continue;
        };
        let vals = live.values.get(&(v.clone(), m.clone())).cloned().unwrap_or_else(|| vec![*mean]);
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        rows.push(Row {
            variant: v.clone(),
            metric: m.clone(),
            live: (median(&vals), lo, hi, vals.len().max(*n)),
            live_fast: fast_end(m, &vals),
            twin: *t,
        });
    }
    let order = |v: &str| live.variants.iter().position(|x| x == v).unwrap_or(usize::MAX);
    rows.sort_by(|a, b| order(&a.variant).cmp(&order(&b.variant)).then(a.metric.cmp(&b.metric)));
    rows
}

/// A number for a table: whole numbers plain, others to 5 significant
/// digits (1.0156 handles per create, not 1.016).
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let digits = (4 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{x:.digits$}")
}

/// The rows as a text table (what `fsmeta compare LABDIR SIMDIR` prints).
pub fn text_table(live: &Outputs, twin: &Outputs, rows: &[Row]) -> String {
    let mut s = format!("{} (live kernel) vs {} (simulated twin)\n", live.dir.display(), twin.dir.display());
    let _ = writeln!(
        s,
        "{:<14} {:<34} {:>22} {:>10} {:>12} {:>9} {:>9}",
        "variant", "metric", "live median [range]", "live fast", "twin", "diff", "vs fast"
    );
    for r in rows {
        let range = if r.live.3 > 1 {
            format!("{} [{}, {}]", num(r.live.0), num(r.live.1), num(r.live.2))
        } else {
            num(r.live.0)
        };
        let diff = r.diff_pct().map_or("n/a".into(), |d| format!("{d:+.1}%"));
        let diff10 = r.diff_fast_pct().map_or(String::new(), |d| format!("{d:+.1}%"));
        let _ = writeln!(
            s,
            "{:<14} {:<34} {:>22} {:>10} {:>12} {:>9} {:>9}",
            r.variant,
            r.metric,
            range,
            r.live_fast.map_or(String::new(), num),
            num(r.twin),
            diff,
            diff10
        );
    }
    if rows.is_empty() {
        s.push_str("(no metric in common)\n");
    }
    s
}

/// A Markdown table of the rows.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| variant | metric | live median | live range (runs) | live fast | twin | twin - live | twin - fast |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in rows {
        let range = if r.live.3 > 1 {
            format!("{} .. {} ({})", num(r.live.1), num(r.live.2), r.live.3)
        } else {
            "1 run".into()
        };
        let diff = r.diff_pct().map_or("n/a".into(), |d| format!("{d:+.1}%"));
        let diff10 = r.diff_fast_pct().map_or(String::new(), |d| format!("{d:+.1}%"));
        let mark = if r.within_range() { "" } else { " **differs**" };
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {range} | {} | {} | {diff}{mark} | {diff10} |",
            r.variant,
            r.metric,
            num(r.live.0),
            r.live_fast.map_or(String::new(), num),
            num(r.twin)
        );
    }
    s
}

/// A Markdown table of the live metrics the twin does not report
/// (median and range over runs).
pub fn live_only(live: &Outputs, twin: &Outputs) -> String {
    let one = live.variants.len() == 1 && twin.variants.len() == 1;
    let mut s = String::new();
    for ((v, m), vals) in &live.values {
        let tv = if one { twin.variants[0].clone() } else { v.clone() };
        if twin.means.contains_key(&(tv, m.clone())) || !live.means.contains_key(&(v.clone(), m.clone())) {
            continue;
        }
        if s.is_empty() {
            s.push_str("| variant | metric | live median | live range (runs) |\n| --- | --- | --- | --- |\n");
        }
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let _ = writeln!(
            s,
            "| {v} | `{m}` | {} | {} .. {} ({}) |",
            num(median(vals)),
            num(lo),
            num(hi),
            vals.len()
        );
    }
    s
}
