//! A scenario means what it says: each silent no-op a reviewer could be
//! fooled by is now an error with file:line:col (and a suggestion where a
//! name was misspelt).

use fsmeta::{LoadOptions, Study};
use std::path::Path;

const CASE1: &str = r#"[scenario]
name = "m"
ops = 1000

[machine]
profile = "ideal"

[workload]
kind = "path"
threads = 2

[lines.xfs_mount_hot]
fields = ["m_flags"]

[counters.m_active_trans]
kind = "atomic"
line = "xfs_mount_hot"

[[path]]
counter = "m_active_trans"
op = "inc"
[[path]]
work = { dist = "fixed", mean_ns = 100.0 }
read = "xfs_mount_hot"
count = 4
[[path]]
counter = "m_active_trans"
op = "dec"

[[variant]]
name = "atomic"

[[variant]]
name = "percpu"
counters.m_active_trans.kind = "percpu"
"#;

const BTRFS: &str = r#"[scenario]
name = "b"

[workload]
kind = "btrfs-dir"

[btrfs_dir]
files = 100
"#;

fn error(text: &str, opts: &LoadOptions) -> String {
    match Study::from_text(Path::new("s.toml"), text, opts) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn err(text: &str) -> String {
    error(text, &LoadOptions::default())
}

/// Panics with the error if `text` does not load, or if a key it sets
/// changes nothing.
fn loads(text: &str) {
    match Study::from_text(Path::new("s.toml"), text, &LoadOptions::default()) {
        Ok(study) => super::noop::every_key_changes_the_resolved_document("s.toml", &study),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn the_good_scenarios_load() {
    for t in [CASE1, BTRFS] {
        loads(t);
    }
}

#[test]
fn a_variant_overriding_an_undeclared_counter_is_an_error() {
    let e = err(&CASE1.replace("counters.m_active_trans.kind = \"percpu\"", "counters.m_active.kind = \"percpu\""));
    assert!(e.starts_with("s.toml:35:10: counters.m_active:"), "{e}");
    assert!(e.contains("declared but no [[path]] step uses it"), "{e}");
    assert!(e.contains("did you mean `m_active_trans`"), "{e}");
}

#[test]
fn a_misspelt_line_in_a_step_is_an_error() {
    let e = err(&CASE1.replace("read = \"xfs_mount_hot\"", "read = \"xfs_mount_hoot\""));
    assert!(e.starts_with("s.toml:24:1: path[1].read:"), "{e}");
    assert!(e.contains("did you mean `xfs_mount_hot`"), "{e}");
}

#[test]
fn a_declared_line_nobody_uses_is_an_error() {
    let e = err(&CASE1.replace("fields = [\"m_flags\"]", "fields = [\"m_flags\"]\n[lines.spare]"));
    assert!(e.contains("lines.spare") && e.contains("declared but nothing reads"), "{e}");
}

#[test]
fn sweeping_a_parameter_the_workload_does_not_read_is_an_error() {
    let e = err(&format!("{BTRFS}\n[sweep]\n\"xfs_alloc.fragmentation\" = [0.1, 0.5]\n"));
    assert!(e.starts_with("s.toml:11:1: xfs_alloc.fragmentation:"), "{e}");
    assert!(
        e.contains("read by workload `xfs-alloc`, not by this scenario's `btrfs-dir`"),
        "{e}"
    );
    let e = err(&format!("{BTRFS}\n[sweep]\n\"btrfs_dir.filez\" = [10, 20]\n"));
    assert!(e.contains("s.toml:11:1") && e.contains("did you mean `files`"), "{e}");
    let e = err(&format!("{BTRFS}\n[sweep]\n\"workload.threads\" = [1, 2]\n"));
    assert!(e.contains("does not read `workload.threads`"), "{e}");
    // A repeated value would be a second point with the same coordinates,
    // so the same random numbers: the same runs, counted twice.
    let e = err(&format!("{BTRFS}\n[sweep]\n\"btrfs_dir.files\" = [10, 20, 10]\n"));
    assert!(e.starts_with("s.toml:11:1: sweep.btrfs_dir.files: `10` appears twice"), "{e}");
}

#[test]
fn sweeping_the_workload_kind_and_foreign_sections_are_errors() {
    let e = err(&format!("{BTRFS}\n[sweep]\n\"workload.kind\" = [\"btrfs-dir\", \"xfs-alloc\"]\n"));
    assert!(e.starts_with("s.toml:11:1") && e.contains("cannot be set by [sweep]"), "{e}");
    let e = err(&format!("{BTRFS}\n[xfs_alloc]\ncalls = 3\n"));
    assert!(e.starts_with("s.toml:10:2:") && e.contains("read by workload `xfs-alloc`"), "{e}");
    let e = err(&BTRFS.replace("kind = \"btrfs-dir\"", "kind = \"btrfs-dir\"\nthreads = 4"));
    assert!(e.starts_with("s.toml:6:1") && e.contains("does not read `workload.threads`"), "{e}");
    // xfs-alloc reads only machine.profile (to price its counted work).
    let xfs = "[scenario]\nname = \"x\"\n\n[machine]\nprofile = \"host-a\"\nwakeup_ns = 5.0\n\n[workload]\nkind = \"xfs-alloc\"\n";
    let e = err(xfs);
    assert!(e.contains("does not read `machine.wakeup_ns`"), "{e}");
}

#[test]
fn quick_overrides_get_located_errors() {
    let text = BTRFS.replace("name = \"b\"", "name = \"b\"\nquick = { \"btrfs_dir.files\" = -1 }");
    let quick = LoadOptions {
        quick: true,
        ..LoadOptions::default()
    };
    let e = error(&text, &quick);
    assert!(e.starts_with("s.toml:3:11: btrfs_dir"), "{e}");
    let text = BTRFS.replace("name = \"b\"", "name = \"b\"\nquick = { \"scenario.replications\" = -1 }");
    let e = error(&text, &quick);
    assert!(e.starts_with("s.toml:3:11: scenario.replications"), "{e}");
}

#[test]
fn degenerate_runs_are_warned_about() {
    let text = r#"[scenario]
name = "w"
replications = 2

[workload]
kind = "xfs-alloc"

[xfs_alloc]
agblocks = 1000
source = "fragmentation"
fragmentation = 1.0
free_blocks = 40
calls = 50

[sweep]
"xfs_alloc.btree_fill" = [0.75, 0.8]
"#;
    let study = Study::from_text(Path::new("w.toml"), text, &LoadOptions::default()).expect("loads");
    let r = study.run(1, &|| {}).expect("runs");
    let rows = fsmeta::report::stats::summarise(&study.scenario, &r.runs);
    let w = fsmeta::report::warnings::warnings(&study.scenario, &rows).join("\n");
    assert!(w.contains("ran out of space"), "{w}");
    // A repeated value is refused (sweep.rs); two fills that give the same
    // 1-level tree are a sweep that changes nothing.
    assert!(w.contains("sweeping `xfs_alloc.btree_fill` changed no metric"), "{w}");
    assert!(w.contains("replications gave identical results"), "{w}");
    let ok = text
        .replace("free_blocks = 40", "free_blocks = 400")
        .replace("\"xfs_alloc.btree_fill\" = [0.75, 0.8]", "\"xfs_alloc.alignment\" = [1, 4]");
    let study = Study::from_text(Path::new("w.toml"), &ok, &LoadOptions::default()).expect("loads");
    let r = study.run(1, &|| {}).expect("runs");
    let rows = fsmeta::report::stats::summarise(&study.scenario, &r.runs);
    let w = fsmeta::report::warnings::warnings(&study.scenario, &rows).join("\n");
    assert!(!w.contains("ran out of space") && !w.contains("changed no metric"), "{w}");
}

#[test]
fn a_workload_reading_only_the_machine_profile_refuses_the_rest_of_machine() {
    const XFS: &str = "[scenario]\nname = \"x\"\n\n[machine]\nprofile = \"ideal\"\n\n[workload]\nkind = \"xfs-alloc\"\n\n[xfs_alloc]\nfree_blocks = 1000\n";
    loads(XFS);
    let e = err(&XFS.replace("profile = \"ideal\"", "profile = \"ideal\"\nplacement = \"compact\""));
    assert!(e.contains("does not read `machine.placement`"), "{e}");
    let e = err(&format!("{XFS}\n[sweep]\n\"machine.wakeup_ns\" = [1.0, 2.0]\n"));
    assert!(e.contains("does not read `machine.wakeup_ns`"), "{e}");
}

const XFS_FRAG: &str =
    "[scenario]\nname = \"x\"\n\n[workload]\nkind = \"xfs-alloc\"\n\n[xfs_alloc]\nsource = \"fragmentation\"\nfree_blocks = 1000\n";

#[test]
fn keys_of_another_free_space_source_are_refused() {
    loads(XFS_FRAG);
    let e = err(&format!("{XFS_FRAG}freesp_file = \"data/case4.freesp\"\n"));
    assert!(e.starts_with("s.toml:10:1: xfs_alloc.freesp_file:"), "{e}");
    assert!(e.contains("read only with source = \"freesp_file\""), "{e}");
    let e = err(&format!("{XFS_FRAG}histogram = [{{from = 1, to = 2, extents = 5}}]\n"));
    assert!(e.starts_with("s.toml:10:1: xfs_alloc.histogram:"), "{e}");
    let e = err(&format!("{XFS_FRAG}aging.max_steps = 5\n"));
    assert!(e.contains("xfs_alloc.aging") && e.contains("source = \"aging\""), "{e}");
    let hist = "[scenario]\nname = \"x\"\n\n[workload]\nkind = \"xfs-alloc\"\n\n[xfs_alloc]\nsource = \"histogram\"\nhistogram = [{from = 1, to = 2, extents = 5}]\n";
    for key in ["fragmentation = 0.5", "free_blocks = 100", "small_extent_blocks = 4"] {
        let e = err(&format!("{hist}{key}\n"));
        assert!(
            e.starts_with("s.toml:10:1: xfs_alloc.") && e.contains("source = \"fragmentation\""),
            "{e}"
        );
    }
    // A variant may bring its own source's keys; one the variant's source
    // does not read is refused where the variant writes it.
    let ok = format!(
        "{XFS_FRAG}\n[[variant]]\nname = \"f\"\n\n[[variant]]\nname = \"h\"\nxfs_alloc.source = \"histogram\"\nxfs_alloc.histogram = [{{from = 1, to = 2, extents = 5}}]\n"
    );
    loads(&ok);
    let e = err(&ok.replace("name = \"f\"", "name = \"f\"\nxfs_alloc.histogram = []"));
    assert!(e.starts_with("s.toml:13:11: variant[0].xfs_alloc.histogram:"), "{e}");
}

const FSMARK: &str = "[scenario]\nname = \"f\"\n\n[machine]\nprofile = \"scenarios/machines/spr-12vcpu.toml\"\n\n[workload]\nkind = \"fsmark\"\nthreads = 1\n\n[fsmark]\nfiles_per_thread = 10\nloops = 1\n";

#[test]
fn keys_of_the_other_inode_index_are_refused() {
    let e = err(&format!("{FSMARK}enomem_every = 3\n"));
    assert!(e.starts_with("s.toml:14:1: fsmark.enomem_every:"), "{e}");
    assert!(e.contains("read only with index = \"xarray\""), "{e}");
    let e = err(&format!("{FSMARK}index = \"xarray\"\nrb_node_offset = 128\n"));
    assert!(
        e.starts_with("s.toml:15:1: fsmark.rb_node_offset:") && e.contains("index = \"rbtree\""),
        "{e}"
    );
    // The shipped case-2 shape: rb_node_offset in the base, read by the
    // rbtree variant and inherited unread by the xarray one.
    let both = format!(
        "{FSMARK}rb_node_offset = 256\n\n[[variant]]\nname = \"rbtree\"\nfsmark.index = \"rbtree\"\n\n[[variant]]\nname = \"xarray\"\nfsmark.index = \"xarray\"\n"
    );
    loads(&both);
    let e = err(&both.replace("fsmark.index = \"xarray\"", "fsmark.index = \"xarray\"\nfsmark.rb_node_offset = 64"));
    assert!(
        e.contains("variant[1].fsmark.rb_node_offset") && e.contains("index = \"rbtree\""),
        "{e}"
    );
    let e = err(&format!("{FSMARK}\n[sweep]\n\"fsmark.enomem_every\" = [0, 3]\n"));
    assert!(e.starts_with("s.toml:16:1: sweep.fsmark.enomem_every:"), "{e}");
    let ok = format!("{FSMARK}\n[sweep]\n\"fsmark.enomem_every\" = [0, 3]\n\"fsmark.index\" = [\"xarray\"]\n");
    loads(&ok);
}

#[test]
fn btrfs_dir_and_fsmark_refuse_the_machine_keys_they_do_not_read() {
    let with = |text: &str, key: &str| text.replacen("[workload]", &format!("{key}\n\n[workload]"), 1);
    let btrfs = BTRFS.replacen("[workload]", "[machine]\nprofile = \"ideal\"\n\n[workload]", 1);
    loads(&btrfs);
    for (key, field) in [
        ("wakeup_ns = 5.0", "machine.wakeup_ns"),
        ("online_cpus = 4", "machine.online_cpus"),
        ("placement = \"compact\"", "machine.placement"),
        ("topology = { sockets = 1 }", "machine.topology.sockets"),
    ] {
        let e = err(&with(&btrfs, key));
        assert!(e.starts_with("s.toml:7:") && e.contains(&format!(" {field}:")), "{e}");
        assert!(
            e.contains(&format!("workload `btrfs-dir` does not read `{field}`; remove it")),
            "{e}"
        );
    }
    for (key, field) in [("wakeup_ns = 5.0", "machine.wakeup_ns"), ("online_cpus = 4", "machine.online_cpus")] {
        let e = err(&with(FSMARK, key));
        assert!(e.starts_with("s.toml:7:") && e.contains(&format!(" {field}:")), "{e}");
        assert!(e.contains(&format!("workload `fsmark` does not read `{field}`")), "{e}");
    }
    // fsmark places its threads: topology and placement are read.
    let placed = with(FSMARK, "placement = \"compact\"\ntopology = { sockets = 1 }");
    loads(&placed);
    let e = err(&format!("{FSMARK}\n[sweep]\n\"machine.wakeup_ns\" = [0.0, 100.0]\n"));
    assert!(
        e.starts_with("s.toml:16:1: machine.wakeup_ns:") && e.contains("does not read"),
        "{e}"
    );
}

/// CASE1 swept over threads, with `plots` appended.
fn with_plots(plots: &str) -> String {
    format!("{CASE1}\n[sweep]\n\"workload.threads\" = [1, 2]\n{plots}")
}

const LINE_PLOT: &str = "\n[[plot]]\nname = \"p q\"\nx = \"workload.threads\"\ny = \"ops_per_sec\"\n";

#[test]
fn plots_that_would_share_a_file_are_refused() {
    if let Err(e) = Study::from_text(Path::new("s.toml"), &with_plots(LINE_PLOT), &LoadOptions::default()) {
        panic!("{e}");
    }
    let e = err(&with_plots(&format!("{LINE_PLOT}{LINE_PLOT}")));
    assert!(e.starts_with("s.toml:46:1: plot[1].name:"), "{e}");
    assert!(e.contains("plot[0] already writes `p_q.svg`"), "{e}");
    let e = err(&with_plots(&format!("{LINE_PLOT}{}", LINE_PLOT.replace("p q", "p_q"))));
    assert!(e.contains("plot[1].name") && e.contains("`p_q.svg`"), "{e}");
    // Two unnamed plots of the same axes write the same default file.
    let unnamed = LINE_PLOT.replace("name = \"p q\"\n", "");
    let e = err(&with_plots(&format!("{unnamed}{unnamed}")));
    assert!(e.contains("plot[1]:") && e.contains("`ops_per_sec-vs-workload.threads.svg`"), "{e}");
}

#[test]
fn plot_keys_the_kind_does_not_read_are_refused() {
    let bars = LINE_PLOT.replace("[[plot]]", "[[plot]]\nkind = \"bars\"\ntop = 3");
    let e = err(&with_plots(&bars));
    assert!(
        e.starts_with("s.toml:42:1: ") && e.contains("plot[0].top: `top` is for kind = \"utilisation\""),
        "{e}"
    );
    let util = "\n[[plot]]\nkind = \"utilisation\"\ntop = 3\n";
    if let Err(e) = Study::from_text(Path::new("s.toml"), &with_plots(util), &LoadOptions::default()) {
        panic!("{e}");
    }
    let e = err(&with_plots(&util.replace("top = 3", "top = 0")));
    assert!(
        e.starts_with("s.toml:42:1: ") && e.contains("plot[0].top: expected at least 1"),
        "{e}"
    );
    for (key, field) in [
        ("x = \"workload.threads\"", "x"),
        ("y = \"ops_per_sec\"", "y"),
        ("x_log = true", "x_log"),
    ] {
        let e = err(&with_plots(&format!("{util}{key}\n")));
        assert!(e.starts_with("s.toml:43:1: "), "{e}");
        assert!(
            e.contains(&format!("plot[0].{field}: `{field}` is not read by kind = \"utilisation\"")),
            "{e}"
        );
    }
}

#[test]
fn a_resolved_scenario_does_not_write_the_keys_it_would_refuse() {
    let aging = "[scenario]\nname = \"x\"\n\n[workload]\nkind = \"xfs-alloc\"\n\n[xfs_alloc]\nagblocks = 4096\nsource = \"aging\"\naging.max_steps = 50\n";
    for text in [XFS_FRAG, aging, FSMARK] {
        let s = Study::from_text(Path::new("s.toml"), text, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let resolved = &s.scenario.resolved_toml;
        for key in ["freesp_file", "histogram", "enomem_every"] {
            assert!(!resolved.contains(key), "{resolved}");
        }
        if let Err(e) = Study::from_text(Path::new("s.toml"), resolved, &LoadOptions::default()) {
            panic!("{e}\n{resolved}");
        }
    }
}
