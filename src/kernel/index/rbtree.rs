//! Red-black tree of `lib/rbtree.c`, with nodes embedded in slab objects.
//!
//! This is the pre-2024 btrfs open-inode index: one `struct rb_node` inside
//! each `struct btrfs_inode`, keyed by inode number, rooted in
//! `btrfs_root::inode_tree`. The rebalancing cases are those of
//! `__rb_insert()`, `__rb_erase_augmented()` and `____rb_erase_color()`
//! (non-augmented), step for step, so the shape of the tree (and every node
//! the kernel reads or writes) is the kernel's.
//!
//! Nodes live in a `Vec` arena; each node knows the byte address of the
//! object that embeds it. Every operation appends the cache lines it touches
//! to a caller-supplied `Vec<Touch>`: the `rb_node` fields at
//! `object + node_offset` (`__rb_parent_color` at +0, `rb_right` at +8,
//! `rb_left` at +16), the key at `object + key_offset`, and the
//! `rb_root` pointer.

mod balance;

use crate::kernel::mm::touch::{Access, Issue, Touch, record, record_issued};

/// `sizeof(struct rb_node)` on 64-bit (include/linux/rbtree_types.h).
pub const RB_NODE_BYTES: u64 = 24;
const PC_OFF: u64 = 0;
const RIGHT_OFF: u64 = 8;
const LEFT_OFF: u64 = 16;
const NIL: u32 = u32::MAX;
const BLACK: bool = true;
const RED: bool = false;

/// Where the tree's fields sit inside each embedding object, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RbLayout {
    /// Offset of the embedded `struct rb_node` (btrfs: `btrfs_inode::rb_node`).
    pub node_offset: u64,
    /// Offset of the key the walk compares (btrfs: `btrfs_ino()` reads
    /// `btrfs_inode::location.objectid`).
    pub key_offset: u64,
}

/// Handle to a node (an arena index); valid until the node is erased.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(u32);

impl NodeId {
    /// The arena index, for a caller that stores handles compactly.
    pub fn index(self) -> u32 {
        self.0
    }

    /// The handle of arena index `i`, as [`NodeId::index`] gave it; valid
    /// while that node is in the tree.
    pub fn from_index(i: u32) -> Self {
        NodeId(i)
    }
}

/// Node colour (bit 0 of `__rb_parent_color`: RB_RED = 0, RB_BLACK = 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    /// RB_RED.
    Red,
    /// RB_BLACK.
    Black,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

impl Side {
    fn flip(self) -> Self {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }

    fn offset(self) -> u64 {
        match self {
            Side::Left => LEFT_OFF,
            Side::Right => RIGHT_OFF,
        }
    }
}

// 32 bytes aligned to 32, so that a node never straddles two host cache
// lines: a walk's pointer chase then waits for one line per level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(32))]
struct Node {
    key: u64,
    obj: u64,
    parent: u32,
    left: u32,
    right: u32,
    black: bool,
}

/// A red-black property that does not hold (see [`RbTree::check_invariants`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RbViolation {
    /// The root is red.
    RedRoot,
    /// A red node has a red child (keys of both).
    RedRed(u64, u64),
    /// Two root-to-leaf paths have different black counts.
    BlackHeight(u32, u32),
    /// In-order keys are not strictly increasing (the pair found).
    Order(u64, u64),
    /// A child's parent pointer does not point back (child key).
    Parent(u64),
    /// The node count differs from `len()`.
    Count(usize, usize),
}

/// The tree (`struct rb_root`) plus its arena of embedded nodes.
#[derive(Clone, Debug)]
pub struct RbTree {
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: u32,
    root_addr: u64,
    layout: RbLayout,
    len: usize,
    last_depth: u32,
    /// The walk loop's branch as the core predicts it: the direction taken
    /// at the previous level walked (see [`RbTree::insert`]).
    predicted: Side,
    /// The nodes the last walk visited, root first: the next walk's likely
    /// path (inserts of rising keys walk the same right spine), whose host
    /// lines are prefetched before it starts, so that its pointer chase
    /// does not wait on the host's memory one level at a time.
    path: Vec<u32>,
    /// The node the last [`RbTree::append_unrecorded`] linked, still the
    /// largest (NIL once any other insert, erase or replacement ran).
    max_hint: u32,
}

impl RbTree {
    /// An empty tree whose `rb_root` pointer sits at byte address `root_addr`
    /// (btrfs: `&root->inode_tree`).
    pub fn new(layout: RbLayout, root_addr: u64) -> Self {
        Self {
            nodes: Vec::new(),
            free: Vec::new(),
            root: NIL,
            root_addr,
            layout,
            len: 0,
            last_depth: 0,
            predicted: Side::Right,
            path: Vec::new(),
            max_hint: NIL,
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the tree has no nodes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Nodes whose key the last walk (insert, lookup, first-at-or-after)
    /// compared: the levels it descended.
    pub fn last_walk_depth(&self) -> u32 {
        self.last_depth
    }

    /// Reserves room for `additional` more nodes in the arena (a tree
    /// filled to a known size grows without reallocating).
    pub fn reserve(&mut self, additional: usize) {
        self.nodes.reserve_exact(additional);
    }

    /// Key of a node.
    pub fn key(&self, id: NodeId) -> u64 {
        self.nodes[id.0 as usize].key
    }

    /// Byte address of the object embedding a node.
    pub fn object(&self, id: NodeId) -> u64 {
        self.nodes[id.0 as usize].obj
    }

    /// Colour of a node.
    pub fn color(&self, id: NodeId) -> Color {
        if self.nodes[id.0 as usize].black {
            Color::Black
        } else {
            Color::Red
        }
    }

    /// Inserts `key`, embedded in the object at `obj`, as btrfs
    /// `inode_tree_add()` does: walk from the root comparing keys,
    /// `rb_link_node()`, then `rb_insert_color()` (`__rb_insert()`).
    /// Returns `Err(existing)` and leaves the tree alone if the key is present.
    pub fn insert(&mut self, key: u64, obj: u64, t: &mut Vec<Touch>) -> Result<NodeId, NodeId> {
        self.max_hint = NIL;
        let slot = self.walk_to_slot(key, t);
        self.link_at(slot, key, obj, t)
    }

    /// [`RbTree::insert`] whose descent records nothing (an untimed
    /// prefill, whose touches are thrown away): the same tree, path,
    /// depth and branch prediction after it, the descent's touches left
    /// out of `t` (the link and rebalance still record theirs).
    pub fn insert_unrecorded(&mut self, key: u64, obj: u64, t: &mut Vec<Touch>) -> Result<NodeId, NodeId> {
        self.max_hint = NIL;
        let slot = self.walk_to_slot_unrecorded(key);
        self.link_at(slot, key, obj, t)
    }

    /// [`RbTree::insert_unrecorded`] for keys in rising order (a prefill
    /// of new inode numbers): a key above the last one appended links
    /// under that node, which is still the largest, without a descent
    /// (the descent to a key above every other goes right at every level,
    /// so the predicted side is right after it, as a descent would leave
    /// it). The tree is the one the descents build; the walk's path and
    /// depth are not updated (the next recorded walk sets them).
    pub fn append_unrecorded(&mut self, key: u64, obj: u64, t: &mut Vec<Touch>) -> Result<NodeId, NodeId> {
        let max = self.max_hint;
        if max != NIL && self.nodes[max as usize].key < key {
            self.predicted = Side::Right;
            let id = self.link_at(Ok((max, Side::Right)), key, obj, t)?;
            self.max_hint = id.0;
            return Ok(id);
        }
        let id = self.insert_unrecorded(key, obj, t)?;
        if self.path.iter().all(|&n| self.nodes[n as usize].key < key) {
            self.max_hint = id.0;
        }
        Ok(id)
    }

    /// The rest of an insert after its descent found `slot`.
    fn link_at(&mut self, slot: Result<(u32, Side), u32>, key: u64, obj: u64, t: &mut Vec<Touch>) -> Result<NodeId, NodeId> {
        let (parent, side) = match slot {
            Ok(slot) => slot,
            Err(found) => return Err(NodeId(found)),
        };
        let node = self.alloc_node(key, obj, parent);
        // rb_link_node(): node->__rb_parent_color = parent; children NULL; *link = node.
        for off in [PC_OFF, LEFT_OFF, RIGHT_OFF] {
            record(t, self.field(node, off), Access::Write);
        }
        match parent {
            NIL => self.set_root(node, t),
            p => self.write_child(p, side, node, t),
        }
        self.len += 1;
        self.insert_color(node, t);
        Ok(NodeId(node))
    }

    /// Finds `key` by the same walk as an insert.
    pub fn lookup(&mut self, key: u64, t: &mut Vec<Touch>) -> Option<NodeId> {
        self.walk_to_slot(key, t).err().map(NodeId)
    }

    /// First node with key >= `key`, as btrfs `btrfs_find_first_inode()`
    /// did before 2024: descend; if the key is absent, `rb_next()` from the
    /// last node visited until a key >= `key`.
    pub fn first_at_or_after(&mut self, key: u64, t: &mut Vec<Touch>) -> Option<NodeId> {
        let (mut prev, _) = match self.walk_to_slot(key, t) {
            Ok(slot) => slot,
            Err(found) => return Some(NodeId(found)),
        };
        while prev != NIL {
            record(t, self.key_addr(prev), Access::Read);
            if key <= self.nodes[prev as usize].key {
                return Some(NodeId(prev));
            }
            prev = self.next_raw(prev, t);
        }
        None
    }

    /// In-order successor (`rb_next()`).
    pub fn next(&self, id: NodeId, t: &mut Vec<Touch>) -> Option<NodeId> {
        let n = self.next_raw(id.0, t);
        (n != NIL).then_some(NodeId(n))
    }

    /// Erases `key` if present (lookup walk, then [`RbTree::erase_node`]);
    /// returns the embedding object's address.
    pub fn erase(&mut self, key: u64, t: &mut Vec<Touch>) -> Option<u64> {
        let id = self.lookup(key, t)?;
        Some(self.erase_node(id, t))
    }

    /// Unlinks a node (`rb_erase()`: `__rb_erase_augmented()` then
    /// `____rb_erase_color()`), as btrfs `inode_tree_del()` does with the
    /// inode in hand (no walk). Returns the embedding object's address.
    pub fn erase_node(&mut self, id: NodeId, t: &mut Vec<Touch>) -> u64 {
        self.max_hint = NIL;
        let node = id.0;
        let child = self.read_child(node, Side::Right, t);
        let left = self.read_child(node, Side::Left, t);
        let rebalance = if left == NIL {
            let (parent, black) = self.read_pc(node, t);
            self.change_child(node, child, parent, t);
            match (child, black) {
                (NIL, BLACK) => parent,
                (NIL, RED) => NIL,
                (c, b) => {
                    self.set_pc(c, parent, b, t);
                    NIL
                }
            }
        } else if child == NIL {
            let (parent, black) = self.read_pc(node, t);
            self.set_pc(left, parent, black, t);
            self.change_child(node, left, parent, t);
            NIL
        } else {
            self.erase_with_successor(node, child, t)
        };
        if rebalance != NIL {
            self.erase_color(rebalance, t);
        }
        self.free.push(node);
        self.len -= 1;
        self.nodes[node as usize].obj
    }

    /// Moves a node into another object with the same key
    /// (`rb_replace_node()`, btrfs's path for an inode being freed).
    /// Returns the old object's address.
    pub fn replace_object(&mut self, id: NodeId, new_obj: u64, t: &mut Vec<Touch>) -> u64 {
        self.max_hint = NIL;
        let n = id.0;
        let (parent, _) = self.read_pc(n, t);
        let (left, right) = (self.read_child(n, Side::Left, t), self.read_child(n, Side::Right, t));
        let old = self.nodes[n as usize].obj;
        self.nodes[n as usize].obj = new_obj; // *new = *victim
        for off in [PC_OFF, RIGHT_OFF, LEFT_OFF] {
            record(t, self.field(n, off), Access::Write);
        }
        for c in [left, right] {
            if c != NIL {
                self.set_parent(c, n, t);
            }
        }
        if parent == NIL {
            record(t, self.root_addr, Access::Write);
        } else {
            let side = if self.read_child(parent, Side::Left, t) == n {
                Side::Left
            } else {
                Side::Right
            };
            self.write_child(parent, side, n, t);
        }
        old
    }

    // ----- untracked queries (oracles, reports, tests) -----

    /// Node with `key`, without recording touches.
    pub fn find(&self, key: u64) -> Option<NodeId> {
        self.depth_and_node(key).map(|(_, n)| NodeId(n))
    }

    /// Depth of `key`'s node (root = 1), without recording touches.
    pub fn depth_of(&self, key: u64) -> Option<u32> {
        self.depth_and_node(key).map(|(d, _)| d)
    }

    /// Height: nodes on the longest root-to-leaf path (empty = 0, root = 1).
    pub fn height(&self) -> u32 {
        self.depth_stats().0
    }

    /// Sum of all node depths (root = 1); mean depth = this / `len()`.
    pub fn depth_sum(&self) -> u64 {
        self.depth_stats().1
    }

    /// Black nodes on the leftmost path (the black height, if the tree is valid).
    pub fn black_height(&self) -> u32 {
        let (mut n, mut h) = (self.root, 0);
        while n != NIL {
            h += u32::from(self.nodes[n as usize].black);
            n = self.nodes[n as usize].left;
        }
        h
    }

    /// `(key, object address)` pairs in key order.
    pub fn in_order(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(self.len);
        let (mut stack, mut n) = (Vec::new(), self.root);
        while n != NIL || !stack.is_empty() {
            while n != NIL {
                stack.push(n);
                n = self.nodes[n as usize].left;
            }
            let top = stack.pop().expect("loop condition");
            out.push((self.nodes[top as usize].key, self.nodes[top as usize].obj));
            n = self.nodes[top as usize].right;
        }
        out
    }

    /// Checks the red-black properties and the links: root black, no red
    /// node with a red child, equal black count on every root-to-leaf path,
    /// keys strictly increasing in order, parent pointers consistent, count.
    pub fn check_invariants(&self) -> Result<(), RbViolation> {
        if self.root != NIL && !self.nodes[self.root as usize].black {
            return Err(RbViolation::RedRoot);
        }
        if self.root != NIL && self.nodes[self.root as usize].parent != NIL {
            return Err(RbViolation::Parent(self.nodes[self.root as usize].key));
        }
        let mut leaf_black: Option<u32> = None;
        let mut count = 0;
        let mut stack = vec![(self.root, 0u32)];
        while let Some((n, above)) = stack.pop() {
            if n == NIL {
                match leaf_black {
                    Some(b) if b != above => return Err(RbViolation::BlackHeight(b, above)),
                    _ => leaf_black = Some(above),
                }
                continue;
            }
            count += 1;
            let node = self.nodes[n as usize];
            for c in [node.left, node.right] {
                self.check_child(n, c)?;
                stack.push((c, above + u32::from(node.black)));
            }
        }
        if count != self.len {
            return Err(RbViolation::Count(count, self.len));
        }
        let keys = self.in_order();
        match keys.windows(2).find(|w| w[0].0 >= w[1].0) {
            Some(w) => Err(RbViolation::Order(w[0].0, w[1].0)),
            None => Ok(()),
        }
    }

    fn check_child(&self, n: u32, c: u32) -> Result<(), RbViolation> {
        if c == NIL {
            return Ok(());
        }
        let (node, child) = (self.nodes[n as usize], self.nodes[c as usize]);
        if child.parent != n {
            return Err(RbViolation::Parent(child.key));
        }
        if !node.black && !child.black {
            return Err(RbViolation::RedRed(node.key, child.key));
        }
        Ok(())
    }

    // ----- walks -----

    /// Descends from the root comparing `key` (btrfs `inode_tree_add()`'s
    /// loop). `Err(node)` if found; else `Ok((parent, side))` of the empty link.
    fn walk_to_slot(&mut self, key: u64, t: &mut Vec<Touch>) -> Result<(u32, Side), u32> {
        self.walk::<true>(key, t)
    }

    /// [`RbTree::walk_to_slot`] without its touches and host prefetches:
    /// the same result, path, depth and predicted side.
    fn walk_to_slot_unrecorded(&mut self, key: u64) -> Result<(u32, Side), u32> {
        self.walk::<false>(key, &mut Vec::new())
    }

    /// The descent, recording its touches (and prefetching the last
    /// path's host lines) when `RECORD`.
    #[inline(always)]
    fn walk<const RECORD: bool>(&mut self, key: u64, t: &mut Vec<Touch>) -> Result<(u32, Side), u32> {
        if RECORD {
            record(t, self.root_addr, Access::Read);
            for &n in &self.path {
                crate::engine::prefetch::prefetch_read(self.nodes.as_ptr().wrapping_add(n as usize));
            }
        }
        self.path.clear();
        let (mut parent, mut side, mut n, mut depth) = (NIL, Side::Left, self.root, 0);
        while n != NIL {
            depth += 1;
            self.path.push(n);
            if RECORD {
                record(t, self.key_addr(n), Access::Read);
            }
            let k = self.nodes[n as usize].key;
            if key == k {
                self.last_depth = depth;
                return Err(n);
            }
            side = if key < k { Side::Left } else { Side::Right };
            parent = n;
            if RECORD {
                // The child pointer's address needs only `n`, not the key:
                // when the compare branch goes the predicted way the core
                // loads both lines at once; a misprediction replays the
                // child load after the key arrives.
                let issue = if side == self.predicted {
                    Issue::WithPrevious
                } else {
                    Issue::AfterPrevious
                };
                record_issued(t, self.field(n, side.offset()), Access::Read, issue);
            }
            self.predicted = side;
            n = self.child(n, side);
        }
        self.last_depth = depth;
        Ok((parent, side))
    }

    fn next_raw(&self, mut n: u32, t: &mut Vec<Touch>) -> u32 {
        record(t, self.field(n, PC_OFF), Access::Read); // RB_EMPTY_NODE()
        let right = self.read_child(n, Side::Right, t);
        if right != NIL {
            n = right;
            loop {
                let l = self.read_child(n, Side::Left, t);
                if l == NIL {
                    return n;
                }
                n = l;
            }
        }
        loop {
            let (p, _) = self.read_pc(n, t);
            if p == NIL || self.read_child(p, Side::Right, t) != n {
                return p;
            }
            n = p;
        }
    }

    fn depth_and_node(&self, key: u64) -> Option<(u32, u32)> {
        let (mut n, mut d) = (self.root, 0);
        while n != NIL {
            d += 1;
            let k = self.nodes[n as usize].key;
            if key == k {
                return Some((d, n));
            }
            n = if key < k {
                self.nodes[n as usize].left
            } else {
                self.nodes[n as usize].right
            };
        }
        None
    }

    /// The greatest node depth and the sum of all depths (root = 1), in
    /// one walk whose stack holds at most two entries per level (no list
    /// of every node's depth: at case 2's 10M nodes that was 40 MB and a
    /// second walk per figure). A caller that wants both figures asks
    /// for them here once ([`RbTree::height`] and [`RbTree::depth_sum`]
    /// each walk the whole tree).
    pub fn depth_stats(&self) -> (u32, u64) {
        let (mut max, mut sum) = (0u32, 0u64);
        let mut stack = vec![(self.root, 1u32)];
        while let Some((n, d)) = stack.pop() {
            if n != NIL {
                max = max.max(d);
                sum += u64::from(d);
                stack.push((self.nodes[n as usize].left, d + 1));
                stack.push((self.nodes[n as usize].right, d + 1));
            }
        }
        (max, sum)
    }
}

#[cfg(test)]
mod tests;
