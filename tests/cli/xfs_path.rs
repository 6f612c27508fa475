//! Issue 31: the 6.x XFS transaction path of the lab twin
//! (scenarios/lab/xfs-create-scaling.toml), its shared steps per operation
//! counted against the kernel's code by hand.

use super::{fsmeta, root, temp_dir};
use std::collections::BTreeMap;

/// `summary.csv` means by (variant, metric).
fn means(dir: &std::path::Path) -> BTreeMap<(String, String), f64> {
    let text = std::fs::read_to_string(dir.join("summary.csv")).expect("summary.csv");
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).expect(name);
    let (v, m, mean) = (col("variant"), col("metric"), col("mean"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .map(|c| ((c[v].to_string(), c[m].to_string()), c[mean].parse().unwrap_or(f64::NAN)))
        .collect()
}

#[test]
fn each_create_and_unlink_takes_the_shared_steps_the_code_takes() {
    let out = temp_dir("xfs-path");
    let scenario = root().join("scenarios/lab/xfs-create-scaling.toml");
    let o = fsmeta(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--silent"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = means(&out.join("xfs-create-scaling"));
    let get = |v: &str, k: &str| m.get(&(v.to_string(), k.to_string())).copied().unwrap_or_else(|| panic!("{v} {k}"));
    // 20,000 creates: one transaction each (xfs_trans_alloc_icreate) and
    // one more per 64 (xfs_dialloc_roll): 20,000 + 312 commits, each a
    // down_read(xc_ctx_lock) in xlog_cil_commit.
    assert_eq!(get("create-1", "xc_ctx_lock.read_acquisitions"), 20_312.0);
    assert_eq!(get("create-1", "xc_ctx_lock.write_acquisitions"), 0.0);
    // m_ifree - 1 per transaction, percpu_counter batch 32: a fold per 32.
    assert_eq!(get("create-1", "m_ifree.folds"), (20_312 / 32) as f64);
    // An unlink: xfs_remove's transaction and two inodegc ones
    // (xfs_attr_inactive, xfs_inactive_ifree), the last item of the run
    // not yet run when it stops.
    assert_eq!(get("unlink-1", "inodegc.queued"), 20_000.0);
    assert_eq!(get("unlink-1", "xc_ctx_lock.read_acquisitions"), 20_000.0 + 2.0 * 19_999.0);
    // With two threads the shared lines move between the CPUs.
    assert!(get("create-2", "l_reserve_head.transfers") > 0.0);
    assert_eq!(get("create-1", "l_reserve_head.transfers"), 0.0);
}

/// A path scenario whose work `create` is counted code, with `work` the
/// body of its `[work.create]` and `code` the `[code]` table.
fn code_scenario(work: &str, code: &str) -> String {
    format!(
        r#"[scenario]
name = "code"
ops = 100

[workload]
kind = "path"

{code}

[work.create]
{work}

[[path]]
work = "create"
"#
    )
}

/// Runs `fsmeta run` on `text`; returns (exit code, stderr, whether the
/// output directory was written).
fn run_text(tag: &str, text: &str) -> (Option<i32>, String, bool) {
    let dir = temp_dir(tag);
    let f = super::write(&dir, "s.toml", text);
    let out = dir.join("out");
    let o = fsmeta(&[
        "run",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--error-format",
        "plain",
    ]);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).to_string(), out.exists())
}

#[test]
fn a_bad_code_name_is_refused_at_its_key_with_the_closest_name() {
    let code = "[code]\nwork_scale = 2.0\ndir_entries = 1000";
    let (rc, err, _) = run_text("code-ok", &code_scenario("code = \"xfs_create\"", code));
    assert_eq!(rc, Some(0), "{err}");
    let (rc, err, written) = run_text("code-typo", &code_scenario("code = \"xfs_craete\"", code));
    assert_eq!(rc, Some(2), "{err}");
    assert!(!written, "nothing may be written");
    // Located at the code key (line 13 of the text: `code = "xfs_craete"`).
    assert!(err.contains("s.toml:13:1:"), "{err}");
    assert!(
        err.contains("work.create.code") && err.contains("no counted kernel path named `xfs_craete`"),
        "{err}"
    );
    assert!(
        err.contains("did you mean xfs_create") || err.contains("did you mean `xfs_create`"),
        "{err}"
    );
    // A duration given next to code would be ignored: refused at its key.
    let (rc, err, _) = run_text("code-mean", &code_scenario("code = \"xfs_create\"\nmean_ns = 100.0", code));
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains("work.create.mean_ns") && err.contains("remove `mean_ns`"), "{err}");
    // Counted code without [code]: refused at the code key.
    let (rc, err, _) = run_text("code-nosection", &code_scenario("code = \"xfs_create\"", ""));
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains("needs a [code] table"), "{err}");
    // [code] that no work uses: refused (a section accepted but ignored).
    let (rc, err, _) = run_text("code-unused", &code_scenario("dist = \"fixed\"\nmean_ns = 100.0", code));
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains("[code]") && err.contains("no [work.NAME] names any"), "{err}");
    // The knob's range, at its key.
    let bad_scale = "[code]\nwork_scale = 0.0\ndir_entries = 1000";
    let (rc, err, _) = run_text("code-scale", &code_scenario("code = \"xfs_create\"", bad_scale));
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains("code.work_scale"), "{err}");
}

#[test]
fn the_twin_has_no_fitted_work_per_handle_left() {
    let text = std::fs::read_to_string(root().join("scenarios/lab/xfs-create-scaling.toml")).expect("twin");
    let doc: toml::Table = text.parse().expect("toml");
    // Every work, at the top and in every variant, is counted code; no
    // duration is written anywhere.
    assert!(!text.contains("mean_ns"), "a fitted duration is left in the twin");
    let mut works = Vec::new();
    if let Some(w) = doc.get("work").and_then(|w| w.as_table()) {
        works.extend(w.iter().map(|(n, v)| (n.clone(), v.clone())));
    }
    for v in doc.get("variant").and_then(|v| v.as_array()).expect("variants") {
        if let Some(w) = v.get("work").and_then(|w| w.as_table()) {
            works.extend(w.iter().map(|(n, v)| (n.clone(), v.clone())));
        }
    }
    assert!(works.len() >= 5, "{works:?}");
    for (name, w) in &works {
        assert!(
            w.get("code").and_then(|c| c.as_str()).is_some(),
            "work {name} is not counted code: {w}"
        );
    }
    // The one knob is the host's, fitted on `le` at 10^5 extents: both
    // twins take it from one profile ([knob]).
    let alloc: toml::Table = std::fs::read_to_string(root().join("scenarios/lab/xfs-alloc-100000.toml"))
        .expect("alloc twin")
        .parse()
        .expect("toml");
    let get = |t: &toml::Table, path: &[&str]| {
        let mut v = toml::Value::Table(t.clone());
        for k in path {
            v = v.get(k).cloned().unwrap_or_else(|| panic!("no {k}"));
        }
        v.as_str()
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{path:?} is not a string: {v}"))
    };
    assert_eq!(get(&doc, &["code", "work_scale"]), "host");
    assert_eq!(get(&alloc, &["xfs_alloc", "work_scale"]), "host");
    assert_eq!(get(&doc, &["machine", "profile"]), get(&alloc, &["machine", "profile"]));
}
