use super::*;

/// A file written in a directory of its own (one per file, as tests
/// run in parallel), removed with it when dropped.
struct TempFile {
    dir: std::path::PathBuf,
    path: std::path::PathBuf,
}

impl std::ops::Deref for TempFile {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn temp_file(name: &str, text: &str) -> TempFile {
    let dir = std::env::temp_dir().join(format!("fsmeta-profile-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    TempFile { dir, path }
}

fn icelake() -> MachineProfile {
    find_builtin("icelake-2s").unwrap()
}

#[test]
fn transfer_ps_rounds_to_nearest() {
    let mut p = icelake();
    assert_eq!(p.transfer_ps(Distance::SmtSibling), 8100);
    assert_eq!(p.transfer_ps(Distance::CrossSocket), 108_000);
    p.hit_ns = 1.2344;
    assert_eq!(p.transfer_ps(Distance::SameCpu), 1234);
    p.hit_ns = 1.2346;
    assert_eq!(p.transfer_ps(Distance::SameCpu), 1235);
    p.hit_ns = 0.0025; // 2.5 ps: halves round away from zero
    assert_eq!(p.transfer_ps(Distance::SameCpu), 3);
    assert_eq!(ns_to_ps(f64::NAN), 0);
    assert_eq!(ns_to_ps(-1.0), 0);
}

#[test]
fn validate_names_the_field() {
    let field = |p: MachineProfile| match p.validate() {
        Err(e) => e.field,
        other => panic!("expected a parameter error, got {other:?}"),
    };
    let mut p = icelake();
    p.memory_ns = f64::NAN;
    assert_eq!(field(p), "memory_ns");
    let mut p = icelake();
    p.cross_socket_ns = 20.0;
    assert_eq!(field(p), "cross_socket_ns");
    let mut p = icelake();
    p.topology.llcs_per_socket = 5;
    assert_eq!(field(p), "topology.llcs_per_socket");
    let mut p = icelake();
    p.smt_throughput = 2.5;
    assert_eq!(field(p), "smt_throughput");
    let mut p = icelake();
    p.cache_ways = 0;
    assert_eq!(field(p), "cache_ways");
    for (wake_us, thread_stop_us, placed_stop_us, want) in [
        (0.0, 10.0, None, "sched.wake_us"),
        (5.0, f64::NAN, None, "sched.thread_stop_us"),
        (5.0, 10.0, Some(-1.0), "sched.placed_stop_us"),
        (5.0, 10.0, Some(2e6), "sched.placed_stop_us"),
    ] {
        let mut p = icelake();
        p.sched = Some(super::SchedPrices {
            wake_us,
            thread_stop_us,
            placed_stop_us,
        });
        assert_eq!(field(p), want);
    }
    let mut p = icelake();
    p.memmove = Some(super::MemmovePrices {
        backward_ns: 1.6,
        forward_near_ns: -1.0,
        forward_far_ns: 0.9,
    });
    assert_eq!(field(p), "memmove.forward_near_ns");
}

#[test]
fn load_profile_round_trips_every_builtin() {
    for p in builtin_profiles() {
        let text = toml::to_string(&p).unwrap();
        let path = temp_file(&format!("{}.toml", p.name), &text);
        assert_eq!(load_profile(&path).unwrap(), p, "{text}");
    }
}

#[test]
fn load_profile_syntax_error_has_line_and_column() {
    let mut text = toml::to_string(&icelake()).unwrap();
    text = text.replace("hit_ns = 1.4", "hit_ns = fast");
    let line = text.lines().position(|l| l.starts_with("hit_ns")).unwrap() + 1;
    let path = temp_file("bad-syntax.toml", &text);
    match load_profile(&path) {
        Err(e @ MachineError::Input(crate::param::InputError::Malformed { .. })) => {
            let shown = e.to_string();
            let want = format!("{}:{line}: column 10: ", path.display());
            assert!(shown.starts_with(&want), "{shown} / {want}");
        }
        other => panic!("expected InputFile, got {other:?}"),
    }
}

#[test]
fn load_profile_unknown_and_invalid_fields_have_lines() {
    let good = toml::to_string(&icelake()).unwrap();
    let text = good.replace("cache_ways = 12", "cache_ways = 12\ncache_wayz = 3");
    let want = text.lines().position(|l| l.starts_with("cache_wayz")).unwrap() + 1;
    let path = temp_file("unknown.toml", &text);
    assert!(matches!(load_profile(&path), Err(MachineError::Input(crate::param::InputError::Malformed { line, .. })) if line == want));

    let text = good.replace("smt = 2", "smt = 0");
    let want = text.lines().position(|l| l.starts_with("smt = 0")).unwrap() + 1;
    let path = temp_file("invalid.toml", &text);
    match load_profile(&path) {
        Err(MachineError::Input(crate::param::InputError::Malformed { line, message, .. })) => {
            assert_eq!(line, want);
            assert!(message.starts_with("topology.smt:"), "{message}");
        }
        other => panic!("expected InputFile, got {other:?}"),
    }
    let missing = std::env::temp_dir().join("fsmeta-no-such-profile.toml");
    assert!(matches!(
        load_profile(&missing),
        Err(MachineError::Input(crate::param::InputError::Io { .. }))
    ));
}

#[test]
fn describe_lists_the_parameters() {
    let text = find_builtin("milan-2s").unwrap().describe();
    assert!(text.starts_with("milan-2s: AMD EPYC 7R13"), "{text}");
    assert!(
        text.contains("2 socket(s) x 48 cores x 2 SMT = 192 CPUs, 6 LLC domain(s)"),
        "{text}"
    );
    assert!(text.contains("same_llc 23 same_socket 107 cross_socket 197"), "{text}");
    assert!(text.contains("LLC 192 MiB per socket (16-way)"), "{text}");
    assert_eq!(text.lines().count(), 6);
}

#[test]
fn measured_prices_apply_only_where_a_profile_has_them() {
    let mut p = icelake();
    assert_eq!(p.indirect_call_ns(), 0.0);
    assert_eq!(p.return_ns(), 0.0);
    assert_eq!(p.fresh_line_ns(), p.memory_ns);
    p.mitigation = Some(MitigationPrices {
        spectre_v2: "Mitigation: Retpolines".into(),
        indirect_call_ns: 13.18,
        spec_rstack_overflow: Some("Mitigation: Safe RET".into()),
        return_ns: 6.1,
    });
    p.levels = Some(CacheLevels {
        l1d_ways: 12,
        l2_ways: 20,
        l2_hit_ns: 3.0 * p.hit_ns,
        llc_hit_ns: 10.0 * p.hit_ns,
        fresh_line_ns: None,
        loop_load_ns: None,
    });
    assert_eq!(p.fresh_line_ns(), p.memory_ns);
    p.levels.as_mut().unwrap().fresh_line_ns = Some(17.71);
    assert_eq!(p.indirect_call_ns(), 13.18);
    assert_eq!(p.return_ns(), 6.1);
    assert_eq!(p.fresh_line_ns(), 17.71);
    p.validate().unwrap();
    let mut bad = p.clone();
    bad.mitigation.as_mut().unwrap().indirect_call_ns = 2000.0;
    assert_eq!(bad.validate().unwrap_err().field, "mitigation.indirect_call_ns");
    let mut bad = p.clone();
    bad.mitigation.as_mut().unwrap().return_ns = -1.0;
    assert_eq!(bad.validate().unwrap_err().field, "mitigation.return_ns");
    let mut bad = p;
    bad.levels.as_mut().unwrap().fresh_line_ns = Some(f64::NAN);
    assert_eq!(bad.validate().unwrap_err().field, "levels.fresh_line_ns");
}

#[test]
fn a_passed_tracepoint_record_is_never_free() {
    let mut p = icelake();
    p.tracepoint = Some(TracepointPrices {
        event_ns: 130.0,
        discard_ns: 70.0,
        passed_ns: Some(160.0),
        stack_ns: None,
        stack_frames: None,
    });
    p.validate().unwrap();
    for bad in [0.0, -1.0, f64::NAN, 2e6] {
        p.tracepoint.as_mut().unwrap().passed_ns = Some(bad);
        let e = p.validate().unwrap_err();
        assert_eq!(e.field, "tracepoint.passed_ns", "{bad}");
        assert!(e.to_string().contains("not in (0, 1e6]"), "{e}");
    }
    p.tracepoint.as_mut().unwrap().passed_ns = None;
    p.validate().unwrap();
    p.tracepoint.as_mut().unwrap().event_ns = -1.0;
    assert_eq!(p.validate().unwrap_err().field, "tracepoint.event_ns");
}

#[test]
fn a_stack_price_comes_with_its_frames_and_in_range() {
    let mut p = icelake();
    let with = |ns: Option<f64>, frames: Option<u32>| TracepointPrices {
        event_ns: 130.0,
        discard_ns: 70.0,
        passed_ns: None,
        stack_ns: ns,
        stack_frames: frames,
    };
    for ok in [(None, None), (Some(412.0), Some(5))] {
        p.tracepoint = Some(with(ok.0, ok.1));
        p.validate().unwrap();
    }
    for (ns, frames, field, says) in [
        (Some(412.0), None, "tracepoint.stack_frames", "missing"),
        (None, Some(5), "tracepoint.stack_ns", "missing"),
        (Some(0.0), Some(5), "tracepoint.stack_ns", "not in (0, 1e6]"),
        (Some(f64::NAN), Some(5), "tracepoint.stack_ns", "not in (0, 1e6]"),
        (Some(412.0), Some(0), "tracepoint.stack_frames", "not in [1, 1000]"),
    ] {
        p.tracepoint = Some(with(ns, frames));
        let e = p.validate().unwrap_err();
        assert_eq!(e.field, field, "{ns:?} {frames:?}");
        assert!(e.to_string().contains(says), "{e}");
    }
}
