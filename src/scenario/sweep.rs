//! The what-if grid: every `[sweep]` list is an axis of its own; the lists
//! of one `[[sweep.zip]]` table advance together as one axis (e.g. a
//! machine profile with its thread count). Points are the cross product of
//! the axes, first axis slowest; plain lists come first (sorted by path),
//! then the zip groups in order.
//!
//! An axis may name its points: `"PATH" = { values = [...], labels =
//! [...] }` in `[sweep]`, `labels = [...]` in a `[[sweep.zip]]` table
//! (see [`super::labels`]).

use super::labels;
use toml::Value;

/// One axis of the grid: one or more parameter paths whose lists have the
/// same length and advance together.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// (parameter path, where it is written in the file, its values).
    pub params: Vec<(String, String, Vec<Value>)>,
    /// The axis's `labels = [...]`, one per step, as written (checked by
    /// [`labels::parse`]); `None` when it has none.
    pub labels: Option<Vec<String>>,
    /// Per parameter (in `params` order), the default labels of a list
    /// of lists or tables ([`labels::defaults`]); `None` for values that
    /// name themselves.
    pub defaults: Vec<Option<Vec<String>>>,
}

impl Axis {
    /// Number of steps along the axis.
    pub fn len(&self) -> usize {
        self.params.first().map_or(0, |p| p.2.len())
    }

    /// Whether the axis has no steps.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A sweep mistake: where (a span path), what, and the key meant.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepError {
    /// Where the mistake is written, e.g. `sweep.zip[0].labels[2]`.
    pub at: String,
    /// What is wrong and what was expected.
    pub message: String,
    /// The key meant, for a misspelt one.
    pub suggestion: Option<String>,
}

impl SweepError {
    /// A mistake at `at`, without a suggestion.
    pub fn new(at: &str, message: impl Into<String>) -> SweepError {
        SweepError {
            at: at.to_string(),
            message: message.into(),
            suggestion: None,
        }
    }
}

fn list(at: &str, v: &Value) -> Result<Vec<Value>, SweepError> {
    match v {
        Value::Array(a) if !a.is_empty() => Ok(a.clone()),
        _ => Err(SweepError::new(
            at,
            "a sweep takes a non-empty list of values, or { values = [...], labels = [...] }",
        )),
    }
}

/// The keys of a labelled `[sweep]` entry.
const ENTRY_KEYS: [&str; 2] = ["values", "labels"];

/// One `[sweep]` entry at `at`: a list, or `{ values = [...], labels =
/// [...] }`; its values and labels.
pub fn entry(at: &str, v: &Value) -> Result<(Vec<Value>, Option<Vec<String>>), SweepError> {
    let Value::Table(t) = v else {
        return Ok((list(at, v)?, None));
    };
    if let Some(k) = t.keys().find(|k| !ENTRY_KEYS.contains(&k.as_str())) {
        return Err(SweepError {
            at: format!("{at}.{k}"),
            message: format!("unknown key `{k}`: a labelled sweep takes `values` and `labels`"),
            suggestion: crate::text::closest(k, ENTRY_KEYS).map(|c| format!("{at}.{c}")),
        });
    }
    let Some(values) = t.get("values") else {
        return Err(SweepError::new(at, "a labelled sweep needs `values = [...]` beside its `labels`"));
    };
    let values = list(&format!("{at}.values"), values)?;
    let labels = match t.get("labels") {
        Some(l) => Some(labels::parse(&format!("{at}.labels"), l, values.len())?),
        None => None,
    };
    Ok((values, labels))
}

fn zip_group(i: usize, v: &Value) -> Result<Axis, SweepError> {
    let at = format!("sweep.zip[{i}]");
    let Value::Table(t) = v else {
        return Err(SweepError::new(&at, "each [[sweep.zip]] is a table of parameter path -> list"));
    };
    let mut params = Vec::new();
    for (path, values) in t.iter().filter(|(k, _)| *k != "labels") {
        let here = format!("{at}.{path}");
        // `label = [...]` and the like: a misspelt `labels`, not a parameter.
        if let Some(c) = crate::text::closest(path, ["labels"]).filter(|_| !path.contains(['.', '['])) {
            return Err(SweepError {
                message: format!("unknown key `{path}` in a [[sweep.zip]]: did you mean `{c}`, the names of the group's steps?"),
                suggestion: Some(format!("{at}.{c}")),
                at: here,
            });
        }
        params.push((path.clone(), here.clone(), list(&here, values)?));
    }
    let lens: Vec<usize> = params.iter().map(|p| p.2.len()).collect();
    if lens.is_empty() || lens.iter().any(|&l| l != lens[0]) {
        return Err(SweepError::new(
            &at,
            format!("the lists of one [[sweep.zip]] advance together, so they need the same length; found {lens:?}"),
        ));
    }
    let labels = match t.get("labels") {
        Some(l) => Some(labels::parse(&format!("{at}.labels"), l, lens[0])?),
        None => None,
    };
    Ok(Axis::new(params, labels))
}

impl Axis {
    /// An axis of `params` named by `labels`, with the default labels of
    /// its list and table values when it has no labels.
    pub fn new(params: Vec<(String, String, Vec<Value>)>, labels: Option<Vec<String>>) -> Axis {
        let defaults = params
            .iter()
            .map(|p| if labels.is_some() { None } else { labels::defaults(&p.2) })
            .collect();
        Axis { params, labels, defaults }
    }

    /// The name of step `step` of the axis's parameter `k` when it is
    /// not the value itself: the axis's label, else the default label of
    /// a list or table value.
    pub fn label(&self, k: usize, step: usize) -> Option<&str> {
        match &self.labels {
            Some(l) => l.get(step).map(String::as_str),
            None => self.defaults.get(k)?.as_ref()?.get(step).map(String::as_str),
        }
    }
}

/// The axes of `[sweep]` in `sweep` (the `[sweep]` table).
pub fn axes(sweep: Option<&Value>) -> Result<Vec<Axis>, SweepError> {
    let Some(Value::Table(t)) = sweep else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (path, v) in t.iter().filter(|(k, _)| *k != "zip") {
        let at = format!("sweep.{path}");
        let (values, labels) = entry(&at, v)?;
        out.push(Axis::new(vec![(path.clone(), at, values)], labels));
    }
    match t.get("zip") {
        None => {}
        Some(Value::Array(groups)) => {
            for (i, g) in groups.iter().enumerate() {
                out.push(zip_group(i, g)?);
            }
        }
        Some(_) => return Err(SweepError::new("sweep.zip", "`zip` takes [[sweep.zip]] tables")),
    }
    let mut seen = std::collections::BTreeSet::new();
    for (path, at, _) in out.iter().flat_map(|a| &a.params) {
        if !seen.insert(path.clone()) {
            return Err(SweepError::new(at, format!("`{path}` is swept twice")));
        }
    }
    out.iter().try_for_each(distinct_steps)?;
    Ok(out)
}

/// A swept value as text: strings bare, other values as TOML writes them
/// (how reports, point labels and point ids spell a coordinate).
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every step of `axis` differs from the others: a repeated value would
/// be a second point with the same coordinates, the same random numbers
/// and so the same results, counted twice.
fn distinct_steps(axis: &Axis) -> Result<(), SweepError> {
    let mut steps = std::collections::BTreeSet::new();
    for k in 0..axis.len() {
        let step: Vec<String> = axis.params.iter().map(|p| value_text(&p.2[k])).collect();
        if let Some(step) = steps.replace(step) {
            let at = axis.params.first().map_or_else(String::new, |p| p.1.clone());
            let what = if step.len() == 1 {
                format!("`{}`", step[0])
            } else {
                format!("({})", step.join(", "))
            };
            return Err(SweepError::new(
                &at,
                format!("{what} appears twice: each value of a sweep is a point of its own, and a repeated one would repeat the same runs"),
            ));
        }
    }
    Ok(())
}

/// The swept paths whose values are shown by a label (the axis's
/// `labels`, or defaults for list and table values).
pub fn labelled(axes: &[Axis]) -> Vec<String> {
    axes.iter()
        .flat_map(|a| {
            a.params
                .iter()
                .enumerate()
                .filter(|(k, _)| a.labels.is_some() || a.defaults.get(*k).is_some_and(Option::is_some))
                .map(|(_, p)| p.0.clone())
        })
        .collect()
}

/// Every swept path, where it is written, and its values, in grid order.
pub fn flatten(axes: &[Axis]) -> Vec<(String, String, Vec<Value>)> {
    axes.iter().flat_map(|a| a.params.iter().cloned()).collect()
}

/// The number of grid points, if it fits in a `u64`.
pub fn count(axes: &[Axis]) -> Option<u64> {
    axes.iter().try_fold(1u64, |n, a| n.checked_mul(a.len() as u64))
}

/// The step along every axis at grid point `index`, first axis slowest.
fn axis_steps(axes: &[Axis], mut index: u64) -> Vec<usize> {
    let mut steps = vec![0usize; axes.len()];
    for (k, a) in axes.iter().enumerate().rev() {
        let len = a.len().max(1) as u64;
        steps[k] = (index % len) as usize;
        index /= len;
    }
    steps
}

/// The step of every swept path (in [`flatten`] order: an index into its
/// list) at grid point `index`.
pub fn steps(axes: &[Axis], index: u64) -> Vec<usize> {
    axes.iter()
        .zip(axis_steps(axes, index))
        .flat_map(|(a, s)| a.params.iter().map(move |_| s))
        .collect()
}

/// The values of every swept path (in [`flatten`] order) at grid point
/// `index`, first axis slowest.
pub fn point(axes: &[Axis], index: u64) -> Vec<Value> {
    axes.iter()
        .zip(axis_steps(axes, index))
        .flat_map(|(a, s)| a.params.iter().map(move |p| p.2[s].clone()))
        .collect()
}

/// A swept value as a short tick label: a file path shows its stem
/// (`machines/host-a.toml` -> `host-a`), other values as [`value_text`].
pub fn short_value(v: &Value) -> String {
    if let Value::String(s) = v
        && (s.contains('/') || s.ends_with(".toml"))
    {
        let file = s.rsplit('/').next().unwrap_or(s);
        return file.strip_suffix(".toml").unwrap_or(file).to_string();
    }
    value_text(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Value {
        let t: toml::Table = toml::from_str(text).expect("toml");
        t.get("sweep").cloned().expect("sweep")
    }

    #[test]
    fn zip_groups_advance_together_and_cross_the_plain_lists() {
        let s = table("[sweep]\nx = [1, 2]\n[[sweep.zip]]\np = [\"a\", \"b\", \"c\"]\nt = [16, 8, 4]\n");
        let a = axes(Some(&s)).expect("valid");
        assert_eq!(count(&a), Some(6));
        let names: Vec<String> = flatten(&a).into_iter().map(|p| p.0).collect();
        assert_eq!(names, ["x", "p", "t"]);
        let p = |i| point(&a, i).iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" ");
        assert_eq!(p(0), "1 \"a\" 16");
        assert_eq!(p(2), "1 \"c\" 4");
        assert_eq!(p(4), "2 \"b\" 8");
    }

    #[test]
    fn unequal_zip_lists_and_double_sweeps_are_errors() {
        let s = table("[[sweep.zip]]\np = [1, 2]\nt = [1]\n");
        assert_eq!(axes(Some(&s)).expect_err("unequal").at, "sweep.zip[0]");
        let s = table("[sweep]\np = [1]\n[[sweep.zip]]\np = [2]\n");
        assert!(axes(Some(&s)).expect_err("twice").message.contains("swept twice"));
    }

    #[test]
    fn a_repeated_point_is_an_error_but_a_repeat_within_one_zip_list_is_not() {
        let s = table(
            "[sweep]
x = [1, 2, 1]
",
        );
        let SweepError { at, message: why, .. } = axes(Some(&s)).expect_err("repeated");
        assert_eq!(at, "sweep.x");
        assert!(why.starts_with("`1` appears twice"), "{why}");
        // A zip group's steps are tuples: t repeats, (p, t) does not.
        let s = table(
            "[[sweep.zip]]
p = [\"a\", \"b\"]
t = [8, 8]
",
        );
        assert!(axes(Some(&s)).is_ok());
        let s = table(
            "[[sweep.zip]]
p = [\"a\", \"a\"]
t = [8, 8]
",
        );
        let SweepError { at, message: why, .. } = axes(Some(&s)).expect_err("repeated tuple");
        assert_eq!(at, "sweep.zip[0].p");
        assert!(why.starts_with("(a, 8) appears twice"), "{why}");
    }
}
