//! Indexed keys (`path[N].field`, `xfs_alloc.histogram[N].field`) in
//! sweeps, zips, variants and quick mode: each reaches that element of the
//! list, the run uses the value (read back from its resolved document),
//! and a bad index or field is a located error with exit 2.

use super::{fsmeta, root, temp_dir, write};
use fsmeta::{LoadOptions, Study};
use std::path::Path;
use toml::Value;

/// M/M/1//N at a small scale: think, lock, hold, unlock.
const QUEUE: &str = r#"[scenario]
name = "ix"
seed = 1
replications = 1
ops = 20_000

[machine]
profile = "ideal"

[workload]
kind = "path"
threads = 2

[locks.server]
kind = "queued"

[[path]]
work = { dist = "exp", mean_ns = 1000.0 }
[[path]]
lock = "server"
[[path]]
work = { dist = "exp", mean_ns = 100.0 }
[[path]]
unlock = "server"
"#;

fn load(text: &str, quick: bool) -> Result<Study, String> {
    let opts = LoadOptions {
        quick,
        ..LoadOptions::default()
    };
    Study::from_text(Path::new("s.toml"), text, &opts).map_err(|e| e.to_string())
}

/// The value `key` has in the `set` table of each `[[point]]` of
/// `points.resolved.toml` text, in order.
fn read_back(points: &str, key: &str) -> Vec<Value> {
    let t: toml::Table = toml::from_str(points).expect("points.resolved.toml parses");
    let list = t.get("point").and_then(Value::as_array).expect("[[point]]");
    list.iter()
        .map(|p| {
            p.get("set")
                .and_then(|s| s.get(key))
                .cloned()
                .unwrap_or_else(|| panic!("no {key} in {p}"))
        })
        .collect()
}

#[test]
fn a_sweep_of_one_steps_every_changes_the_metric_and_the_resolved_points() {
    let dir = temp_dir("indexed-every");
    let text = format!("{QUEUE}\n[sweep]\n\"path[0].every\" = [1, 10]\n");
    let file = write(&dir, "ix.toml", &text);
    let out = dir.join("out");
    let o = fsmeta(&[
        "run",
        "--silent",
        "--jobs",
        "2",
        "--out",
        out.to_str().expect("utf8"),
        file.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = std::fs::read_to_string(out.join("ix/summary.csv")).expect("summary.csv");
    let header: Vec<&str> = summary.lines().next().expect("header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name}"));
    let (every, metric, mean) = (col("path[0].every"), col("metric"), col("mean"));
    let rate = |e: &str| -> f64 {
        let row = summary
            .lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|r| r[every] == e && r[metric] == "ops_per_sec")
            .expect("row");
        row[mean].parse().expect("number")
    };
    // Thinking 1000 ns on every 10th operation only: the cycle shrinks
    // from about 1100 ns to about 200 ns (the lock then saturates).
    let (one, ten) = (rate("1"), rate("10"));
    assert!(ten > 3.0 * one, "every=1: {one} ops/s, every=10: {ten} ops/s");
    let points = std::fs::read_to_string(out.join("ix/points.resolved.toml")).expect("points.resolved.toml");
    assert_eq!(read_back(&points, "path[0].every"), [Value::Integer(1), Value::Integer(10)]);
}

#[test]
fn indexed_keys_work_in_variants_zips_and_quick_mode() {
    let text = QUEUE.replace("ops = 20_000", "ops = 20_000\nquick = { \"path[2].work.mean_ns\" = 50.0 }")
        + "\n[[variant]]\nname = \"rare-think\"\n\"path[0].every\" = 10\n\n[[variant]]\nname = \"short-think\"\n\"path[0]\".work.mean_ns = 10.0\n\n[[sweep.zip]]\n\"path[2].work.dist\" = [\"fixed\", \"exp\"]\n\"workload.threads\" = [1, 2]\n";
    let study = load(&text, true).expect("loads");
    let s = &study.scenario;
    assert_eq!(s.points.len(), 2);
    for (pi, p) in s.points.iter().enumerate() {
        let dist = ["fixed", "exp"][pi];
        for (vi, c) in p.configs.iter().enumerate() {
            let doc: toml::Table = toml::from_str(&c.resolved_toml).expect("resolved parses");
            let steps = doc.get("path").and_then(Value::as_array).expect("[[path]]");
            assert_eq!(steps[2]["work"]["dist"].as_str(), Some(dist), "{}", c.resolved_toml);
            assert_eq!(steps[2]["work"]["mean_ns"].as_float(), Some(50.0), "quick sets path[2]");
            let every = steps[0].get("every").and_then(Value::as_integer).unwrap_or(1);
            let think = steps[0]["work"]["mean_ns"].as_float();
            assert_eq!((vi, every), (vi, if vi == 0 { 10 } else { 1 }));
            assert_eq!(think, Some(if vi == 1 { 10.0 } else { 1000.0 }));
            let keys: Vec<&str> = c.applied.iter().map(|(k, _)| k.as_str()).collect();
            assert!(keys.contains(&"path[2].work.dist"), "{keys:?}");
        }
    }
    // The base's resolved document shows what quick mode set.
    let base: toml::Table = toml::from_str(&s.resolved_toml).expect("parses");
    assert_eq!(base["path"][2]["work"]["mean_ns"].as_float(), Some(50.0));
}

#[test]
fn list_indices_reach_xfs_alloc_histogram_buckets() {
    let text = r#"[scenario]
name = "h"

[workload]
kind = "xfs-alloc"

[xfs_alloc]
source = "histogram"
agblocks = 1000000
histogram = [
  { from = 1, to = 1, extents = 1000 },
  { from = 2, to = 3, extents = 500 },
]
maxlen = 2
calls = 10

[sweep]
"xfs_alloc.histogram[1].extents" = [100, 1000]
"#;
    let study = load(text, false).expect("loads");
    let got: Vec<Value> = study.scenario.points.iter().map(|p| p.configs[0].applied[0].1.clone()).collect();
    assert_eq!(got, [Value::Integer(100), Value::Integer(1000)]);
    let e = load(&text.replace("histogram[1].extents", "histogram[2].extents"), false).expect_err("range");
    assert!(
        e.starts_with("s.toml:18:1: xfs_alloc.histogram[2].extents: index 2 is out of range: `histogram` has 2 elements"),
        "{e}"
    );
    assert!(e.ends_with("(did you mean `xfs_alloc.histogram[1].extents`?)"), "{e}");
    let e = load(&text.replace("histogram[1].extents", "histogram[1].extens"), false).expect_err("field");
    assert!(
        e.starts_with("s.toml:18:1: xfs_alloc.histogram[1].extens: unknown field `extens`"),
        "{e}"
    );
    assert!(e.contains("did you mean `xfs_alloc.histogram[1].extents`"), "{e}");
    let e = load(&text.replace("histogram[1].extents", "histogram.1.extents"), false).expect_err("dotted");
    assert!(e.contains("an element of a list is written `histogram[1]`"), "{e}");
}

/// `fsmeta run` on `text`: exit 2, the error on stderr, no output folder.
fn refused(tag: &str, text: &str) -> String {
    let dir = temp_dir(&format!("indexed-{tag}"));
    let file = write(&dir, "ix.toml", text);
    let out = dir.join("out");
    let o = fsmeta(&[
        "run",
        "--silent",
        "--out",
        out.to_str().expect("utf8"),
        file.to_str().expect("utf8"),
    ]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{tag}: {err}");
    assert!(!out.join("ix").exists(), "{tag}: nothing is written");
    assert!(!err.contains("panicked"), "{err}");
    err.replace(&format!("{}/", dir.display()), "")
}

#[test]
fn an_index_out_of_range_or_an_unknown_field_is_a_located_error() {
    // QUEUE ends with a newline: a blank line, the table header, then ours.
    let (at3, at4) = (QUEUE.lines().count() + 3, QUEUE.lines().count() + 4);
    let sweep = |key: &str| format!("{QUEUE}\n[sweep]\n\"{key}\" = [1, 10, 100]\n");
    let e = refused("range", &sweep("path[99].every"));
    assert!(
        e.contains(&format!("ix.toml:{at3}:1: path[99].every: index 99 is out of range: `path` has 4 elements, path[0] to path[3] (did you mean `path[3].every`?)")),
        "{e}"
    );
    let e = refused("field", &sweep("path[3].bogus"));
    assert!(
        e.contains(&format!("ix.toml:{at3}:1: path[3].bogus: unknown field `bogus`, expected one of")),
        "{e}"
    );
    assert!(e.contains("`every`"), "the fields a step has are listed: {e}");
    let e = refused("misspelt", &sweep("path[0].evry"));
    assert!(
        e.contains(&format!("ix.toml:{at3}:1: path[0].evry: unknown field")) && e.contains("(did you mean `path[0].every`?)"),
        "{e}"
    );
    let variant = format!("{QUEUE}\n[[variant]]\nname = \"v\"\n\"path[4].every\" = 2\n");
    let e = refused("variant", &variant);
    assert!(
        e.contains(&format!("ix.toml:{at4}:1: path[4].every: index 4 is out of range")),
        "{e}"
    );
    let zip = format!("{QUEUE}\n[[sweep.zip]]\n\"path[7].work.mean_ns\" = [1.0, 2.0]\n\"workload.threads\" = [1, 2]\n");
    let e = refused("zip", &zip);
    assert!(
        e.contains(&format!("ix.toml:{at3}:1: path[7].work.mean_ns: index 7 is out of range")),
        "{e}"
    );
}

/// Indexed sweeps for each list of tables of a shipped scenario
/// (`[[path]]`, a histogram): the first numeric leaf of the list that is
/// not a step's `every`, as one key with two values; else the `every` of
/// every step that has one, zipped (paired steps keep theirs equal).
fn indexed_sweeps(doc: &toml::Table) -> Vec<Vec<(String, Vec<Value>)>> {
    let shared = ["variant", "plot", "expect", "sweep", "scenario", "machine", "workload"];
    let mut lists: Vec<(String, &Vec<Value>)> = Vec::new();
    for (k, v) in doc.iter().filter(|(k, _)| !shared.contains(&k.as_str())) {
        match v {
            Value::Array(a) if a.iter().all(Value::is_table) => lists.push((k.clone(), a)),
            Value::Table(t) => {
                for (k2, v2) in t {
                    if let Value::Array(a) = v2
                        && !a.is_empty()
                        && a.iter().all(Value::is_table)
                    {
                        lists.push((format!("{k}.{k2}"), a));
                    }
                }
            }
            _ => {}
        }
    }
    let two = |v: &Value| match v {
        Value::Float(x) => vec![Value::Float(*x), Value::Float(x * 2.0 + 1.0)],
        Value::Integer(n) => vec![Value::Integer(*n), Value::Integer(n * 2 + 1)],
        _ => unreachable!("numeric"),
    };
    let mut out = Vec::new();
    for (name, items) in lists {
        let mut leaves: Vec<(usize, String, Value)> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let Some(t) = item.as_table() else { continue };
            leaves.extend(t.iter().map(|(k, v)| (i, k.clone(), v.clone())));
            if let Some(Value::Table(w)) = t.get("work") {
                leaves.extend(w.iter().map(|(k, v)| (i, format!("work.{k}"), v.clone())));
            }
        }
        leaves.retain(|(_, _, v)| v.is_float() || v.is_integer());
        let key = |i: usize, k: &str| format!("{name}[{i}].{k}");
        let group: Vec<(String, Vec<Value>)> = match leaves.iter().find(|(_, k, _)| k != "every") {
            Some((i, k, v)) => vec![(key(*i, k), two(v))],
            None => leaves.iter().map(|(i, k, v)| (key(*i, k), two(v))).collect(),
        };
        if !group.is_empty() {
            out.push(group);
        }
    }
    out
}

/// The value at `a.b[N].c` in `t`, by hand (not the library's lookup).
fn lookup<'a>(t: &'a toml::Table, key: &str) -> Option<&'a Value> {
    let mut cur: Option<&Value> = None;
    for part in key.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((n, rest)) => (n, Some(rest.trim_end_matches(']').parse::<usize>().ok()?)),
            None => (part, None),
        };
        let table = match cur {
            None => t,
            Some(v) => v.as_table()?,
        };
        let v = table.get(name)?;
        cur = Some(match index {
            Some(i) => v.as_array()?.get(i)?,
            None => v,
        });
    }
    cur
}

/// Whether `got` is `want` as a number or exactly.
fn same(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Float(a), Value::Integer(b)) | (Value::Integer(b), Value::Float(a)) => *a == *b as f64,
        (a, b) => a == b,
    }
}

#[test]
fn every_shipped_list_of_tables_takes_an_indexed_sweep_and_each_point_uses_it() {
    let mut tried = 0;
    for entry in std::fs::read_dir(root().join("scenarios")).expect("scenarios/") {
        let file = entry.expect("entry").path();
        if file.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("read");
        let base: toml::Table = toml::from_str(&text).expect("parses");
        for group in indexed_sweeps(&base) {
            let mut doc = base.clone();
            let sweep = doc.entry("sweep").or_insert_with(|| Value::Table(toml::Table::new()));
            let sweep = sweep.as_table_mut().expect("[sweep]");
            let keys: toml::Table = group.iter().map(|(k, v)| (k.clone(), Value::Array(v.clone()))).collect();
            if group.len() == 1 {
                sweep.extend(keys);
            } else {
                let zips = sweep.entry("zip").or_insert_with(|| Value::Array(Vec::new()));
                zips.as_array_mut().expect("zip").push(Value::Table(keys));
            }
            let changed = toml::to_string(&doc).expect("writes");
            let opts = LoadOptions {
                quick: true,
                ..LoadOptions::default()
            };
            let study = Study::from_text(&file, &changed, &opts).unwrap_or_else(|e| panic!("{group:?} in {}: {e}", file.display()));
            let s = &study.scenario;
            let points = fsmeta::report::points_resolved(s);
            for (key, _) in &group {
                let k = s.sweep.iter().position(|(path, _)| path == key).expect("swept");
                let mut seen = std::collections::BTreeSet::new();
                for p in &s.points {
                    for c in &p.configs {
                        let resolved: toml::Table = toml::from_str(&c.resolved_toml).expect("resolved parses");
                        let got = lookup(&resolved, key)
                            .unwrap_or_else(|| panic!("{key} missing from the resolved document of {}", file.display()));
                        let want = &p.values[k];
                        assert!(same(got, want), "{}: {key} set to {want}, the run uses {got}", file.display());
                        seen.insert(got.to_string());
                    }
                }
                assert_eq!(seen.len(), 2, "{}: {key} takes both values: {seen:?}", file.display());
                assert!(points.contains(&format!("\"{key}\" = ")), "{points}");
            }
            tried += 1;
        }
    }
    assert!(tried >= 7, "only {tried} shipped lists of tables were swept");
}
