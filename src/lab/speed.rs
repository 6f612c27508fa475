//! Whether a lab run's host ran at the speed its twin's profile was
//! measured at: the probes timed before every run ([`super::probe`])
//! against the profile's microbenchmarks of the same kind.
//!
//! A VM's core is not always its own. On the family 23 model 1 host
//! (session 65) another thread shared the physical core for a morning:
//! `fsmeta calibrate` found the L1d's chase at 24 KiB 2.4x its `hit_ns`,
//! the microbenchmarks moved 6-13%, and the kernel's paths ran 1.35-1.6x
//! slower. Calibrate warns of such a core when it measures a profile;
//! this says the same of the lab runs a twin is compared with, so a
//! prediction is not judged on a busy core's times (docs/lab-hosts.md,
//! sessions 64-66).

use super::probe::{L1_KEY, XADD_KEY};
use super::twin::{Outputs, lab_field, twin_profile};
use crate::calibrate::derive::SHARED_L1_RISE;
use crate::report::stats::median;

/// How far the runs' median `lock xadd` may be from the profile's
/// `atomic_ns`, either way, as a fraction of it, before
/// [`speed_mismatch`] warns: 15% (three calibrate runs on a quiet core
/// agree within 9%: 6.79, 7.35 and 7.34 ns on the Xeon 6 VM of session
/// 66; the busy morning of session 64 was +18%).
pub const XADD_TOLERANCE: f64 = 0.15;

/// Every run's value of the probe `key` in the lab run `live` (the probes
/// go into every variant of a run: the variant with the most values).
/// Values that are not finite and positive are left out.
fn probe_values(live: &Outputs, key: &str) -> Option<Vec<f64>> {
    live.values
        .iter()
        .filter(|((_, m), _)| m == key)
        .map(|(_, v)| v.iter().copied().filter(|x| x.is_finite() && *x > 0.0).collect::<Vec<f64>>())
        .max_by_key(Vec::len)
        .filter(|v| !v.is_empty())
}

/// What to say when the lab run `live` ran on a core that was not as its
/// twin's profile measured it: some runs' L1 probe more than
/// `SHARED_L1_RISE` times the profile's `hit_ns` (another thread shared
/// the core), or the runs' median `lock xadd` more than
/// [`XADD_TOLERANCE`] from its `atomic_ns`. `None` when neither, when
/// the run has no probes (an older run), when its `lab.txt` names no CPU
/// model, or when the twin names no profile or one of another CPU
/// ([`super::twin::host_mismatch`] says so: another CPU's
/// microbenchmarks say nothing of this core's state). A profile figure
/// that is not positive is not held to.
pub fn speed_mismatch(live: &Outputs, twin: &Outputs) -> Option<String> {
    let (path, p) = twin_profile(live, twin)?;
    let family_model = lab_field(live.lab_txt.as_deref()?, "cpu model:")?;
    if !p.measured_on_cpu(family_model) {
        return None;
    }
    let mut why = Vec::new();
    if let Some(l1) = probe_values(live, L1_KEY).filter(|_| p.hit_ns > 0.0) {
        let bound = SHARED_L1_RISE * p.hit_ns;
        let slow = l1.iter().filter(|&&x| x > bound).count();
        if slow > 0 {
            let worst = l1.iter().copied().fold(f64::MIN, f64::max);
            why.push(format!(
                "in {slow} of {} runs a load within the L1d took up to {worst:.2} ns ({L1_KEY}), over {SHARED_L1_RISE}x the profile's hit_ns {:.2}: another thread shared the core, as when fsmeta calibrate warns of the L1d; on such a core the kernel's paths run slower than the microbenchmarks say (docs/lab-hosts.md, session 65), so those runs' times do not test the twin's",
                l1.len(),
                p.hit_ns
            ));
        }
    }
    if let Some(xadd) = probe_values(live, XADD_KEY).filter(|_| p.atomic_ns > 0.0) {
        let m = median(&xadd);
        let ratio = m / p.atomic_ns;
        if (ratio - 1.0).abs() > XADD_TOLERANCE {
            why.push(format!(
                "the runs' lock xadd took {m:.2} ns (median of {}, {XADD_KEY}) against the profile's atomic_ns {:.2} ({:+.0}%): the host ran at another speed than when its profile was measured, and the twin's times are for that speed",
                xadd.len(),
                p.atomic_ns,
                (ratio - 1.0) * 100.0
            ));
        }
    }
    (!why.is_empty()).then(|| format!("{} ({}): {}", why.join("; "), path.display(), RECALIBRATE))
}

/// The remedy every warning of [`speed_mismatch`] ends with: a quiet
/// host, or this state measured and its knob fitted in it, which session
/// 69 did on a busy Xeon 6 VM (20 of 28 predictions within their bounds,
/// against 1 on the profile of the quiet state; docs/lab-hosts.md).
pub const RECALIBRATE: &str = "run the lab again on a quiet host, or price this state while it holds: `fsmeta calibrate --out P.toml`, `fsmeta fit P.toml` (its knob fitted in this state), then compare these runs with `fsmeta validate --lab DIR --set machine.profile=P.toml`";
