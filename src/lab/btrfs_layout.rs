//! `btrfs-layout`: N empty files in one directory on a new btrfs, then
//! `sync`, unmount, and `btrfs inspect-internal dump-tree -t 5` of the
//! image: the fs tree's leaves, height, and items per leaf by type.

use super::dumptree::Tree;
use super::host::{self, Fs, FsType, Host};
use super::{Experiment, LabError, Metrics, Params, Trial};

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "btrfs-layout",
    about: "N files in one directory: fs tree leaves, height, items per leaf by type (dump-tree)",
    params: &[("files", 1000, 1, 200_000), ("nodesize", 16384, 4096, 65536)],
    run,
    check,
    twin_param: None,
    sample_roots: &["__btrfs_run_delayed_items", "btrfs_commit_transaction"],
    twin_models: crate::lab::defaults_only,
};

/// `nodesize` a power of two, as `mkfs.btrfs -n` takes.
pub(super) fn check(p: &Params) -> Result<(), LabError> {
    let nodesize = p.get("nodesize");
    if !nodesize.is_power_of_two() {
        return Err(LabError::Param(format!("nodesize = {nodesize}: expected a power of two")));
    }
    Ok(())
}

fn run(host: &Host, p: &Params, _rep: u32) -> Result<Trial, LabError> {
    let (n, nodesize) = (p.get("files"), p.get("nodesize"));
    let ns = nodesize.to_string();
    let mut fs = Fs::create(host, FsType::Btrfs, 1 << 30, &["-f", "-q", "-n", &ns], "")?;
    let base = fs.base()?;
    std::fs::create_dir(base.join("testdir")).map_err(|e| LabError::step("mkdir testdir", e))?;
    host::create_files(&fs.base()?.join("testdir"), "file_", n)?;
    host::syncfs(&fs.base()?)?;
    fs.unmount()?;
    let img = fs.image().to_string_lossy().into_owned();
    let text = host::cmd("dump the fs tree", "btrfs", &["inspect-internal", "dump-tree", "-t", "5", &img])?;
    let tree = Tree::parse(&text).map_err(|e| LabError::step("read dump-tree", e))?;
    let mut setup = fs.setup.clone();
    setup.push("read: btrfs inspect-internal dump-tree -t 5 IMAGE after sync and unmount".into());
    Ok(Trial {
        variants: vec![("live".into(), metrics(&tree))],
        setup,
        files: super::keep("dump-tree.txt", text),
    })
}

/// The metrics of a dump, by the twin's names (`leaves`, `tree_height`,
/// `dir_index_leaves`) and the lab's own (`items.TYPE`,
/// `items_per_leaf`). The directory is the owner of most DIR_INDEX items.
pub fn metrics(t: &Tree) -> Metrics {
    let mut m = Metrics::new();
    m.insert("leaves".into(), t.leaves.len() as f64);
    m.insert("tree_height".into(), t.height() as f64);
    let mut owners = std::collections::BTreeMap::<u64, u64>::new();
    for l in &t.leaves {
        for o in &l.dir_index_owners {
            *owners.entry(*o).or_default() += 1;
        }
    }
    let dir = owners.iter().max_by_key(|(o, c)| (**c, std::cmp::Reverse(**o))).map(|(o, _)| *o);
    m.insert("dir_index_leaves".into(), dir.map_or(0, |d| t.dir_index_leaves(d)) as f64);
    let by = t.items_by_type();
    for ty in ["INODE_ITEM", "INODE_REF", "DIR_ITEM", "DIR_INDEX"] {
        m.insert(format!("items.{ty}"), by.get(ty).copied().unwrap_or(0) as f64);
    }
    let total: u64 = t.leaves.iter().map(|l| l.items).sum();
    m.insert("items_per_leaf".into(), total as f64 / t.leaves.len().max(1) as f64);
    m
}
