//! Setting and merging parameter paths in TOML tables (variants, sweeps,
//! quick mode).
//!
//! A path is dotted keys, any of which may index a list of tables:
//! `path[4].every`, `xfs_alloc.histogram[1].extents`. An override layer
//! is built from an empty table, where the list does not exist, so it
//! keeps an indexed segment as a literal key (`"path[4]" = { every = 10 }`);
//! [`merge`] applies it to element 4 of the base document's `path` list.

use toml::{Table, Value};

/// A segment `name[N]` as (`name`, N); `None` for a plain key.
pub fn indexed(segment: &str) -> Option<(&str, usize)> {
    let (name, rest) = segment.split_once('[')?;
    let digits = rest.strip_suffix(']')?;
    if name.is_empty() || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((name, digits.parse().ok()?))
}

/// Checks the segments of `path`: none empty, and a `[` only in a
/// well-formed `name[N]`.
fn segments(path: &str) -> Result<Vec<&str>, String> {
    let parts: Vec<&str> = path.split('.').collect();
    for part in &parts {
        if part.is_empty() || ((part.contains('[') || part.contains(']')) && indexed(part).is_none()) {
            return Err(format!(
                "`{path}` is not a valid parameter path (dotted keys; a list element is `name[N]`, e.g. `path[2].every`)"
            ));
        }
    }
    Ok(parts)
}

/// Sets dotted `path` in `table` to `value`, creating tables on the way
/// (an indexed segment becomes a literal key, see the module doc).
pub fn set_path(table: &mut Table, path: &str, value: Value) -> Result<(), String> {
    let parts = segments(path)?;
    let (last, inner) = parts
        .split_last()
        .ok_or_else(|| format!("`{path}` is not a valid parameter path"))?;
    let mut cur = table;
    for part in inner {
        let next = cur.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
        cur = match next {
            Value::Table(t) => t,
            _ => return Err(format!("`{part}` in `{path}` is a value, not a table")),
        };
    }
    cur.insert(last.to_string(), value);
    Ok(())
}

/// The value at dotted `path`, if any: an indexed segment is a literal key
/// of an override layer or an element of a list of the document.
pub fn get_path<'a>(table: &'a Table, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut v = step(table, parts.next()?)?;
    for part in parts {
        v = step(v.as_table()?, part)?;
    }
    Some(v)
}

fn step<'a>(table: &'a Table, part: &str) -> Option<&'a Value> {
    if let Some(v) = table.get(part) {
        return Some(v);
    }
    let (name, i) = indexed(part)?;
    table.get(name)?.as_array()?.get(i)
}

/// Deep-merges `over` into `base`: tables merge key by key, an indexed
/// key merges into that element of the base's list, anything else
/// replaces. An index past the end of the list, or into something that
/// is not a list, is an error naming the key.
pub fn merge(base: &mut Table, over: &Table) -> Result<(), String> {
    for (k, v) in over {
        if !base.contains_key(k)
            && let Some((name, i)) = indexed(k)
        {
            let slot = element(base, name, i)?;
            match (slot, v) {
                (Value::Table(b), Value::Table(o)) => merge(b, o).map_err(|e| format!("{k}.{e}"))?,
                (slot, v) => *slot = v.clone(),
            }
            continue;
        }
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o)?,
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(())
}

/// Element `i` of list `name` in `base`, or why there is none.
fn element<'a>(base: &'a mut Table, name: &str, i: usize) -> Result<&'a mut Value, String> {
    match base.get_mut(name) {
        Some(Value::Array(a)) => {
            let n = a.len();
            a.get_mut(i).ok_or_else(|| format!("{name}[{i}]: {}", out_of_range(name, i, n)))
        }
        Some(_) => Err(format!("{name}[{i}]: `{name}` is not a list, so it has no element {i}")),
        None => Err(format!("{name}[{i}]: the scenario has no `{name}` list, so it has no element {i}")),
    }
}

/// The message for index `i` of list `name` of `n` elements.
pub fn out_of_range(name: &str, i: usize, n: usize) -> String {
    match n {
        0 => format!("index {i} is out of range: `{name}` is empty"),
        1 => format!("index {i} is out of range: `{name}` has 1 element, {name}[0]"),
        _ => format!(
            "index {i} is out of range: `{name}` has {n} elements, {name}[0] to {name}[{}]",
            n - 1
        ),
    }
}

/// Every leaf parameter path of an override table (`a.b.c`), empty tables
/// counted as leaves.
pub fn leaf_paths(table: &Table) -> Vec<String> {
    let mut out = Vec::new();
    walk("", table, &mut out);
    out
}

fn walk(prefix: &str, table: &Table, out: &mut Vec<String>) {
    for (k, v) in table {
        let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            Value::Table(t) if !t.is_empty() => walk(&path, t, out),
            _ => out.push(path),
        }
    }
}

/// `table` rebuilt by [`set_path`] from its leaf paths, so that a quoted
/// dotted key (`"path[1].work.mean_ns" = 5`) and the same key written as
/// nested tables (`"path[1]".work.mean_ns = 5`) mean the same override.
pub fn normalise(table: &Table) -> Result<Table, (String, String)> {
    let mut out = Table::new();
    for path in leaf_paths(table) {
        let value = leaf(table, &path).cloned().unwrap_or(Value::Table(Table::new()));
        set_path(&mut out, &path, value).map_err(|m| (path.clone(), m))?;
    }
    Ok(out)
}

/// The value at a path of [`leaf_paths`] (whose keys may hold dots).
fn leaf<'a>(table: &'a Table, path: &str) -> Option<&'a Value> {
    if let Some(v) = table.get(path) {
        return Some(v);
    }
    table.iter().find_map(|(k, v)| {
        let rest = path.strip_prefix(k.as_str())?.strip_prefix('.')?;
        leaf(v.as_table()?, rest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_merge_paths() {
        let mut t: Table = toml::from_str("[a]\nb = 1\n[a.c]\nd = 2").unwrap();
        set_path(&mut t, "a.c.e", Value::Integer(3)).unwrap();
        assert_eq!(get_path(&t, "a.c.e"), Some(&Value::Integer(3)));
        assert!(set_path(&mut t, "a.b.x", Value::Integer(1)).is_err());
        let over: Table = toml::from_str("[a.c]\nd = 9").unwrap();
        merge(&mut t, &over).unwrap();
        assert_eq!(get_path(&t, "a.c.d"), Some(&Value::Integer(9)));
        assert_eq!(get_path(&t, "a.b"), Some(&Value::Integer(1)));
    }

    #[test]
    fn an_indexed_key_reaches_one_element_of_a_list() {
        let mut base: Table = toml::from_str("[[p]]\nx = 1\n[[p]]\nx = 2\ny = { z = 3 }\n").unwrap();
        let mut layer = Table::new();
        set_path(&mut layer, "p[1].y.z", Value::Integer(7)).unwrap();
        assert!(layer.contains_key("p[1]"), "{layer:?}");
        merge(&mut base, &layer).unwrap();
        assert_eq!(get_path(&base, "p[1].y.z"), Some(&Value::Integer(7)));
        assert_eq!(get_path(&base, "p[1].x"), Some(&Value::Integer(2)));
        assert_eq!(get_path(&base, "p[0].x"), Some(&Value::Integer(1)));
        let mut far = Table::new();
        set_path(&mut far, "p[2].x", Value::Integer(1)).unwrap();
        let e = merge(&mut base, &far).unwrap_err();
        assert!(e.contains("p[2]: index 2 is out of range: `p` has 2 elements"), "{e}");
        let mut none = Table::new();
        set_path(&mut none, "q[0].x", Value::Integer(1)).unwrap();
        assert!(merge(&mut base, &none).unwrap_err().contains("no `q` list"));
    }

    #[test]
    fn malformed_indices_are_refused_and_quoted_keys_normalise() {
        for bad in ["p[", "p[x].a", "p[1]x.a", "[1].a", "p..a", "p]"] {
            assert!(set_path(&mut Table::new(), bad, Value::Integer(1)).is_err(), "{bad}");
        }
        let quoted: Table = toml::from_str("\"p[1].y.z\" = 5\n").unwrap();
        let nested: Table = toml::from_str("\"p[1]\".y.z = 5\n").unwrap();
        assert_eq!(normalise(&quoted).unwrap(), normalise(&nested).unwrap());
        assert_eq!(get_path(&normalise(&quoted).unwrap(), "p[1].y.z"), Some(&Value::Integer(5)));
    }
}
