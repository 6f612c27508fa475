//! `fsmeta calibrate`: measure this host and write (or print) its profile.

use super::{CliError, Status};
use fsmeta::calibrate::{self, host, render};
use std::path::Path;

/// Load average above which the measurement is flagged as shared.
const BUSY_LOAD: f64 = 1.5;

/// Measures, derives the profile, writes it to `out` (or stdout) and
/// checks that the written file loads as a profile.
pub(super) fn calibrate(out: Option<&Path>, repeat: usize) -> Result<Status, CliError> {
    let fail = |e: String| CliError::Other(anyhow::anyhow!(e));
    let name = match out {
        None => "calibrated".to_string(),
        Some(p) => {
            let stem = p.file_stem().and_then(|s| s.to_str()).filter(|s| !s.is_empty());
            let Some(stem) = stem else {
                return Err(fail(format!("--out {}: expected a file name such as NAME.toml", p.display())));
            };
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if !dir.is_dir() {
                return Err(fail(format!("--out {}: folder {} does not exist", p.display(), dir.display())));
            }
            stem.to_string()
        }
    };
    let mut header = render::Header {
        command: std::iter::once("fsmeta".to_string())
            .chain(std::env::args().skip(1))
            .collect::<Vec<_>>()
            .join(" "),
        date: host::utc_now(),
        info: host::HostInfo::read(),
        load: [host::loadavg(), None],
    };
    if let Some([one, ..]) = header.load[0].filter(|l| l[0] > BUSY_LOAD) {
        errln!("fsmeta: calibrate: warning: load average {one:.2} > {BUSY_LOAD}: other work shares the CPUs, spreads will be wide");
    }
    let opts = calibrate::Options {
        repeat,
        ..calibrate::Options::default()
    };
    let cal = calibrate::calibrate(&opts, &|step| errln!("fsmeta: calibrate: {step}")).map_err(|e| fail(e.to_string()))?;
    header.load[1] = host::loadavg();
    let cpus = cal.host.cpus.len();
    let cpu = format!(
        "{} ({}), {cpus} CPUs{}",
        header.info.model,
        header.info.family,
        if header.info.hypervisor { " of a virtual machine" } else { "" }
    );
    let derived = calibrate::derive::derive(&cal, &name, &cpu).map_err(|e| fail(e.to_string()))?;
    for w in &derived.warnings {
        errln!("fsmeta: calibrate: warning: {w}");
    }
    let text = render::render(&cal, &derived, &header);
    let Some(path) = out else {
        out!("{text}");
        return Ok(Status::Ok);
    };
    std::fs::write(path, &text).map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
    let back = fsmeta::machine::load_profile(path).map_err(|e| fail(format!("the written profile does not load: {e}")))?;
    out!("{}", back.describe());
    outln!("written: {}", path.display());
    Ok(Status::Ok)
}
