//! Works that are the counted code of a kernel path (`[work.NAME] code =
//! "..."`): the path is looked up by name in the one table
//! ([`crate::kernel::xfs::paths::CODE_PATHS`]), sized by `[code]
//! dir_entries` and priced on the machine profile with `[code]
//! work_scale`.

use super::build::{self, BuildError, Names};
use super::config::{DistConfig, DistKind, StepConfig, WorkConfig, WorkRef};
use crate::engine::dist::Duration;
use crate::kernel::work::Tally;
use crate::kernel::xfs::paths::{self, CodePath};
use crate::param::ParamError;
use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

fn err(field: impl Into<String>, message: impl Into<String>) -> BuildError {
    ParamError::new(field, message)
}

/// The largest `[code]` `dir_entries` (the lab's largest `files`).
pub const MAX_DIR_ENTRIES: u64 = 1_000_000;

/// The counted path `code` names, with the sizes and the scale of
/// `[code]` (checked): the path, its sizes, `work_scale`.
fn priced(code: &str, at: &str, names: &Names<'_>) -> Result<(&'static CodePath, paths::CodeParams, f64), BuildError> {
    let path = paths::find(code).ok_or_else(|| {
        let known: Vec<&str> = paths::CODE_PATHS.iter().map(|p| p.name).collect();
        err(
            at.to_string(),
            format!("no counted kernel path named `{code}` (known: {})", known.join(", ")),
        )
        .suggest(crate::text::closest(code, known.iter().copied()))
    })?;
    let c = names.code.ok_or_else(|| {
        err(
            at.to_string(),
            "counted code needs a [code] table with dir_entries (and the host's work_scale)",
        )
    })?;
    let w = c.work_scale.unwrap_or_default();
    w.check().map_err(|m| err("code.work_scale", m))?;
    let scale = w.resolve(names.profile).map_err(|m| err("code.work_scale", m))?;
    if !(1..=MAX_DIR_ENTRIES).contains(&c.dir_entries) {
        return Err(err(
            "code.dir_entries",
            format!("expected 1 to {MAX_DIR_ENTRIES} names per directory, found {}", c.dir_entries),
        ));
    }
    let params = paths::CodeParams {
        dir_entries: c.dir_entries,
    };
    Ok((path, params, scale))
}

/// The index of a stretch's end in `path`'s points: 0 the start, `i + 1`
/// the `i`-th point, `points + 1` the end. `key` is `from` or `to`.
pub fn point_index(path: &CodePath, point: Option<&str>, key: &str, field: &str) -> Result<usize, BuildError> {
    let Some(name) = point else {
        return Ok(if key == "from" { 0 } else { path.points.len() + 1 });
    };
    match path.points.iter().position(|p| p.name == name) {
        Some(i) => Ok(i + 1),
        None => {
            let known: Vec<&str> = path.points.iter().map(|p| p.name).collect();
            let listed = if known.is_empty() {
                "it has none".to_string()
            } else {
                format!("in path order: {}", known.join(", "))
            };
            Err(err(
                format!("{field}.{key}"),
                format!("no point named `{name}` in the counted path `{}` ({listed})", path.name),
            )
            .suggest(crate::text::closest(name, known.iter().copied())))
        }
    }
}

/// The counted path a split step of work `w` (named `name`) follows: the
/// work's `code` or `split_by`; an error at the step's `from`/`to` when
/// the work has neither.
pub fn split_path(w: &WorkConfig, name: &str, key: &str, field: &str) -> Result<&'static CodePath, BuildError> {
    let code = w.code.as_deref().or(w.split_by.as_deref()).ok_or_else(|| {
        err(
            format!("{field}.{key}"),
            format!("`{key}` names a point of counted code: [work.{name}] needs `code` (its own counted code) or `split_by` (the code its share follows)"),
        )
    })?;
    paths::find(code).ok_or_else(|| {
        let at = if w.code.is_some() { "code" } else { "split_by" };
        err(format!("work.{name}.{at}"), format!("no counted kernel path named `{code}`"))
    })
}

/// The stretch `[from, to)` of a step naming work `w` (`name`), as
/// point indices ([`point_index`]), checked in order.
pub fn stretch(w: &WorkConfig, name: &str, from: Option<&str>, to: Option<&str>, field: &str) -> Result<(usize, usize), BuildError> {
    let key = if from.is_some() { "from" } else { "to" };
    let path = split_path(w, name, key, field)?;
    let (a, b) = (point_index(path, from, "from", field)?, point_index(path, to, "to", field)?);
    if a >= b {
        let order: Vec<&str> = path.points.iter().map(|p| p.name).collect();
        return Err(err(
            format!("{field}.to"),
            format!(
                "the stretch must end after it starts: in `{}` the points come in this order: {}",
                path.name,
                order.join(", ")
            ),
        ));
    }
    Ok((a, b))
}

/// The work before point index `i` of `path` ([`point_index`]), ns.
fn before_ns(path: &CodePath, i: usize, params: &paths::CodeParams, names: &Names<'_>, scale: f64) -> f64 {
    match i {
        0 => 0.0,
        i => tally_before(path, i, params).ns(names.profile, scale),
    }
}

/// The counted work of `path` before point index `i` (past its last
/// point: the whole path), remembered per `(path, i, dir_entries)`: each is
/// a mean over every directory size up to `dir_entries` (20,000 sizes in
/// case 1, two directory shapes each), and a run's build asks for the same
/// ones once per stretch and per split share, in every run of a scenario.
/// A remembered tally is the one the count gives, bit for bit.
fn tally_before(path: &CodePath, i: usize, params: &paths::CodeParams) -> Tally {
    type Key = (&'static str, usize, u64);
    static MEMO: OnceLock<Mutex<BTreeMap<Key, Tally>>> = OnceLock::new();
    let i = i.min(path.points.len() + 1);
    // Every field of the parameters is in the key (a new one fails to
    // compile here until it is).
    let paths::CodeParams { dir_entries } = params;
    let key = (path.name, i, *dir_entries);
    let memo = MEMO.get_or_init(Default::default);
    if let Some(t) = memo.lock().ok().and_then(|m| m.get(&key).copied()) {
        return t;
    }
    let t = if i > path.points.len() {
        (path.count)(params)
    } else {
        (path.points[i - 1].before)(params)
    };
    if let Ok(mut m) = memo.lock() {
        m.insert(key, t);
    }
    t
}

/// The share of the whole counted path `path` that its stretch
/// `[from, to)` is (point indices), priced with `[code]` at `at`.
pub fn share(path: &CodePath, (from, to): (usize, usize), at: &str, names: &Names<'_>) -> Result<f64, BuildError> {
    let (path, params, scale) = priced(path.name, at, names)?;
    let whole = before_ns(path, path.points.len() + 1, &params, names, scale);
    let part = before_ns(path, to, &params, names, scale) - before_ns(path, from, &params, names, scale);
    Ok(if whole > 0.0 { (part / whole).clamp(0.0, 1.0) } else { 0.0 })
}

/// The duration of a `[work.NAME]` that names counted code (`code`): the
/// path's counted work ([`crate::kernel::xfs::paths`]) for `[code]`'s
/// `dir_entries`, priced on the profile with `[code]`'s `work_scale`;
/// `fixed` (default) or `exp` around that mean. `stretch`: only the part
/// between two points ([`stretch`]).
pub fn duration(w: &WorkConfig, code: &str, at: &str, stretch: Option<(usize, usize)>, names: &Names<'_>) -> Result<Duration, BuildError> {
    if let Some((key, _)) = w.dist(DistKind::Fixed).given().iter().find(|(_, v)| v.is_some()) {
        return Err(err(
            format!("{at}.{key}"),
            format!("a work with `code` takes its duration from the counted code of `{code}`: remove `{key}`"),
        ));
    }
    if w.split_by.is_some() {
        return Err(err(
            format!("{at}.split_by"),
            "a work with `code` is split by its own code's points: remove split_by",
        ));
    }
    let (path, params, scale) = priced(code, &format!("{at}.code"), names)?;
    let (from, to) = stretch.unwrap_or((0, path.points.len() + 1));
    let mean_ns = before_ns(path, to, &params, names, scale) - before_ns(path, from, &params, names, scale);
    let dist = match w.dist {
        None | Some(DistKind::Fixed) => DistKind::Fixed,
        Some(DistKind::Exp) => DistKind::Exp,
        Some(other) => {
            return Err(err(
                format!("{at}.dist"),
                format!("a work with `code` is fixed (default) or exp around the counted mean, found {other:?}").to_lowercase(),
            ));
        }
    };
    build::duration(
        &DistConfig {
            dist,
            mean_ns: Some(mean_ns.max(0.0)),
            sd_ns: None,
            min_ns: None,
            max_ns: None,
            sigma: None,
        },
        at,
    )
}

/// The steps of a list (`at`) that split a work with `from`/`to` cover it
/// exactly: per work and `every`, the stretches follow each other from
/// the start of its counted path to the end, with no gap (work the path
/// would lose) and no overlap (work it would run twice). Returns the
/// works some step splits.
pub fn check_splits<'a>(list: &'a [StepConfig], at: &str, works: &BTreeMap<String, WorkConfig>) -> Result<Vec<&'a str>, BuildError> {
    type Stretches = Vec<(usize, usize, usize)>;
    let mut by: BTreeMap<(&str, u32), (bool, Stretches)> = BTreeMap::new();
    for (i, s) in list.iter().enumerate() {
        let Some(WorkRef::Named(name)) = &s.work else { continue };
        let Some(w) = works.get(name) else { continue };
        let field = format!("{at}[{i}]");
        let split = s.from.is_some() || s.to.is_some();
        let (a, b) = if split {
            stretch(w, name, s.from.as_deref(), s.to.as_deref(), &field)?
        } else if let Some(path) = w.code.as_deref().or(w.split_by.as_deref()).and_then(paths::find) {
            (0, path.points.len() + 1)
        } else {
            continue;
        };
        let e = by.entry((name.as_str(), s.every.unwrap_or(1))).or_default();
        e.0 |= split;
        e.1.push((a, b, i));
    }
    let mut split = Vec::new();
    for ((name, every), (any, mut stretches)) in by {
        if !any {
            continue;
        }
        split.push(name);
        let w = &works[name];
        let path = w.code.as_deref().or(w.split_by.as_deref()).and_then(paths::find);
        let points: Vec<&str> = path.map(|p| p.points.iter().map(|q| q.name).collect()).unwrap_or_default();
        let point = |k: usize| match k {
            0 => "its start".to_string(),
            k if k > points.len() => "its end".to_string(),
            k => format!("`{}`", points[k - 1]),
        };
        stretches.sort_unstable();
        let mut reached = 0;
        for &(a, b, i) in &stretches {
            if a != reached {
                let what = if a < reached {
                    "overlaps the stretch before it (that work would run twice)"
                } else {
                    "leaves a gap before it (that work would be lost)"
                };
                return Err(ParamError::new(
                    format!("{at}[{i}].from"),
                    format!(
                        "the steps running work `{name}` (every {every}) must cover it once from start to end: this stretch starts at {} and {what}; the covered part ends at {}",
                        point(a),
                        point(reached)
                    ),
                ));
            }
            reached = b;
        }
        if reached != points.len() + 1 {
            let i = stretches.last().map_or(0, |s| s.2);
            return Err(ParamError::new(
                format!("{at}[{i}].to"),
                format!(
                    "the steps running work `{name}` (every {every}) must cover it once from start to end: nothing runs it from {} to its end",
                    point(reached)
                ),
            ));
        }
    }
    Ok(split)
}

#[cfg(test)]
mod tests {
    use super::tally_before;
    use crate::kernel::xfs::paths::{CODE_PATHS, CodeParams};

    /// The remembered tally of every counted path and point is the count
    /// itself, asked for once (computed) and again (remembered), at two
    /// directory sizes; the points' tallies differ, so a memo that mixed
    /// up points or sizes would fail here.
    #[test]
    fn remembered_tallies_are_the_counted_ones() {
        for dir_entries in [300, 20_000] {
            let params = CodeParams { dir_entries };
            for path in CODE_PATHS {
                let n = path.points.len();
                let counted: Vec<_> = (1..=n + 1)
                    .map(|i| {
                        if i > n {
                            (path.count)(&params)
                        } else {
                            (path.points[i - 1].before)(&params)
                        }
                    })
                    .collect();
                for _ in 0..2 {
                    let got: Vec<_> = (1..=n + 1).map(|i| tally_before(path, i, &params)).collect();
                    assert_eq!(got, counted, "{} at {dir_entries} names", path.name);
                }
                assert_eq!(
                    tally_before(path, n + 7, &params),
                    counted[n],
                    "past the last point: the whole path"
                );
                if n > 0 {
                    assert_ne!(counted[0], counted[n], "{}: a point's tally is not the whole", path.name);
                }
            }
        }
        let p = CODE_PATHS.iter().find(|p| p.name == "xfs_create").expect("xfs_create");
        let (small, large) = (CodeParams { dir_entries: 300 }, CodeParams { dir_entries: 20_000 });
        assert_ne!(tally_before(p, 9, &small), tally_before(p, 9, &large), "sizes are told apart");
    }

    #[test]
    fn the_reference_names_every_counted_path() {
        let spec = super::super::keys::PARAMS
            .iter()
            .find(|p| p.path == "work.NAME.code")
            .expect("work.NAME.code in the reference");
        let listed: Vec<&str> = spec.range.split(", ").collect();
        let table: Vec<&str> = CODE_PATHS.iter().map(|p| p.name).collect();
        assert_eq!(listed, table);
    }
}

#[cfg(test)]
mod shares {
    use super::*;
    use crate::kernel::xfs::paths;
    use std::collections::BTreeMap;

    /// Case 1's split of its fitted lump: the stretches of `xfs_create`
    /// (at the lab twin's 20,000 names, work_scale 1) on hosts A and B.
    /// The stretches add up to the whole, and the AGI-held stretch is
    /// most of it (the btrees, the inode, the entry and the commit).
    #[test]
    fn the_create_splits_at_the_agi_into_stretches_that_add_up() {
        for host in ["host-a", "host-b"] {
            let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/machines/{host}.toml"));
            let profile = crate::machine::profile::load_profile(&file).expect("profile");
            let code = crate::workload::path::config::CodeSection {
                work_scale: None,
                dir_entries: 20_000,
            };
            let (locks, rw, kinds, queues, counters, works, per) = (
                BTreeMap::new(),
                BTreeMap::new(),
                BTreeMap::new(),
                BTreeMap::new(),
                BTreeMap::new(),
                BTreeMap::new(),
                BTreeMap::new(),
            );
            let names = Names {
                locks: &locks,
                rwlocks: &rw,
                counter_kinds: &kinds,
                queues: &queues,
                counters: &counters,
                works: &works,
                code: Some(&code),
                profile: &profile,
                per: &per,
            };
            let path = paths::find("xfs_create").expect("xfs_create");
            let pre = share(path, (0, 1), "t", &names).expect("share");
            let held = share(path, (1, 2), "t", &names).expect("share");
            let post = share(path, (2, 3), "t", &names).expect("share");
            println!("{host}: xfs_create to xfs_dialloc {pre:.4}, xfs_dialloc to commit end {held:.4}, after {post:.4}");
            assert!((pre + held + post - 1.0).abs() < 1e-9);
            assert!(held > 0.5 && held < 0.9, "{host}: held share {held}");
            assert!(pre > 0.05 && post > 0.01, "{host}: {pre} {post}");
        }
    }
}
