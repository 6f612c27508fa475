//! What /proc and /sys say about the machine fsmeta runs on: CPU model,
//! kernel, hypervisor, transparent huge pages, the kernel's speculation
//! mitigations and the load average, for the headers of `fsmeta
//! calibrate`'s profiles and `fsmeta lab`'s outputs (one reader for both).

use std::fmt::Write as _;

/// The host as `/proc` shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostInfo {
    /// `model name` of the first CPU in /proc/cpuinfo.
    pub model: String,
    /// `cpu family` and `model`, as `family F model M`.
    pub family: String,
    /// The `hypervisor` CPU flag is set (a guest).
    pub hypervisor: bool,
    /// /proc/sys/kernel/osrelease.
    pub kernel: String,
    /// /sys/kernel/mm/transparent_hugepage/enabled (`always [madvise] never`).
    pub thp: String,
    /// The mitigations that change what the kernel's calls and returns
    /// cost (/sys/devices/system/cpu/vulnerabilities: `spectre_v2`,
    /// `retbleed`, `spec_rstack_overflow`), `name: state` each: the same
    /// CPU model with other mitigations runs kernel code at another
    /// speed, which the profile's loads do not see (docs/lab-hosts.md).
    pub mitigations: Vec<String>,
}

/// The vulnerabilities whose mitigation sits on every kernel call, return
/// or indirect branch (retpolines, return thunks).
pub const MITIGATIONS: [&str; 3] = ["spectre_v2", "retbleed", "spec_rstack_overflow"];

/// Where the kernel reports a vulnerability's state
/// (`/sys/devices/system/cpu/vulnerabilities/NAME`).
pub fn vulnerability_path(name: &str) -> String {
    format!("/sys/devices/system/cpu/vulnerabilities/{name}")
}

/// The state the kernel reports for vulnerability `name`, trimmed (e.g.
/// `spectre_v2`: `Mitigation: Retpolines; ...`).
pub fn vulnerability(name: &str) -> std::io::Result<String> {
    Ok(std::fs::read_to_string(vulnerability_path(name))?.trim().to_string())
}

/// `name: state` of each of [`MITIGATIONS`] that `read` gives text for.
pub fn mitigations(read: impl Fn(&str) -> String) -> Vec<String> {
    MITIGATIONS
        .iter()
        .filter_map(|n| {
            let state = read(n);
            (!state.is_empty()).then(|| format!("{n}: {state}"))
        })
        .collect()
}

impl HostInfo {
    /// Reads this host (fields it cannot read stay empty).
    pub fn read() -> HostInfo {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default().trim().to_string();
        let mut info = parse_cpuinfo(&read("/proc/cpuinfo"));
        info.kernel = read("/proc/sys/kernel/osrelease");
        info.thp = read("/sys/kernel/mm/transparent_hugepage/enabled");
        info.mitigations = mitigations(|n| vulnerability(n).unwrap_or_default());
        info
    }

    /// One line: `AMD EPYC (family 25 model 17), KVM guest..., Linux 6.x`.
    pub fn describe(&self) -> String {
        let mut s = format!("{} ({})", self.model, self.family);
        if self.hypervisor {
            s.push_str(", virtual machine (hypervisor flag set)");
        }
        let _ = write!(s, "; kernel Linux {}", self.kernel);
        s
    }
}

/// Model name, family/model and the hypervisor flag of the first CPU in
/// /proc/cpuinfo text.
pub fn parse_cpuinfo(text: &str) -> HostInfo {
    let first = text.split("\n\n").next().unwrap_or("");
    let field = |name: &str| {
        first.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_string())
        })
    };
    HostInfo {
        model: field("model name").unwrap_or_else(|| "unknown CPU".to_string()),
        family: format!(
            "family {} model {}",
            field("cpu family").unwrap_or_else(|| "?".to_string()),
            field("model").unwrap_or_else(|| "?".to_string())
        ),
        hypervisor: field("flags").is_some_and(|f| f.split_whitespace().any(|x| x == "hypervisor")),
        ..HostInfo::default()
    }
}

/// The 1, 5 and 15 minute load averages from /proc/loadavg.
pub fn loadavg() -> Option<[f64; 3]> {
    parse_loadavg(&std::fs::read_to_string("/proc/loadavg").ok()?)
}

/// Parses the first three fields of /proc/loadavg text.
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mitigations_on_calls_and_returns_are_named_with_their_state() {
        let read = |n: &str| match n {
            "spectre_v2" => "Mitigation: Retpolines".to_string(),
            "spec_rstack_overflow" => "Vulnerable: Safe RET, no microcode".to_string(),
            _ => String::new(),
        };
        assert_eq!(
            mitigations(read),
            [
                "spectre_v2: Mitigation: Retpolines",
                "spec_rstack_overflow: Vulnerable: Safe RET, no microcode"
            ]
        );
        assert!(mitigations(|_| String::new()).is_empty());
    }

    #[test]
    fn cpuinfo_and_loadavg() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\nflags\t\t: fpu vme hypervisor lahf_lm\n\nprocessor\t: 1\nmodel name\t: other\n";
        let info = parse_cpuinfo(text);
        assert_eq!(info.model, "AMD EPYC");
        assert_eq!(info.family, "family 25 model 17");
        assert!(info.hypervisor);
        assert!(!parse_cpuinfo("flags : fpu hypervisorx\n").hypervisor);
        assert_eq!(parse_loadavg("2.74 4.57 4.59 3/200 1234\n"), Some([2.74, 4.57, 4.59]));
        assert_eq!(parse_loadavg("2.74 x"), None);
    }
}
