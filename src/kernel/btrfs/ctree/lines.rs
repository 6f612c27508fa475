//! Whose CPU holds a tree block's lines: the lock word and the block's
//! contents, by [`Task`]. A search's lock, header read and key probes cost
//! a line transfer only where another task took the lock or wrote the
//! block since this task last did (MESI: a line stays valid in a reader's
//! cache until a write elsewhere invalidates it).
//!
//! The grain is the block: a write anywhere in it makes all of its lines
//! foreign to the other tasks (a deletion's memmove rewrites the item
//! headers after its slot, which is where most probes of the next search
//! land; a copy on write rewrites all of them). Cold lines (a block no
//! task touched since the model built it) are not counted, as before.

use super::Tree;
use super::block::{Item, KeyPtr};

/// The task running a tree operation, each on a CPU of its own: the
/// syscall thread (`unlink(2)`, `creat`, evictions, and a `syncfs(2)` it
/// calls itself, whose commit runs in the caller's context), the
/// delayed-item worker (a kworker running `btrfs_async_run_delayed_root`),
/// the flusher that writes the dirty tree blocks back before a commit (a
/// writeback kworker: `lock_extent_buffer_for_io` takes each block's lock
/// and sets its WRITTEN flag), a `sync` process of its own, and an
/// `umount` process, whose commit ends the script (the lab's own
/// `umount2` commits as the syscall thread).
/// A line one of them wrote moves to another's CPU when that one reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Task {
    /// The thread making the syscalls.
    #[default]
    Syscall,
    /// The delayed-item worker.
    Worker,
    /// The writeback kworker.
    Flusher,
    /// A `sync` process (a shell script's `sync`).
    Sync,
    /// The unmounting process.
    Unmount,
}

impl Task {
    /// The task's bit in a block's `holders` and `locker`.
    pub(crate) fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl Tree {
    /// The running task takes block `id`'s lock (`btrfs_tree_lock` or
    /// `btrfs_tree_read_lock`) and reads its header. Counts a lock
    /// transfer if another task took the lock last, and a foreign visit
    /// if another task wrote the block since this task read it. Returns
    /// whether the block's lines were foreign (its probes then move
    /// too). Nothing is counted or marked while `quiet`.
    pub(crate) fn visit(&mut self, id: usize) -> bool {
        if self.quiet {
            return false;
        }
        let bit = self.task.bit();
        let b = &mut self.blocks[id];
        if b.locker != 0 && b.locker != bit {
            self.stats.lock_transfers += 1;
        }
        b.locker = bit;
        let foreign = b.holders != 0 && b.holders & bit == 0;
        if b.holders != 0 {
            b.holders |= bit;
        }
        if foreign {
            self.stats.foreign_visits += 1;
        }
        foreign
    }

    /// The running task wrote block `id`, holding its lock (every change
    /// to a tree block is made under its write lock): its lines are now in
    /// that task's cache only, and the lock word was last that task's.
    pub(crate) fn mark_written(&mut self, id: usize) {
        let bit = self.task.bit();
        let b = &mut self.blocks[id];
        b.holders = bit;
        b.locker = bit;
    }

    /// The items of leaf `id`, to change (marks it written).
    pub(crate) fn leaf_mut(&mut self, id: usize) -> &mut Vec<Item> {
        self.mark_written(id);
        self.blocks[id].items_mut()
    }

    /// The key pointers of node `id`, to change (marks it written).
    pub(crate) fn node_mut(&mut self, id: usize) -> &mut Vec<KeyPtr> {
        self.mark_written(id);
        self.blocks[id].ptrs_mut()
    }

    /// The running task.
    pub fn task(&self) -> Task {
        self.task
    }

    /// Makes `task` the one whose operations run from now on; returns the
    /// one before.
    pub fn set_task(&mut self, task: Task) -> Task {
        std::mem::replace(&mut self.task, task)
    }
}
