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
