//! Names of the points of a sweep axis, as plots, CSV files and reports
//! show them: the axis's own `labels = [...]` (checked here: one per
//! value, unique, non-empty, at most [`MAX_LABEL_CHARS`] characters and
//! usable as a file name), else, for values that are lists or tables, a
//! short default label that says what tells the values apart
//! ([`defaults`]). The values themselves stay what the runs use, what
//! seeds their random numbers and what `at = {...}` selects; a label is
//! only a name.

use super::sweep::SweepError;
use toml::Value;

/// The longest label, in characters: a plot's category tick shows 32
/// before it cuts a name.
pub const MAX_LABEL_CHARS: usize = 32;

/// The most distinguishing elements a default label names.
const MAX_DEFAULT_PARTS: usize = 2;

/// `labels = [...]` at `at` (a span path, e.g. `sweep.x.labels`) for an
/// axis of `steps` values: a list of that many distinct, non-empty text
/// labels, each usable as a file name.
pub fn parse(at: &str, v: &Value, steps: usize) -> Result<Vec<String>, SweepError> {
    let Value::Array(items) = v else {
        return Err(SweepError::new(
            at,
            format!("`labels` takes a list of text labels, one per value; found {v}"),
        ));
    };
    if items.len() != steps {
        return Err(SweepError::new(
            at,
            format!(
                "{} label(s) for {steps} value(s): `labels` names each value of the axis, in order, so it needs {steps}",
                items.len()
            ),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let here = format!("{at}[{j}]");
        let Value::String(s) = item else {
            return Err(SweepError::new(&here, format!("expected a text label, found {item}")));
        };
        check_one(s).map_err(|m| SweepError::new(&here, m))?;
        if let Some(first) = out.iter().position(|l| l == s) {
            return Err(SweepError::new(
                &here,
                format!(
                    "label `{s}` names value {} and value {}: each value needs a label of its own",
                    first + 1,
                    j + 1
                ),
            ));
        }
        out.push(s.clone());
    }
    Ok(out)
}

/// Why `s` cannot be a label, if it cannot.
fn check_one(s: &str) -> Result<(), String> {
    let shown = crate::text::quote_short(s);
    if s.trim().is_empty() {
        return Err("a label cannot be empty".into());
    }
    if s.trim() != s {
        return Err(format!("label `{shown}` starts or ends with a space"));
    }
    if s.chars().count() > MAX_LABEL_CHARS {
        return Err(format!(
            "label `{shown}` has {} characters, more than {MAX_LABEL_CHARS} (a plot tick shows {MAX_LABEL_CHARS})",
            s.chars().count()
        ));
    }
    if let Some(c) = s.chars().find(|c| c.is_control() || matches!(c, '/' | '\\')) {
        return Err(format!(
            "label `{shown}` holds `{}`: a label must be usable as a file name (no `/`, `\\` or control characters)",
            c.escape_default()
        ));
    }
    if s.starts_with('.') {
        return Err(format!(
            "label `{shown}` starts with `.`: a label must be usable as a file name, and such a file is hidden"
        ));
    }
    Ok(())
}

/// The default labels of a swept list whose values are lists or tables
/// (`None` for other values, which name themselves): each value named by
/// the elements that differ between the values, `[3]=5` (element 3 of a
/// list is 5) or `[0].extents=1000` (field `extents` of element 0), at
/// most two of them; when more differ, when the values differ in length
/// or shape, or when that would not make a label (longer than
/// [`MAX_LABEL_CHARS`], or not usable as a file name), the
/// value's place in the list, `#1`, `#2`, ... The full values stay in
/// the CSV value columns and in `points.resolved.toml`.
pub fn defaults(values: &[Value]) -> Option<Vec<String>> {
    if !values.iter().any(|v| matches!(v, Value::Array(_) | Value::Table(_))) {
        return None;
    }
    Some(by_difference(values).unwrap_or_else(|| (1..=values.len()).map(|i| format!("#{i}")).collect()))
}

/// Labels naming the differing leaves of `values`, if the rule of
/// [`defaults`] allows.
fn by_difference(values: &[Value]) -> Option<Vec<String>> {
    let leaves: Vec<Vec<(String, String)>> = values
        .iter()
        .map(|v| {
            let mut out = Vec::new();
            flatten("", v, &mut out);
            out
        })
        .collect();
    let first = leaves.first()?;
    // Every value must have the same leaves (same length, same keys).
    let same_shape = leaves
        .iter()
        .all(|l| l.len() == first.len() && l.iter().zip(first).all(|(a, b)| a.0 == b.0));
    if !same_shape || first.is_empty() {
        return None;
    }
    let differing: Vec<usize> = (0..first.len()).filter(|&i| leaves.iter().any(|l| l[i].1 != first[i].1)).collect();
    if differing.is_empty() || differing.len() > MAX_DEFAULT_PARTS {
        return None;
    }
    let labels: Vec<String> = leaves
        .iter()
        .map(|l| {
            differing
                .iter()
                .map(|&i| format!("{}={}", l[i].0, l[i].1))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let fits = labels.iter().all(|l| check_one(l).is_ok());
    let mut unique = labels.clone();
    unique.sort();
    unique.dedup();
    (fits && unique.len() == labels.len()).then_some(labels)
}

/// The leaves of `v` below `prefix`: `[i]` for a list element, `.key`
/// (just `key` at the top) for a table field, with the leaf's text.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), item, out);
            }
        }
        Value::Table(t) => {
            for (k, item) in t {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&p, item, out);
            }
        }
        other => out.push((prefix.to_string(), super::sweep::value_text(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(text: &str) -> Vec<Value> {
        let t: toml::Table = toml::from_str(&format!("x = {text}")).expect("toml");
        t["x"].as_array().cloned().expect("list")
    }

    fn labels(text: &str) -> Option<Vec<String>> {
        defaults(&list(text))
    }

    #[test]
    fn lists_are_named_by_the_elements_that_differ() {
        assert_eq!(labels("[[1, 2, 3, 4], [1, 2, 3, 5]]").expect("labels"), ["[3]=4", "[3]=5"]);
        assert_eq!(
            labels("[[1, 2], [3, 2], [3, 4]]").expect("labels"),
            ["[0]=1,[1]=2", "[0]=3,[1]=2", "[0]=3,[1]=4"]
        );
        assert_eq!(
            labels("[[{ from = 1, to = 1, extents = 10 }], [{ from = 1, to = 1, extents = 1000 }]]").expect("labels"),
            ["[0].extents=10", "[0].extents=1000"]
        );
        assert_eq!(
            labels("[{ sockets = 1 }, { sockets = 2 }]").expect("labels"),
            ["sockets=1", "sockets=2"]
        );
        assert_eq!(
            labels("[[{ n = 1000 }, { n = 200 }], [{ n = 1000 }, { n = 20 }], [{ n = 100 }, { n = 20 }]]").expect("labels"),
            ["[0].n=1000,[1].n=200", "[0].n=1000,[1].n=20", "[0].n=100,[1].n=20"]
        );
    }

    #[test]
    fn other_lists_fall_back_to_their_place() {
        // Different lengths, three differing elements, too long.
        assert_eq!(labels("[[1, 2], [1, 2, 3]]").expect("labels"), ["#1", "#2"]);
        assert_eq!(labels("[[1, 2, 3], [4, 5, 6]]").expect("labels"), ["#1", "#2"]);
        assert_eq!(
            labels("[[\"a-rather-long-text-value-of-30\"], [\"b\"]]").expect("labels"),
            ["#1", "#2"]
        );
        // A slash would not make a file name.
        assert_eq!(labels("[[\"a/b\"], [\"c\"]]").expect("labels"), ["#1", "#2"]);
    }

    #[test]
    fn plain_values_name_themselves() {
        assert_eq!(labels("[1, 2, 3]"), None);
        assert_eq!(labels("[\"spread\", \"compact\"]"), None);
    }

    #[test]
    fn written_labels_are_checked() {
        let v = |t: &str| list(t).into_iter().collect::<Vec<_>>();
        let ok = parse("sweep.x.labels", &Value::Array(v("[\"rare\", \"often\"]")), 2).expect("valid");
        assert_eq!(ok, ["rare", "often"]);
        let err = |t: &str, n: usize| parse("sweep.x.labels", &Value::Array(v(t)), n).expect_err(t);
        let e = err("[\"a\"]", 2);
        assert_eq!(e.at, "sweep.x.labels");
        assert!(e.message.starts_with("1 label(s) for 2 value(s)"), "{}", e.message);
        let e = err("[\"a\", \"a\"]", 2);
        assert_eq!(e.at, "sweep.x.labels[1]");
        assert!(e.message.contains("names value 1 and value 2"), "{}", e.message);
        for bad in [
            "[\"\", \"b\"]",
            "[\" a\", \"b\"]",
            "[\"a/b\", \"b\"]",
            "[\".a\", \"b\"]",
            "[1, \"b\"]",
        ] {
            assert_eq!(err(bad, 2).at, "sweep.x.labels[0]", "{bad}");
        }
        let long = format!("[\"{}\", \"b\"]", "x".repeat(MAX_LABEL_CHARS + 1));
        assert!(err(&long, 2).message.contains("more than 32"));
        assert!(parse("sweep.x.labels", &Value::String("a".into()), 1).is_err());
    }
}
