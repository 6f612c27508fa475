//! `split_leaf` and the leaf pushes it tries first (`push_leaf_right`,
//! `push_leaf_left`), following the choices of `fs/btrfs/ctree.c`: the
//! append special case, `split = 0` (a new empty leaf for an item past
//! either end), the mid split, and a second split when the new item still
//! does not fit (`split = 2`; `push_for_double_split` is not modelled).

use super::block::{Block, space_used};
use super::{ITEM_HEADER_SIZE, Key, Path, Tree};

/// How a leaf is split, as `split_leaf`'s `split` variable says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SplitKind {
    /// `split = 0`: a new empty leaf next to this one.
    Empty,
    /// `split = 1`: move `[mid, n)` to a new right leaf.
    Mid,
    /// `split = 2`: as `Mid`, then split once more.
    Double,
}

impl Tree {
    /// `split_leaf(trans, root, ins_key, path, data_size, extend)`: make
    /// `data_size` bytes of room at the path's leaf slot.
    pub(crate) fn split_leaf(&mut self, path: &mut Path, key: &Key, data_size: u32, extend: bool) {
        let lds = self.geo.leaf_data_size();
        let (l, slot) = (path.nodes[0], path.slots[0]);
        if extend {
            let cur = self.blocks[l].items().get(slot).map_or(0, |i| i.data_size);
            if data_size + cur + ITEM_HEADER_SIZE > lds {
                return;
            }
        }
        if path.nodes.len() > 1 {
            let n = self.blocks[l].nritems();
            let free = i64::from(self.leaf_free_space(l));
            let need = i64::from(data_size) - if slot < n { free } else { 0 };
            let need = need.max(0) as u32;
            if !self.push_leaf_right(path, need, need, false, 0) {
                let need = i64::from(data_size) - if slot > 0 { free } else { 0 };
                let need = need.max(0) as u32;
                self.push_leaf_left(path, need, need, false, usize::MAX);
            }
            if self.leaf_free_space(path.nodes[0]) >= data_size {
                return;
            }
        } else {
            self.insert_new_root(path, 1);
        }
        let mut doubles = 0;
        loop {
            let (kind, mid) = self.choose_split(path, data_size, extend);
            if kind == SplitKind::Empty {
                self.split_to_empty_leaf(path, key, mid);
                return;
            }
            self.copy_for_split(path, mid);
            if kind != SplitKind::Double || doubles > 0 {
                return;
            }
            doubles += 1;
        }
    }

    /// The `split`/`mid` choice of `split_leaf` (its `again:` block).
    fn choose_split(&self, path: &Path, data_size: u32, extend: bool) -> (SplitKind, usize) {
        let lds = self.geo.leaf_data_size();
        let items = self.blocks[path.nodes[0]].items();
        let (slot, n) = (path.slots[0], items.len());
        let used = |a: usize, b: usize| space_used(&items[a..b]);
        let mut mid = n.div_ceil(2);
        let tail_or_double = |mid: usize| {
            if mid != n && used(mid, n) + data_size > lds {
                SplitKind::Double
            } else {
                SplitKind::Mid
            }
        };
        if mid <= slot {
            if n == 1 || used(mid, n) + data_size > lds {
                if slot >= n {
                    return (SplitKind::Empty, mid);
                }
                mid = slot;
                return (tail_or_double(mid), mid);
            }
        } else if used(0, mid) + data_size > lds {
            if !extend && data_size > 0 && slot == 0 {
                return (SplitKind::Empty, mid);
            } else if (extend || data_size == 0) && slot == 0 {
                mid = 1;
            } else {
                mid = slot;
                return (tail_or_double(mid), mid);
            }
        }
        (SplitKind::Mid, mid)
    }

    /// `split == 0`: a new empty leaf right of the leaf (item past the end)
    /// or left of it (item before slot 0); the path moves to it.
    fn split_to_empty_leaf(&mut self, path: &mut Path, key: &Key, mid: usize) {
        let right = self.alloc_block(Block::leaf_with(Vec::new()));
        self.stats.leaf_splits += 1;
        if mid <= path.slots[0] {
            self.insert_ptr(path, 1, *key, right, path.slots[1] + 1);
            path.slots[1] += 1;
        } else {
            self.insert_ptr(path, 1, *key, right, path.slots[1]);
            if path.slots[1] == 0 {
                self.fixup_low_keys(path, *key, 1);
            }
        }
        path.nodes[0] = right;
        path.slots[0] = 0;
    }

    /// `copy_for_split`: items `[mid, n)` go to a new right leaf; the path
    /// follows the insertion slot.
    fn copy_for_split(&mut self, path: &mut Path, mid: usize) {
        let l = path.nodes[0];
        let moved = self.leaf_mut(l).split_off(mid);
        self.blocks[l].shrink_items();
        self.stats.bytes_moved += u64::from(space_used(&moved));
        let key = moved.first().map(|i| i.key);
        let right = self.alloc_block(Block::leaf_with(moved));
        self.stats.leaf_splits += 1;
        if let Some(k) = key {
            self.insert_ptr(path, 1, k, right, path.slots[1] + 1);
        } else {
            self.insert_ptr(path, 1, Key::new(u64::MAX, u8::MAX, u64::MAX), right, path.slots[1] + 1);
        }
        if mid <= path.slots[0] {
            path.nodes[0] = right;
            path.slots[0] -= mid;
            path.slots[1] += 1;
        }
    }

    /// `push_leaf_right(path, min_data_size, data_size, empty, min_slot)`:
    /// true (kernel 0) if the item can now go in (or items moved).
    pub(crate) fn push_leaf_right(&mut self, path: &mut Path, min_data_size: u32, data_size: u32, empty: bool, min_slot: usize) -> bool {
        if path.nodes.len() < 2 {
            return false;
        }
        let (left, upper, pslot) = (path.nodes[0], path.nodes[1], path.slots[1]);
        if pslot + 1 >= self.blocks[upper].nritems() {
            return false;
        }
        let right = self.blocks[upper].ptrs()[pslot + 1].child;
        self.stats.sibling_reads += 1;
        self.visit(right);
        if self.leaf_free_space(right) < data_size {
            return false;
        }
        self.cow(right, Some(upper));
        let left_n = self.blocks[left].nritems();
        if left_n == 0 {
            return false;
        }
        if path.slots[0] == left_n && !empty {
            path.nodes[0] = right;
            path.slots[0] = 0;
            path.slots[1] += 1;
            return true;
        }
        self.push_leaf_right_items(path, right, min_data_size, empty, min_slot)
    }

    /// `__push_leaf_right`: move items from the end of the left leaf.
    fn push_leaf_right_items(&mut self, path: &mut Path, right: usize, data_size: u32, empty: bool, min_slot: usize) -> bool {
        let left = path.nodes[0];
        let free_space = self.leaf_free_space(right);
        let left_free = self.leaf_free_space(left);
        let items = self.blocks[left].items();
        let left_n = items.len();
        let nr = if empty { 0 } else { min_slot.max(1) };
        let (mut push_items, mut push_space) = (0usize, 0u32);
        if path.slots[0] >= left_n {
            push_space += data_size;
        }
        let mut i = left_n;
        while i > nr {
            i -= 1;
            if !empty && push_items > 0 {
                if path.slots[0] > i {
                    break;
                }
                if path.slots[0] == i && left_free + push_space * 2 > free_space {
                    break;
                }
            }
            if path.slots[0] == i {
                push_space += data_size;
            }
            let this = items[i].data_size + ITEM_HEADER_SIZE;
            if this + push_space > free_space {
                break;
            }
            push_items += 1;
            push_space += this;
        }
        if push_items == 0 {
            return false;
        }
        let moved = self.leaf_mut(left).split_off(left_n - push_items);
        self.blocks[left].shrink_items();
        let shifted = self.leaf_used(right);
        self.stats.bytes_moved += u64::from(space_used(&moved) + shifted);
        self.blocks[right].reserve_items(moved.len());
        self.leaf_mut(right).splice(0..0, moved);
        self.stats.leaf_pushes += 1;
        self.stats.items_pushed += push_items as u64;
        self.stats.push_offsets += self.blocks[right].nritems() as u64;
        let upper = path.nodes[1];
        if let Some(k) = self.blocks[right].first_key()
            && let Some(p) = self.node_mut(upper).get_mut(path.slots[1] + 1)
        {
            p.key = k;
        }
        let left_n = left_n - push_items;
        if path.slots[0] >= left_n {
            path.slots[0] -= left_n;
            path.nodes[0] = right;
            path.slots[1] += 1;
        }
        true
    }

    /// `push_leaf_left(path, min_data_size, data_size, empty, max_slot)`.
    pub(crate) fn push_leaf_left(&mut self, path: &mut Path, min_data_size: u32, data_size: u32, empty: bool, max_slot: usize) -> bool {
        if path.nodes.len() < 2 || path.slots[1] == 0 {
            return false;
        }
        let (right, upper, pslot) = (path.nodes[0], path.nodes[1], path.slots[1]);
        if self.blocks[right].nritems() == 0 {
            return false;
        }
        let left = self.blocks[upper].ptrs()[pslot - 1].child;
        self.stats.sibling_reads += 1;
        self.visit(left);
        if self.leaf_free_space(left) < data_size {
            return false;
        }
        self.cow(left, Some(upper));
        self.push_leaf_left_items(path, left, min_data_size, empty, max_slot)
    }

    /// `__push_leaf_left`: move items from the front of the right leaf.
    fn push_leaf_left_items(&mut self, path: &mut Path, left: usize, data_size: u32, empty: bool, max_slot: usize) -> bool {
        let right = path.nodes[0];
        let free_space = self.leaf_free_space(left);
        let right_free = self.leaf_free_space(right);
        let items = self.blocks[right].items();
        let right_n = items.len();
        let nr = if empty {
            right_n.min(max_slot)
        } else {
            (right_n - 1).min(max_slot)
        };
        let (mut push_items, mut push_space) = (0usize, 0u32);
        for (i, item) in items.iter().enumerate().take(nr) {
            if !empty && push_items > 0 {
                if path.slots[0] < i {
                    break;
                }
                if path.slots[0] == i && right_free + push_space * 2 > free_space {
                    break;
                }
            }
            if path.slots[0] == i {
                push_space += data_size;
            }
            let this = item.data_size + ITEM_HEADER_SIZE;
            if this + push_space > free_space {
                break;
            }
            push_items += 1;
            push_space += this;
        }
        if push_items == 0 {
            return false;
        }
        let moved: Vec<_> = self.leaf_mut(right).drain(..push_items).collect();
        self.blocks[right].shrink_items();
        let shifted = self.leaf_used(right);
        self.stats.bytes_moved += u64::from(space_used(&moved) + shifted);
        let old_left_n = self.blocks[left].nritems();
        self.blocks[left].reserve_items(moved.len());
        self.leaf_mut(left).extend(moved);
        self.stats.leaf_pushes += 1;
        self.stats.items_pushed += push_items as u64;
        self.stats.push_offsets += right_n as u64;
        if let Some(k) = self.blocks[right].first_key() {
            self.fixup_low_keys(path, k, 1);
        }
        if path.slots[0] < push_items {
            path.slots[0] += old_left_n;
            path.nodes[0] = left;
            path.slots[1] -= 1;
        } else {
            path.slots[0] -= push_items;
        }
        true
    }
}
