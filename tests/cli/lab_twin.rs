//! `fsmeta validate --lab`: a lab run's twin is priced for the CPU the
//! lab ran on when a shipped profile measured it (issue 30), and says so;
//! on another CPU it runs as its file says, with a warning.

use crate::{fsmeta, temp_dir as fresh_dir};
use std::path::Path;

/// A lab folder as `fsmeta lab xfs-alloc -p extents=100000` writes it,
/// run on the CPU `model`, with one run of `le`.
fn lab_run(root: &Path, model: &str, spectre_v2: Option<&str>) {
    let dir = root.join("lab-xfs-alloc-100000");
    std::fs::create_dir_all(&dir).unwrap();
    let mitigations = spectre_v2.map_or(String::new(), |s| {
        format!("mitigations: spectre_v2: {s}; retbleed: Not affected; spec_rstack_overflow: Not affected\n")
    });
    std::fs::write(
        dir.join("lab.txt"),
        format!("experiment: xfs-alloc\ntwin: scenarios/lab/xfs-alloc-100000.toml\ncpu: Some CPU (2 CPUs online)\ncpu model: {model}\n{mitigations}parameters: busy=256 calls=19 extents=100000\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("summary.csv"),
        "scenario,variant,metric,mean,stddev,ci95_lo,ci95_hi,n,diff_vs_first,diff_ci95_lo,diff_ci95_hi,ratio_vs_first\nlab-xfs-alloc-100000,le,alloc_us_p50,6.0,0,,,1,,,,\n",
    )
    .unwrap();
}

/// The twin's `le` `alloc_us_p50` in `validate --lab`'s table, and stderr.
fn twin_le(model: &str) -> (String, String) {
    twin_le_with(model, &[])
}

/// [`twin_le`] with more arguments (`--set PATH=VALUE`).
fn twin_le_with(model: &str, more: &[&str]) -> (String, String) {
    twin_le_under(model, None, more)
}

/// [`twin_le_with`] of a lab run on a host under the `spectre_v2`
/// mitigation (`lab.txt`'s `mitigations:` line; none without it).
fn twin_le_under(model: &str, spectre_v2: Option<&str>, more: &[&str]) -> (String, String) {
    let state: String = spectre_v2.map_or("none".into(), |s| s.chars().filter(char::is_ascii_alphanumeric).collect());
    let tag = format!("{}-{state}-{}", model.replace(' ', "-"), more.len());
    let root = fresh_dir(&format!("lab-twin-{tag}"));
    lab_run(&root, model, spectre_v2);
    let doc = root.join("lab.md");
    let mut args = vec!["validate", "--lab", root.to_str().unwrap(), "--doc", doc.to_str().unwrap()];
    args.extend_from_slice(more);
    let out = fsmeta(&args);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let row = stdout
        .lines()
        .find(|l| l.starts_with("le ") && l.contains("alloc_us_p50"))
        .unwrap_or_else(|| panic!("no le row: {stdout}"));
    // The twin's value is the column before the first difference (`+x%`).
    let cols: Vec<&str> = row.split_whitespace().collect();
    let diff = cols
        .iter()
        .position(|c| c.ends_with('%'))
        .unwrap_or_else(|| panic!("no diff: {row}"));
    let twin = cols[diff - 1].to_string();
    (twin, stderr.into_owned())
}

#[test]
fn the_twin_is_priced_for_the_lab_host_when_its_profile_is_shipped() {
    // The Intel host under retpolines: its profile and knob (fitted on
    // this very figure).
    let retpolines = "Mitigation: Retpolines; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not affected; BHI: Retpoline";
    let (intel, err) = twin_le_under("family 6 model 207", Some(retpolines), &[]);
    assert!(
        err.contains("priced for this host (family 6 model 207)") && err.contains("lab-xeon-6-207.toml"),
        "{err}"
    );
    assert!(!err.contains("warning"), "{err}");
    // The same CPU model under enhanced IBRS: the profile measured there,
    // another time.
    let eibrs = "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; PBRSB-eIBRS: SW sequence; BHI: Vulnerable";
    let (intel_eibrs, err) = twin_le_under("family 6 model 207", Some(eibrs), &[]);
    assert!(err.contains("lab-xeon-6-207-eibrs.toml") && !err.contains("warning"), "{err}");
    assert_ne!(intel_eibrs, intel);
    // The twin's own profile (the family 25 host): another time.
    let (amd, err) = twin_le("family 25 model 17");
    assert!(err.contains("lab-host.toml") && !err.contains("warning"), "{err}");
    assert_ne!(intel, amd);
    // A CPU no profile measured: the file's pricing, and a warning.
    let (other, err) = twin_le("family 99 model 1");
    assert!(err.contains("warning") && err.contains("not predictions for this host"), "{err}");
    assert_eq!(other, amd);
    // --set machine.profile prices it for the host it names, over the
    // lab's own: the Intel run priced as the family 26 host's.
    let (fam26, _) = twin_le("family 26 model 2");
    let set = "machine.profile=../machines/lab-epyc-26-2.toml";
    let (forced, err) = twin_le_under("family 6 model 207", Some(retpolines), &["--set", set]);
    assert_eq!(forced, fam26);
    assert_ne!(forced, intel);
    assert!(err.contains("with --set machine.profile") && err.contains("warning"), "{err}");
}

#[test]
fn a_knob_is_fitted_only_on_the_host_its_profile_measured() {
    let dir = fresh_dir("fit-other-cpu");
    let text = std::fs::read_to_string(crate::root().join("scenarios/machines/lab-xeon-6-207.toml")).unwrap();
    let p = dir.join("other.toml");
    let other = text.replace("(family 6 model 207)", "(family 0 model 0)");
    assert_ne!(other, text);
    std::fs::write(&p, &other).unwrap();
    let out = fsmeta(&["fit", p.to_str().unwrap(), "--runs", "1", "--out", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("was measured on") && err.contains("family 0 model 0"), "{err}");
    // Nothing written: the profile as it was, no lab outputs.
    assert_eq!(std::fs::read_to_string(&p).unwrap(), other);
    assert!(!dir.join("lab-xfs-alloc-100000").exists());
}

#[test]
fn a_twin_priced_for_another_host_checks_its_counts_not_that_hosts_times() {
    let dir = fresh_dir("measured-on");
    let o = dir.to_str().unwrap();
    let twin = "scenarios/lab/xfs-alloc-100000.toml";
    // On its own profile: every check applies (the le time passes).
    let own = fsmeta(&["run", twin, "--out", o]);
    let text = String::from_utf8_lossy(&own.stdout);
    assert_eq!(own.status.code(), Some(0), "{text}");
    // (Only the checks measured on another host's profile are not
    // applicable: the family 23 model 49 and model 1 hosts', the Xeon 6
    // VM's under enhanced IBRS and the family 6 model 167 VM's, two each.)
    assert!(
        text.contains("[pass] alloc_us_p50 [le]") && text.contains("8 not checked"),
        "{text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate().filter(|(_, l)| l.contains("[n/a]")) {
        let other_host = |n: &&str| {
            [
                "lab-epyc-23-49.toml",
                "lab-epyc-23-1.toml",
                "lab-xeon-6-207-eibrs.toml",
                "lab-xeon-6-167.toml",
            ]
            .iter()
            .any(|h| n.contains(h))
        };
        assert!(lines.get(i + 1).is_some_and(other_host), "{l}\n{text}");
    }
    // On the Intel host's: its counts are checked, the AMD host's times
    // are not applicable (they failed before measured_on).
    let set = "machine.profile=../machines/lab-xeon-6-207.toml";
    let other = fsmeta(&["run", twin, "--out", o, "--set", set]);
    let text = String::from_utf8_lossy(&other.stdout);
    assert_eq!(other.status.code(), Some(0), "{text}");
    assert!(text.contains("[pass] buffer_reads [le]"), "{text}");
    assert!(
        text.contains("[n/a] alloc_us_p50 [le]") && text.contains("11 not checked"),
        "{text}"
    );
    assert!(!text.contains("FAIL"), "{text}");
    // A measured_on that names no profile is refused where it is written.
    let bad = crate::write(
        &dir,
        "bad.toml",
        &std::fs::read_to_string(crate::root().join(twin))
            .unwrap()
            .replacen(
                "measured_on = \"../machines/lab-host.toml\"",
                "measured_on = \"../machines/nohost.toml\"",
                1,
            )
            .replace("data/", &format!("{}/scenarios/lab/data/", crate::root().display()))
            .replace("../machines/", &format!("{}/scenarios/machines/", crate::root().display())),
    );
    let out = fsmeta(&["check", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("measured_on") && err.contains("not a machine profile"), "{err}");
}

/// A run that does not name its mitigation, on a CPU two profiles name:
/// the first by name prices it, and a warning says so.
#[test]
fn a_run_that_names_no_mitigation_is_warned_of_when_two_profiles_name_its_cpu() {
    let (_, err) = twin_le("family 6 model 207");
    assert!(
        err.contains("2 profiles in") && err.contains("names no Spectre v2 state") && err.contains("lab-xeon-6-207-eibrs.toml"),
        "{err}"
    );
    // One profile of the CPU: no word.
    let (_, err) = twin_le("family 26 model 2");
    assert!(!err.contains("warning"), "{err}");
}

/// The host's speed probes of each run (runs.csv) held to the twin's
/// profile by `validate --lab`: a run whose L1 probe is over 1.5x the
/// profile's hit_ns is named.
#[test]
fn validate_lab_names_runs_on_a_shared_core() {
    let eibrs = "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; PBRSB-eIBRS: SW sequence; BHI: Vulnerable";
    let warned = |l1: [f64; 3]| {
        let root = fresh_dir(&format!("lab-twin-speed-{}", l1[2]));
        lab_run(&root, "family 6 model 207", Some(eibrs));
        let mut runs = String::from("scenario,variant,replication,seed,alloc_us_p50,host.l1_load_ns,host.xadd_ns\n");
        for (i, x) in l1.iter().enumerate() {
            runs += &format!("lab-xfs-alloc-100000,le,{i},{i},6.0,{x},7.3\n");
        }
        std::fs::write(root.join("lab-xfs-alloc-100000").join("runs.csv"), runs).unwrap();
        let doc = root.join("lab.md");
        let out = fsmeta(&["validate", "--lab", root.to_str().unwrap(), "--doc", doc.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        stderr
    };
    let err = warned([1.5, 1.6, 4.9]);
    assert!(
        err.contains("warning") && err.contains("in 1 of 3 runs") && err.contains("4.90 ns"),
        "{err}"
    );
    let err = warned([1.5, 1.6, 1.55]);
    assert!(!err.contains("warning"), "{err}");
}

/// A `lab-NAME` entry that is not a folder (a copied link to `fsmeta
/// lab`'s versioned folder, dangling) is named on stderr, not skipped
/// without a word; the folders beside it are still read.
#[cfg(unix)]
#[test]
fn a_lab_entry_that_is_not_a_folder_is_named_not_skipped_quietly() {
    let root = fresh_dir("lab-twin-dangling");
    lab_run(&root, "family 6 model 207", None);
    std::os::unix::fs::symlink(".lab-xfs-alloc.v-1-0", root.join("lab-xfs-alloc")).unwrap();
    // A file named like a run is not one, and not warned of.
    std::fs::write(root.join("lab-notes.txt"), "notes").unwrap();
    let doc = root.join("lab.md");
    let out = fsmeta(&["validate", "--lab", root.to_str().unwrap(), "--doc", doc.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let warned = stderr
        .lines()
        .any(|l| l.contains("warning") && l.contains("lab-xfs-alloc ") && l.contains("not a folder"));
    assert!(warned, "{stderr}");
    assert!(!stderr.contains("lab-notes.txt"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("alloc_us_p50"));
}

/// A lab run `--sample-kernel` sampled is said to be slower when its twin
/// is priced beside it.
#[test]
fn validate_lab_says_a_run_was_sampled() {
    let root = fresh_dir("lab-twin-sampled");
    lab_run(&root, "family 6 model 207", None);
    let txt = root.join("lab-xfs-alloc-100000").join("lab.txt");
    let text = std::fs::read_to_string(&txt).unwrap() + "setup: sampled: perf record -e cpu-clock -c 50000 -a -g\n";
    std::fs::write(&txt, text).unwrap();
    let doc = root.join("lab.md");
    let out = fsmeta(&["validate", "--lab", root.to_str().unwrap(), "--doc", doc.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("was sampled (fsmeta lab --sample-kernel)"), "{stderr}");
}

/// `--sample-kernel` takes its period only as `--sample-kernel=US`: the
/// word after it is the experiment, not a period.
#[test]
fn sample_kernel_takes_its_period_only_after_an_equals_sign() {
    let out = fsmeta(&["lab", "--sample-kernel", "100", "btrfs-delayed"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unexpected argument 'btrfs-delayed'"), "{stderr}");
}

/// The btrfs twin prices the commits' flushes only on a profile with a
/// `[storage]` table (the family 23 model 49 host's has one, the lab
/// host's has none): the columns are there or not, and nothing else moves.
#[test]
fn the_btrfs_twin_prices_flushes_only_with_a_storage_table() {
    let root = fresh_dir("btrfs-storage");
    let runs = |out: &Path, more: &[&str]| {
        let mut args = vec![
            "run",
            "scenarios/lab/btrfs-delayed.toml",
            "--quick",
            "--silent",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(more);
        let o = fsmeta(&args);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(out.join("btrfs-delayed/runs.csv")).unwrap()
    };
    let plain = runs(&root.join("plain"), &[]);
    let priced = runs(&root.join("priced"), &["--set", "machine.profile=../machines/lab-epyc-23-49.toml"]);
    let head = |csv: &str| csv.lines().next().unwrap().split(',').map(str::to_string).collect::<Vec<_>>();
    let flush = |h: &[String]| h.iter().filter(|c| c.ends_with(".io_flush_us")).count();
    assert_eq!(flush(&head(&plain)), 0, "no table, no price");
    assert_eq!(flush(&head(&priced)), 4, "one per phase: unlink, sync, rm_fr, script");
    let walls = |h: &[String]| h.iter().filter(|c| c.ends_with(".wall_us")).count();
    assert_eq!(
        (walls(&head(&plain)), walls(&head(&priced))),
        (0, 4),
        "the walls need the loop device's prices"
    );
    let col = |csv: &str, name: &str| {
        let h = head(csv);
        let i = h.iter().position(|c| c == name).unwrap_or_else(|| panic!("no {name}"));
        csv.lines().nth(1).unwrap().split(',').nth(i).unwrap().parse::<f64>().unwrap()
    };
    let sync = col(&priced, "phase.sync.io_flush_us");
    assert!(sync > 0.0 && col(&priced, "phase.unlink.io_flush_us") == 0.0, "sync {sync}");
    assert_eq!(
        col(&plain, "phase.sync.tree_blocks_written"),
        col(&priced, "phase.sync.tree_blocks_written")
    );
}

/// An expectation measured on a host whose profile prices the loop device
/// may name the wall times only that profile reports: checked on it, not
/// applicable (and said to be not reported) on another, and a misspelt
/// name is refused with the closest of that profile's metrics.
#[test]
fn a_measured_on_expectation_may_name_what_only_that_hosts_profile_reports() {
    let root = fresh_dir("measured-on-metrics");
    let twin = "scenarios/lab/btrfs-delayed.toml";
    let run = |out: &str, more: &[&str]| {
        let mut args = vec!["run", twin, "--quick", "--out", out];
        args.extend_from_slice(more);
        let o = fsmeta(&args);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let own = run(root.join("own").to_str().unwrap(), &[]);
    assert!(own.contains("[n/a] phase.sync.wall_us [leaf-match]: not reported in ["), "{own}");
    let set = "machine.profile=../machines/lab-epyc-23-49.toml";
    let host = run(root.join("host").to_str().unwrap(), &["--set", set]);
    assert!(host.contains("[pass] phase.sync.wall_us [leaf-match]:"), "{host}");
    assert!(host.contains("[gap] phase.sync.io_flush_us [leaf-match]:"), "{host}");
    let bad = crate::write(
        &root,
        "bad.toml",
        &std::fs::read_to_string(crate::root().join(twin))
            .unwrap()
            .replacen("metric = \"phase.rm_fr.wall_us\"", "metric = \"phase.rm_fr.wal_us\"", 1)
            .replace("../machines/", &format!("{}/scenarios/machines/", crate::root().display())),
    );
    let out = fsmeta(&["check", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no metric `phase.rm_fr.wal_us`") && err.contains("phase.rm_fr.wall_us"),
        "{err}"
    );
}

/// `fsmeta fit PROFILE --implied DIR`: each live time's knob on the
/// twin's line in the knob, the profile left as it was; a profile without
/// a knob is refused.
#[test]
fn fit_implied_solves_each_live_time_for_the_knob_on_the_twins_line() {
    let root = fresh_dir("fit-implied");
    lab_run(&root, "family 23 model 49", None);
    let profile = "scenarios/machines/lab-epyc-23-49.toml";
    let before = std::fs::read_to_string(profile).unwrap();
    let out = root.join("out");
    let o = fsmeta(&["fit", profile, "--implied", root.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(profile).unwrap(), before, "the profile is not changed");
    // The profile's comment gives the twin there: 3.604340 + 1.305000 x
    // work_scale us, so a live 6.0 us asks for (6.0 - 3.60434) / 1.305.
    let row = text
        .lines()
        .find(|l| l.starts_with("xfs-alloc-100000") && l.contains("alloc_us_p50"))
        .unwrap_or_else(|| panic!("no le row: {text}"));
    let knob: f64 = row.split_whitespace().last().unwrap().parse().unwrap();
    assert!((knob - (6.0 - 3.60434) / 1.305).abs() < 0.01, "{row}");
    let csv = std::fs::read_to_string(out.join("implied-knob.csv")).unwrap();
    assert!(
        csv.starts_with("setup,variant,metric,live_median,twin,a,b,share,implied_knob\n"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 2, "one figure, no count: {csv}");
    // A profile without a knob has no line to solve on.
    let bare = root.join("bare.toml");
    let cut = before.find("\n[knob]").unwrap();
    std::fs::write(&bare, &before[..cut]).unwrap();
    let o = fsmeta(&["fit", bare.to_str().unwrap(), "--implied", root.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("has no [knob]"), "{err}");
}

/// `fsmeta fit PROFILE --from DIR`: the knob refitted on earlier runs of
/// the figure, without the kernel; runs of another figure or CPU refused.
#[test]
fn fit_from_earlier_runs_solves_the_knob_on_them_and_refuses_others() {
    let root = fresh_dir("fit-from");
    lab_run(&root, "family 23 model 49", None);
    let runs = "scenario,variant,replication,seed,alloc_us_p50\n";
    std::fs::write(
        root.join("lab-xfs-alloc-100000/lab.txt"),
        "experiment: xfs-alloc\ntwin: scenarios/lab/xfs-alloc-100000.toml\ncpu: Some CPU (2 CPUs online)\ncpu model: family 23 model 49\nparameters: busy=256 calls=19 extents=100000 quiet=0\n",
    )
    .unwrap();
    let rows = "lab-xfs-alloc-100000,le,0,0,7.0\nlab-xfs-alloc-100000,le,1,1,6.2\nlab-xfs-alloc-100000,le,2,2,6.0\n";
    std::fs::write(root.join("lab-xfs-alloc-100000/runs.csv"), format!("{runs}{rows}")).unwrap();
    let text = std::fs::read_to_string("scenarios/machines/lab-epyc-23-49.toml").unwrap();
    let p = root.join("p.toml");
    std::fs::write(&p, &text).unwrap();
    let (pp, r, o) = (p.to_str().unwrap(), root.to_str().unwrap(), root.join("out"));
    let out = fsmeta(&["fit", pp, "--from", r, "--out", o.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // The twin there is 3.604340 + 1.305000 x work_scale us (the
    // profile's comment); the median of the three runs is 6.2.
    let fitted = fsmeta::machine::load_profile(&p).unwrap();
    let knob = fitted.knob.as_ref().expect("[knob] written").work_scale;
    assert!((knob - (6.2 - 3.60434) / 1.305).abs() < 0.002, "{knob}");
    assert!(!o.exists(), "no lab run made");
    // Runs of another CPU, size or call count, a lab.txt without the CPU,
    // a run without a time, a folder without runs: each refused, saying
    // why; the profile left as it is.
    let now = std::fs::read_to_string(&p).unwrap();
    let lab = root.join("lab-xfs-alloc-100000/lab.txt");
    let runs_csv = root.join("lab-xfs-alloc-100000/runs.csv");
    let (txt, good_runs) = (std::fs::read_to_string(&lab).unwrap(), std::fs::read_to_string(&runs_csv).unwrap());
    let cases: [(String, String, &str); 6] = [
        (
            txt.replace("family 23 model 49", "family 6 model 207"),
            good_runs.clone(),
            "ran on `family 6 model 207`",
        ),
        (
            txt.replace("extents=100000", "extents=10000"),
            good_runs.clone(),
            "the figure is xfs-alloc with",
        ),
        (txt.replace("calls=19", "calls=50"), good_runs.clone(), "calls=50"),
        (
            txt.replace("cpu model: family 23 model 49\n", ""),
            good_runs.clone(),
            "has no `cpu model:` line",
        ),
        (
            txt.clone(),
            good_runs.replace("6.2\n", "NaN\n"),
            "of run 2 is NaN: expected a positive time in us",
        ),
        (txt.clone(), String::new(), "runs.csv"),
    ];
    for (lab_txt, runs, want) in cases {
        std::fs::write(&lab, &lab_txt).unwrap();
        if runs.is_empty() {
            std::fs::remove_file(&runs_csv).unwrap();
        } else {
            std::fs::write(&runs_csv, &runs).unwrap();
        }
        let out = fsmeta(&["fit", pp, "--from", r]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{want}: {err}");
        assert!(err.contains(want), "{want}: {err}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), now);
    }
    // Runs below the twin's part without the knob (3.604 us): no knob
    // gives them back; refused, saying what to do, the profile as it is.
    std::fs::write(&lab, &txt).unwrap();
    let fast = "lab-xfs-alloc-100000,le,0,0,3.1\nlab-xfs-alloc-100000,le,1,1,3.3\n";
    std::fs::write(&runs_csv, format!("{runs}{fast}")).unwrap();
    let out = fsmeta(&["fit", pp, "--from", r]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for want in [
        "the live figure 3.200 us gives work_scale -0.310, outside (0, 1000]",
        "the twin's part without the knob is 3.604 us on this profile, above the figure, so no knob gives it back",
        "The live median of 2 run(s) is a noisy figure: fit on a folder of more runs (9 or more).",
        "On a VM whose speed changes, calibrate and fit in one quiet spell",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    assert_eq!(std::fs::read_to_string(&p).unwrap(), now);
    // Runs far above it (a knob over 1000): refused, asking why.
    let slow = "lab-xfs-alloc-100000,le,0,0,5000\nlab-xfs-alloc-100000,le,1,1,5000\n";
    std::fs::write(&runs_csv, format!("{runs}{slow}")).unwrap();
    let out = fsmeta(&["fit", pp, "--from", r]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("gives work_scale 3828.656, outside (0, 1000]")
            && err.contains("the figure is far above it. Was the host busy, or is the profile another machine's?"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), now);
}

/// The twin's `le-quiet` (the lab's second pass with only the window's
/// bounds traced) is `le` less its buffer reads' events: 4 btree blocks
/// and the AGF and AGFL, each at the profile's kept-event price, give or
/// take the one line the first pass meets cold.
#[test]
fn the_quiet_twin_pass_is_le_less_its_buffer_reads_events() {
    let root = fresh_dir("le-quiet");
    let o = fsmeta(&[
        "run",
        "scenarios/lab/xfs-alloc-100000.toml",
        "--silent",
        "--out",
        root.to_str().unwrap(),
        "--set",
        "machine.profile=../machines/lab-epyc-23-49.toml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = std::fs::read_to_string(root.join("xfs-alloc-100000/summary.csv")).unwrap();
    let get = |v: &str, m: &str| -> f64 {
        let l = summary
            .lines()
            .find(|l| l.split(',').nth(1) == Some(v) && l.split(',').nth(2) == Some(m))
            .unwrap_or_else(|| panic!("no {v} {m}"));
        l.split(',').nth(3).unwrap().parse().unwrap()
    };
    assert_eq!(get("le-quiet", "buffer_reads"), 4.0);
    let events_us = 6.0 * 123.49 / 1000.0; // the profile's tracepoint.event_ns
    let line_us = 132.36 / 1000.0; // its memory_ns
    let d = get("le", "alloc_us_p50") - get("le-quiet", "alloc_us_p50");
    assert!(d > events_us - 0.01 && d < events_us + line_us + 0.01, "le - le-quiet {d} us");
}

/// Every measured host's checks (`[[expect]]` with `measured_on`) hold on
/// its profile at full scale: each timed twin run with `--set
/// machine.profile` exits 0 with no check failed, and exactly the checks
/// measured on other hosts are not checked (so every one of this host's
/// is). A change to the model that breaks another host's prediction
/// fails here, not only in that host's next lab session. About 3 s for
/// 40 runs.
#[test]
fn every_measured_hosts_checks_hold_on_its_profile() {
    let machines = crate::root().join("scenarios/machines");
    let mut hosts: Vec<String> = std::fs::read_dir(&machines)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("lab-") && n.ends_with(".toml"))
        .collect();
    hosts.sort();
    assert!(hosts.len() >= 8, "{hosts:?}");
    // Every lab twin with a host's check in it.
    let mut twins: Vec<String> = std::fs::read_dir(crate::root().join("scenarios/lab"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("\nmeasured_on = \""))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    twins.sort();
    assert!(twins.len() >= 5, "{twins:?}");
    let dir = fresh_dir("every-host");
    let mut own_checks = 0;
    for host in &hosts {
        for t in &twins {
            let scenario = format!("scenarios/lab/{t}.toml");
            let file = std::fs::read_to_string(crate::root().join(&scenario)).unwrap();
            let all = file.matches("\nmeasured_on = \"").count();
            let own = file.matches(&format!("\nmeasured_on = \"../machines/{host}\"")).count();
            own_checks += own;
            let set = format!("machine.profile=../machines/{host}");
            let out_dir = dir.join(host.trim_end_matches(".toml"));
            let out = fsmeta(&["run", &scenario, "--out", out_dir.to_str().unwrap(), "--set", &set]);
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(0), "{host} {t}\n{text}");
            let line = text
                .lines()
                .find(|l| l.contains(" passed, ") && l.contains(" failed"))
                .unwrap_or_else(|| panic!("{host} {t}: no check summary\n{text}"));
            assert!(line.contains(" 0 failed"), "{host} {t}: {line}");
            let other = all - own;
            let said = if other == 0 {
                !line.contains("not checked")
            } else {
                line.contains(&format!(" {other} not checked"))
            };
            assert!(said, "{host} {t}: {all} checks measured on a host, {own} on this one: {line}");
        }
    }
    // The shipped hosts' own checks, all run somewhere above.
    assert!(own_checks >= 100, "{own_checks}");
}
