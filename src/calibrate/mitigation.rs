//! What the kernel's Spectre v2 mitigation adds to one indirect call on
//! this host: kernel code calls through function pointers everywhere
//! (btree ops, log item ops, inode and file ops), and where the kernel
//! mitigates Spectre v2 with retpolines each such call goes through
//! `__x86_indirect_thunk_<reg>` (arch/x86/lib/retpoline.S): a `call` that
//! the return-stack predictor sends into a `pause; lfence` loop, a store
//! of the target over the return address and a `ret` that mispredicts
//! onto it. The counted kernel paths count their indirect calls; this
//! prices one.
//!
//! Which sequence: the first field of
//! `/sys/devices/system/cpu/vulnerabilities/spectre_v2` (the kernel's
//! `spectre_v2_strings`, arch/x86/kernel/cpu/bugs.c): "Retpolines" (also
//! "Enhanced / Automatic IBRS + Retpolines") is the generic thunk;
//! "LFENCE" is `lfence; jmp *%reg`; anything else ("Enhanced / Automatic
//! IBRS", "IBRS", "Vulnerable", "Not affected") adds nothing per call.
//!
//! Method: the same instruction sequence, built here, timed in user space
//! on a pinned CPU: each sample times [`CALLS`] calls of an empty function
//! through the sequence and [`CALLS`] plain `call *%rax` before and after
//! it; the sample is the sequence's time less the mean of the plain ones,
//! per call. A user-space loop runs the thunk hot; in the kernel the
//! thunk's line may be cold, so this is the sequence's own cost, not a
//! cache miss.

use super::stats::Spread;
use crate::hostinfo::{vulnerability, vulnerability_path};

/// Calls per timing.
pub const CALLS: u64 = 20_000;

/// Samples (each three timings).
pub const SAMPLES: usize = 200;

/// The instruction sequence an indirect call goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sequence {
    /// The generic retpoline thunk.
    Retpoline,
    /// `lfence` before the indirect branch.
    Lfence,
    /// A plain indirect call: nothing added per call.
    Plain,
}

impl Sequence {
    /// The sequence a `spectre_v2` sysfs line names (its first field, the
    /// mitigation; later fields such as "BHI: Retpoline" are about other
    /// paths).
    pub fn of_line(line: &str) -> Sequence {
        let mitigation = line.split(';').next().unwrap_or("");
        if mitigation.contains("Retpolines") {
            Sequence::Retpoline
        } else if mitigation.contains("LFENCE") {
            Sequence::Lfence
        } else {
            Sequence::Plain
        }
    }

    /// How the profile's comment names it.
    pub fn describe(self) -> &'static str {
        match self {
            Sequence::Retpoline => "the generic retpoline thunk (call; pause; lfence loop; mov target over the return address; ret)",
            Sequence::Lfence => "lfence; jmp *%rax",
            Sequence::Plain => "a plain call *%rax (the mitigation adds nothing per call)",
        }
    }
}

/// The measured cost, with the line it was measured for.
#[derive(Debug, Clone)]
pub struct IndirectCallCost {
    /// The host's `spectre_v2` line.
    pub spectre_v2: String,
    /// The sequence it names.
    pub sequence: Sequence,
    /// ns per call beyond a plain indirect call; `None` for
    /// [`Sequence::Plain`] (nothing to measure: 0).
    pub extra: Option<Spread>,
}

/// Why it was not measured (the profile says so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotMeasured(pub String);

/// Reads the host's line and measures its sequence on the calling thread
/// (pin it first).
pub fn measure() -> Result<IndirectCallCost, NotMeasured> {
    let line = vulnerability("spectre_v2").map_err(|e| NotMeasured(format!("{}: {e}", vulnerability_path("spectre_v2"))))?;
    let sequence = Sequence::of_line(&line);
    let extra = match sequence {
        Sequence::Plain => None,
        s => Some(timed(s, SAMPLES)?),
    };
    Ok(IndirectCallCost {
        spectre_v2: line,
        sequence,
        extra,
    })
}

/// `SAMPLES` samples of the sequence's extra ns per call.
fn timed(s: Sequence, n: usize) -> Result<Spread, NotMeasured> {
    let ns = |s: Sequence| {
        let t = std::time::Instant::now();
        calls::through(s, CALLS);
        t.elapsed().as_nanos() as f64 / CALLS as f64
    };
    if !calls::AVAILABLE {
        return Err(NotMeasured(format!(
            "the {} sequence is built for x86_64 only",
            if s == Sequence::Retpoline { "retpoline" } else { "lfence" }
        )));
    }
    extra_over_plain(n, || ns(Sequence::Plain), || ns(s))
}

/// `n` samples of what `through` (ns per operation through a sequence)
/// takes beyond `plain` (ns per plain operation), each sample the
/// sequence's timing less the mean of a plain one before and after it,
/// after one warm-up run of the sequence: the method of both mitigation
/// measurements (indirect calls here, returns in [`super::returns`]).
pub(super) fn extra_over_plain(n: usize, plain: impl Fn() -> f64, through: impl Fn() -> f64) -> Result<Spread, NotMeasured> {
    through(); // warm up
    let samples: Vec<f64> = (0..n)
        .map(|_| {
            let before = plain();
            let via = through();
            let after = plain();
            via - (before + after) / 2.0
        })
        .collect();
    Spread::of(&samples).ok_or_else(|| NotMeasured("no sample was taken".into()))
}

#[cfg(target_arch = "x86_64")]
mod calls {
    use super::Sequence;

    /// The sequences are built on this architecture.
    pub const AVAILABLE: bool = true;

    // An empty function, the generic retpoline thunk for %rax
    // (arch/x86/lib/retpoline.S, `__x86_indirect_thunk_rax`) and the
    // lfence form, hidden in this binary.
    std::arch::global_asm!(
        ".pushsection .text.fsmeta_calibrate,\"ax\",@progbits",
        ".globl fsmeta_cal_empty",
        ".hidden fsmeta_cal_empty",
        "fsmeta_cal_empty:",
        "ret",
        ".globl fsmeta_cal_thunk_retpoline",
        ".hidden fsmeta_cal_thunk_retpoline",
        "fsmeta_cal_thunk_retpoline:",
        "call 8f",
        "7:",
        "pause",
        "lfence",
        "jmp 7b",
        "8:",
        "mov qword ptr [rsp], rax",
        "ret",
        ".globl fsmeta_cal_thunk_lfence",
        ".hidden fsmeta_cal_thunk_lfence",
        "fsmeta_cal_thunk_lfence:",
        "lfence",
        "jmp rax",
        ".popsection",
    );

    /// `n` calls of the empty function through sequence `s`.
    #[inline(never)]
    pub fn through(s: Sequence, n: u64) {
        if n == 0 {
            return;
        }
        // `n` calls of `fsmeta_cal_empty`, its address in %rax, made by
        // the instruction given (asm! templates are literals, so a macro).
        macro_rules! calls_by {
            ($call:literal) => {
                std::arch::asm!(
                    "7:",
                    "lea rax, [rip + fsmeta_cal_empty]",
                    $call,
                    "dec {n}",
                    "jnz 7b",
                    n = inout(reg) n => _,
                    out("rax") _,
                )
            };
        }
        // SAFETY: each loop calls a function that only returns, through a
        // thunk that touches %rax and the stack only; %rax is declared
        // clobbered and the block may use the stack (no `nostack`).
        unsafe {
            match s {
                Sequence::Plain => calls_by!("call rax"),
                Sequence::Retpoline => calls_by!("call fsmeta_cal_thunk_retpoline"),
                Sequence::Lfence => calls_by!("call fsmeta_cal_thunk_lfence"),
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod calls {
    use super::Sequence;

    /// The sequences are x86_64 code.
    pub const AVAILABLE: bool = false;

    /// Not built here.
    pub fn through(_: Sequence, _: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_field_names_the_sequence() {
        let intel = "Mitigation: Retpolines; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not affected; BHI: Retpoline";
        assert_eq!(Sequence::of_line(intel), Sequence::Retpoline);
        assert_eq!(
            Sequence::of_line(
                "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; RSB filling; PBRSB-eIBRS: SW sequence; BHI: BHI_DIS_S"
            ),
            Sequence::Plain
        );
        assert_eq!(
            Sequence::of_line("Mitigation: Enhanced / Automatic IBRS + Retpolines; IBPB: conditional"),
            Sequence::Retpoline
        );
        assert_eq!(Sequence::of_line("Mitigation: LFENCE; IBPB: conditional"), Sequence::Lfence);
        assert_eq!(Sequence::of_line("Vulnerable; BHI: Retpoline"), Sequence::Plain);
        assert_eq!(Sequence::of_line("Not affected"), Sequence::Plain);
    }

    /// Each thunk lands on its target and comes back: the loops end (a
    /// wrong thunk jumps into its `pause; lfence` trap forever or off the
    /// stack) and give a finite figure. No speed is asserted.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_thunks_return_from_their_target() {
        for s in [Sequence::Retpoline, Sequence::Lfence] {
            let got = timed(s, 3).unwrap();
            assert!(got.median.is_finite() && got.n == 3, "{s:?}: {got:?}");
        }
    }
}
