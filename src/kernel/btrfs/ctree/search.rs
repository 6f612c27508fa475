//! `btrfs_search_slot`: the root-to-leaf descent with copy-on-write, binary
//! search in every block, and the balancing hooks of
//! `setup_nodes_for_search` (split full nodes on the way down for inserts,
//! rebalance thin nodes for deletes) and `split_leaf` at the leaf.

use super::{Key, Path, SearchMode, Tree};

impl Tree {
    /// `btrfs_search_slot(trans, root, key, path, ins_len, cow)`. Returns
    /// whether `key` was found and the path to it (or to where it goes).
    /// Modifying modes copy every block on the path on its first touch in
    /// the transaction. When a balancing hook changes the tree above the
    /// leaf on a delete search, the descent restarts from the root (the
    /// kernel patches the path instead; the blocks visited again are
    /// counted, a small overcount on a rare event).
    pub fn search_slot(&mut self, key: &Key, mode: SearchMode) -> (bool, Path) {
        self.stats.searches += 1;
        loop {
            if let Some(res) = self.descend(key, mode) {
                return res;
            }
        }
    }

    /// One descent; `None` when a node was rebalanced and it must restart.
    fn descend(&mut self, key: &Key, mode: SearchMode) -> Option<(bool, Path)> {
        let cow = mode != SearchMode::Lookup;
        let height = self.height();
        let mut path = Path {
            nodes: vec![0; height],
            slots: vec![0; height],
        };
        let mut b = self.root;
        let mut parent = None;
        for level in (1..height).rev() {
            let foreign = self.lock_and_cow(b, parent, cow);
            self.stats.node_visits += 1;
            let (found, mut slot) = self.bin_search_node(b, key, foreign);
            if !found && slot > 0 {
                slot -= 1;
            }
            path.nodes[level] = b;
            path.slots[level] = slot;
            if self.setup_nodes_for_search(&mut path, level, mode) {
                return None;
            }
            let (node, slot) = (path.nodes[level], path.slots[level]);
            parent = Some(node);
            b = self.blocks[node].ptrs()[slot].child;
        }
        let foreign = self.lock_and_cow(b, parent, cow);
        self.stats.leaf_visits += 1;
        let (found, slot) = self.bin_search_leaf(b, key, foreign);
        path.nodes[0] = b;
        path.slots[0] = slot;
        let need = match mode {
            SearchMode::Insert(n) if !found => n,
            SearchMode::Extend(n) if found => n,
            _ => 0,
        };
        if need > 0 && self.leaf_free_space(b) < need {
            self.split_leaf(&mut path, key, need, matches!(mode, SearchMode::Extend(_)));
        }
        Some((found, path))
    }

    /// One level of the descent before its binary search: block `b`
    /// locked and its header read ([`Tree::visit`]), then copied on write
    /// if `cow` and this is its first change in the transaction
    /// (`btrfs_cow_block` after the lock; the copy's new block pointer is
    /// written into `parent`). Returns whether the probes that follow read
    /// lines another task wrote (not after a copy: the copy is this
    /// task's).
    fn lock_and_cow(&mut self, b: usize, parent: Option<usize>, cow: bool) -> bool {
        let foreign = self.visit(b);
        if cow && self.cow(b, parent) {
            return false;
        }
        foreign
    }

    /// `setup_nodes_for_search`: true if the descent must restart (a
    /// delete-side rebalance changed the tree); a split for an insert
    /// moves the path along instead, as the kernel does.
    fn setup_nodes_for_search(&mut self, path: &mut Path, level: usize, mode: SearchMode) -> bool {
        let n = self.blocks[path.nodes[level]].nritems();
        let ptrs = self.geo.nodeptrs();
        match mode {
            SearchMode::Insert(_) | SearchMode::Extend(_) if n + 3 >= ptrs => {
                self.split_node(path, level);
                false
            }
            SearchMode::Delete if n < ptrs / 2 => self.balance_level(path, level),
            _ => false,
        }
    }

    /// `btrfs_bin_search` over a node's keys, counting comparisons (and
    /// as `foreign_compares` too when another task wrote the node).
    fn bin_search_node(&mut self, b: usize, key: &Key, foreign: bool) -> (bool, usize) {
        let ptrs = self.blocks[b].ptrs();
        let (found, slot, cmps) = bin_search(ptrs.len(), |i| ptrs[i].key.cmp(key));
        self.count_compares(cmps, foreign);
        (found, slot)
    }

    /// `btrfs_bin_search` over a leaf's item keys, counting comparisons
    /// as [`Self::bin_search_node`] does.
    fn bin_search_leaf(&mut self, b: usize, key: &Key, foreign: bool) -> (bool, usize) {
        let items = self.blocks[b].items();
        let (found, slot, cmps) = bin_search(items.len(), |i| items[i].key.cmp(key));
        self.count_compares(cmps, foreign);
        (found, slot)
    }

    fn count_compares(&mut self, cmps: u64, foreign: bool) {
        self.stats.key_compares += cmps;
        if foreign {
            self.stats.foreign_compares += cmps;
        }
    }
}

/// The kernel's `generic_bin_search` loop: returns (found, slot, number of
/// comparisons). `slot` is the match or the first key greater than the
/// target.
fn bin_search(n: usize, cmp_at: impl Fn(usize) -> std::cmp::Ordering) -> (bool, usize, u64) {
    let (mut low, mut high, mut cmps) = (0usize, n, 0u64);
    while low < high {
        let mid = (low + high) / 2;
        cmps += 1;
        match cmp_at(mid) {
            std::cmp::Ordering::Less => low = mid + 1,
            std::cmp::Ordering::Greater => high = mid,
            std::cmp::Ordering::Equal => return (true, mid, cmps),
        }
    }
    (false, low, cmps)
}
