//! Parsers on saved real outputs (tests/lab/data): Linux 6.18, xfsprogs
//! 6.1, btrfs-progs 6.2, on the project's machine kind. The expected
//! figures were counted from the same files with grep, independently of
//! the parsers (e.g. `grep -A3 'delayed_item: [0-9]* release' FILE | grep
//! -c '=> btrfs_delete_delayed_items'` gives 508).

use fsmeta::lab::{btrfs_delayed, btrfs_layout, dumptree::Tree, trace, xfs_alloc, xfs_handles};

fn data(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/data").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn the_btrfs_delayed_trace_gives_the_batches_of_case_3s_script() {
    let text = data("btrfs-delayed-1000.trace.txt");
    let m = btrfs_delayed::analyse(&text, "27687bd2-84f2-44eb-bab2-c0951f5d7cb0", 16384, 2).expect("analyse");
    assert_eq!(m["batches"], 508.0);
    assert_eq!(m["insert_batches"], 8.0);
    assert_eq!(m["killed_at_evict"], 0.0);
    assert_eq!(m["releases_unclassified"], 0.0);
    assert_eq!(m["phase.script.batches"], 508.0);
    let by_phase: f64 = ["unlink", "sync", "rm_fr"].iter().map(|p| m[&format!("phase.{p}.batches")]).sum();
    assert_eq!(by_phase, 508.0, "every deletion batch falls in a phase after the creates");
    // 1000 files' DIR_INDEX deletions and testdir's own in the root
    // (rmdir), 256 KiB each; nothing was killed.
    assert_eq!(m["items_released"], 1001.0);
    // The stacks' time, from an event's record to its `<stack trace>`
    // record (this trace's clock counts whole us): the upper medians over
    // the 508 deletion releases and the 1,001 dir-index deletion reserves
    // (1,000 unlinks and the rmdir), counted apart with a script over the
    // same file, are 2 us each.
    assert_eq!((m["release_stack_ns"], m["reserve_stack_ns"]), (2000.0, 2000.0));
}

#[test]
fn unclassified_releases_are_warned_of_with_their_stacks() {
    let f = "27687bd2-84f2-44eb-bab2-c0951f5d7cb0";
    // The saved trace has none.
    assert_eq!(btrfs_delayed::unclassified_warning(&data("btrfs-delayed-1000.trace.txt"), f), None);
    let release = |task: &str, ts: &str, frames: &str| {
        format!(
            "  {task} [001] ..... {ts}: btrfs_space_reservation: {f}: delayed_item: 257 release 262144\n  {task} [001] ..... {ts}: <stack trace>\n{frames}"
        )
    };
    let text = [
        release("kworker/u8:3-9", "1.000001", " => btrfs_delete_delayed_items+0x1a/0x300\n"),
        release(
            "fsmeta-77",
            "1.000002",
            " => btrfs_some_new_caller+0x1a/0x300\n => do_syscall_64+0x1/0x2\n",
        ),
        // A release whose stack the trace does not hold.
        format!("  fsmeta-77 [001] ..... 1.000003: btrfs_space_reservation: {f}: delayed_item: 257 release 262144\n"),
        // Another filesystem's: not this one's to classify.
        release("fsmeta-78", "1.000004", " => btrfs_other+0x1/0x2\n").replace(f, "00000000-0000-0000-0000-000000000000"),
    ]
    .concat();
    let m = btrfs_delayed::analyse(&text, f, 16384, 2).expect("analyse");
    assert_eq!(m["releases_unclassified"], 2.0);
    // One deletion release with a stack, written in the same us: 0 ns;
    // no unlink reserve: 0.
    assert_eq!((m["release_stack_ns"], m["reserve_stack_ns"]), (0.0, 0.0));
    let w = btrfs_delayed::unclassified_warning(&text, f).expect("a warning");
    assert!(w.starts_with("2 delayed-item release(s) not classified"), "{w}");
    assert!(
        w.contains("fsmeta-77 at 1000002000 ns: btrfs_some_new_caller <- do_syscall_64"),
        "{w}"
    );
    assert!(w.contains("fsmeta-77 at 1000003000 ns: no stack"), "{w}");
    assert!(!w.contains("btrfs_delete_delayed_items") && !w.contains("btrfs_other"), "{w}");
}

/// The loop device's requests of one run (session 61; the file keeps the
/// markers and the `block_rq_*` lines of the whole trace). By awk over the
/// issues: the sync wrote 62 requests, 991,232 bytes, two of them the
/// superblocks (4 KiB at sectors 128 and 131072), so (991,232 - 8,192) /
/// 32,768 = 30 tree blocks in two copies; `rm -fr` 12 requests, 172,032
/// bytes, 5 blocks; each phase issued two flushes.
#[test]
fn the_loop_devices_requests_give_each_phases_writes_flushes_and_tree_blocks() {
    let text = data("btrfs-delayed-io.trace.txt");
    let m = btrfs_delayed::analyse(&text, "27687bd2-84f2-44eb-bab2-c0951f5d7cb0", 16384, 2).expect("analyse");
    let g = |k: &str| m[k];
    assert_eq!((g("phase.sync.io_writes"), g("phase.sync.io_write_kib")), (62.0, 968.0));
    assert_eq!((g("phase.sync.super_writes"), g("phase.sync.tree_blocks_written")), (2.0, 30.0));
    assert_eq!((g("phase.rm_fr.io_writes"), g("phase.rm_fr.io_write_kib")), (12.0, 168.0));
    assert_eq!((g("phase.rm_fr.super_writes"), g("phase.rm_fr.tree_blocks_written")), (2.0, 5.0));
    assert_eq!(g("phase.script.tree_blocks_written"), 35.0);
    for phase in ["sync", "rm_fr"] {
        assert_eq!(g(&format!("phase.{phase}.io_flushes")), 2.0, "{phase}");
        let (flush, busy) = (g(&format!("phase.{phase}.io_flush_us")), g(&format!("phase.{phase}.io_busy_us")));
        assert!(flush > 100.0 && flush < busy, "{phase}: flushes {flush} us of {busy} us in flight");
    }
    for phase in ["create", "unlink"] {
        assert_eq!(g(&format!("phase.{phase}.io_writes")), 0.0, "{phase}");
    }
}

#[test]
fn a_trace_of_another_filesystem_counts_nothing() {
    let text = data("btrfs-delayed-1000.trace.txt");
    let m = btrfs_delayed::analyse(&text, "00000000-0000-0000-0000-000000000000", 16384, 2).expect("analyse");
    assert_eq!(m["batches"], 0.0);
}

#[test]
fn trace_lines_are_split_into_task_pid_cpu_time_event_and_body() {
    let r = trace::parse_line(
        "    kworker/u8:1-32      [001] .....   822.974229: btrfs_space_reservation: 2768: delayed_item: 257 release 262144",
    )
    .expect("a record");
    assert_eq!((r.task.as_str(), r.pid, r.cpu), ("kworker/u8:1", 32, 1));
    assert_eq!(r.ts_ns, 822_974_229_000);
    assert_eq!(r.event, "btrfs_space_reservation");
    assert_eq!(r.body, "2768: delayed_item: 257 release 262144");
    // A task name with a dash and blanks keeps them; the pid is the last part.
    let r = trace::parse_line(" my-tool x-7 [000] ...1. 1.000001: tracing_mark_write: fsmeta:sync").expect("a record");
    assert_eq!((r.task.as_str(), r.pid), ("my-tool x", 7));
    assert_eq!(trace::parse_line("# tracer: nop"), None);
    assert_eq!(trace::parse_line("garbage [x] 1: a: b"), None);
}

#[test]
fn the_xfs_handles_trace_gives_the_handles_of_each_operation() {
    let v = xfs_handles::analyse(&data("xfs-handles-1000.trace.txt"), 1000.0);
    let get = |variant: &str, metric: &str| {
        v.iter()
            .find(|(n, _)| n == variant)
            .and_then(|(_, m)| m.get(metric).copied())
            .unwrap_or(f64::NAN)
    };
    // 1000 creates: 1000 xfs_trans_alloc_icreate, 15 chunk rolls.
    assert_eq!(get("create", "caller.xfs_trans_alloc_icreate"), 1.0);
    assert_eq!(get("create", "xfs_trans.incs_per_op"), 1.015);
    for c in ["xfs_trans_alloc_dir", "xfs_attr_inactive", "xfs_inactive_ifree"] {
        assert_eq!(get("unlink", &format!("caller.{c}")), 1.0, "{c}");
    }
    assert_eq!(get("link", "xfs_trans.incs_per_op"), 1.0);
    let names: Vec<&str> = v.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["create", "unlink", "mkdir", "rmdir", "link", "rename"]);
}

#[test]
fn the_xfs_alloc_trace_gives_four_btree_reads_per_call() {
    let m = xfs_alloc::analyse(&data("xfs-alloc-10000.trace.txt")).expect("analyse");
    assert_eq!(m["calls"], 19.0);
    assert_eq!(m["buffer_reads"], 4.0, "two levels of the by-size and the by-block trees");
    assert_eq!(m["header_reads"], 2.0, "AGF and AGFL");
    assert_eq!(m["alloc_len"], 1.0);
    assert!(xfs_alloc::analyse("# tracer: nop\n").is_err(), "a trace without calls is refused");
}

#[test]
fn the_saved_dump_tree_has_24_leaves_of_height_2() {
    let t = Tree::parse(&data("btrfs-1000-files.dump-tree.txt")).expect("parse");
    let m = btrfs_layout::metrics(&t);
    assert_eq!(m["leaves"], 24.0);
    assert_eq!(m["tree_height"], 2.0);
    assert_eq!(m["items.DIR_INDEX"], 1001.0, "1000 files and testdir's entry in the root");
    assert_eq!(m["items.INODE_ITEM"], 1002.0);
    assert_eq!(m["dir_index_leaves"], 5.0);
}

#[test]
fn a_dump_cut_anywhere_inside_a_leaf_is_refused() {
    let text = data("btrfs-1000-files.dump-tree.txt");
    let cut = text.find("\titem 100 key").expect("an item 100");
    assert!(Tree::parse(&text[..cut]).is_err());
}

/// A hand-made trace in the real lines' format (mono clock, so
/// timestamps are seconds): one kworker's batches in the sync and rm -fr
/// phases, a syscall task's locks in between.
fn windows_trace() -> String {
    let f = "00000000-0000-0000-0000-0000000000aa";
    // Root locks (block 500) waited 5 us: before their window, not in it.
    let lock_waited = |task: &str, ts: &str, block: u64, diff: u64| {
        format!(
            "  {task} [001] ..... {ts}: btrfs_tree_lock: {f}: block={block} generation=9 start_ns=1 end_ns=2 diff_ns={diff} owner=5 is_log_tree=0\n"
        )
    };
    let lock = |task: &str, ts: &str, block: u64| lock_waited(task, ts, block, if block == 500 { 5000 } else { 100 });
    let release = |ts: &str, bytes: u64| {
        format!(
            "  kworker/u8:3-9 [001] ..... {ts}: btrfs_space_reservation: {f}: delayed_item: 257 release {bytes}\n  kworker/u8:3-9 [001] ..... {ts}: <stack trace>\n => btrfs_delete_delayed_items+0x1a/0x300\n => __btrfs_run_delayed_items+0x10/0x200\n"
        )
    };
    let mark = |ts: &str, phase: &str| format!("  fsmeta-100 [000] ..... {ts}: tracing_mark_write: fsmeta:{phase}\n");
    let k = "kworker/u8:3-9";
    let mut t = String::from("# tracer: nop\n");
    t += &mark("10.000001", "sync");
    // Batch 1: root 500, leaf 600 (waited 2.5 us) copied on write,
    // released 5 us after the root lock.
    t += &lock(k, "10.000010", 500);
    t += &lock_waited(k, "10.000012", 600, 2500);
    t += &format!(
        "  {k} [001] ..... 10.000013: btrfs_cow_block: {f}: root=5(FS_TREE) refs=1 orig_buf=600 (orig_level=0) cow_buf=700 (cow_level=0)\n"
    );
    // The new block's four folios join the btree inode's page cache.
    for ts in ["10.0000131", "10.0000132", "10.0000133", "10.0000134"] {
        t += &format!("  {k} [001] ..... {ts}: mm_filemap_add_to_page_cache: dev 0:39 ino 1 pfn=0x50af00 ofs=11468800 order=0\n");
    }
    t += &release("10.000015", 262_144);
    // The syscall task locks the root and adds a folio: not the worker's
    // window.
    t += &lock("fsmeta-100", "10.000018", 500);
    t += "  fsmeta-100 [000] ..... 10.000019: mm_filemap_add_to_page_cache: dev 0:39 ino 1 pfn=0x50af01 ofs=11485184 order=0\n";
    // Batch 2: 3 us, of which 1 us asleep (switched out in state D).
    t += &lock(k, "10.000020", 500);
    t += &lock(k, "10.000021", 700);
    t += "  kworker/u8:3-9 [001] d..2. 10.000021: sched_switch: prev_comm=kworker/u8:3 prev_pid=9 prev_prio=120 prev_state=D ==> next_comm=fsmeta next_pid=100 next_prio=120\n";
    t += "  fsmeta-100 [001] d..2. 10.000022: sched_switch: prev_comm=fsmeta prev_pid=100 prev_prio=120 prev_state=R+ ==> next_comm=kworker/u8:3 next_pid=9 next_prio=120\n";
    t += &release("10.000023", 262_144);
    t += &mark("10.000050", "rm_fr");
    // A block given back outside any window of the worker's.
    t += &format!("  {k} [001] ..... 10.000060: btrfs_reserved_extent_free: {f}: root=2(EXTENT_TREE) start=11468800 len=16384\n");
    // Another node's inode update (root lock, no release), then a 4-item
    // batch whose own root lock starts its 10 us window.
    t += &lock(k, "10.000090", 500);
    t += &lock(k, "10.000100", 500);
    t += &lock(k, "10.000101", 700);
    // The emptied leaf goes back to the free-space cache; another
    // filesystem's free in the same window is not this one's.
    t += &format!("  {k} [001] ..... 10.000105: btrfs_reserved_extent_free: {f}: root=2(EXTENT_TREE) start=11468800 len=16384\n");
    t += &format!(
        "  {k} [001] ..... 10.000106: btrfs_reserved_extent_free: 00000000-0000-0000-0000-0000000000bb: root=2(EXTENT_TREE) start=1 len=16384\n"
    );
    t += &release("10.000110", 4 * 262_144);
    t += &mark("10.000200", "end");
    t
}

#[test]
fn deletion_batches_are_timed_from_their_root_lock_to_their_release() {
    let m = btrfs_delayed::analyse(&windows_trace(), "00000000-0000-0000-0000-0000000000aa", 16384, 2).expect("analyse");
    assert_eq!((m["phase.sync.batches"], m["phase.rm_fr.batches"]), (2.0, 1.0));
    // Windows 5 and 3 us in the sync phase: the median of two is the upper.
    assert!((m["phase.sync.us_per_batch"] - 5.0).abs() < 1e-9, "{m:?}");
    assert!((m["phase.sync.us_per_item"] - 4.0).abs() < 1e-9, "{m:?}");
    assert_eq!(m["phase.sync.cow_blocks"], 1.0);
    // Batch 2 slept 1 us; the syscall task's switch-out is in no window.
    assert!((m["phase.sync.offcpu_us_per_item"] - 0.5).abs() < 1e-9, "{m:?}");
    assert_eq!((m["phase.sync.offcpu_batches"], m["phase.sync.blocked_batches"]), (1.0, 1.0));
    assert_eq!((m["phase.rm_fr.offcpu_us_per_item"], m["phase.rm_fr.offcpu_batches"]), (0.0, 0.0));
    // rm -fr: 10 us for 4 items.
    assert!((m["phase.rm_fr.us_per_batch"] - 10.0).abs() < 1e-9, "{m:?}");
    assert!((m["phase.rm_fr.us_per_item"] - 2.5).abs() < 1e-9, "{m:?}");
    assert_eq!(m["phase.rm_fr.cow_blocks"], 0.0);
    assert!((m["phase.script.us_per_item"] - 18.0 / 6.0).abs() < 1e-9, "{m:?}");
    // Lock time after each root lock: sync 2.5 + 0.1 us over 2 items, one
    // lock per batch, one of them contended; rm -fr 0.1 us over 4 items.
    // The root locks' 5 us waits are outside the windows.
    assert!((m["phase.sync.lock_us_per_item"] - 1.3).abs() < 1e-9, "{m:?}");
    assert_eq!((m["phase.sync.locks_per_batch"], m["phase.sync.contended_locks"]), (1.0, 1.0));
    assert!((m["phase.rm_fr.lock_us_per_item"] - 0.025).abs() < 1e-9, "{m:?}");
    assert_eq!((m["phase.rm_fr.locks_per_batch"], m["phase.rm_fr.contended_locks"]), (1.0, 0.0));
    // The COW's four folios in the sync phase, the leaf freed in rm -fr;
    // the syscall task's folio and the free outside a window count nowhere.
    assert_eq!((m["phase.sync.eb_folios"], m["phase.sync.leaves_freed"]), (4.0, 0.0));
    assert_eq!((m["phase.rm_fr.eb_folios"], m["phase.rm_fr.leaves_freed"]), (0.0, 1.0));
    assert_eq!((m["phase.script.eb_folios"], m["phase.script.leaves_freed"]), (4.0, 1.0));
    // Gaps between one task's consecutive releases in one phase: the
    // sync's two batches 8 us apart; rm -fr's one batch has none.
    assert!((m["phase.sync.batch_gap_us"] - 8.0).abs() < 1e-9, "{m:?}");
    assert_eq!((m["phase.rm_fr.batch_gap_us"], m["phase.unlink.batch_gap_us"]), (0.0, 0.0));
    assert!((m["phase.script.batch_gap_us"] - 8.0).abs() < 1e-9, "{m:?}");
    assert_eq!(m["delete_batch_gap_us_p50"], m["phase.script.batch_gap_us"]);
}

#[test]
fn batch_gaps_are_each_tasks_own_per_phase() {
    // Deletion releases only (mono clock, seconds). Sync: the kworker at
    // 10, 13 and 20 us, the syscall thread's commit between them at 15
    // (one release: no gap of its own); the kworker's gaps 3 and 7, the
    // upper median 7. rm -fr: the kworker at 100 and 110 us (gap 10), then
    // 1.5 ms later (no gap: another flush). Script: 3, 7, 10, upper
    // median 7.
    let f = "00000000-0000-0000-0000-0000000000aa";
    let release = |task: &str, ts: &str| {
        format!(
            "  {task} [001] ..... {ts}: btrfs_space_reservation: {f}: delayed_item: 257 release 262144\n  {task} [001] ..... {ts}: <stack trace>\n => btrfs_delete_delayed_items+0x1a/0x300\n => __btrfs_run_delayed_items+0x10/0x200\n"
        )
    };
    let mark = |ts: &str, phase: &str| format!("  fsmeta-100 [000] ..... {ts}: tracing_mark_write: fsmeta:{phase}\n");
    let (k, u) = ("kworker/u8:3-9", "fsmeta-100");
    let mut t = String::from("# tracer: nop\n");
    t += &mark("10.000001", "sync");
    for (task, ts) in [(k, "10.000010"), (k, "10.000013"), (u, "10.000015"), (k, "10.000020")] {
        t += &release(task, ts);
    }
    t += &mark("10.000050", "rm_fr");
    for ts in ["10.000100", "10.000110", "10.001610"] {
        t += &release(k, ts);
    }
    t += &mark("10.002000", "end");
    let m = btrfs_delayed::analyse(&t, f, 16384, 2).expect("analyse");
    assert_eq!((m["phase.sync.batches"], m["phase.rm_fr.batches"]), (4.0, 3.0));
    let near = |k: &str, want: f64| assert!((m[k] - want).abs() < 1e-6, "{k}: {} want {want}", m[k]);
    near("phase.sync.batch_gap_us", 7.0);
    near("phase.rm_fr.batch_gap_us", 10.0);
    near("phase.unlink.batch_gap_us", 0.0);
    near("phase.script.batch_gap_us", 7.0);
    near("delete_batch_gap_us_p50", 7.0);
}

#[test]
fn the_sync_phase_of_a_real_trace_gives_its_batch_windows() {
    // The sync phase of one run with the lock and COW tracepoints on
    // (x86-tsc clock, both clock markers kept). Cross-checked with a gawk
    // script written apart from the parser (the same rule: roots are the
    // first block a task locks after its releases): 109 windows of one
    // item (the first batch has no root lock before it in the slice),
    // summing 254.8288 us, median 2.1417 us, 1 COW inside them.
    let text = data("btrfs-delayed-sync-locks.trace.txt");
    let m = btrfs_delayed::analyse(&text, "1351c052-79a9-4cc6-a073-057295b2ba62", 16384, 2).expect("analyse");
    assert_eq!(m["phase.sync.batches"], 110.0);
    assert!(
        (m["phase.sync.us_per_batch"] - 2.1417).abs() < 1e-3,
        "{}",
        m["phase.sync.us_per_batch"]
    );
    assert!(
        (m["phase.sync.us_per_item"] - 254.8288 / 109.0).abs() < 1e-3,
        "{}",
        m["phase.sync.us_per_item"]
    );
    // The 109 gaps between its 110 releases (one task, the sync's syscall
    // thread running the commit): upper median 5.0339 us (awk, apart
    // from the parser, converting the x86-tsc stamps by the two markers).
    assert!(
        (m["phase.sync.batch_gap_us"] - 5.0339).abs() < 1e-3,
        "{}",
        m["phase.sync.batch_gap_us"]
    );
    assert_eq!(m["phase.sync.cow_blocks"], 1.0);
    // The writeback kworker (write locks only, no reservation) locked 24
    // blocks; 22 of its 23 gaps are under 1 ms (one spans the flusher's
    // wait), upper median 13.3204 us (python, apart from the parser, by
    // the two markers as above).
    assert_eq!(m["phase.sync.writeout_blocks"], 24.0);
    assert!(
        (m["phase.sync.writeout_us"] - 13.3204).abs() < 1e-3,
        "{}",
        m["phase.sync.writeout_us"]
    );
}

/// A twin's outputs folder (in a fresh temporary folder named by `tag`)
/// whose resolved scenario names the AMD lab host's shipped profile.
fn twin_on_the_lab_host_profile(tag: &str) -> (std::path::PathBuf, fsmeta::lab::twin::Outputs) {
    twin_on_profile(tag, "lab-host.toml")
}

/// A twin's outputs folder (in a fresh temporary folder named by `tag`)
/// whose resolved scenario names the shipped profile `file`.
fn twin_on_profile(tag: &str, file: &str) -> (std::path::PathBuf, fsmeta::lab::twin::Outputs) {
    let dir = std::env::temp_dir().join(format!("fsmeta-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("scenario.resolved.toml"),
        format!("[machine]\nprofile = \"../machines/{file}\"\n"),
    )
    .unwrap();
    let twin = fsmeta::lab::twin::Outputs {
        dir: dir.clone(),
        ..Default::default()
    };
    (dir, twin)
}

#[test]
fn a_twin_priced_for_another_cpu_is_named_in_a_warning() {
    use fsmeta::lab::twin::{Outputs, host_mismatch};
    let (dir, twin) = twin_on_the_lab_host_profile("host-mismatch");
    let live = |model: &str| Outputs {
        lab_txt: Some(format!(
            "experiment: xfs-alloc\ntwin: scenarios/lab/xfs-alloc.toml\ncpu: Some CPU (2 CPUs online)\ncpu model: {model}\n"
        )),
        ..Outputs::default()
    };
    let why = host_mismatch(&live("family 6 model 207"), &twin).expect("the lab host profile is AMD's");
    assert!(
        why.contains("AMD EPYC (family 25 model 17)") && why.contains("family 6 model 207"),
        "{why}"
    );
    assert_eq!(host_mismatch(&live("family 25 model 17"), &twin), None);
    // An older lab run (no `cpu model:` line) says nothing either way.
    let old = Outputs {
        lab_txt: Some("twin: scenarios/lab/xfs-alloc.toml\ncpu: AMD EPYC (2 CPUs online)\n".into()),
        ..Outputs::default()
    };
    assert_eq!(host_mismatch(&old, &twin), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Xeon 6 VM under retpolines (the shipped profile) and under
/// enhanced IBRS (session 66): one CPU model, indirect calls at 13 ns and
/// at nothing.
#[test]
fn a_twin_priced_under_another_mitigation_is_named_in_a_warning() {
    use fsmeta::lab::twin::{Outputs, host_mismatch};
    let (dir, twin) = twin_on_profile("mitigation-mismatch", "lab-xeon-6-207.toml");
    let live = |spectre_v2: &str| Outputs {
        lab_txt: Some(format!(
            "twin: scenarios/lab/xfs-alloc.toml\ncpu model: family 6 model 207\nmitigations: spectre_v2: {spectre_v2}; retbleed: Not affected; spec_rstack_overflow: Not affected\n"
        )),
        ..Outputs::default()
    };
    let eibrs = "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; PBRSB-eIBRS: SW sequence; BHI: Vulnerable";
    let why = host_mismatch(&live(eibrs), &twin).expect("the profile was measured under retpolines");
    assert!(
        why.contains(&format!("runs `{eibrs}`")) && why.contains("`Mitigation: Retpolines; STIBP: disabled;"),
        "{why}"
    );
    let retpolines = "Mitigation: Retpolines; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not affected; BHI: Retpoline";
    assert_eq!(host_mismatch(&live(retpolines), &twin), None);
    // Retpolines with another BHI field: the same price per indirect call.
    let bhi = "Mitigation: Retpolines; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not affected; BHI: Vulnerable";
    assert_eq!(host_mismatch(&live(bhi), &twin), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The probes timed before each run held to the twin's profile (the Xeon 6
/// VM under enhanced IBRS: `hit_ns` 1.56, `atomic_ns` 7.35).
#[test]
fn a_run_on_a_shared_or_slower_core_is_named_in_a_warning() {
    use fsmeta::lab::speed::speed_mismatch;
    use fsmeta::lab::twin::Outputs;
    let (dir, twin) = twin_on_profile("speed-mismatch", "lab-xeon-6-207-eibrs.toml");
    let on = |model: &str, l1: &[f64], xadd: &[f64]| {
        let mut o = Outputs {
            lab_txt: Some(format!("twin: scenarios/lab/xfs-alloc.toml\ncpu model: {model}\n")),
            ..Outputs::default()
        };
        for v in ["le", "le-busy"] {
            o.values.insert((v.into(), "host.l1_load_ns".into()), l1.to_vec());
            o.values.insert((v.into(), "host.xadd_ns".into()), xadd.to_vec());
        }
        o
    };
    let live = |l1: &[f64], xadd: &[f64]| on("family 6 model 207", l1, xadd);
    // A quiet core: no word.
    assert_eq!(speed_mismatch(&live(&[1.5, 1.6, 1.56], &[7.1, 7.4, 7.7]), &twin), None);
    // One run of three with the L1d shared (over 1.5 x 1.56 = 2.34 ns).
    let why = speed_mismatch(&live(&[1.5, 2.9, 1.56], &[7.1, 7.4, 7.7]), &twin).expect("2.9 ns is a shared L1d");
    assert!(
        why.contains("in 1 of 3 runs") && why.contains("up to 2.90 ns") && why.contains("1.56"),
        "{why}"
    );
    assert!(!why.contains("lock xadd"), "{why}");
    // The remedy names the commands that price this state.
    assert!(
        why.ends_with(fsmeta::lab::speed::RECALIBRATE) && why.contains("fsmeta fit P.toml"),
        "{why}"
    );
    // Just under the bound says nothing.
    assert_eq!(speed_mismatch(&live(&[2.33], &[7.35]), &twin), None);
    // The atomics 24% slower (the median, 9.1 against 7.35).
    let why = speed_mismatch(&live(&[1.56], &[9.0, 9.1, 12.0]), &twin).expect("9.1 ns is 24% over 7.35");
    assert!(
        why.contains("9.10 ns") && why.contains("+24%") && !why.contains("L1d took"),
        "{why}"
    );
    // And faster: 6.2 is 16% under; 6.4, 13% under, is within 15%.
    assert!(speed_mismatch(&live(&[1.56], &[6.2]), &twin).is_some_and(|w| w.contains("-16%")));
    assert_eq!(speed_mismatch(&live(&[1.56], &[6.4]), &twin), None);
    // Both at once, in one warning.
    let why = speed_mismatch(&live(&[3.0], &[9.1]), &twin).expect("both rules");
    assert!(why.contains("in 1 of 1 runs") && why.contains("+24%"), "{why}");
    // An older run without probes says nothing; values that are not
    // finite and positive are left out.
    assert_eq!(speed_mismatch(&live(&[], &[]), &twin), None);
    assert_eq!(speed_mismatch(&live(&[f64::NAN, 0.0], &[f64::INFINITY]), &twin), None);
    // Another CPU's profile says nothing of this core (host_mismatch
    // warns of the CPU instead).
    assert_eq!(speed_mismatch(&on("family 23 model 1", &[3.0], &[9.1]), &twin), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_line_transfer_the_profile_did_not_price_is_named_in_a_warning() {
    use fsmeta::lab::output::TRANSFER_KEY;
    use fsmeta::lab::twin::{Outputs, transfer_mismatch};
    let (dir, twin) = twin_on_the_lab_host_profile("transfer-mismatch");
    // lab-host.toml prices the pair (one thread per core) at 26.93 ns.
    let live = |line: &str| Outputs {
        lab_txt: Some(format!(
            "experiment: btrfs-delayed\ntwin: scenarios/lab/btrfs-delayed.toml\ncpu model: family 25 model 17\n{TRANSFER_KEY} {line}\n"
        )),
        ..Outputs::default()
    };
    let why = transfer_mismatch(&live("70.10 66.00 (CPU 0 <-> CPU 1, ...)"), &twin).expect("70 ns is over twice 26.93");
    assert!(why.contains("26.9 ns") && why.contains("70.1 ns before"), "{why}");
    assert!(
        transfer_mismatch(&live("12.00 30.00 (...)"), &twin).is_some(),
        "12 ns is under half of 26.93"
    );
    assert_eq!(transfer_mismatch(&live("25.00 40.00 (...)"), &twin), None);
    assert_eq!(transfer_mismatch(&live("not measured: CPU 1 is offline"), &twin), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_lab_tables_give_the_fast_runs_figure_beside_the_median() {
    use fsmeta::lab::twin::{Outputs, fast_end, join, markdown_table, p10};
    // Nearest rank: the minimum under 10 runs, the 2nd lowest of 11-20.
    assert_eq!(p10(&[9.0, 7.0, 8.0]), 7.0);
    let runs: Vec<f64> = (1..=20).map(f64::from).collect();
    assert_eq!(p10(&runs), 2.0);
    assert!(p10(&[]).is_nan());
    // A rate's fast end is its high end; a count has none.
    assert_eq!(fast_end("ops_per_sec", &runs), Some(18.0));
    assert_eq!(fast_end("ops_per_sec", &runs[..10]), Some(9.0));
    assert_eq!(fast_end("wall_s", &runs), Some(2.0));
    assert_eq!(fast_end("phase.unlink.us_per_batch", &runs), Some(2.0));
    assert_eq!(fast_end("leaves", &runs), None);
    // A two-speed host: 3 fast runs of 11, the median is a slow one.
    let key = ("le".to_string(), "alloc_us_p50".to_string());
    let vals = vec![7.4, 10.5, 7.5, 11.0, 10.8, 7.3, 10.9, 11.2, 10.6, 10.7, 11.1];
    let mut live = Outputs::default();
    live.variants.push("le".into());
    live.means.insert(key.clone(), (10.0, vals.len()));
    live.values.insert(key.clone(), vals);
    let mut twin = Outputs::default();
    twin.variants.push("le".into());
    twin.means.insert(key, (7.45, 1));
    let rows = join(&live, &twin);
    assert_eq!((rows[0].live.0, rows[0].live_fast), (10.7, Some(7.4)));
    let md = markdown_table(&rows);
    assert!(md.contains("| live fast |") && md.contains("| 7.4000 |"), "{md}");
    assert!(md.contains("-30.4%") && md.contains("+0.7%"), "{md}");
}

/// The first 48 releases of a live unlink phase (session 64, the family
/// 23 model 1 host; the flush worker's lock and release records alone,
/// cut from the set's trace with their markers and stacks): 47 one-item
/// deletion windows on one leaf, the items after the deleted one falling
/// by 2 from each to the next. The slope was computed apart from the
/// parser (a Python script: windows from the worker's root lock to its
/// release, TSC cycles converted through the two clock markers, the lower
/// median of the 1,081 pairwise slopes): 21.851 ns per item.
#[test]
fn one_item_windows_on_one_leaf_give_the_cost_per_item_after_the_slot() {
    let text = data("btrfs-delayed-unlink-leaf.trace.txt");
    let m = btrfs_delayed::analyse(&text, "749d46b0-5807-4855-8f60-10afbe0025e1", 16384, 2).expect("analyse");
    assert_eq!(m["phase.unlink.batches"], 47.0);
    let ns = m["phase.unlink.shift_ns_per_item"];
    assert!((ns - 21.851).abs() < 0.01, "{ns}");
    // Every third file would make the same windows 2/3 as much an item.
    let m3 = btrfs_delayed::analyse(&text, "749d46b0-5807-4855-8f60-10afbe0025e1", 16384, 3).expect("analyse");
    assert!((m3["phase.unlink.shift_ns_per_item"] - ns * 2.0 / 3.0).abs() < 1e-9);
    // No run in the other phases.
    assert!(m.get("phase.sync.shift_ns_per_item").is_none_or(|&v| v == 0.0), "{m:?}");
}

/// A hand-made unlink phase (mono clock): 18 one-item windows, 9 on leaf
/// 600 then 9 on leaf 610, each window 1 us shorter than the one before
/// on its leaf (every second file: 2 items fewer after the slot, so 500
/// ns an item). Each window read-locks and write-locks the root (500),
/// write-locks a node (550), the same in every window, then its leaf, and
/// read-locks another block (650) after it. The leaf is the last block
/// write-locked: were it the first after the root (550) or the last
/// locked at all (650), the two leaves' windows would join into one run
/// whose jump back up at the tenth window changes the slope.
#[test]
fn a_windows_leaf_is_the_last_block_it_write_locked() {
    let f = "00000000-0000-0000-0000-0000000000cc";
    let k = "kworker/u8:3-9";
    let ev = |ts: f64, kind: &str, block: u64| {
        format!(
            "  {k} [001] ..... {ts:.6}: {kind}: {f}: block={block} generation=9 start_ns=1 end_ns=2 diff_ns=100 owner=5 is_log_tree=0\n"
        )
    };
    let mut t = String::from("# tracer: nop\n  fsmeta-100 [000] ..... 9.000000: tracing_mark_write: fsmeta:unlink\n");
    for j in 0..18u32 {
        let (leaf, us) = if j < 9 { (600, 20 - j) } else { (610, 25 - (j - 9)) };
        let t0 = 10.0 + f64::from(j) * 1e-4;
        t += &ev(t0 - 1e-6, "btrfs_tree_read_lock", 500);
        t += &ev(t0, "btrfs_tree_lock", 500);
        t += &ev(t0 + 1e-6, "btrfs_tree_lock", 550);
        t += &ev(t0 + 2e-6, "btrfs_tree_lock", leaf);
        t += &ev(t0 + 3e-6, "btrfs_tree_read_lock", 650);
        t += &format!(
            "  {k} [001] ..... {:.6}: btrfs_space_reservation: {f}: delayed_item: 257 release 262144\n  {k} [001] ..... {:.6}: <stack trace>\n => btrfs_delete_delayed_items+0x1a/0x300\n",
            t0 + f64::from(us) * 1e-6,
            t0 + f64::from(us) * 1e-6
        );
    }
    t += "  fsmeta-100 [000] ..... 11.000000: tracing_mark_write: fsmeta:end\n";
    let m = btrfs_delayed::analyse(&t, f, 16384, 2).expect("analyse");
    assert_eq!(m["phase.unlink.batches"], 18.0);
    let ns = m["phase.unlink.shift_ns_per_item"];
    assert!((ns - 500.0).abs() < 1e-6, "{ns}");
}
