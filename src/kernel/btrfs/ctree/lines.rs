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

use super::block::{Item, KeyPtr};
use super::{Task, Tree};

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

    /// The running task wrote block `id`: its lines are now in that
    /// task's cache only.
    pub(crate) fn mark_written(&mut self, id: usize) {
        self.blocks[id].holders = self.task.bit();
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
}
