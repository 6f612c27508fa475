//! A lab run's twin, priced for the host the lab ran on when a shipped
//! profile measured that CPU and has its knob fitted: one step shared by
//! `fsmeta lab` and `fsmeta validate --lab`.

use super::{CliError, Limits};
use fsmeta::Study;
use fsmeta::lab::profiles;
use fsmeta::lab::twin::{self, Outputs};
use std::path::Path;

/// A twin's outputs and which host its times are for.
pub(super) struct Twin {
    /// The twin's outputs, read back.
    pub outputs: Outputs,
    /// One line on the pricing: this host's profile and knob, or the
    /// scenario's own profile.
    pub pricing: String,
    /// Why the twin's times are not predictions for the lab's host, when
    /// they are not (a warning).
    pub mismatch: Option<String>,
    /// When several profiles name the lab's CPU and the first by name was
    /// taken ([`profiles::Choice::FirstOfSeveral`], a warning).
    pub choice: Option<String>,
    /// When the lab measured another line transfer between its CPUs than
    /// the twin's profile prices (a warning).
    pub transfer: Option<String>,
    /// When the lab's host ran at another speed than its profile's (a
    /// shared core, another clock: [`fsmeta::lab::speed::speed_mismatch`],
    /// a warning).
    pub speed: Option<String>,
}

impl Twin {
    /// Every warning about the twin's pricing for the lab's host.
    pub fn warnings(&self) -> impl Iterator<Item = &String> {
        self.mismatch.iter().chain(&self.choice).chain(&self.transfer).chain(&self.speed)
    }
}

/// Runs the twin `scenario` of the lab run `live` into `out`. A twin
/// that takes the host's knob (`work_scale = "host"`) is priced on the
/// profile in `scenarios/machines/` (beside the twin's folder) that
/// `fsmeta calibrate` measured on the lab's CPU, when one has its knob
/// fitted: `--set machine.profile=../machines/FILE`. Otherwise the twin
/// runs as its file says, and `mismatch` says when that is another CPU.
///
/// `sets` (`--set PATH=VALUE`) apply over the file; one that sets
/// `machine.profile` replaces the host's profile.
pub(super) fn run_twin(
    live: &Outputs,
    scenario: &Path,
    out: &Path,
    sets: &[(String, toml::Value)],
    jobs: usize,
    limits: Limits,
) -> Result<Twin, CliError> {
    let mut opts = limits.options();
    opts.sets = sets.to_vec();
    let own_profile = sets.iter().any(|(p, _)| p == "machine" || p == "machine.profile");
    let mut pricing = if sets.is_empty() {
        format!("the twin as {} prices it", scenario.display())
    } else {
        let given: Vec<String> = sets.iter().map(|(p, v)| format!("{p}={v}")).collect();
        format!("the twin as {} prices it with --set {}", scenario.display(), given.join(" "))
    };
    let mut choice = None;
    if !own_profile && let Some(h) = host_pricing(live, scenario) {
        opts.sets.push(h.set);
        pricing = h.pricing;
        choice = h.warning;
    }
    let study = Study::load(scenario, &opts)?;
    let results = study.run(jobs, &|| {})?;
    let outcome = study.write(&results, out)?;
    let outputs = Outputs::read(&outcome.dir)?;
    let mismatch = twin::host_mismatch(live, &outputs);
    let transfer = twin::transfer_mismatch(live, &outputs);
    let speed = fsmeta::lab::speed::speed_mismatch(live, &outputs);
    Ok(Twin {
        outputs,
        pricing,
        mismatch,
        choice,
        transfer,
        speed,
    })
}

/// How a twin that takes the host's knob is priced for the lab's host.
struct HostPricing {
    /// `machine.profile` set to the host's profile.
    set: (String, toml::Value),
    /// The line on the pricing.
    pricing: String,
    /// A warning when several profiles name the CPU and none was chosen by
    /// the run's mitigation.
    warning: Option<String>,
}

/// The pricing of `scenario` (a twin taking `work_scale = "host"`) for the
/// lab run `live`'s host: the profile in `scenarios/machines/` (beside the
/// twin's folder) that `fsmeta calibrate` measured on the run's CPU, with
/// its knob fitted ([`profiles::host_profile`]); `None` when the twin does not
/// take the host's knob, the run names no CPU or no profile fits.
fn host_pricing(live: &Outputs, scenario: &Path) -> Option<HostPricing> {
    let doc: toml::Table = toml::from_str(&std::fs::read_to_string(scenario).ok()?).ok()?;
    if !twin::takes_host_knob(&doc) {
        return None;
    }
    let lab = live.lab_txt.as_deref()?;
    let fm = twin::lab_field(lab, "cpu model:")?;
    // scenarios/lab/X.toml -> scenarios/machines/, the value's `../machines`.
    let lab_dir = scenario.parent().unwrap_or(Path::new(""));
    let machines = match lab_dir.parent() {
        Some(up) if !lab_dir.as_os_str().is_empty() => up.join("machines"),
        _ => lab_dir.join("../machines"),
    };
    let state = twin::lab_field(lab, "mitigations:").and_then(profiles::spectre_v2);
    let h = profiles::host_profile(&machines, fm, state)?;
    let (file, knob) = (h.path.file_name().and_then(|f| f.to_str())?, h.profile.knob.as_ref()?);
    let pricing = format!(
        "the twin priced for this host ({fm}): {} (fsmeta calibrate), its knob work_scale = {} fitted on {}",
        h.path.display(),
        knob.work_scale,
        knob.fitted_on
    );
    let warning = match h.choice {
        profiles::Choice::FirstOfSeveral(n) => {
            let why = match state {
                Some(s) => format!("none was measured under this run's Spectre v2 mechanism (`{s}`)"),
                None => "this run's lab.txt names no Spectre v2 state".to_string(),
            };
            Some(format!(
                "{n} profiles in {} name this CPU ({fm}) and {why}: the first by name, {}, prices the twin; the same CPU model under another mitigation pays another price on every indirect call (indirect_call_ns), so calibrate this host if its mitigation is another (fsmeta calibrate --out scenarios/machines/NAME.toml)",
                machines.display(),
                h.path.display()
            ))
        }
        _ => None,
    };
    let set = ("machine.profile".to_string(), toml::Value::String(format!("../machines/{file}")));
    Some(HostPricing { set, pricing, warning })
}
