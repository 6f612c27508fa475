//! What the kernel's return mitigation adds to one `ret` on this host.
//! Where the kernel mitigates AMD's Speculative Return Stack Overflow with
//! "Safe RET", every return of kernel code is a jump to
//! `srso_alias_return_thunk` (Zen 3/4; `srso_return_thunk` on Zen 1/2,
//! the same sequence; arch/x86/lib/retpoline.S): a `call` to
//! `srso_alias_safe_ret`, which drops the return address that call pushed
//! (`lea 8(%rsp), %rsp`) and returns to the real caller, so the
//! return-stack predictor, which expects the instruction after that
//! `call`, mispredicts every time. Where it mitigates Retbleed with the
//! untrained return thunk (Zen 1/2, `retbleed=unret`), a return is a jump
//! to `retbleed_return_thunk` (`ret; int3`). The counted kernel paths
//! count the returns of their inner loops; this prices one.
//!
//! Which sequence ([`ReturnSequence::of_lines`]): "Safe RET" in the first
//! field of `/sys/devices/system/cpu/vulnerabilities/spec_rstack_overflow`
//! (the kernel's `srso_strings`, arch/x86/kernel/cpu/bugs.c: "Mitigation:
//! Safe RET", and "Vulnerable: Safe RET, no microcode", where the thunk
//! runs without the microcode that makes it effective), else "untrained
//! return thunk" in the first field of `retbleed`; "Stuffing" there (call
//! depth tracking, which adds accounting to calls and returns) is not
//! built here and is reported as not measured; anything else adds nothing
//! per return.
//!
//! Method (as [`super::mitigation`] for indirect calls): the sequence,
//! built here, timed in user space on the pinned CPU: each sample times
//! [`RETURNS`] calls of an empty function that returns through the
//! sequence and [`RETURNS`] calls of one that returns with a plain `ret`
//! before and after it; the sample is the sequence's time less the mean of
//! the plain ones, per return.

use super::mitigation::NotMeasured;
use super::stats::Spread;
use crate::hostinfo::{vulnerability, vulnerability_path};

/// Returns per timing.
pub const RETURNS: u64 = 20_000;

/// Samples (each three timings).
pub const SAMPLES: usize = 200;

/// The instruction sequence a kernel `ret` goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnSequence {
    /// The SRSO Safe RET thunk: `call safe_ret; ud2` with `safe_ret:
    /// lea 8(%rsp), %rsp; ret`.
    SafeRet,
    /// The untrained return thunk: a jump to `ret; int3`.
    Thunk,
    /// A plain `ret`: nothing added per return.
    Plain,
}

impl ReturnSequence {
    /// The sequence the `spec_rstack_overflow` and `retbleed` lines name
    /// (their first fields), or why it is not built here.
    pub fn of_lines(srso: &str, retbleed: &str) -> Result<ReturnSequence, NotMeasured> {
        let first = |line: &str| line.split(';').next().unwrap_or("").to_string();
        let (srso, retbleed) = (first(srso), first(retbleed));
        if srso.contains("Safe RET") {
            Ok(ReturnSequence::SafeRet)
        } else if retbleed.contains("untrained return thunk") {
            Ok(ReturnSequence::Thunk)
        } else if retbleed.contains("Stuffing") {
            Err(NotMeasured(format!(
                "retbleed: {retbleed}: call depth tracking is not built here, so returns are not priced"
            )))
        } else {
            Ok(ReturnSequence::Plain)
        }
    }

    /// How the profile's comment names it.
    pub fn describe(self) -> &'static str {
        match self {
            ReturnSequence::SafeRet => "the SRSO Safe RET thunk (jmp to call safe_ret; ud2, with safe_ret: lea 8(%rsp),%rsp; ret)",
            ReturnSequence::Thunk => "the untrained return thunk (jmp to ret; int3)",
            ReturnSequence::Plain => "a plain ret (the mitigations add nothing per return)",
        }
    }
}

/// The measured cost, with the lines it was measured for.
#[derive(Debug, Clone)]
pub struct ReturnCost {
    /// The host's `spec_rstack_overflow` line.
    pub spec_rstack_overflow: String,
    /// The host's `retbleed` line.
    pub retbleed: String,
    /// The sequence they name.
    pub sequence: ReturnSequence,
    /// ns per return beyond a plain `ret`; `None` for
    /// [`ReturnSequence::Plain`] (nothing to measure: 0).
    pub extra: Option<Spread>,
}

/// Reads the host's lines and measures their sequence on the calling
/// thread (pin it first).
pub fn measure() -> Result<ReturnCost, NotMeasured> {
    let read = |name: &str| vulnerability(name).map_err(|e| NotMeasured(format!("{}: {e}", vulnerability_path(name))));
    let (srso, retbleed) = (read("spec_rstack_overflow")?, read("retbleed")?);
    let sequence = ReturnSequence::of_lines(&srso, &retbleed)?;
    let extra = match sequence {
        ReturnSequence::Plain => None,
        s => Some(timed(s, SAMPLES)?),
    };
    Ok(ReturnCost {
        spec_rstack_overflow: srso,
        retbleed,
        sequence,
        extra,
    })
}

/// `n` samples of the sequence's extra ns per return.
fn timed(s: ReturnSequence, n: usize) -> Result<Spread, NotMeasured> {
    if !rets::AVAILABLE {
        return Err(NotMeasured("the return sequences are built for x86_64 only".into()));
    }
    let ns = |s: ReturnSequence| {
        let t = std::time::Instant::now();
        rets::through(s, RETURNS);
        t.elapsed().as_nanos() as f64 / RETURNS as f64
    };
    super::mitigation::extra_over_plain(n, || ns(ReturnSequence::Plain), || ns(s))
}

#[cfg(target_arch = "x86_64")]
mod rets {
    use super::ReturnSequence;

    /// The sequences are built on this architecture.
    pub const AVAILABLE: bool = true;

    // Three empty functions, hidden in this binary: one returning with a
    // plain `ret`, one through the Safe RET thunk (arch/x86/lib/
    // retpoline.S, `srso_alias_return_thunk` and `srso_alias_safe_ret`),
    // one through the untrained return thunk (`retbleed_return_thunk`).
    std::arch::global_asm!(
        ".pushsection .text.fsmeta_calibrate_ret,\"ax\",@progbits",
        ".globl fsmeta_cal_ret_plain",
        ".hidden fsmeta_cal_ret_plain",
        "fsmeta_cal_ret_plain:",
        "ret",
        ".globl fsmeta_cal_ret_safe",
        ".hidden fsmeta_cal_ret_safe",
        "fsmeta_cal_ret_safe:",
        "jmp fsmeta_cal_srso_thunk",
        ".globl fsmeta_cal_srso_thunk",
        ".hidden fsmeta_cal_srso_thunk",
        "fsmeta_cal_srso_thunk:",
        "call fsmeta_cal_srso_safe_ret",
        "ud2",
        ".globl fsmeta_cal_srso_safe_ret",
        ".hidden fsmeta_cal_srso_safe_ret",
        "fsmeta_cal_srso_safe_ret:",
        "lea rsp, [rsp + 8]",
        "ret",
        "int3",
        ".globl fsmeta_cal_ret_thunk",
        ".hidden fsmeta_cal_ret_thunk",
        "fsmeta_cal_ret_thunk:",
        "jmp fsmeta_cal_return_thunk",
        ".globl fsmeta_cal_return_thunk",
        ".hidden fsmeta_cal_return_thunk",
        "fsmeta_cal_return_thunk:",
        "ret",
        "int3",
        ".popsection",
    );

    /// `n` calls of the empty function that returns through `s`.
    #[inline(never)]
    pub fn through(s: ReturnSequence, n: u64) {
        if n == 0 {
            return;
        }
        macro_rules! calls_of {
            ($call:literal) => {
                std::arch::asm!(
                    "7:",
                    $call,
                    "dec {n}",
                    "jnz 7b",
                    n = inout(reg) n => _,
                )
            };
        }
        // SAFETY: each loop calls a function that touches nothing but the
        // stack pointer and returns to the instruction after its call (the
        // Safe RET thunk pushes a return address and drops it again before
        // its `ret`); the block may use the stack (no `nostack`).
        unsafe {
            match s {
                ReturnSequence::Plain => calls_of!("call fsmeta_cal_ret_plain"),
                ReturnSequence::SafeRet => calls_of!("call fsmeta_cal_ret_safe"),
                ReturnSequence::Thunk => calls_of!("call fsmeta_cal_ret_thunk"),
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod rets {
    use super::ReturnSequence;

    /// The sequences are x86_64 code.
    pub const AVAILABLE: bool = false;

    /// Not built here.
    pub fn through(_: ReturnSequence, _: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_name_the_sequence() {
        let seq = |srso: &str, retbleed: &str| ReturnSequence::of_lines(srso, retbleed);
        assert_eq!(seq("Mitigation: Safe RET", "Not affected"), Ok(ReturnSequence::SafeRet));
        assert_eq!(
            seq(
                "Vulnerable: Safe RET, no microcode",
                "Mitigation: untrained return thunk; SMT vulnerable"
            ),
            Ok(ReturnSequence::SafeRet)
        );
        assert_eq!(seq("Vulnerable: Microcode, no safe RET", "Not affected"), Ok(ReturnSequence::Plain));
        assert_eq!(
            seq("Mitigation: IBPB", "Mitigation: untrained return thunk; SMT disabled"),
            Ok(ReturnSequence::Thunk)
        );
        assert_eq!(seq("Not affected", "Mitigation: Enhanced IBRS"), Ok(ReturnSequence::Plain));
        assert!(seq("Not affected", "Mitigation: Stuffing").is_err());
    }

    /// Each function comes back to its caller: the loops end (a wrong
    /// thunk runs into its `ud2` or `int3`) and give a finite figure. No
    /// speed is asserted.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_thunks_return_to_the_caller() {
        for s in [ReturnSequence::SafeRet, ReturnSequence::Thunk] {
            let got = timed(s, 3).expect("built here");
            assert!(got.median.is_finite() && got.n == 3, "{s:?}: {got:?}");
        }
    }
}
