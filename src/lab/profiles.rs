//! Which shipped profile prices a lab run's twin: the one `fsmeta
//! calibrate` measured on the run's CPU, with its knob fitted, and of
//! several, the one measured under the run's Spectre v2 mitigation. One
//! CPU model rents out as VMs with retpolines and with enhanced IBRS,
//! whose indirect calls cost 13 ns and nothing (the Xeon 6 VMs of
//! sessions 42-50 and 66, docs/lab-hosts.md).

use std::path::{Path, PathBuf};

/// A shipped profile measured on the CPU a lab run ran on, with its
/// fitted knob ([`crate::machine::profile::HostKnob`]).
#[derive(Debug, Clone)]
pub struct HostProfile {
    /// The profile file.
    pub path: PathBuf,
    /// The profile.
    pub profile: crate::machine::MachineProfile,
    /// How it was chosen among the profiles of the CPU.
    pub choice: Choice,
}

/// How [`host_profile`] chose a profile among those naming the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The only one.
    Only,
    /// Measured under the same `spectre_v2` state, word for word.
    SameState,
    /// Measured under the same mechanism ([`mechanism`]: retpolines,
    /// enhanced IBRS...), its other fields differing.
    SameMechanism,
    /// The first by file name of several: the run names no state, or no
    /// profile was measured under its mechanism.
    FirstOfSeveral(usize),
}

/// The profile among the `*.toml` of `machines` whose `cpu` names the CPU
/// `family_model` (`family F model M`, as `lab.txt` gives it; `fsmeta
/// calibrate` writes `(family F model M)`) and that has a fitted knob. Of
/// several: the first (by file name) measured under the lab host's
/// `spectre_v2` state ([`spectre_v2`] of `lab.txt`'s `mitigations:`
/// line), else the first under its [`mechanism`], else the first
/// ([`Choice`] says which). `None` when there is none. Files that do not
/// read as profiles are passed over (the folder may hold others).
pub fn host_profile(machines: &Path, family_model: &str, spectre_v2: Option<&str>) -> Option<HostProfile> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(machines)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let found: Vec<(PathBuf, crate::machine::MachineProfile)> = files
        .into_iter()
        .filter_map(|path| {
            let profile = crate::machine::load_profile(&path).ok()?;
            (profile.measured_on_cpu(family_model) && profile.knob.is_some()).then_some((path, profile))
        })
        .collect();
    let (pick, choice) = if found.len() == 1 {
        (0, Choice::Only)
    } else if let Some(i) = spectre_v2.and_then(|v| found.iter().position(|(_, p)| p.spectre_v2() == Some(v))) {
        (i, Choice::SameState)
    } else if let Some(i) = spectre_v2.and_then(|v| {
        found
            .iter()
            .position(|(_, p)| p.spectre_v2().is_some_and(|s| mechanism(s) == mechanism(v)))
    }) {
        (i, Choice::SameMechanism)
    } else {
        (0, Choice::FirstOfSeveral(found.len()))
    };
    let (path, profile) = found.into_iter().nth(pick)?;
    Some(HostProfile { path, profile, choice })
}

/// The `spectre_v2` state in `lab.txt`'s `mitigations:` line
/// (`spectre_v2: STATE; retbleed: ...; spec_rstack_overflow: ...`, as
/// [`crate::hostinfo::mitigations`] joins them; the state itself may hold
/// `; `), or `None` when the line does not name one.
pub fn spectre_v2(mitigations: &str) -> Option<&str> {
    let rest = mitigations.strip_prefix("spectre_v2: ")?;
    let end = crate::hostinfo::MITIGATIONS
        .iter()
        .filter(|&&n| n != "spectre_v2")
        .filter_map(|n| rest.find(&format!("; {n}: ")))
        .min()
        .unwrap_or(rest.len());
    Some(rest[..end].trim()).filter(|s| !s.is_empty())
}

/// The mechanism of a `spectre_v2` state: the instruction sequence its
/// first field names for an indirect call (`Mitigation: Retpolines`: the
/// retpoline thunk; `LFENCE`; enhanced IBRS, `Vulnerable`, "Not
/// affected": a plain call), as `fsmeta calibrate` reads it to price
/// `indirect_call_ns`. The fields after it (`IBPB`, `STIBP`, `BHI`...)
/// act elsewhere (context switches, sibling threads, the branch history
/// at entry), and one mechanism's wording differs between kernels
/// ("Enhanced IBRS", "Enhanced / Automatic IBRS").
pub fn mechanism(state: &str) -> crate::calibrate::mitigation::Sequence {
    crate::calibrate::mitigation::Sequence::of_line(state)
}
