//! The async flush worker beside the priced `unlink(2)` calls
//! (`worker = "concurrent"`): two clocks, the syscall thread's and the
//! worker's, on the two CPUs the lab's host has. Each call advances the
//! thread's clock by its priced time; a worker the call queued starts when
//! the call ends (its balance check is near the end; the kworker's wake-up
//! is not priced); then the worker takes every step that starts before
//! the thread's clock, each advancing the worker's clock by its priced
//! time. So a flush of the directory's deletions picks up the deletions
//! the calls queued while it ran, as the kernel's does.
//!
//! The grain is one call: a step that starts during a call runs, in the
//! model, after that call's tree work. Lock waits between the two CPUs
//! (the tree's, the node's mutex) are not priced.

use super::cost::DelayedCost;
use super::syscalls::UnlinkCost;
use crate::kernel::ModelError;
use crate::kernel::btrfs::delayed::WorkerStep;
use crate::kernel::btrfs::fs::Fs;
use crate::kernel::btrfs::syscall;
use crate::kernel::work::Tally;
use crate::machine::MachineProfile;

/// The two clocks and the worker's price list.
#[derive(Debug, Clone, Copy)]
pub struct WorkerClock {
    cost: DelayedCost,
    calls: UnlinkCost,
    /// Per node the worker commits: `btrfs_join_transaction` and
    /// `btrfs_end_transaction` around `__btrfs_commit_inode_delayed_items`
    /// in `btrfs_async_run_delayed_root`, ps.
    node_ps: u64,
    /// The syscall thread's clock, ps.
    thread_ps: u64,
    /// The worker's clock, ps.
    worker_ps: u64,
}

impl WorkerClock {
    /// Both clocks at 0; `work_scale` is the run's knob.
    pub fn new(machine: &MachineProfile, work_scale: f64, cost: DelayedCost, calls: UnlinkCost) -> Self {
        let mut t = Tally::default();
        t.add(syscall::TRANS_JOIN, 1.0).add(syscall::TRANS_END, 1.0);
        WorkerClock {
            cost,
            calls,
            node_ps: crate::machine::ns_to_ps(t.ns(machine, work_scale)),
            thread_ps: 0,
            worker_ps: 0,
        }
    }

    /// After a call of `call_ps` ps: a worker queued by it (none was
    /// before, `was_queued` false) starts at the call's end; the worker
    /// then steps until its clock passes the thread's.
    pub fn after_call(&mut self, fs: &mut Fs, was_queued: bool, call_ps: u64) -> Result<(), ModelError> {
        const WHAT: &str = "btrfs_dir: the syscall thread's clock in ps";
        self.thread_ps = self.thread_ps.checked_add(call_ps).ok_or(ModelError::Overflow(WHAT))?;
        if !was_queued {
            self.worker_ps = self.thread_ps;
        }
        while self.worker_ps < self.thread_ps {
            let Some(step) = fs.worker_step() else {
                break;
            };
            let ps = self.step_ps(&step)?;
            self.worker_ps = self.worker_ps.checked_add(ps).ok_or(ModelError::Overflow(WHAT))?;
        }
        Ok(())
    }

    /// One step's time, ps: a deletion or insertion batch as the
    /// delayed-item functions price it; a node's inode item as tree work,
    /// with the node's transaction handle.
    fn step_ps(&self, step: &WorkerStep) -> Result<u64, ModelError> {
        let ps = match step {
            WorkerStep::Delete(s) => self.cost.delete_ps(s)?,
            WorkerStep::Insert(s) => self.cost.insert_ps(s)?,
            WorkerStep::Inode(t) => u128::from(self.calls.tree_ps(t)?) + u128::from(self.node_ps),
        };
        u64::try_from(ps).map_err(|_| ModelError::Overflow("btrfs_dir: time of a worker step in ps"))
    }
}
