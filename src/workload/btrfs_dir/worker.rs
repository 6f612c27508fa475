//! The async flush worker beside the priced `unlink(2)` calls
//! (`worker = "concurrent"`): two clocks, the syscall thread's and the
//! worker's, on the two CPUs the lab's host has. A worker a call queued
//! starts when that call ends (its balance check is near the end; the
//! kworker's wake-up is not priced) and commits the directory's node one
//! priced step at a time. The next call needs that node's mutex (its
//! dir-index deletion, `btrfs_delete_delayed_dir_index`), and 6.18's
//! deletion loop takes the mutex back after every batch before the waiting
//! call gets it: the lab's trace on the AMD family 25 model 1 host shows
//! the syscall thread's next reservation, then none until the worker's
//! last release of the flush (docs/lab-hosts.md, session 55). So the call
//! waits for the whole flush, and its time is its own path plus that wait.
//! The flush's counts are then nearly those of the inline worker (see
//! `worker` in the parameters for where they differ); what the
//! concurrency adds is the wait, in the calls' sum. A flush queued by the
//! phase's last unlink is left to the sync, and one queued by the rmdir's
//! own check to the race with the directory's eviction (the eviction wins
//! here; live, it dropped 123 items in 5 of 26 runs).
//!
//! Lock waits inside the flush (the tree's) are not priced.

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

const WHAT: &str = "btrfs_dir: the syscall thread's and the worker's clocks in ps";

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

    /// Before a call that takes the directory's node mutex: a queued
    /// worker commits the node to the end (every step priced on its
    /// clock), and the call waits until then. Returns the wait, ps.
    pub fn before_call(&mut self, fs: &mut Fs) -> Result<u64, ModelError> {
        while let Some(step) = fs.worker_step() {
            let ps = self.step_ps(&step)?;
            self.worker_ps = self.worker_ps.checked_add(ps).ok_or(ModelError::Overflow(WHAT))?;
        }
        let wait = self.worker_ps.saturating_sub(self.thread_ps);
        self.thread_ps += wait;
        Ok(wait)
    }

    /// After a call of `call_ps` ps (its own path): a worker the call
    /// queued (`fs` has one, and none was queued before it) starts when
    /// the call ends.
    pub fn after_call(&mut self, fs: &Fs, call_ps: u64) -> Result<(), ModelError> {
        self.thread_ps = self.thread_ps.checked_add(call_ps).ok_or(ModelError::Overflow(WHAT))?;
        if fs.delayed.worker_queued() {
            self.worker_ps = self.thread_ps;
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
