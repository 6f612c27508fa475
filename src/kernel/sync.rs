//! Synchronisation structures of the kernel that the machine model prices:
//! shared counters (`atomic_t`, `percpu_counter`, and a per-socket design).

pub mod counter;
