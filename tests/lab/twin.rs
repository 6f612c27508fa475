//! A lab run's twin priced for the lab's host: the shipped profile that
//! `fsmeta calibrate` measured on the run's CPU, with its fitted knob.

use fsmeta::lab::profiles::{Choice, host_profile, mechanism, spectre_v2};
use fsmeta::lab::twin::takes_host_knob;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

#[test]
fn each_measured_cpu_finds_its_shipped_profile_and_others_none() {
    let machines = root().join("scenarios/machines");
    for (cpu, file) in [
        ("family 25 model 17", "lab-host.toml"),
        // Two profiles of this CPU model (retpolines, enhanced IBRS): with
        // no mitigation to go by, the first by name.
        ("family 6 model 207", "lab-xeon-6-207-eibrs.toml"),
        ("family 26 model 2", "lab-epyc-26-2.toml"),
        // Session 53's host.
        ("family 25 model 1", "lab-epyc-25-1.toml"),
        // Session 73's host (retpolines).
        ("family 6 model 167", "lab-xeon-6-167.toml"),
    ] {
        let h = host_profile(&machines, cpu, None).unwrap_or_else(|| panic!("{cpu}: no profile"));
        assert_eq!(name(&h.path), file, "{cpu}");
        assert!(h.profile.knob.is_some_and(|k| k.work_scale > 0.0), "{cpu}");
    }
    // Another CPU, and a prefix of a measured one, find none.
    assert!(host_profile(&machines, "family 99 model 1", None).is_none());
    assert!(host_profile(&machines, "family 6 model 20", None).is_none());
}

/// One CPU model under two mitigations (session 66: the Xeon 6 VM with
/// enhanced IBRS, sessions 42-50's with retpolines): the lab's
/// `mitigations:` line picks the profile measured under its own state, or
/// under its mechanism; with neither, the first by name, and says so.
#[test]
fn a_cpu_model_under_two_mitigations_finds_the_profile_measured_under_its_own() {
    let machines = root().join("scenarios/machines");
    let retpolines = "spectre_v2: Mitigation: Retpolines; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not affected; BHI: Retpoline; retbleed: Vulnerable; spec_rstack_overflow: Not affected";
    let eibrs = "spectre_v2: Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; PBRSB-eIBRS: SW sequence; BHI: Vulnerable; retbleed: Not affected; spec_rstack_overflow: Not affected";
    assert_eq!(
        spectre_v2(eibrs),
        Some("Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; PBRSB-eIBRS: SW sequence; BHI: Vulnerable")
    );
    assert_eq!(spectre_v2("spectre_v2: Vulnerable"), Some("Vulnerable"));
    assert_eq!(spectre_v2("retbleed: Not affected"), None);
    assert_eq!(spectre_v2("spectre_v2: ; retbleed: Not affected"), None);
    use fsmeta::calibrate::mitigation::Sequence;
    assert_eq!(mechanism("Mitigation: Retpolines; STIBP: disabled"), Sequence::Retpoline);
    assert_eq!(mechanism("Vulnerable"), Sequence::Plain);
    // One mechanism in two kernels' words.
    assert_eq!(
        mechanism("Mitigation: Enhanced IBRS"),
        mechanism("Mitigation: Enhanced / Automatic IBRS; IBPB: conditional")
    );
    // The retpolines VM's state with another BHI field: its mechanism.
    let retpolines_bhi = "spectre_v2: Mitigation: Retpolines; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not affected; BHI: Vulnerable; retbleed: Vulnerable";
    for (line, file, choice) in [
        (retpolines, "lab-xeon-6-207.toml", Choice::SameState),
        (eibrs, "lab-xeon-6-207-eibrs.toml", Choice::SameState),
        (retpolines_bhi, "lab-xeon-6-207.toml", Choice::SameMechanism),
        // No thunk either way: a plain call, as under enhanced IBRS.
        ("spectre_v2: Vulnerable", "lab-xeon-6-207-eibrs.toml", Choice::SameMechanism),
        // LFENCE: a mechanism no profile was measured under; the first.
        (
            "spectre_v2: Mitigation: LFENCE",
            "lab-xeon-6-207-eibrs.toml",
            Choice::FirstOfSeveral(2),
        ),
    ] {
        let h = host_profile(&machines, "family 6 model 207", spectre_v2(line)).expect("a profile");
        assert_eq!((name(&h.path).as_str(), h.choice), (file, choice), "{line}");
    }
    let only = host_profile(&machines, "family 25 model 1", spectre_v2(eibrs)).expect("a profile");
    assert_eq!(only.choice, Choice::Only);
}

#[test]
fn a_profile_without_its_knob_is_not_a_hosts_profile() {
    let dir = std::env::temp_dir().join(format!("fsmeta-host-profile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(root().join("scenarios/machines/lab-xeon-6-207.toml")).unwrap();
    let cut = text.find("\n[knob]").expect("the shipped profile has its knob");
    std::fs::write(dir.join("a.toml"), &text[..cut]).unwrap();
    std::fs::write(dir.join("b.toml"), "not a profile").unwrap();
    assert!(host_profile(&dir, "family 6 model 207", None).is_none());
    std::fs::write(dir.join("c.toml"), &text).unwrap();
    let h = host_profile(&dir, "family 6 model 207", None).expect("c has the knob");
    assert_eq!(name(&h.path), "c.toml");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_timed_twins_take_the_hosts_knob_and_the_counting_ones_do_not() {
    let read = |n: &str| -> toml::Table {
        toml::from_str(&std::fs::read_to_string(root().join(format!("scenarios/lab/{n}.toml"))).unwrap()).unwrap()
    };
    for n in [
        "xfs-alloc",
        "xfs-alloc-100000",
        "xfs-alloc-1000000",
        "btrfs-delayed",
        "xfs-create-scaling",
    ] {
        assert!(takes_host_knob(&read(n)), "{n}");
    }
    for n in ["xfs-handles", "btrfs-layout"] {
        assert!(!takes_host_knob(&read(n)), "{n}");
    }
    let nested: toml::Table = toml::from_str("[a.b]\nwork_scale = \"host\"\n").unwrap();
    assert!(takes_host_knob(&nested));
    let number: toml::Table = toml::from_str("[a]\nwork_scale = 2.0\n").unwrap();
    assert!(!takes_host_knob(&number));
}

#[test]
fn a_set_of_runs_at_two_speeds_is_split_at_its_widest_gap() {
    use fsmeta::lab::twin::{SPEED_GAP, speed_groups};
    // Session 53's first `fsmeta fit` set of `le` at 10^5 on the AMD
    // family 25 model 1 VM: one fast run, eight slow; the median is slow.
    let first = [15.08, 15.689, 14.138, 15.009, 15.219, 14.663, 13.426, 14.48, 11.273];
    let g = speed_groups(&first).expect("two speeds");
    assert_eq!(g.fast, vec![11.273]);
    assert_eq!(g.slow.len(), 8);
    assert_eq!((g.slow[0], g.slow[7]), (13.426, 15.689));
    assert!((g.gap - (13.426 / 11.273 - 1.0)).abs() < 1e-12, "{}", g.gap);
    assert_eq!(g.side(14.663), "the slower group");
    assert_eq!(g.side(11.273), "the faster group");
    assert_eq!(g.side(12.0), "the gap between the groups");
    // The 10^6 set: three fast, two slow (13.749 -> 18.587).
    let g = speed_groups(&[13.679, 13.749, 18.587, 20.055, 13.74]).expect("two speeds");
    assert_eq!((g.fast.len(), g.slow.len()), (3, 2));
    // Two gaps past the threshold (20% and 50%): the split is at the
    // widest, not the first.
    let g = speed_groups(&[10.0, 12.0, 18.0]).expect("two speeds");
    assert_eq!((g.fast, g.slow), (vec![10.0, 12.0], vec![18.0]));
    // One speed: neighbours a few per cent apart, however wide the range.
    let one: Vec<f64> = (0..12).map(|i| 10.0 * 1.05f64.powi(i)).collect();
    assert_eq!(speed_groups(&one), None);
    // Exactly at the threshold (11.5 / 10 - 1 rounds below 0.15).
    assert!(speed_groups(&[10.0, 11.5]).is_some());
    // Just under and just over it.
    assert_eq!(speed_groups(&[10.0, 10.0 * (1.0 + SPEED_GAP) - 1e-9]), None);
    assert!(speed_groups(&[10.0, 10.0 * (1.0 + SPEED_GAP) + 1e-9]).is_some());
    // Too few runs, or none usable.
    assert_eq!(speed_groups(&[10.0]), None);
    assert_eq!(speed_groups(&[f64::NAN, 10.0, 0.0, -3.0]), None);
}

/// The twin of xfs-alloc models the quiet pass (its `le-quiet` variants)
/// and a run without busy passes, not another busy count or call count;
/// the btrfs twins model their defaults only; the size that names the
/// twin is never "off".
#[test]
fn off_twin_names_only_what_the_twin_does_not_model() {
    use fsmeta::lab::{find, off_twin, resolve};
    let off = |exp: &str, ps: &[(&str, &str)]| {
        let e = find(exp).expect("experiment");
        let given = ps.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        off_twin(e, &resolve(e, &given).expect("parameters"))
    };
    assert!(off("xfs-alloc", &[("quiet", "1"), ("busy", "0")]).is_empty());
    assert!(off("xfs-alloc", &[("extents", "100000")]).is_empty());
    assert!(off("xfs-alloc", &[("busy", "0")]).is_empty());
    assert_eq!(off("xfs-alloc", &[("busy", "64")]), ["busy=64"]);
    assert_eq!(off("xfs-alloc", &[("calls", "7"), ("busy", "0")]), ["calls=7"]);
    assert_eq!(off("btrfs-delayed", &[("nodesize", "4096")]), ["nodesize=4096"]);
}
