//! Pinning the calling thread to one CPU or a set (`sched_setaffinity`), and the
//! CPUs this process may run on (`sched_getaffinity`).

use super::CalibrateError;

/// CPUs the calling thread may run on, ascending.
pub fn allowed_cpus() -> Result<Vec<u32>, CalibrateError> {
    // SAFETY: `cpu_set_t` is a plain bit array; all zeroes is a valid
    // (empty) set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the size passed is the size of
    // `set`, which the kernel fills and does not keep.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(CalibrateError::Affinity {
            cpu: None,
            detail: std::io::Error::last_os_error().to_string(),
        });
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `CPU_ISSET` reads bit `i` of `set`, and `i < max` is inside it.
    Ok((0..max)
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .map(|i| i as u32)
        .collect())
}

/// Pins the calling thread to `cpu` alone.
pub fn pin_to(cpu: u32) -> Result<(), CalibrateError> {
    pin_to_set(&[cpu])
}

/// Lets the calling thread run on the CPUs of `cpus` only (at least one),
/// where the scheduler places it.
pub fn pin_to_set(cpus: &[u32]) -> Result<(), CalibrateError> {
    debug_assert!(!cpus.is_empty(), "an empty CPU set");
    let set = cpu_set(cpus)?;
    // SAFETY: pid 0 is the calling thread; `set` is a valid, initialised
    // `cpu_set_t` of the size passed, which the kernel only reads.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(CalibrateError::Affinity {
            cpu: named_cpu(cpus),
            detail: std::io::Error::last_os_error().to_string(),
        });
    }
    Ok(())
}

/// The CPU an affinity error names for the set `cpus`: its one CPU, or
/// none for a set of several.
pub fn named_cpu(cpus: &[u32]) -> Option<u32> {
    match cpus {
        [one] => Some(*one),
        _ => None,
    }
}

/// The `cpu_set_t` of `cpus`; an error for a CPU above the largest number
/// it holds.
pub fn cpu_set(cpus: &[u32]) -> Result<libc::cpu_set_t, CalibrateError> {
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: all zeroes is a valid, empty `cpu_set_t`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu as usize >= max {
            return Err(CalibrateError::Affinity {
                cpu: Some(cpu),
                detail: format!("above the largest CPU number a cpu_set_t holds ({})", max - 1),
            });
        }
        // SAFETY: `cpu < max` was checked, so `CPU_SET` writes inside `set`.
        unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    }
    Ok(set)
}
