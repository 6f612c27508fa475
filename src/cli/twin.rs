//! A lab run's twin, priced for the host the lab ran on when a shipped
//! profile measured that CPU and has its knob fitted: one step shared by
//! `fsmeta lab` and `fsmeta validate --lab`.

use super::{CliError, Limits};
use fsmeta::Study;
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
        self.mismatch.iter().chain(&self.transfer).chain(&self.speed)
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
    let doc: Option<toml::Table> = std::fs::read_to_string(scenario).ok().and_then(|t| toml::from_str(&t).ok());
    let family_model = live.lab_txt.as_deref().and_then(|t| twin::lab_field(t, "cpu model:"));
    let mut chosen = None;
    if let (Some(doc), Some(fm), false) = (doc, family_model, own_profile)
        && twin::takes_host_knob(&doc)
    {
        // scenarios/lab/X.toml -> scenarios/machines/, the value's `../machines`.
        let lab_dir = scenario.parent().unwrap_or(Path::new(""));
        let machines = match lab_dir.parent() {
            Some(up) if !lab_dir.as_os_str().is_empty() => up.join("machines"),
            _ => lab_dir.join("../machines"),
        };
        let mitigations = live.lab_txt.as_deref().and_then(|t| twin::lab_field(t, "mitigations:"));
        if let Some(h) = twin::host_profile(&machines, fm, mitigations.and_then(twin::spectre_v2))
            && let (Some(file), Some(knob)) = (h.path.file_name().and_then(|f| f.to_str()), &h.profile.knob)
        {
            let value = toml::Value::String(format!("../machines/{file}"));
            opts.sets.push(("machine.profile".to_string(), value));
            pricing = format!(
                "the twin priced for this host ({fm}): {} (fsmeta calibrate), its knob work_scale = {} fitted on {}",
                h.path.display(),
                knob.work_scale,
                knob.fitted_on
            );
            if let twin::Choice::FirstOfSeveral(n) = h.choice {
                chosen = Some(format!(
                    "{n} profiles in {} name this CPU ({fm}) and none was measured under this run's Spectre v2 mitigation ({}): the first by name, {}, prices the twin; an indirect call costs 13 ns under retpolines and nothing under enhanced IBRS, so calibrate this host if its mitigation is another (fsmeta calibrate --out scenarios/machines/NAME.toml)",
                    machines.display(),
                    mitigations.and_then(twin::spectre_v2).unwrap_or("lab.txt does not say"),
                    h.path.display()
                ));
            }
        }
    }
    let study = Study::load(scenario, &opts)?;
    let results = study.run(jobs, &|| {})?;
    let outcome = study.write(&results, out)?;
    let outputs = Outputs::read(&outcome.dir)?;
    let mismatch = twin::host_mismatch(live, &outputs).or(chosen);
    let transfer = twin::transfer_mismatch(live, &outputs);
    let speed = fsmeta::lab::speed::speed_mismatch(live, &outputs);
    Ok(Twin {
        outputs,
        pricing,
        mismatch,
        transfer,
        speed,
    })
}
