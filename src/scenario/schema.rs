//! The keys the parsers accept, asked of the parsers themselves: a probe
//! key is put into each table of a document that loads, and the parser's
//! "unknown field `…`, expected one of …" answer lists the fields of that
//! table. A table the parser takes as a map (any key) gives names, shown
//! as `NAME`; a list of tables shows its elements as `[]`. A test checks
//! that every key found this way over the shipped scenarios and the
//! examples is in the reference, so the reference cannot drift from the
//! parsers.

use super::config::{Document, SHARED_SECTIONS};
use crate::workload::{Sections, Workload};
use std::collections::BTreeSet;
use toml::{Table, Value};

const PROBE: &str = "__fsmeta_probe__";

/// What the parser said to the probe at one table.
enum Answer {
    /// A struct with these fields.
    Fields(Vec<String>),
    /// A map: any key is a name.
    Map,
}

fn answer(message: Option<String>) -> Answer {
    let Some(m) = message else { return Answer::Map };
    if !m.contains(&format!("unknown field `{PROBE}`")) {
        return Answer::Map;
    }
    let fields = m
        .split_once("expected")
        .map(|(_, rest)| rest.split('`').skip(1).step_by(2).map(str::to_string).collect())
        .unwrap_or_default();
    Answer::Fields(fields)
}

/// Every key path the parsers accept in the tables of `doc` (a resolved
/// scenario document: shared sections and the workload's), e.g.
/// `plot[].marks[].label`, `work.NAME.mean_ns`, `sweep.zip[].PATH`.
pub fn accepted_keys(doc: &Table, workload: &dyn Workload) -> BTreeSet<String> {
    let (shared, own): (Table, Table) = {
        let (a, b): (Vec<_>, Vec<_>) = doc.iter().partition(|(k, _)| SHARED_SECTIONS.contains(&k.as_str()));
        (
            a.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            b.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        )
    };
    let parse_shared = |t: &Table| -> Option<String> {
        Value::Table(t.clone())
            .try_into::<Document>()
            .err()
            .map(|e| e.message().to_string())
    };
    let parse_own = |t: &Table| -> Option<String> { workload.resolved_toml(&Sections::Table(t)).err().map(|e| e.message) };
    let mut out = BTreeSet::new();
    walk(&shared, &mut Vec::new(), "", &parse_shared, &mut out);
    walk(&own, &mut Vec::new(), "", &parse_own, &mut out);
    out
}

/// A step from the document root to a table: a key, or an element.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn table_at<'a>(t: &'a mut Table, path: &[Step]) -> Option<&'a mut Table> {
    let mut cur: &mut Value = match path.first()? {
        Step::Key(k) => t.get_mut(k)?,
        Step::Index(_) => return None,
    };
    for s in &path[1..] {
        cur = match s {
            Step::Key(k) => cur.as_table_mut()?.get_mut(k)?,
            Step::Index(i) => cur.as_array_mut()?.get_mut(*i)?,
        };
    }
    cur.as_table_mut()
}

/// Probes the table at `path` of `root` (`shown` is its key path as the
/// reference writes it) and every table below it.
fn walk(root: &Table, path: &mut Vec<Step>, shown: &str, parse: &dyn Fn(&Table) -> Option<String>, out: &mut BTreeSet<String>) {
    let mut probed = root.clone();
    let here = if path.is_empty() {
        Some(&mut probed)
    } else {
        table_at(&mut probed, path)
    };
    let Some(here) = here else { return };
    let children: Vec<(String, Value)> = here.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    here.insert(PROBE.into(), Value::Integer(0));
    let is_map = match (path.is_empty(), answer(parse(&probed))) {
        (true, _) => false,
        (false, Answer::Fields(fields)) => {
            out.extend(fields.iter().map(|f| join(shown, f)));
            false
        }
        (false, Answer::Map) => true,
    };
    for (k, v) in children {
        // `zip` is the one fixed key of a map (`[sweep]`).
        let name = if is_map && k != "zip" {
            join(shown, "NAME")
        } else {
            join(shown, &k)
        };
        out.insert(name.clone());
        path.push(Step::Key(k));
        match &v {
            Value::Table(_) => walk(root, path, &name, parse, out),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if item.is_table() {
                        path.push(Step::Index(i));
                        walk(root, path, &format!("{name}[]"), parse, out);
                        path.pop();
                    }
                }
            }
            _ => {}
        }
        path.pop();
    }
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() { b.to_string() } else { format!("{a}.{b}") }
}
