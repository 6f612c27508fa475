//! btrfs delayed items (`fs/btrfs/delayed-inode.c`): per inode, the pending
//! dir-index insertions and deletions sorted by index, a dirty delayed inode
//! item and a pending inode-ref deletion (`BTRFS_DELAYED_NODE_DEL_IREF`); a
//! global pending-item count (`delayed_root->items`) with the background /
//! writeback thresholds; and the runs that apply them to the tree.
//!
//! Runs happen at transaction commit (`btrfs_run_delayed_items`), and after
//! each syscall through `btrfs_balance_delayed_items`. The kernel's async
//! worker runs concurrently; here it runs, deterministically, at the end of
//! the syscall that queued it (see `run.rs` for what that changes).
//! Insertions run through the `btrfs_insert_delayed_items` loop and
//! deletions through the `btrfs_delete_delayed_items` loop: one search per
//! batch, the batch rules being an [`InsertStrategy`] and a
//! [`BatchStrategy`].

pub mod run;
pub mod stats;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

pub use stats::{DeleteRunStats, InsertRunStats};

/// Frames of the stack a delayed item's reservation release records (the
/// lab's `btrfs_space_reservation` events with their stacks), by who runs
/// the batch, as 6.18's compiled call chains show them (inlined callees
/// make no frame): from `trace_event_raw_event_btrfs_space_reservation`
/// up. A deletion batch the flush worker runs:
/// `btrfs_delete_delayed_items`, `btrfs_async_run_delayed_root`,
/// `btrfs_work_helper`, `process_one_work`, `worker_thread`, `kthread`,
/// `ret_from_fork`, `ret_from_fork_asm`: 9.
pub const WORKER_DELETE_RELEASE_FRAMES: u32 = 9;
/// A deletion batch a commit runs on the syscall's thread (`syncfs`):
/// `btrfs_delete_delayed_items`, `__btrfs_run_delayed_items`,
/// `btrfs_commit_transaction`, `sync_filesystem`, `__x64_sys_syncfs`,
/// `do_syscall_64`, `entry_SYSCALL_64_after_hwframe`: 8.
pub const COMMIT_DELETE_RELEASE_FRAMES: u32 = 8;
/// A leaf of insertions the flush worker releases:
/// `btrfs_delayed_item_release_leaves`, `btrfs_insert_delayed_item`, then
/// the worker's 7 as above: 10.
pub const WORKER_INSERT_RELEASE_FRAMES: u32 = 10;

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

/// How `btrfs_insert_delayed_item` grows a batch of insertions (one
/// `btrfs_insert_empty_items` call per batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InsertStrategy {
    /// 5.15 to 5.19 (`btrfs_is_continuous_delayed_item`): the next pending
    /// index must be the previous one plus one, and the batch's
    /// `data_len + sizeof(struct btrfs_item)` total must stay within
    /// `BTRFS_LEAF_DATA_SIZE`.
    Contiguous,
    /// 6.0 on ("btrfs: improve batch insertion of delayed dir index
    /// items"): pending items in key order while the total fits
    /// `BTRFS_LEAF_DATA_SIZE`, whatever the gaps between indexes.
    #[default]
    LeafFit,
}

/// How often a flush gives back the metadata space its delayed items
/// reserved (`btrfs_block_rsv_release` on `delayed_block_rsv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RsvRelease {
    /// Before 6.0: once per item, `btrfs_delayed_item_release_metadata`
    /// for each deleted or inserted item (what case 3's measurement ran:
    /// the patch that batched it names that measurement's test as its
    /// own).
    PerItem,
    /// 6.0 on: once per deletion batch ("btrfs: batch up release of
    /// reserved metadata for delayed items used for deletion", 2022:
    /// `btrfs_batch_delete_items` sums the batch's `bytes_reserved`), and
    /// once per insertion batch, a leaf's worth
    /// (`btrfs_delayed_item_release_leaves` in `btrfs_insert_delayed_item`).
    /// A deletion whose key is gone releases none
    /// (`btrfs_delete_delayed_items` only calls
    /// `btrfs_release_delayed_item`).
    #[default]
    PerBatch,
}

/// When the async worker a balance check queues does its work
/// (`btrfs_async_run_delayed_root`, on the `delayed-meta` workqueue).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerMode {
    /// To completion inside the balance check that queued it, before the
    /// syscall goes on.
    #[default]
    Inline,
    /// Beside the syscalls, as the kernel's worker runs on another CPU:
    /// the check only queues it, and the caller advances it one batch at a
    /// time ([`DelayedRoot::worker_step`]) on its own clock. At or above
    /// `writeback` the caller waits for it (it runs inline).
    Concurrent,
}

/// One step of the queued worker ([`DelayedRoot::worker_step`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerStep {
    /// One turn of `btrfs_insert_delayed_items`.
    Insert(InsertRunStats),
    /// One turn of `btrfs_delete_delayed_items`.
    Delete(DeleteRunStats),
    /// `btrfs_update_delayed_inode` of the node (its tree work), which
    /// ends the node's commit.
    Inode(crate::kernel::btrfs::ctree::TreeStats),
}

/// Where the queued worker is: the nodes it may still take, and the node
/// it is committing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Worker {
    /// Nodes it may take (`nr`, or `writeback` for `nr == 0`).
    limit: usize,
    /// Nodes it has taken.
    done: usize,
    /// The node being committed and the stage it is at.
    node: Option<(u64, Stage)>,
}

/// The stages of `__btrfs_commit_inode_delayed_items` for one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Insert,
    /// The deletion loop; the `leaf-walk` position between its turns.
    Delete(Option<(usize, usize)>),
    Inode,
}

/// The batch rules a flush applies, and how it releases reservations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rules {
    /// Rule for dir-index deletions.
    pub delete: BatchStrategy,
    /// Rule for dir-index insertions.
    pub insert: InsertStrategy,
    /// How often the items' reserved metadata is given back.
    pub rsv_release: RsvRelease,
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

/// `struct btrfs_delayed_node`: one inode's pending work.
#[derive(Debug, Clone, Default)]
pub struct DelayedNode {
    /// `ins_root`: pending dir-index insertions, index -> item data bytes.
    pub ins: BTreeMap<u64, u32>,
    /// `del_root`: pending dir-index deletions, by index.
    pub del: BTreeSet<u64>,
    /// `BTRFS_DELAYED_NODE_INODE_DIRTY`: a pending inode item update.
    pub inode_dirty: bool,
    /// `BTRFS_DELAYED_NODE_DEL_IREF`: the inode's INODE_REF is to be
    /// deleted together with the inode item update.
    pub del_iref: bool,
}

impl DelayedNode {
    /// `node->count`: pending items of this node.
    pub fn count(&self) -> usize {
        self.ins.len() + self.del.len() + usize::from(self.inode_dirty) + usize::from(self.del_iref)
    }
}

/// What one `btrfs_balance_delayed_items` call saw and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BalanceCheck {
    /// `delayed_root->items` when the check ran.
    pub items: usize,
    /// Whether it queued the async worker (items at or above background).
    pub fired: bool,
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
    rules: Rules,
    stats: DeleteRunStats,
    ins_stats: InsertRunStats,
    last_check: BalanceCheck,
    worker_runs: u64,
    mode: WorkerMode,
    /// The queued worker, under [`WorkerMode::Concurrent`].
    worker: Option<Worker>,
    /// Deletion batches since the last [`DelayedRoot::take_batch_shapes`],
    /// by their counts (`runs` 0).
    batch_shapes: BTreeMap<DeleteRunStats, u64>,
}

impl DelayedRoot {
    /// An empty delayed root with the given thresholds and the default
    /// batch rules (`leaf-match`, `leaf-fit`).
    pub fn new(thresholds: Thresholds) -> Self {
        DelayedRoot {
            thresholds,
            ..Default::default()
        }
    }

    /// Sets the batch rules used by every later flush.
    pub fn set_rules(&mut self, rules: Rules) {
        self.rules = rules;
    }

    /// Sets when queued workers run (by default inline).
    pub fn set_worker_mode(&mut self, mode: WorkerMode) {
        self.mode = mode;
    }

    /// Whether a queued worker has work left to step through.
    pub fn worker_queued(&self) -> bool {
        self.worker.is_some()
    }

    /// The deletion batches since the last call, each batch's counts with
    /// how many batches had them (so a caller can price each batch on its
    /// own: a median, not only the sum). Batches of the same shape share
    /// an entry, so this stays small (one-item batches differ in little
    /// but the items after them in their leaf).
    pub fn take_batch_shapes(&mut self) -> BTreeMap<DeleteRunStats, u64> {
        std::mem::take(&mut self.batch_shapes)
    }

    /// The batch rules in force.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// `delayed_root->items`: pending items over all nodes.
    pub fn items(&self) -> usize {
        self.items
    }

    /// Counts of everything the delayed-deletion function has done so far.
    pub fn delete_stats(&self) -> DeleteRunStats {
        self.stats
    }

    /// Counts of everything the delayed-insertion function has done so far.
    pub fn insert_stats(&self) -> InsertRunStats {
        self.ins_stats
    }

    /// The most recent `btrfs_balance_delayed_items` check.
    pub fn last_check(&self) -> BalanceCheck {
        self.last_check
    }

    /// Async worker runs queued by balance checks so far.
    pub fn worker_runs(&self) -> u64 {
        self.worker_runs
    }

    /// Pending work of an inode, if any.
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
    /// index is dropped (`btrfs_delete_delayed_insertion_item`, returns
    /// true); otherwise a deletion is queued.
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

    /// `btrfs_delayed_update_inode`: mark the inode item dirty (one item,
    /// counted only when the node was clean).
    pub fn update_inode(&mut self, ino: u64) {
        let node = self.node_mut(ino);
        if !node.inode_dirty {
            node.inode_dirty = true;
            self.items += 1;
        }
        self.queue(ino);
    }

    /// `btrfs_delayed_delete_inode_ref`: set DEL_IREF on the inode's node
    /// (one item, counted only when it was not set).
    pub fn delete_inode_ref(&mut self, ino: u64) {
        let node = self.node_mut(ino);
        if !node.del_iref {
            node.del_iref = true;
            self.items += 1;
        }
        self.queue(ino);
    }

    /// `btrfs_kill_delayed_inode_items` (`__btrfs_kill_delayed_node`): drop
    /// every pending item of an inode being evicted (insertions,
    /// deletions, DEL_IREF, the inode update) without touching the tree.
    /// Returns how many dir-index items were dropped.
    pub fn kill_inode_items(&mut self, ino: u64) -> usize {
        let mut dropped = 0;
        if let Some(node) = self.nodes.get_mut(&ino) {
            dropped = node.ins.len() + node.del.len();
            self.items -= node.count();
            *node = DelayedNode::default();
        }
        self.dequeue_if_idle(ino);
        dropped
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
