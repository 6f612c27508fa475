//! Running delayed items against the tree: the async worker and
//! `btrfs_balance_delayed_items`, the commit-time run, and per node
//! `__btrfs_commit_inode_delayed_items` (insertions, deletions, then the
//! inode item), with the `btrfs_delete_delayed_items` batch loop.

use super::{BatchStrategy, DelayedRoot};
use crate::kernel::btrfs::ctree::{DIR_INDEX_KEY, INODE_ITEM_KEY, ITEM_HEADER_SIZE, Item, Key, Path, SearchMode, Tree};

/// What `btrfs_delete_delayed_items` touched, summed over all its calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeleteRunStats {
    /// Calls of the function that found at least one pending deletion.
    pub runs: u64,
    /// `btrfs_del_items` calls (batches).
    pub batches: u64,
    /// Root-to-leaf `btrfs_search_slot` calls.
    pub searches: u64,
    /// Sideways steps to the next leaf (`leaf-walk` only).
    pub leaf_walks: u64,
    /// Internal nodes visited.
    pub node_visits: u64,
    /// Leaves visited.
    pub leaf_visits: u64,
    /// Key comparisons in binary searches.
    pub key_compares: u64,
    /// Blocks copied on write.
    pub cow_blocks: u64,
    /// Bytes memmoved in leaves (del_items shifts and merge pushes).
    pub bytes_moved: u64,
    /// Delayed items released (deleted from the tree or not found).
    pub items_released: u64,
    /// Pending deletions whose key was no longer in the tree.
    pub not_found: u64,
    /// Leaves freed by the deletions.
    pub leaves_freed: u64,
}

impl DelayedRoot {
    /// `btrfs_balance_delayed_items`, called after a syscall ends its
    /// transaction: below `background` nothing; at or above `writeback`
    /// the worker runs with `nr = 0` and the caller waits (the worker runs
    /// here before returning, so the wait is satisfied); in between the
    /// worker runs for `batch` nodes.
    pub fn balance(&mut self, tree: &mut Tree, strategy: BatchStrategy) {
        let t = self.thresholds;
        if self.items < t.background {
            return;
        }
        let nr = if self.items >= t.writeback { 0 } else { t.batch };
        self.async_worker(tree, strategy, nr);
    }

    /// `btrfs_async_run_delayed_root`: take nodes from the head of
    /// `prepare_list` and commit each one's items, until fewer than
    /// `background / 2` items are pending or `nr` nodes were done (512 for
    /// `nr == 0`).
    pub fn async_worker(&mut self, tree: &mut Tree, strategy: BatchStrategy, nr: usize) {
        let limit = if nr == 0 { self.thresholds.writeback } else { nr };
        let mut done = 0;
        while done < limit && self.items >= self.thresholds.background / 2 {
            let Some(ino) = self.prepare_list.pop_front() else {
                break;
            };
            self.commit_node(tree, ino, strategy);
            done += 1;
        }
    }

    /// `btrfs_run_delayed_items` (transaction commit, sync): every node on
    /// `node_list`, in order.
    pub fn run_all(&mut self, tree: &mut Tree, strategy: BatchStrategy) {
        for ino in self.node_list.clone() {
            self.commit_node(tree, ino, strategy);
        }
    }

    /// `__btrfs_commit_inode_delayed_items` for one inode.
    pub fn commit_node(&mut self, tree: &mut Tree, ino: u64, strategy: BatchStrategy) {
        self.insert_items(tree, ino);
        self.delete_items(tree, ino, strategy);
        if self.nodes.get(&ino).is_some_and(|n| n.inode_dirty) {
            tree.search_slot(&Key::new(ino, INODE_ITEM_KEY, 0), SearchMode::Update);
            if let Some(n) = self.nodes.get_mut(&ino) {
                n.inode_dirty = false;
            }
            self.items -= 1;
        }
        self.dequeue_if_idle(ino);
        self.prepare_list.retain(|&i| i != ino);
    }

    /// `btrfs_insert_delayed_items`: pending insertions in index order, in
    /// batches of consecutive items that fit one leaf's data size, each
    /// batch one `btrfs_insert_empty_items`.
    fn insert_items(&mut self, tree: &mut Tree, ino: u64) {
        let Some(node) = self.nodes.get_mut(&ino) else {
            return;
        };
        let max = tree.geometry().leaf_data_size();
        while !node.ins.is_empty() {
            let mut batch = Vec::new();
            let mut total = 0;
            for (&index, &size) in &node.ins {
                if !batch.is_empty() && total + size + ITEM_HEADER_SIZE > max {
                    break;
                }
                total += size + ITEM_HEADER_SIZE;
                batch.push(Item::new(Key::new(ino, DIR_INDEX_KEY, index), size));
            }
            if !tree.insert_items(&batch) {
                batch.truncate(1);
                tree.insert_items(&batch);
            }
            for item in &batch {
                node.ins.remove(&item.key.offset);
            }
            self.items -= batch.len();
        }
    }

    /// `btrfs_delete_delayed_items`: while deletions are pending, search for
    /// the smallest pending index and delete a batch there.
    fn delete_items(&mut self, tree: &mut Tree, ino: u64, strategy: BatchStrategy) {
        if self.nodes.get(&ino).is_none_or(|n| n.del.is_empty()) {
            return;
        }
        let before = tree.stats();
        let mut walks = 0;
        let mut walk_from: Option<(usize, usize)> = None;
        let (mut batches, mut released, mut not_found) = (0u64, 0u64, 0u64);
        while let Some(&index) = self.nodes.get(&ino).and_then(|n| n.del.first()) {
            let key = Key::new(ino, DIR_INDEX_KEY, index);
            let walked = walk_from.and_then(|(parent, slot)| tree.next_leaf_path(parent, slot, &key));
            walks += u64::from(walked.is_some());
            let (found, mut path) = match walked {
                Some(p) => (true, p),
                None => tree.search_slot(&key, SearchMode::Delete),
            };
            let n = if found {
                self.batch_delete(tree, &mut path, ino, strategy, &mut walk_from)
            } else {
                0
            };
            if n == 0 {
                self.release(ino, &[index]);
                not_found += 1;
                walk_from = None;
            }
            released += n.max(1) as u64;
            batches += u64::from(n > 0);
        }
        let d = tree.stats().since(&before);
        let s = &mut self.stats;
        s.runs += 1;
        s.batches += batches;
        s.searches += d.searches;
        s.leaf_walks += walks;
        s.node_visits += d.node_visits;
        s.leaf_visits += d.leaf_visits;
        s.key_compares += d.key_compares;
        s.cow_blocks += d.cow_blocks;
        s.bytes_moved += d.bytes_moved;
        s.items_released += released;
        s.not_found += not_found;
        s.leaves_freed += d.leaves_freed;
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
