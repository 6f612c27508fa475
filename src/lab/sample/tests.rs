use super::*;

/// Three samples as `perf script -F cpu,ip,sym` prints them: one in the
/// kernel below a root called twice on its stack (the outer call
/// counts), one in the kernel outside it, one in user space.
const SCRIPT: &str = "[001] \n\
\tffffffff819eac70 btrfs_get_32\n\
\tffffffff819e0000 btrfs_del_items\n\
\tffffffff819d0000 root_fn\n\
\tffffffff819c0000 helper\n\
\tffffffff819d0000 root_fn\n\
\tffffffff81000000 worker_thread\n\
\n\
[000] \n\
\tffffffff819eac70 btrfs_get_32\n\
\tffffffff8223b5d1 do_syscall_64\n\
\t          27f43d [unknown]\n\
\t           9b0c2 main\n\
\n\
[000] \n\
\t          27f43d [unknown]\n\
\t           9b0c2 main\n\
\n";

fn parsed() -> KernelSamples {
    let mut k = KernelSamples::new(50_000, 2, &["root_fn", "absent_fn"]);
    parse(SCRIPT.as_bytes(), &mut k).unwrap();
    k
}

#[test]
fn samples_are_counted_by_where_they_ran_and_what_was_on_the_stack() {
    let k = parsed();
    assert_eq!((k.total, k.kernel), (3, 2));
    let get = k.functions["btrfs_get_32"];
    assert_eq!((get.self_samples, get.inclusive), (2, 2));
    // Twice on one stack is one sample.
    assert_eq!(k.functions["root_fn"].inclusive, 1);
    // User frames are not kernel functions.
    assert!(!k.functions.contains_key("main") && !k.functions.contains_key("[unknown]"));
    assert_eq!(k.functions["do_syscall_64"].inclusive, 1);
}

#[test]
fn below_a_root_counts_only_its_samples_from_its_outer_call_down() {
    let k = parsed();
    let b = &k.roots[0];
    assert_eq!((b.root.as_str(), b.samples), ("root_fn", 1));
    assert_eq!(b.functions["btrfs_get_32"].self_samples, 1);
    assert_eq!(b.functions["helper"].inclusive, 1);
    assert!(!b.functions.contains_key("worker_thread"), "{:?}", b.functions);
    assert_eq!(k.roots[1].samples, 0);
}

#[test]
fn time_per_run_is_samples_times_the_period_over_the_runs() {
    let k = parsed();
    // 2 samples x 50 us / 2 runs.
    assert_eq!(k.us_per_run(2), 50.0);
    let text = k.report(5);
    assert!(text.contains("root_fn: 1 samples, 25.0 us per run"), "{text}");
    assert!(text.contains("absent_fn: no sample"), "{text}");
}

#[test]
fn the_csv_has_every_scope_most_inclusive_first() {
    let csv = parsed().to_csv().unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "scope,function,self_samples,inclusive_samples,self_us_per_run,inclusive_us_per_run"
    );
    assert_eq!(lines[1], "all,btrfs_get_32,2,2,50.0,50.0");
    assert!(lines.iter().any(|l| l.starts_with("root_fn,btrfs_del_items,0,1,")), "{csv}");
    assert!(!lines.iter().any(|l| l.starts_with("absent_fn,")));
}

#[test]
fn a_period_out_of_range_is_refused_before_anything_starts() {
    let e = Sampler::start(&std::env::temp_dir(), 1).unwrap_err();
    assert!(e.to_string().contains("expected 10 to 100000 us"), "{e}");
}

#[test]
fn a_stack_is_the_kernel_part_before_its_first_user_frame() {
    // A kernel-looking address after a user frame is not the kernel's;
    // a header with no blank line before it still starts a sample; a
    // line without a tab is never a frame (it is a header: perf prints
    // nothing else there); bytes that are not UTF-8 do
    // not stop the reading; an idle CPU's sample is counted apart.
    let mut text: Vec<u8> = b"[000] \n\tffffffff81000010 inner\n\t 400000 user_fn\n\tffffffff81000020 after_user\n\
[001] \n\tffffffff81000030 pv_native_safe_halt\n\tffffffff81000040 do_idle\n\
[001] \n ffffffff81000050 not_a_frame\n\tffffffff81000060 odd_"
        .to_vec();
    text.extend_from_slice(&[0xff, 0xfe]);
    text.extend_from_slice(b"\n\n[000] \n\n");
    let mut k = KernelSamples::new(50_000, 1, &[]);
    parse(text.as_slice(), &mut k).unwrap();
    assert_eq!((k.total, k.kernel, k.idle), (5, 3, 1));
    assert!(k.functions.contains_key("inner"));
    assert!(!k.functions.contains_key("after_user"), "{:?}", k.functions);
    assert!(!k.functions.contains_key("not_a_frame"));
    assert!(k.functions.keys().any(|f| f.starts_with("odd_")), "{:?}", k.functions);
}

#[test]
fn a_short_count_against_the_cpus_time_is_warned_of() {
    let mut k = parsed();
    k.expected = 4;
    assert!(k.report(3).contains("warning: perf lost or throttled samples"));
    k.expected = 3;
    let text = k.report(3);
    assert!(text.contains("100.0% of the 3 samples"), "{text}");
    assert!(!text.contains("warning"), "{text}");
}

#[test]
fn a_period_over_the_kernels_rate_limit_is_refused_with_the_shortest_allowed() {
    assert_eq!(period_refused(50, Some(100_000)), None);
    assert_eq!(period_refused(50, None), None);
    let why = period_refused(10, Some(25_000)).expect("refused");
    assert!(why.contains("100000 samples a second") && why.contains("at least 40 us"), "{why}");
    assert!(period_refused(5, None).is_some());
    assert!(period_refused(200_000, None).is_some());
}

#[test]
fn the_expected_samples_are_the_cpus_time_over_the_period() {
    // 2 CPUs for 1.5 s at one sample per 50 us: 60,000.
    assert_eq!(expected_samples(std::time::Duration::from_millis(1500), 2, 50_000), 60_000);
    assert_eq!(expected_samples(std::time::Duration::from_secs(1), 0, 50_000), 0);
}
