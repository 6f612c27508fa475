//! `fsmeta fit` on the live kernel: a profile `fsmeta calibrate` made of
//! this host gets its one knob, and the twin priced on that profile gives
//! back the live figure the knob was fitted on.

use super::{mean, out_dir, require_lab, run_ok};

#[test]
#[ignore = "needs root, loop devices, tracefs, xfsprogs, btrfs-progs: run by .ci/run"]
fn fit_writes_the_knob_that_gives_back_the_live_figure() {
    require_lab();
    let out = out_dir("fit");
    let o = out.to_str().expect("utf-8");
    let profile = out.join("this-host.toml");
    let p = profile.to_str().expect("utf-8");
    run_ok(&["calibrate", "--out", p, "--repeat", "3"]);
    let made = std::fs::read_to_string(&profile).expect("the profile");
    assert!(!made.contains("[knob]"), "calibrate writes no knob");
    let fit = run_ok(&["fit", p, "--runs", "1", "--out", o]);
    let said = String::from_utf8_lossy(&fit.stdout);
    let knob = fsmeta::machine::load_profile(&profile)
        .expect("the fitted profile loads")
        .knob
        .expect("fit wrote [knob]");
    assert!(knob.work_scale > 0.0 && knob.work_scale <= 1000.0, "{}", knob.work_scale);
    assert!(said.contains(&format!("work_scale = {}", knob.work_scale)), "{said}");
    assert!(knob.fitted_on.contains("alloc_us_p50"), "{}", knob.fitted_on);
    // The twin on the fitted profile gives back the live figure (the knob
    // is written to 3 decimals: well within 0.1% of a call of microseconds).
    let live = mean(&out.join("lab-xfs-alloc-100000"), "le", "alloc_us_p50");
    let set = format!("machine.profile={p}");
    run_ok(&["run", "scenarios/lab/xfs-alloc-100000.toml", "--out", o, "--silent", "--set", &set]);
    let twin = mean(&out.join("xfs-alloc-100000"), "le", "alloc_us_p50");
    assert!((twin - live).abs() <= 1e-3 * live, "twin {twin} us, live {live} us");
}
