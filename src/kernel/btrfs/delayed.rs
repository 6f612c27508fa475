//! btrfs delayed items (`fs/btrfs/delayed-inode.c`): per directory inode, the
//! pending dir-index insertions and deletions sorted by index, plus a dirty
//! delayed inode item; a global pending-item count with the background /
//! writeback thresholds; and the runs that apply them to the tree.
//!
//! Runs happen at transaction commit (`btrfs_run_delayed_items`), and after
//! each syscall through `btrfs_balance_delayed_items`. The kernel's async
//! worker runs concurrently; here it runs, deterministically, at the end of
//! the syscall that queued it. Deletions run through the
//! `btrfs_delete_delayed_items` loop: one search per batch, one
//! `btrfs_del_items` per batch, the batch rule being a [`BatchStrategy`].

mod run;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

pub use run::DeleteRunStats;

/// How `btrfs_batch_delete_items` grows a batch of deletions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BatchStrategy {
    /// Old rule (before 2022, `btrfs_is_continuous_delayed_item`): the next
    /// pending index must be the previous one plus one *and* be the next
    /// item in the leaf.
    Sequential,
    /// New rule (2022): the next pending index only has to be the next item
    /// in the leaf.
    #[default]
    LeafMatch,
    /// Beyond the kernel: as `leaf-match`, and when a batch ends at the last
    /// slot of its leaf and the next pending index is the first item of the
    /// next leaf under the same parent, step sideways to it instead of a new
    /// root-to-leaf search (still one `btrfs_del_items` per leaf).
    LeafWalk,
}

/// The thresholds of `btrfs_balance_delayed_items` and the async worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// `BTRFS_DELAYED_BACKGROUND` (128): below it nothing is queued; the
    /// async worker stops below half of it.
    pub background: usize,
    /// `BTRFS_DELAYED_WRITEBACK` (512): at or above it the worker runs with
    /// `nr = 0` and the caller waits for it.
    pub writeback: usize,
    /// `BTRFS_DELAYED_BATCH` (16): delayed nodes per background worker run.
    pub batch: usize,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            background: 128,
            writeback: 512,
            batch: 16,
        }
    }
}

/// `struct btrfs_delayed_node`: one directory inode's pending work.
#[derive(Debug, Clone, Default)]
pub struct DelayedNode {
    /// `ins_root`: pending dir-index insertions, index -> item data bytes.
    pub ins: BTreeMap<u64, u32>,
    /// `del_root`: pending dir-index deletions, by index.
    pub del: BTreeSet<u64>,
    /// `BTRFS_DELAYED_NODE_INODE_DIRTY`: a pending inode item update.
    pub inode_dirty: bool,
}

impl DelayedNode {
    /// `node->count`: pending items of this node.
    pub fn count(&self) -> usize {
        self.ins.len() + self.del.len() + usize::from(self.inode_dirty)
    }
}

/// `struct btrfs_delayed_root` plus the fs-wide counters of delayed work.
#[derive(Debug, Clone, Default)]
pub struct DelayedRoot {
    nodes: BTreeMap<u64, DelayedNode>,
    /// `node_list`: nodes with work, in the order they were first queued.
    node_list: Vec<u64>,
    /// `prepare_list`: nodes waiting for the async worker.
    prepare_list: VecDeque<u64>,
    /// `delayed_root->items`.
    items: usize,
    thresholds: Thresholds,
    stats: DeleteRunStats,
}

impl DelayedRoot {
    /// An empty delayed root with the given thresholds.
    pub fn new(thresholds: Thresholds) -> Self {
        DelayedRoot {
            thresholds,
            ..Default::default()
        }
    }

    /// `delayed_root->items`: pending items over all nodes.
    pub fn items(&self) -> usize {
        self.items
    }

    /// Counts of everything the delayed-deletion function has done so far.
    pub fn delete_stats(&self) -> DeleteRunStats {
        self.stats
    }

    /// Pending work of a directory, if any.
    pub fn node(&self, ino: u64) -> Option<&DelayedNode> {
        self.nodes.get(&ino)
    }

    /// `btrfs_insert_delayed_dir_index`: queue the insertion of dir index
    /// `index` of `dir` with `data_size` bytes of item data.
    pub fn insert_dir_index(&mut self, dir: u64, index: u64, data_size: u32) {
        if self.node_mut(dir).ins.insert(index, data_size).is_none() {
            self.items += 1;
        }
        self.queue(dir);
    }

    /// `btrfs_delete_delayed_dir_index`: a pending insertion of the same
    /// index is dropped (returns true); otherwise a deletion is queued.
    pub fn delete_dir_index(&mut self, dir: u64, index: u64) -> bool {
        let node = self.node_mut(dir);
        let cancelled = node.ins.remove(&index).is_some();
        let added = !cancelled && node.del.insert(index);
        if cancelled {
            self.items -= 1;
        } else if added {
            self.items += 1;
        }
        self.queue(dir);
        cancelled
    }

    /// `btrfs_delayed_update_inode`: mark the inode item dirty.
    pub fn update_inode(&mut self, ino: u64) {
        let node = self.node_mut(ino);
        if !node.inode_dirty {
            node.inode_dirty = true;
            self.items += 1;
        }
        self.queue(ino);
    }

    /// `btrfs_kill_delayed_inode_items`: drop the pending dir-index work of
    /// an inode being evicted (its items go with the inode's truncation).
    pub fn kill_inode_items(&mut self, ino: u64) {
        if let Some(node) = self.nodes.get_mut(&ino) {
            self.items -= node.ins.len() + node.del.len();
            node.ins.clear();
            node.del.clear();
        }
        self.dequeue_if_idle(ino);
    }

    fn node_mut(&mut self, ino: u64) -> &mut DelayedNode {
        self.nodes.entry(ino).or_default()
    }

    /// `btrfs_queue_delayed_node` on release: add the node to both lists,
    /// or move it to the tail of `prepare_list`.
    fn queue(&mut self, ino: u64) {
        if !self.node_list.contains(&ino) {
            self.node_list.push(ino);
        }
        if let Some(pos) = self.prepare_list.iter().position(|&i| i == ino) {
            self.prepare_list.remove(pos);
        }
        self.prepare_list.push_back(ino);
    }

    /// `btrfs_dequeue_delayed_node` once a node has no work left.
    fn dequeue_if_idle(&mut self, ino: u64) {
        if self.nodes.get(&ino).is_some_and(|n| n.count() > 0) {
            return;
        }
        self.nodes.remove(&ino);
        self.node_list.retain(|&i| i != ino);
        self.prepare_list.retain(|&i| i != ino);
    }
}

#[cfg(test)]
mod tests;
