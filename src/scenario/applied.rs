//! The guard against silent no-ops: every value a sweep, a variant or
//! quick mode sets must be the value the run uses, read back from the
//! run's resolved document (the typed sections written out again). A key
//! the parsers accept but no run reads, a list index that reaches nothing,
//! or a value a parser rewrites is an error at the key that set it.

use super::overrides::{get_path, indexed, out_of_range};
use toml::{Table, Value};

/// A value an override sets: where it is written (a span path), the
/// parameter path, and the value.
#[derive(Debug, Clone, PartialEq)]
pub struct Set {
    /// Where it is written, e.g. `sweep.path[4].every`.
    pub at: String,
    /// The parameter path, e.g. `path[4].every`.
    pub path: String,
    /// The value set.
    pub value: Value,
}

/// A set value the run does not use: (where, parameter path, why).
pub type NotApplied = (String, String, String);

/// The values `sets` read back from `resolved` (a run's resolved
/// document as TOML text), in the order of `sets`, or the first one that
/// differs from what was set.
pub fn read_back(resolved: &str, sets: &[Set]) -> Result<Vec<(String, Value)>, NotApplied> {
    let table: Table = toml::from_str(resolved).map_err(|e| {
        let first = sets
            .first()
            .map_or((String::new(), String::new()), |s| (s.at.clone(), s.path.clone()));
        (first.0, first.1, format!("the resolved document does not read back: {e}"))
    })?;
    read_back_table(&table, sets)
}

/// [`read_back`] from the resolved document as a table.
pub fn read_back_table(table: &Table, sets: &[Set]) -> Result<Vec<(String, Value)>, NotApplied> {
    let mut out = Vec::with_capacity(sets.len());
    for s in sets {
        let got = get_path(table, &s.path);
        if !applied(&s.value, got) {
            let why = match got {
                None => format!(
                    "is set to {} but no run reads it: the resolved document has no `{}`, so the value would change nothing",
                    s.value, s.path
                ),
                Some(g) => format!(
                    "is set to {} but the run uses {g}: the value would not be the one the results are labelled with",
                    s.value
                ),
            };
            return Err((s.at.clone(), s.path.clone(), why));
        }
        out.push((s.path.clone(), got.cloned().unwrap_or_else(|| s.value.clone())));
    }
    Ok(out)
}

/// Whether `got` is `set` as a run uses it: numbers equal as numbers
/// (`1` is `1.0`), a table's every key applied (defaults may add keys),
/// a list element by element.
pub fn applied(set: &Value, got: Option<&Value>) -> bool {
    let Some(got) = got else { return false };
    match (set, got) {
        (Value::Integer(a), Value::Float(b)) | (Value::Float(b), Value::Integer(a)) => (*a as f64) == *b,
        // A NaN set is a NaN read back (the checks of its range refuse it
        // with their own message).
        (Value::Float(a), Value::Float(b)) if a.is_nan() => b.is_nan(),
        (Value::Table(s), Value::Table(g)) => s.iter().all(|(k, v)| applied(v, g.get(k))),
        (Value::Array(s), Value::Array(g)) => s.len() == g.len() && s.iter().zip(g).all(|(a, b)| applied(a, Some(b))),
        (a, b) => a == b,
    }
}

/// Checks every `name[N]` segment of override `path` against the
/// document `base`: the list exists and has an element N. Returns the
/// message and the same key at the last index there is.
pub fn check_indices(base: &Table, path: &str) -> Result<(), (String, Option<String>)> {
    let mut cur = Some(base);
    let parts: Vec<&str> = path.split('.').collect();
    for (k, part) in parts.iter().enumerate() {
        if k > 0 && !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            let mut fixed: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
            fixed[k - 1] = format!("{}[{part}]", parts[k - 1]);
            fixed.remove(k);
            let message = format!("`{part}` is not a key: an element of a list is written `{}[{part}]`", parts[k - 1]);
            return Err((message, Some(fixed.join("."))));
        }
        let Some(table) = cur else { return Ok(()) };
        let Some((name, i)) = indexed(part) else {
            cur = table.get(*part).and_then(Value::as_table);
            continue;
        };
        let list = match table.get(name) {
            Some(Value::Array(a)) => a,
            Some(_) => return Err((format!("`{name}` is not a list, so `{part}` names nothing"), None)),
            None => {
                let here = parts[..k].iter().chain([&name]).copied().collect::<Vec<_>>().join(".");
                return Err((format!("the scenario has no `{here}` list, so `{part}` names nothing"), None));
            }
        };
        if i >= list.len() {
            let suggestion = list.len().checked_sub(1).map(|last| {
                let mut fixed: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
                fixed[k] = format!("{name}[{last}]");
                fixed.join(".")
            });
            return Err((out_of_range(name, i, list.len()), suggestion));
        }
        cur = list[i].as_table();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(path: &str, value: Value) -> Set {
        Set {
            at: format!("sweep.{path}"),
            path: path.into(),
            value,
        }
    }

    #[test]
    fn a_value_read_back_unchanged_passes_and_a_lost_one_fails() {
        let doc = "[[path]]\nevery = 1\n[[path]]\nevery = 10\nwork = { dist = \"fixed\", mean_ns = 5.0 }\n";
        let ok = read_back(
            doc,
            &[
                set("path[1].every", Value::Integer(10)),
                set("path[1].work.mean_ns", Value::Integer(5)),
            ],
        );
        assert_eq!(ok.expect("applied").len(), 2);
        let (at, path, why) = read_back(doc, &[set("path[1].bogus", Value::Integer(1))]).expect_err("lost");
        assert_eq!((at.as_str(), path.as_str()), ("sweep.path[1].bogus", "path[1].bogus"));
        assert!(why.contains("no run reads it"), "{why}");
        let (_, _, why) = read_back(doc, &[set("path[0].every", Value::Integer(3))]).expect_err("rewritten");
        assert!(why.contains("the run uses 1"), "{why}");
    }

    #[test]
    fn indices_are_checked_against_the_document() {
        let base: Table = toml::from_str("[[path]]\nx = 1\n[[path]]\nx = 2\n[a]\nh = [{ n = 1 }]\n").unwrap();
        assert!(check_indices(&base, "path[1].x").is_ok());
        assert!(check_indices(&base, "a.h[0].n").is_ok());
        let (m, s) = check_indices(&base, "path[99].x").expect_err("range");
        assert!(
            m.contains("index 99 is out of range: `path` has 2 elements, path[0] to path[1]"),
            "{m}"
        );
        assert_eq!(s.as_deref(), Some("path[1].x"));
        assert!(check_indices(&base, "a.h[1].n").expect_err("range").0.contains("`h` has 1 element"));
        assert!(check_indices(&base, "a[0].h").expect_err("not a list").0.contains("not a list"));
        assert!(check_indices(&base, "a.c[0]").expect_err("none").0.contains("no `a.c` list"));
        let (m, s) = check_indices(&base, "a.h.0.n").expect_err("dotted index");
        assert!(m.contains("written `h[0]`"), "{m}");
        assert_eq!(s.as_deref(), Some("a.h[0].n"));
    }
}
