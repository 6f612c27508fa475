//! `work_scale` as a scenario gives it: a number, or `"host"`, the
//! machine profile's fitted knob ([`crate::machine::profile::HostKnob`]).
//!
//! The counted kernel paths price a straight-line load at `hit_ns x
//! work_scale` ([`crate::kernel::work`]). On a measured host the scale is
//! the host's one knob, fitted on one named live figure; it belongs to
//! the host, so the lab's twins take it from the profile they run on:
//! one `--set machine.profile=...` prices a twin for another host.

use crate::machine::MachineProfile;
use crate::machine::profile::MAX_WORK_SCALE;
use serde::{Deserialize, Serialize};

/// A `work_scale` key: a multiple of `hit_ns`, or the profile's knob.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WorkScale {
    /// This multiple of `hit_ns` (a published case's own value, or 1).
    Value(f64),
    /// The `[knob] work_scale` of the machine profile the run is on.
    Host,
}

impl Default for WorkScale {
    fn default() -> Self {
        WorkScale::Value(1.0)
    }
}

impl WorkScale {
    /// A message when a number is outside (0, [`MAX_WORK_SCALE`]].
    pub fn check(&self) -> Result<(), String> {
        match *self {
            WorkScale::Value(w) if !(w > 0.0 && w <= MAX_WORK_SCALE) => Err(format!(
                "must be a multiple of hit_ns in (0, {MAX_WORK_SCALE}] or \"host\", found {w}"
            )),
            _ => Ok(()),
        }
    }

    /// The scale on `profile`: the number, or the profile's fitted knob;
    /// a message when the profile has none.
    pub fn resolve(&self, profile: &MachineProfile) -> Result<f64, String> {
        match *self {
            WorkScale::Value(w) => Ok(w),
            WorkScale::Host => profile.knob.as_ref().map(|k| k.work_scale).ok_or_else(|| {
                format!(
                    "\"host\" takes the profile's [knob] work_scale, and profile `{}` has none: fit the host's knob on its named figure (docs/lab-hosts.md) and write it as [knob] work_scale and fitted_on, or give a number",
                    profile.name
                )
            }),
        }
    }

    /// [`WorkScale::resolve`], with 1 for a profile without a knob: for
    /// callers whose parameters were checked against their profile
    /// (the workloads refuse `"host"` on such a profile when preparing).
    pub fn on(&self, profile: &MachineProfile) -> f64 {
        self.resolve(profile).unwrap_or(1.0)
    }
}

impl Serialize for WorkScale {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WorkScale::Value(w) => s.serialize_f64(*w),
            WorkScale::Host => s.serialize_str("host"),
        }
    }
}

impl<'de> Deserialize<'de> for WorkScale {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = crate::param::number_or_word(d, "host", "a multiple of hit_ns or \"host\"")?;
        Ok(v.map_or(WorkScale::Host, WorkScale::Value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::profile::HostKnob;

    fn profile(knob: Option<f64>) -> MachineProfile {
        let mut p = crate::machine::find_builtin("icelake-2s").expect("built-in profile");
        p.knob = knob.map(|w| HostKnob {
            work_scale: w,
            fitted_on: "a test figure".into(),
        });
        p
    }

    #[test]
    fn host_takes_the_profiles_knob_and_a_number_is_kept() {
        assert_eq!(WorkScale::Host.resolve(&profile(Some(2.5))), Ok(2.5));
        assert_eq!(WorkScale::Value(3.0).resolve(&profile(Some(2.5))), Ok(3.0));
        let e = WorkScale::Host.resolve(&profile(None)).expect_err("no knob");
        assert!(e.contains("has none") && e.contains("icelake-2s"), "{e}");
    }

    #[test]
    fn reads_a_number_or_host_and_nothing_else() {
        #[derive(Deserialize)]
        struct T {
            w: WorkScale,
        }
        let read = |s: &str| toml::from_str::<T>(s).map(|t| t.w);
        assert_eq!(read("w = 2").ok(), Some(WorkScale::Value(2.0)));
        assert_eq!(read("w = 1.5").ok(), Some(WorkScale::Value(1.5)));
        assert_eq!(read("w = \"host\"").ok(), Some(WorkScale::Host));
        assert!(read("w = \"hots\"").is_err());
        assert!(WorkScale::Value(0.0).check().is_err());
        assert!(WorkScale::Value(f64::NAN).check().is_err());
        assert!(WorkScale::Host.check().is_ok());
    }
}
