//! Running delayed items against the tree: the async worker and
//! `btrfs_balance_delayed_items`, the commit-time run, and per node
//! `__btrfs_commit_inode_delayed_items` (insertions, deletions, then the
//! inode item), with the `btrfs_insert_delayed_items` and
//! `btrfs_delete_delayed_items` batch loops.
//!
//! The kernel's worker is asynchronous: it starts on another CPU while the
//! syscall that queued it goes on. Under [`WorkerMode::Inline`] it runs
//! to completion inside the balance check, before the syscall continues:
//! deletions the syscall thread would add while the worker's loop runs
//! are not picked up by that pass, and whatever the worker was queued to
//! flush is already in the tree when a later eviction kills the node's
//! pending items. Under [`WorkerMode::Concurrent`] the check only queues
//! it and the caller steps it ([`DelayedRoot::worker_step`]) on its own
//! clock; a step picks up what was queued before it, and an eviction
//! before the worker's steps drops their items. `fs.rs` reports what an
//! eviction killed.

use super::stats::{DeleteRunStats, InsertRunStats};
use super::{BalanceCheck, BatchStrategy, DelayedRoot, InsertStrategy, RsvRelease, Stage, Worker, WorkerMode, WorkerStep};
use crate::kernel::btrfs::ctree::{
    DIR_INDEX_KEY, INODE_ITEM_KEY, INODE_REF_KEY, ITEM_HEADER_SIZE, Item, Key, Path, SearchMode, Task, Tree, TreeStats,
};

impl DelayedRoot {
    /// `btrfs_balance_delayed_items`, called after a syscall ends its
    /// transaction: below `background` nothing; at or above `writeback`
    /// the worker runs with `nr = 0` and the caller waits (the worker runs
    /// here before returning, so the wait is satisfied); in between the
    /// worker runs for `batch` nodes, here under [`WorkerMode::Inline`],
    /// or is queued under [`WorkerMode::Concurrent`] unless one is
    /// already (a second work item would find the node the first is
    /// committing, whose new deletions the first picks up). Returns what
    /// the check saw.
    pub fn balance(&mut self, tree: &mut Tree) -> BalanceCheck {
        let t = self.thresholds;
        let check = BalanceCheck {
            items: self.items,
            fired: self.items >= t.background,
        };
        self.last_check = check;
        if check.fired {
            let nr = if self.items >= t.writeback { 0 } else { t.batch };
            match self.mode {
                WorkerMode::Concurrent if nr > 0 => {
                    if self.worker.is_none() {
                        self.worker_runs += 1;
                        self.worker = Some(Worker {
                            limit: nr,
                            ..Worker::default()
                        });
                    }
                }
                _ => {
                    // The caller waits: a queued worker finishes first
                    // (the node it is committing is off `prepare_list`).
                    while self.worker_step(tree).is_some() {}
                    self.worker_runs += 1;
                    self.async_worker(tree, nr);
                }
            }
        }
        check
    }

    /// One step of the queued worker (`btrfs_async_run_delayed_root` under
    /// [`WorkerMode::Concurrent`]): the next turn of the insertion or the
    /// deletion loop of the node it is committing, or that node's inode
    /// item, which ends the node (`btrfs_release_prepared_delayed_node`
    /// queues it again if the syscalls gave it more work meanwhile). With
    /// no node, it takes the head of `prepare_list` while fewer than its
    /// `nr` nodes are done and at least `background / 2` items are
    /// pending. None once it has stopped (no worker queued).
    pub fn worker_step(&mut self, tree: &mut Tree) -> Option<WorkerStep> {
        let caller = tree.set_task(Task::Worker);
        let step = self.next_worker_step(tree);
        tree.set_task(caller);
        step
    }

    /// [`Self::worker_step`] run as the worker's task.
    fn next_worker_step(&mut self, tree: &mut Tree) -> Option<WorkerStep> {
        loop {
            let mut w = self.worker?;
            let step = match w.node {
                None => {
                    let ino = (w.done < w.limit && self.items >= self.thresholds.background / 2)
                        .then(|| self.prepare_list.pop_front())
                        .flatten();
                    let Some(ino) = ino else {
                        self.worker = None;
                        return None;
                    };
                    w.done += 1;
                    w.node = Some((ino, Stage::Insert));
                    if self.nodes.get(&ino).is_some_and(|n| !n.ins.is_empty()) {
                        self.ins_stats.runs += 1;
                    }
                    None
                }
                Some((ino, Stage::Insert)) => match self.insert_step(tree, ino) {
                    Some(s) => Some(WorkerStep::Insert(s)),
                    None => {
                        w.node = Some((ino, Stage::Delete(None)));
                        if self.nodes.get(&ino).is_some_and(|n| !n.del.is_empty()) {
                            self.stats.runs += 1;
                        }
                        None
                    }
                },
                Some((ino, Stage::Delete(mut walk))) => match self.delete_step(tree, ino, &mut walk) {
                    Some(s) => {
                        w.node = Some((ino, Stage::Delete(walk)));
                        Some(WorkerStep::Delete(s))
                    }
                    None => {
                        w.node = Some((ino, Stage::Inode));
                        None
                    }
                },
                Some((ino, Stage::Inode)) => {
                    let before = tree.stats();
                    self.update_delayed_inode(tree, ino);
                    if self.nodes.get(&ino).is_some_and(|n| n.count() > 0) {
                        self.queue(ino);
                    } else {
                        self.dequeue_if_idle(ino);
                    }
                    w.node = None;
                    Some(WorkerStep::Inode(tree.stats().since(&before)))
                }
            };
            self.worker = Some(w);
            if step.is_some() {
                return step;
            }
        }
    }

    /// `btrfs_async_run_delayed_root`: take nodes from the head of
    /// `prepare_list` and commit each one's items, until fewer than
    /// `background / 2` items are pending or `nr` nodes were done (512 for
    /// `nr == 0`).
    /// It runs as the worker's task ([`Task::Worker`]).
    pub fn async_worker(&mut self, tree: &mut Tree, nr: usize) {
        let caller = tree.set_task(Task::Worker);
        let limit = if nr == 0 { self.thresholds.writeback } else { nr };
        let mut done = 0;
        while done < limit && self.items >= self.thresholds.background / 2 {
            let Some(ino) = self.prepare_list.pop_front() else {
                break;
            };
            self.commit_node(tree, ino);
            done += 1;
        }
        tree.set_task(caller);
    }

    /// `btrfs_run_delayed_items` (transaction commit, sync): every node on
    /// `node_list`, in order.
    pub fn run_all(&mut self, tree: &mut Tree) {
        // A queued worker finds nothing left after the commit's run.
        self.worker = None;
        for ino in self.node_list.clone() {
            self.commit_node(tree, ino);
        }
    }

    /// `__btrfs_commit_inode_delayed_items` for one inode: insertions,
    /// deletions, then the inode item.
    pub fn commit_node(&mut self, tree: &mut Tree, ino: u64) {
        self.insert_items(tree, ino);
        self.delete_items(tree, ino);
        self.update_delayed_inode(tree, ino);
        self.dequeue_if_idle(ino);
        self.prepare_list.retain(|&i| i != ino);
    }

    /// `btrfs_commit_inode_delayed_inode` (eviction): write the inode item
    /// (and delete the INODE_REF under DEL_IREF) if the node is dirty;
    /// pending dir-index items stay.
    pub fn commit_delayed_inode(&mut self, tree: &mut Tree, ino: u64) {
        self.update_delayed_inode(tree, ino);
        self.dequeue_if_idle(ino);
    }

    /// `__btrfs_update_delayed_inode`: look the inode item up (`ins_len
    /// -1` when the ref goes too), write it, and with DEL_IREF delete the
    /// INODE_REF that follows it (`btrfs_del_item`, or a new search when
    /// it sits in the next leaf); releases both items.
    fn update_delayed_inode(&mut self, tree: &mut Tree, ino: u64) {
        let Some(node) = self.nodes.get_mut(&ino) else {
            return;
        };
        if !node.inode_dirty && !node.del_iref {
            return;
        }
        let del_iref = node.del_iref;
        let released = usize::from(node.inode_dirty) + usize::from(del_iref);
        node.inode_dirty = false;
        node.del_iref = false;
        self.items -= released;
        let mode = if del_iref { SearchMode::Delete } else { SearchMode::Update };
        let (found, mut path) = tree.search_slot(&Key::new(ino, INODE_ITEM_KEY, 0), mode);
        if found {
            // `write_extent_buffer` of the inode item.
            tree.mark_written(path.nodes[0]);
        }
        if !found || !del_iref {
            return;
        }
        let next = path.slots[0] + 1;
        let is_ref = |i: &Item| i.key.objectid == ino && i.key.item_type == INODE_REF_KEY;
        if tree.leaf_items(path.nodes[0]).get(next).is_some_and(is_ref) {
            tree.del_items(&mut path, next, 1);
        } else {
            tree.delete_first_of_type(ino, INODE_REF_KEY);
        }
    }

    /// `btrfs_insert_delayed_items`: while insertions are pending, build a
    /// batch from the smallest pending index by the insertion rule and put
    /// it in with one `btrfs_insert_empty_items` (one search, splitting
    /// the leaf as needed).
    fn insert_items(&mut self, tree: &mut Tree, ino: u64) {
        if self.nodes.get(&ino).is_none_or(|n| n.ins.is_empty()) {
            return;
        }
        self.ins_stats.runs += 1;
        while self.insert_step(tree, ino).is_some() {}
    }

    /// One turn of the `btrfs_insert_delayed_items` loop (under the node's
    /// mutex, `btrfs_insert_delayed_item`): the next batch of `ino`'s
    /// pending insertions put in the tree. Returns its counts (`runs` 0),
    /// None when nothing is pending.
    pub(super) fn insert_step(&mut self, tree: &mut Tree, ino: u64) -> Option<InsertRunStats> {
        let max = tree.geometry().leaf_data_size();
        let strategy = self.rules.insert;
        let node = self.nodes.get_mut(&ino).filter(|n| !n.ins.is_empty())?;
        let before = tree.stats();
        let batch = insert_batch(&node.ins, ino, max, strategy);
        let mut batches = 1;
        if !tree.insert_items(&batch) {
            // Only a key collision can refuse a batch (dir indexes are
            // never reused); insert what is possible one by one.
            for item in &batch {
                tree.insert_items(std::slice::from_ref(item));
            }
            batches = batch.len() as u64;
        }
        let mut bytes = 0;
        for item in &batch {
            let index = item.key.offset;
            node.ins.remove(&index);
            bytes += u64::from(item.data_size + ITEM_HEADER_SIZE);
        }
        self.items -= batch.len();
        let d = tree.stats().since(&before);
        let mut s = InsertRunStats {
            batches,
            items: batch.len() as u64,
            rsv_releases: match self.rules.rsv_release {
                RsvRelease::PerItem => batch.len() as u64,
                RsvRelease::PerBatch => batches,
            },
            bytes_inserted: bytes,
            cow_blocks: d.cow_blocks,
            bytes_moved: d.bytes_moved,
            leaf_splits: d.leaf_splits,
            ..InsertRunStats::default()
        };
        add_tree_counts(d, &mut s.searches, &mut s.node_visits, &mut s.leaf_visits, &mut s.key_compares);
        s.transfers = d.transfers();
        if tree.task() == Task::Syscall {
            (s.own_batches, s.own_items, s.own_rsv_releases) = (s.batches, s.items, s.rsv_releases);
        }
        self.ins_stats = self.ins_stats.plus(&s);
        Some(s)
    }

    /// `btrfs_delete_delayed_items`: while deletions are pending, search for
    /// the smallest pending index and delete a batch there.
    fn delete_items(&mut self, tree: &mut Tree, ino: u64) {
        if self.nodes.get(&ino).is_none_or(|n| n.del.is_empty()) {
            return;
        }
        self.stats.runs += 1;
        let mut walk_from = None;
        while self.delete_step(tree, ino, &mut walk_from).is_some() {}
    }

    /// One turn of the `btrfs_delete_delayed_items` loop (6.x: the node's
    /// mutex taken and dropped around each turn): search for `ino`'s
    /// smallest pending deletion and delete a batch there, or release it
    /// when its key is gone. `walk_from` carries a `leaf-walk` step from
    /// one turn to the next. Returns its counts (`runs` 0), None when
    /// nothing is pending.
    pub(super) fn delete_step(&mut self, tree: &mut Tree, ino: u64, walk_from: &mut Option<(usize, usize)>) -> Option<DeleteRunStats> {
        let index = *self.nodes.get(&ino)?.del.first()?;
        let strategy = self.rules.delete;
        let before = tree.stats();
        let key = Key::new(ino, DIR_INDEX_KEY, index);
        let walked = walk_from.and_then(|(parent, slot)| tree.next_leaf_path(parent, slot, &key));
        let leaf_walks = u64::from(walked.is_some());
        let (found, mut path) = match walked {
            Some(p) => (true, p),
            None => tree.search_slot(&key, SearchMode::Delete),
        };
        let n = if found {
            self.batch_delete(tree, &mut path, ino, strategy, walk_from)
        } else {
            0
        };
        if n == 0 {
            self.release(ino, &[index]);
            *walk_from = None;
        }
        let d = tree.stats().since(&before);
        let mut s = DeleteRunStats {
            batches: u64::from(n > 0),
            leaf_walks,
            cow_blocks: d.cow_blocks,
            bytes_moved: d.bytes_moved,
            del_data_moved: d.del_data_moved,
            del_headers_near: d.del_headers_near,
            del_headers_far: d.del_headers_far,
            items_released: n.max(1) as u64,
            rsv_releases: match self.rules.rsv_release {
                RsvRelease::PerItem => n as u64,
                RsvRelease::PerBatch => u64::from(n > 0),
            },
            not_found: u64::from(n == 0),
            leaves_freed: d.leaves_freed,
            items_shifted: d.items_shifted,
            sibling_reads: d.sibling_reads,
            leaf_pushes: d.leaf_pushes,
            items_pushed: d.items_pushed,
            push_offsets: d.push_offsets,
            ..DeleteRunStats::default()
        };
        add_tree_counts(d, &mut s.searches, &mut s.node_visits, &mut s.leaf_visits, &mut s.key_compares);
        s.transfers = d.transfers();
        if tree.task() == Task::Syscall {
            s.own_batches = s.batches;
            s.own_collected = n as u64;
            s.own_released = s.items_released;
            s.own_rsv_releases = s.rsv_releases;
        }
        self.stats = self.stats.plus(&s);
        if n > 0 {
            *self.batch_shapes.entry(s).or_insert(0) += 1;
        }
        Some(s)
    }

    /// `btrfs_batch_delete_items`: grow a batch from the found slot by the
    /// strategy's rule, delete it with one `btrfs_del_items`, release the
    /// items. Returns the batch size. Sets `walk_from` when the batch ran
    /// to the end of its leaf under `leaf-walk`.
    fn batch_delete(
        &mut self,
        tree: &mut Tree,
        path: &mut Path,
        ino: u64,
        strategy: BatchStrategy,
        walk_from: &mut Option<(usize, usize)>,
    ) -> usize {
        let Some(node) = self.nodes.get(&ino) else {
            return 0;
        };
        let leaf = tree.leaf_items(path.nodes[0]);
        let slot = path.slots[0];
        let Some(&first) = node.del.first() else {
            return 0;
        };
        let mut batch = vec![first];
        let mut i = slot;
        for &next in node.del.range(first + 1..) {
            let curr = batch[batch.len() - 1];
            if strategy == BatchStrategy::Sequential && next != curr + 1 {
                break;
            }
            i += 1;
            if i >= leaf.len() || leaf[i].key != Key::new(ino, DIR_INDEX_KEY, next) {
                break;
            }
            batch.push(next);
        }
        let to_leaf_end = slot + batch.len() == leaf.len();
        let parent = (path.nodes.len() > 1).then(|| (path.nodes[1], path.slots[1]));
        tree.del_items(path, slot, batch.len());
        *walk_from = if strategy == BatchStrategy::LeafWalk && to_leaf_end {
            parent
        } else {
            None
        };
        self.release(ino, &batch);
        batch.len()
    }

    /// Frees delayed deletion items (`btrfs_release_delayed_item`).
    fn release(&mut self, ino: u64, indexes: &[u64]) {
        if let Some(node) = self.nodes.get_mut(&ino) {
            for index in indexes {
                if node.del.remove(index) {
                    self.items -= 1;
                }
            }
        }
    }
}

/// `btrfs_insert_delayed_item`'s batch: the smallest pending index first,
/// then its successors while the total of `data_len + 25` stays within
/// `max` bytes and, under `contiguous`, each index is the previous plus
/// one. Never empty when `ins` is not.
pub fn insert_batch(ins: &std::collections::BTreeMap<u64, u32>, ino: u64, max: u32, strategy: InsertStrategy) -> Vec<Item> {
    let mut batch: Vec<Item> = Vec::new();
    let mut total = 0u32;
    for (&index, &size) in ins {
        let next_size = size + ITEM_HEADER_SIZE;
        if let Some(prev) = batch.last() {
            let gap = index != prev.key.offset + 1;
            if total + next_size > max || (strategy == InsertStrategy::Contiguous && gap) {
                break;
            }
        }
        total += next_size;
        batch.push(Item::new(Key::new(ino, DIR_INDEX_KEY, index), size));
    }
    batch
}

/// Adds the search counts of a tree-stats difference.
fn add_tree_counts(d: TreeStats, searches: &mut u64, nodes: &mut u64, leaves: &mut u64, compares: &mut u64) {
    *searches += d.searches;
    *nodes += d.node_visits;
    *leaves += d.leaf_visits;
    *compares += d.key_compares;
}
