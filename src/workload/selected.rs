//! Keys of a workload section that only one setting of a selector reads
//! (`xfs_alloc.freesp_file` only with `source = "freesp_file"`,
//! `fsmark.rb_node_offset` only with `index = "rbtree"`). Such a key
//! written where no run that it applies to has that setting is never read:
//! an error, not a silent no-op.
//!
//! A key written in the base section applies to every run, so it is
//! refused only when no run (no `[[variant]]`, no swept value of the
//! selector) reads it: a base key that one variant reads and another
//! inherits unread is fine. A key written in a `[[variant]]` is refused
//! when that variant's runs do not read it; one written in `[sweep]` when
//! no run reads it.

use crate::param::ParamError;
use toml::{Table, Value};

/// A section whose keys depend on one selector key.
#[derive(Debug, Clone, Copy)]
pub struct Selected {
    /// The section, e.g. `xfs_alloc`.
    pub section: &'static str,
    /// The selector key in it, e.g. `source`.
    pub selector: &'static str,
    /// The selector's value when no layer sets it.
    pub default: &'static str,
    /// (key, the selector value that alone reads it); keys not listed are
    /// read whatever the selector.
    pub owned: &'static [(&'static str, &'static str)],
}

/// Value of the nested path `a.b.c` in `t`.
fn get<'a>(t: &'a Table, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let v = t.get(*first)?;
    if rest.is_empty() { Some(v) } else { get(v.as_table()?, rest) }
}

impl Selected {
    /// The selector value that reads `key` (a top-level key of the
    /// section, or a dotted path inside it), if only one does.
    fn owner(&self, key: &str) -> Option<&'static str> {
        let head = key.split('.').next().unwrap_or(key);
        self.owned.iter().find(|(k, _)| *k == head).map(|(_, o)| *o)
    }

    /// Selector values the `[sweep]` of `doc` sets (plain or zipped).
    fn swept(&self, doc: &Table) -> Vec<String> {
        let path = format!("{}.{}", self.section, self.selector);
        let Some(Value::Table(sweep)) = doc.get("sweep") else {
            return Vec::new();
        };
        let mut lists: Vec<&Value> = sweep.get(&path).into_iter().collect();
        if let Some(Value::Array(zips)) = sweep.get("zip") {
            lists.extend(zips.iter().filter_map(|z| z.as_table()?.get(&path)));
        }
        lists
            .into_iter()
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    }

    /// The selector values of the runs of each variant (one implicit
    /// variant when there are none).
    fn runs(&self, doc: &Table) -> Vec<Vec<String>> {
        let base = get(doc, &[self.section, self.selector])
            .and_then(Value::as_str)
            .unwrap_or(self.default)
            .to_string();
        let swept = self.swept(doc);
        let variants: Vec<&Table> = match doc.get("variant") {
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_table).collect(),
            _ => Vec::new(),
        };
        let one = |v: Option<&Table>| {
            if !swept.is_empty() {
                return swept.clone();
            }
            let own = v.and_then(|v| get(v, &[self.section, self.selector])).and_then(Value::as_str);
            vec![own.map_or_else(|| base.clone(), str::to_string)]
        };
        if variants.is_empty() {
            vec![one(None)]
        } else {
            variants.into_iter().map(|v| one(Some(v))).collect()
        }
    }

    /// Removes from `section` (the section with every default filled)
    /// the keys no run of `doc` reads, so that a resolved scenario does not
    /// write keys [`Selected::check`] would refuse.
    pub fn prune(&self, doc: &Table, section: &mut Table) {
        let runs = self.runs(doc);
        section.retain(|k, _| self.owner(k).is_none_or(|o| runs.iter().flatten().any(|s| s == o)));
    }

    fn refuse(&self, at: String, key: &str, owner: &str) -> ParamError {
        ParamError::new(
            at,
            format!(
                "`{}.{key}` is read only with {} = \"{owner}\", and no run it applies to has that; remove it",
                self.section, self.selector
            ),
        )
    }

    /// Checks the whole scenario document `doc` (before variants and the
    /// sweep are applied): every selector-owned key it writes must be read
    /// by at least one run it applies to. The error names where the key is
    /// written (`xfs_alloc.histogram`, `variant[1].fsmark.enomem_every`,
    /// `sweep.fsmark.rb_node_offset`).
    pub fn check(&self, doc: &Table) -> Result<(), ParamError> {
        let runs = self.runs(doc);
        let any_reads = |owner: &str| runs.iter().flatten().any(|s| s == owner);
        if let Some(Value::Table(own)) = doc.get(self.section) {
            for key in own.keys() {
                match self.owner(key) {
                    Some(o) if !any_reads(o) => return Err(self.refuse(format!("{}.{key}", self.section), key, o)),
                    _ => {}
                }
            }
        }
        if let Some(Value::Array(vs)) = doc.get("variant") {
            for (i, (v, sels)) in vs.iter().zip(&runs).enumerate() {
                let Some(own) = v.as_table().and_then(|v| get(v, &[self.section])).and_then(Value::as_table) else {
                    continue;
                };
                for key in own.keys() {
                    match self.owner(key) {
                        Some(o) if !sels.iter().any(|s| s == o) => {
                            return Err(self.refuse(format!("variant[{i}].{}.{key}", self.section), key, o));
                        }
                        _ => {}
                    }
                }
            }
        }
        self.check_sweep(doc, &any_reads)
    }

    fn check_sweep(&self, doc: &Table, any_reads: &dyn Fn(&str) -> bool) -> Result<(), ParamError> {
        let Some(Value::Table(sweep)) = doc.get("sweep") else {
            return Ok(());
        };
        let prefix = format!("{}.", self.section);
        let mut paths: Vec<(String, &String)> = sweep.keys().filter(|k| *k != "zip").map(|k| (format!("sweep.{k}"), k)).collect();
        if let Some(Value::Array(zips)) = sweep.get("zip") {
            for (i, z) in zips.iter().enumerate() {
                paths.extend(
                    z.as_table()
                        .into_iter()
                        .flat_map(|t| t.keys())
                        .map(|k| (format!("sweep.zip[{i}].{k}"), k)),
                );
            }
        }
        for (at, path) in paths {
            let Some(key) = path.strip_prefix(&prefix) else {
                continue;
            };
            match self.owner(key) {
                Some(o) if !any_reads(o) => return Err(self.refuse(at, key, o)),
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEL: Selected = Selected {
        section: "s",
        selector: "kind",
        default: "a",
        owned: &[("only_a", "a"), ("only_b", "b")],
    };

    fn check(text: &str) -> Result<(), String> {
        let doc: Table = toml::from_str(text).unwrap();
        SEL.check(&doc).map_err(|e| e.field)
    }

    #[test]
    fn base_key_of_the_default_setting_is_read() {
        assert_eq!(check("[s]\nonly_a = 1"), Ok(()));
        assert_eq!(check("[s]\nonly_b = 1"), Err("s.only_b".into()));
        assert_eq!(check("[s]\nkind = \"b\"\nonly_a = 1"), Err("s.only_a".into()));
    }

    #[test]
    fn base_key_read_by_one_variant_is_kept() {
        let t = "[s]\nonly_a = 1\n[[variant]]\nname = \"x\"\ns.kind = \"a\"\n[[variant]]\nname = \"y\"\ns.kind = \"b\"";
        assert_eq!(check(t), Ok(()));
        let t = "[s]\nonly_a = 1\n[[variant]]\nname = \"y\"\ns.kind = \"b\"";
        assert_eq!(check(t), Err("s.only_a".into()));
    }

    #[test]
    fn variant_key_must_be_read_by_that_variant() {
        let t = "[[variant]]\nname = \"x\"\ns.only_a = 2\n[[variant]]\nname = \"y\"\ns.kind = \"b\"\ns.only_a = 2";
        assert_eq!(check(t), Err("variant[1].s.only_a".into()));
    }

    #[test]
    fn a_swept_selector_reads_every_swept_setting() {
        assert_eq!(check("[s]\nonly_b = 1\n[sweep]\n\"s.kind\" = [\"a\", \"b\"]"), Ok(()));
        assert_eq!(check("[sweep]\n\"s.only_b\" = [1, 2]"), Err("sweep.s.only_b".into()));
        assert_eq!(check("[[sweep.zip]]\n\"s.only_b\" = [1, 2]\n\"s.kind\" = [\"b\", \"b\"]"), Ok(()));
    }
}
