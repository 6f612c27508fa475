//! Time of the syscall thread's `unlink(2)` calls: each call's own tree
//! work as the tree model counted it ([`Fs::last_unlink`]: searches,
//! probes, item edits, copies on write), priced with the delayed-item
//! functions' line prices ([`super::cost`]), plus the counted work around
//! it: the VFS walk and `do_unlinkat` ([`crate::kernel::vfs`]), btrfs's
//! handles, delayed items, orphan item and eviction
//! ([`crate::kernel::btrfs::syscall`]) and, when the lab traces them, the
//! tracepoints it fires. The flush worker's batches are not in it: the
//! balance checks only queue them, and the kernel runs them on another
//! CPU; under `worker = "concurrent"` a call's wait for a flush is added
//! to its time by the caller (`worker.rs`).
//!
//! [`Fs::last_unlink`]: crate::kernel::btrfs::fs::Fs::last_unlink

use super::cost::{DelayedCost, TreeEvents};
use super::params::BtrfsDirParams;
use crate::engine::histogram::LatencyHistogram;
use crate::kernel::btrfs::ctree::TreeStats;
use crate::kernel::btrfs::syscall;
use crate::kernel::tracing::{measured_stack_ps, stack_trace};
use crate::kernel::vfs;
use crate::kernel::work::Tally;
use crate::kernel::{ModelError, btrfs};
use crate::machine::MachineProfile;

/// The price list of one `unlink(2)`, ps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnlinkCost {
    tree: DelayedCost,
    /// Everything but the tree work, ps.
    own_ps: u64,
    /// The tracepoints a copy on write fires besides its lock's, ps.
    cow_events_ps: u64,
}

impl UnlinkCost {
    /// The price list of `p`'s unlinks on `machine`, the tree work priced
    /// by `tree`.
    pub fn new(p: &BtrfsDirParams, machine: &MachineProfile, tree: DelayedCost) -> Self {
        let mut t = Tally::default();
        t.add(vfs::SYSCALL, 1.0)
            .add(vfs::GETNAME, 1.0)
            .add(vfs::LAB_PREFIX_WALK, 1.0)
            .add(vfs::LAB_PREFIX_WALK_SHARED, 1.0)
            .add(vfs::UNLINK_VFS, 1.0)
            .add_tally(&syscall::unlink_own(), 1.0);
        let (mut events_ps, mut cow_events_ps) = (0, 0);
        if p.reservation_tracepoints {
            let prices = &tree.prices;
            let stacked = btrfs::syscall::UNLINK_STACKED_EVENTS;
            // Its stack: measured where the profile has it, else counted.
            let stack_ps = match measured_stack_ps(machine, btrfs::syscall::UNLINK_STACK_FRAMES) {
                Some(ps) => ps,
                None => {
                    t.add_tally(&stack_trace(), stacked);
                    0
                }
            };
            // One kept (the delayed_item reserve), the rest discarded.
            events_ps = (prices.trace_event_ps + stack_ps) * stacked as u64
                + prices.trace_discard_ps * (btrfs::syscall::UNLINK_RESERVATION_EVENTS - stacked) as u64;
            cow_events_ps = prices.trace_discard_ps * btrfs::syscall::COW_RESERVATION_EVENTS as u64;
        }
        UnlinkCost {
            tree,
            own_ps: crate::machine::ns_to_ps(t.ns(machine, p.work_scale.on(machine))) + events_ps,
            cow_events_ps,
        }
    }

    /// One call whose own tree work counted `d`, ps.
    pub fn call_ps(&self, d: &TreeStats) -> Result<u64, ModelError> {
        self.tree_ps(d)?
            .checked_add(self.own_ps)
            .ok_or(ModelError::Overflow("btrfs_dir: time of an unlink call in ps"))
    }

    /// Tree work that counted `d` (searches, probes, item edits, copies on
    /// write, with the lab's events when traced), ps.
    pub fn tree_ps(&self, d: &TreeStats) -> Result<u64, ModelError> {
        let p = &self.tree.prices;
        let traced = self.tree.lock_tracepoints;
        let trace = if traced { p.trace_event_ps } else { 0 };
        let events = TreeEvents {
            lock_ps: trace,
            cow_ps: trace * (1 + u64::from(self.tree.folios())) + self.cow_events_ps,
            freed_ps: if traced { p.trace_unfiltered_ps } else { 0 },
        };
        self.tree.tree_work_ps(d, &events)
    }
}

/// The median call (within the histogram's 0.8%) and the calls' exact
/// sum of a phase, us; zeros without calls.
pub fn phase_us(calls: &LatencyHistogram) -> (f64, f64) {
    (calls.quantile(0.5) as f64 / 1e6, calls.sum() as f64 / 1e6)
}
