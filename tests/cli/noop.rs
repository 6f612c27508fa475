//! No silent no-ops: at every point of every shipped scenario (full and
//! quick scale), each value a sweep or a variant sets is the value the run
//! uses, read back from its resolved document, and no two points or
//! variants resolve to the same document (a key that changed nothing
//! would leave two of them equal).

use super::root;
use fsmeta::{LoadOptions, Study};
use std::collections::BTreeMap;

/// Panics unless every (point, variant) of `study` applied what its sweep
/// values and variant set and resolved to a document of its own.
pub fn every_key_changes_the_resolved_document(name: &str, study: &Study) {
    let s = &study.scenario;
    let mut seen: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (pi, p) in s.points.iter().enumerate() {
        for (vi, c) in p.configs.iter().enumerate() {
            let variant_keys = fsmeta::scenario::overrides::leaf_paths(&s.variants[vi].overrides);
            assert_eq!(
                c.applied.len(),
                variant_keys.len() + s.sweep.len(),
                "{name}: point {pi} variant {vi} applied {:?}",
                c.applied
            );
            let resolved: toml::Table = toml::from_str(&c.resolved_toml).expect("resolved parses");
            for ((path, values), v) in s.sweep.iter().zip(&p.values) {
                let got = c.applied.iter().find(|(k, _)| k == path).map(|(_, g)| g);
                assert!(values.contains(v), "{name}: {path}");
                assert!(
                    fsmeta::scenario::applied::applied(v, got),
                    "{name}: point {pi} sets {path} = {v}, the run uses {got:?}"
                );
                let doc = fsmeta::scenario::overrides::get_path(&resolved, path);
                assert!(
                    fsmeta::scenario::applied::applied(v, doc),
                    "{name}: {path} = {v} not in\n{}",
                    c.resolved_toml
                );
            }
            if let Some((qi, qv)) = seen.insert(&c.resolved_toml, (pi, vi)) {
                panic!(
                    "{name}: point {pi} variant `{}` resolves to the same document as point {qi} variant `{}`: a swept or variant key changed nothing",
                    s.variants[vi].name, s.variants[qv].name
                );
            }
        }
    }
}

#[test]
fn every_shipped_sweep_and_variant_key_changes_the_resolved_document() {
    let mut checked = 0;
    for entry in std::fs::read_dir(root().join("scenarios")).expect("scenarios/") {
        let file = entry.expect("entry").path();
        if file.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        for quick in [false, true] {
            let opts = LoadOptions {
                quick,
                ..LoadOptions::default()
            };
            let study = Study::load(&file, &opts).unwrap_or_else(|e| panic!("{e}"));
            every_key_changes_the_resolved_document(&file.display().to_string(), &study);
            checked += 1;
        }
    }
    assert!(checked >= 34, "{checked}");
}
