//! Whole-tree walks for tests and reports: the items in key order and the
//! structural invariants (byte budgets, sorted keys, parent keys).

use super::block::space_used;
use super::{Item, Key, Tree};

impl Tree {
    /// All items in key order (a walk of the leaves, not counted).
    pub fn all_items(&self) -> Vec<Item> {
        let mut out = Vec::new();
        self.collect(self.root, &mut out);
        out
    }

    fn collect(&self, b: usize, out: &mut Vec<Item>) {
        let block = &self.blocks[b];
        if block.level() == 0 {
            out.extend_from_slice(block.items());
        } else {
            for p in block.ptrs() {
                self.collect(p.child, out);
            }
        }
    }

    /// The leaves in key order, as (nritems, bytes used, first key).
    pub fn leaf_layout(&self) -> Vec<(usize, u32, Option<Key>)> {
        let mut out = Vec::new();
        self.collect_leaves(self.root, &mut out);
        out
    }

    fn collect_leaves(&self, b: usize, out: &mut Vec<(usize, u32, Option<Key>)>) {
        let block = &self.blocks[b];
        if block.level() == 0 {
            out.push((block.nritems(), space_used(block.items()), block.first_key()));
        } else {
            for p in block.ptrs() {
                self.collect_leaves(p.child, out);
            }
        }
    }

    /// Checks every structural invariant; the error says which one broke.
    /// Leaves fit their data size, non-root blocks are not empty, keys are
    /// strictly increasing across the whole tree, every parent key equals
    /// its child's first key, nodes hold at most `NODEPTRS` pointers, and
    /// levels decrease by one per step down.
    pub fn check(&self) -> Result<(), String> {
        self.check_block(self.root, self.blocks[self.root].level())?;
        let items = self.all_items();
        if let Some(w) = items.windows(2).find(|w| w[0].key >= w[1].key) {
            return Err(format!("keys out of order: {:?} then {:?}", w[0].key, w[1].key));
        }
        Ok(())
    }

    fn check_block(&self, b: usize, level: usize) -> Result<(), String> {
        let block = &self.blocks[b];
        if block.level() != level {
            return Err(format!("block {b} at level {} expected {level}", block.level()));
        }
        if b != self.root && block.nritems() == 0 {
            return Err(format!("empty non-root block {b}"));
        }
        if level == 0 {
            let used = space_used(block.items());
            if !block.is_leaf() || used > self.geo.leaf_data_size() {
                return Err(format!("leaf {b} uses {used} bytes"));
            }
            return Ok(());
        }
        if block.nritems() > self.geo.nodeptrs() {
            return Err(format!("node {b} holds {} pointers", block.nritems()));
        }
        for p in block.ptrs() {
            if self.blocks[p.child].first_key() != Some(p.key) {
                return Err(format!("node {b} key {:?} != first key of child {}", p.key, p.child));
            }
            self.check_block(p.child, level - 1)?;
        }
        Ok(())
    }
}
