//! A hint to the host CPU: start loading a cache line that the simulator
//! will soon read. It changes no result, only when the host's data
//! arrives; used where the simulator chases pointers whose targets it can
//! guess ahead (the red-black tree's last walk).

/// Asks the host to load the line holding `p` into its caches (x86-64:
/// `prefetcht0`; elsewhere nothing). Never faults, whatever `p` is.
#[inline(always)]
pub fn prefetch_read<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the
    // address, and SSE (which has it) is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
