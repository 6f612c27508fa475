//! Setting and merging parameter paths in TOML tables (variants, sweeps,
//! quick mode).

use toml::{Table, Value};

/// Sets dotted `path` in `table` to `value`, creating tables on the way.
pub fn set_path(table: &mut Table, path: &str, value: Value) -> Result<(), String> {
    let mut parts = path.split('.').peekable();
    let mut cur = table;
    while let Some(part) = parts.next() {
        if part.is_empty() {
            return Err(format!("`{path}` is not a valid parameter path"));
        }
        if parts.peek().is_none() {
            cur.insert(part.to_string(), value);
            return Ok(());
        }
        let next = cur.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
        cur = match next {
            Value::Table(t) => t,
            _ => return Err(format!("`{part}` in `{path}` is a value, not a table")),
        };
    }
    Err(format!("`{path}` is not a valid parameter path"))
}

/// The value at dotted `path`, if any.
pub fn get_path<'a>(table: &'a Table, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut v = table.get(parts.next()?)?;
    for part in parts {
        v = v.as_table()?.get(part)?;
    }
    Some(v)
}

/// Deep-merges `over` into `base`: tables merge key by key, anything else
/// replaces.
pub fn merge(base: &mut Table, over: &Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Finds which layer makes deserialisation fail: returns the span path to
/// blame and the message.
pub fn blame(base: &Table, layers: &[(String, Table)], err: &toml::de::Error) -> (String, String) {
    let message = err.message().trim().to_string();
    let mut table = base.clone();
    if try_doc(&table).is_err() {
        return (String::new(), message);
    }
    for (name, layer) in layers {
        merge(&mut table, layer);
        if let Err(e) = try_doc(&table) {
            return (name.clone(), e.message().trim().to_string());
        }
    }
    (String::new(), message)
}

fn try_doc(t: &Table) -> Result<super::config::Document, toml::de::Error> {
    Value::Table(t.clone()).try_into()
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
        merge(&mut t, &over);
        assert_eq!(get_path(&t, "a.c.d"), Some(&Value::Integer(9)));
        assert_eq!(get_path(&t, "a.b"), Some(&Value::Integer(1)));
    }
}
