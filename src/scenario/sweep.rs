//! The what-if grid: every `[sweep]` list is an axis of its own; the lists
//! of one `[[sweep.zip]]` table advance together as one axis (e.g. a
//! machine profile with its thread count). Points are the cross product of
//! the axes, first axis slowest; plain lists come first (sorted by path),
//! then the zip groups in order.

use toml::Value;

/// One axis of the grid: one or more parameter paths whose lists have the
/// same length and advance together.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// (parameter path, where it is written in the file, its values).
    pub params: Vec<(String, String, Vec<Value>)>,
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

/// A sweep mistake: where and what.
pub type SweepError = (String, String);

fn list(at: &str, v: &Value) -> Result<Vec<Value>, SweepError> {
    match v {
        Value::Array(a) if !a.is_empty() => Ok(a.clone()),
        _ => Err((at.to_string(), "a sweep takes a non-empty list of values".into())),
    }
}

fn zip_group(i: usize, v: &Value) -> Result<Axis, SweepError> {
    let at = format!("sweep.zip[{i}]");
    let Value::Table(t) = v else {
        return Err((at, "each [[sweep.zip]] is a table of parameter path -> list".into()));
    };
    let mut params = Vec::new();
    for (path, values) in t {
        let here = format!("{at}.{path}");
        params.push((path.clone(), here.clone(), list(&here, values)?));
    }
    let lens: Vec<usize> = params.iter().map(|p| p.2.len()).collect();
    if lens.is_empty() || lens.iter().any(|&l| l != lens[0]) {
        return Err((
            at,
            format!("the lists of one [[sweep.zip]] advance together, so they need the same length; found {lens:?}"),
        ));
    }
    Ok(Axis { params })
}

/// The axes of `[sweep]` in `sweep` (the `[sweep]` table).
pub fn axes(sweep: Option<&Value>) -> Result<Vec<Axis>, SweepError> {
    let Some(Value::Table(t)) = sweep else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (path, values) in t.iter().filter(|(k, _)| *k != "zip") {
        let at = format!("sweep.{path}");
        out.push(Axis {
            params: vec![(path.clone(), at.clone(), list(&at, values)?)],
        });
    }
    match t.get("zip") {
        None => {}
        Some(Value::Array(groups)) => {
            for (i, g) in groups.iter().enumerate() {
                out.push(zip_group(i, g)?);
            }
        }
        Some(_) => return Err(("sweep.zip".into(), "`zip` takes [[sweep.zip]] tables".into())),
    }
    let mut seen = std::collections::BTreeSet::new();
    for (path, at, _) in out.iter().flat_map(|a| &a.params) {
        if !seen.insert(path.clone()) {
            return Err((at.clone(), format!("`{path}` is swept twice")));
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
        if !steps.insert(step.clone()) {
            let at = axis.params.first().map_or_else(String::new, |p| p.1.clone());
            let what = if step.len() == 1 {
                format!("`{}`", step[0])
            } else {
                format!("({})", step.join(", "))
            };
            return Err((
                at,
                format!("{what} appears twice: each value of a sweep is a point of its own, and a repeated one would repeat the same runs"),
            ));
        }
    }
    Ok(())
}

/// Every swept path, where it is written, and its values, in grid order.
pub fn flatten(axes: &[Axis]) -> Vec<(String, String, Vec<Value>)> {
    axes.iter().flat_map(|a| a.params.iter().cloned()).collect()
}

/// The number of grid points, if it fits in a `u64`.
pub fn count(axes: &[Axis]) -> Option<u64> {
    axes.iter().try_fold(1u64, |n, a| n.checked_mul(a.len() as u64))
}

/// The values of every swept path (in [`flatten`] order) at grid point
/// `index`, first axis slowest.
pub fn point(axes: &[Axis], mut index: u64) -> Vec<Value> {
    let mut steps = vec![0usize; axes.len()];
    for (k, a) in axes.iter().enumerate().rev() {
        let len = a.len().max(1) as u64;
        steps[k] = (index % len) as usize;
        index /= len;
    }
    axes.iter()
        .zip(steps)
        .flat_map(|(a, s)| a.params.iter().map(move |p| p.2[s].clone()))
        .collect()
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
        assert_eq!(axes(Some(&s)).expect_err("unequal").0, "sweep.zip[0]");
        let s = table("[sweep]\np = [1]\n[[sweep.zip]]\np = [2]\n");
        assert!(axes(Some(&s)).expect_err("twice").1.contains("swept twice"));
    }

    #[test]
    fn a_repeated_point_is_an_error_but_a_repeat_within_one_zip_list_is_not() {
        let s = table(
            "[sweep]
x = [1, 2, 1]
",
        );
        let (at, why) = axes(Some(&s)).expect_err("repeated");
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
        let (at, why) = axes(Some(&s)).expect_err("repeated tuple");
        assert_eq!(at, "sweep.zip[0].p");
        assert!(why.starts_with("(a, 8) appears twice"), "{why}");
    }
}
