//! One XFS allocation btree (the bnobt or the cntbt of an allocation group),
//! with its records really packed into fixed-size blocks.
//!
//! Follows `fs/xfs/libxfs/xfs_alloc_btree.c` for the geometry
//! (`xfs_allocbt_maxrecs`: (blocklen - header) / 8 records per leaf,
//! (blocklen - header) / (8 + 4) key/pointer pairs per node, minimum half)
//! and `xfs_bnobt_key_diff` / `xfs_cntbt_key_diff` for the orderings.
//! Blocks live in a `Vec` arena; a leaf holds a `Vec` of 8-byte records, a
//! node a `Vec` of keys and a `Vec` of block pointers, never a node per
//! record.

/// One free-space record, `xfs_alloc_rec`: a free extent of `blockcount`
/// blocks starting at AG block `startblock` (8 bytes on disk).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AllocRec {
    /// First free AG block (`ar_startblock`).
    pub startblock: u32,
    /// Length in blocks (`ar_blockcount`).
    pub blockcount: u32,
}

impl AllocRec {
    /// A record for `blockcount` free blocks starting at `startblock`.
    pub fn new(startblock: u32, blockcount: u32) -> Self {
        Self { startblock, blockcount }
    }

    /// One past the last block of the extent (AG block number, as u64 so it
    /// cannot overflow).
    pub fn end(&self) -> u64 {
        u64::from(self.startblock) + u64::from(self.blockcount)
    }
}

/// Which of the two free-space btrees: the ordering of its records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BtreeKind {
    /// bnobt: ordered by `startblock` (`xfs_bnobt_key_diff`).
    Bno,
    /// cntbt: ordered by `(blockcount, startblock)` (`xfs_cntbt_key_diff`).
    Cnt,
}

impl BtreeKind {
    /// The record's sort key in this tree, packed in a u64 so that integer
    /// order equals the kernel's key order.
    pub fn key(self, r: AllocRec) -> u64 {
        match self {
            BtreeKind::Bno => u64::from(r.startblock),
            BtreeKind::Cnt => (u64::from(r.blockcount) << 32) | u64::from(r.startblock),
        }
    }
}

/// Records per leaf and pointers per node of the allocation btrees,
/// `xfs_allocbt_maxrecs` and `m_alloc_mnr` (minimum = maximum / 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BtreeGeometry {
    /// Maximum records in a leaf block (505 for 4 KiB v5).
    pub leaf_maxrecs: usize,
    /// Maximum key/pointer pairs in a node block (336 for 4 KiB v5).
    pub node_maxrecs: usize,
    /// Minimum records in a non-root leaf (252 for 4 KiB v5).
    pub leaf_minrecs: usize,
    /// Minimum pointers in a non-root node (168 for 4 KiB v5).
    pub node_minrecs: usize,
    /// Bytes of the block header before the first record or key (56 for
    /// v5); places records, keys and pointers on 64-byte cache lines.
    pub header_len: u32,
}

impl BtreeGeometry {
    /// Bytes per record (`xfs_alloc_rec_t`) and per key.
    pub const REC_LEN: u32 = 8;
    /// Bytes per node pointer (short-form `__be32` AG block).
    pub const PTR_LEN: u32 = 4;
    /// `XFS_BTREE_SBLOCK_CRC_LEN`: short-form header of a v5 (CRC) block.
    pub const V5_HEADER_LEN: u32 = 56;
    /// `XFS_BTREE_SBLOCK_LEN`: short-form header of a v4 block.
    pub const V4_HEADER_LEN: u32 = 16;

    /// Geometry for `block_size`-byte blocks with a `header_len`-byte header.
    /// Fails (field `block_size`) if a leaf or node would hold fewer than 4
    /// entries.
    pub fn new(block_size: u32, header_len: u32) -> Result<Self, crate::param::ParamError> {
        let payload = block_size.saturating_sub(header_len);
        let leaf = (payload / Self::REC_LEN) as usize;
        let node = (payload / (Self::REC_LEN + Self::PTR_LEN)) as usize;
        if leaf < 4 || node < 4 {
            return Err(crate::param::ParamError::new(
                "block_size",
                format!(
                    "{block_size}-byte blocks with a {header_len}-byte header hold \
                     {leaf} records / {node} pointers; need at least 4"
                ),
            ));
        }
        Ok(Self {
            leaf_maxrecs: leaf,
            node_maxrecs: node,
            leaf_minrecs: leaf / 2,
            node_minrecs: node / 2,
            header_len,
        })
    }

    /// 4 KiB v5 geometry: 505 records per leaf, 336 pointers per node.
    pub fn v5_4k() -> Self {
        Self {
            leaf_maxrecs: 505,
            node_maxrecs: 336,
            leaf_minrecs: 252,
            node_minrecs: 168,
            header_len: Self::V5_HEADER_LEN,
        }
    }
}

/// Null block pointer (`NULLAGBLOCK`).
pub(crate) const NULLBLOCK: u32 = u32::MAX;

/// A leaf block: records plus left/right sibling pointers.
#[derive(Clone, Debug)]
pub(crate) struct Leaf {
    pub(crate) recs: Vec<AllocRec>,
    pub(crate) left: u32,
    pub(crate) right: u32,
}

/// A node block: `keys[i]` is the lowest key under `ptrs[i]`.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) keys: Vec<u64>,
    pub(crate) ptrs: Vec<u32>,
}

/// One block of the arena.
#[derive(Clone, Debug)]
pub(crate) enum Block {
    Leaf(Leaf),
    Node(Node),
    Free,
}

/// Counts of what the btree code touched since the last reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BtreeStats {
    /// Blocks read or made: one per level of a root-to-leaf lookup, one per
    /// block descended into at a leaf-boundary increment/decrement, one per
    /// sibling read (and per block a second cursor walks through) or new
    /// block during a shift, split or join.
    pub blocks_visited: u64,
    /// Records read with `get_rec` (`xfs_alloc_get_rec`).
    pub records_examined: u64,
    /// Key comparisons made by the binary searches inside blocks.
    pub keys_compared: u64,
    /// Record modifications: inserts, deletes, in-place updates.
    pub updates: u64,
    /// Block splits.
    pub splits: u64,
    /// Block joins (merges) and record shifts between siblings.
    pub joins: u64,
    /// Blocks a cursor had to get through the buffer cache
    /// (`xfs_btree_read_buf_block` -> `xfs_trans_read_buf`): every block
    /// visited except a lookup level whose block the cursor already holds
    /// (`xfs_btree_lookup_get_block` reuses `bc_levels[level].bp`) and a
    /// new block a split or a new root takes (`xfs_btree_get_buf_block`).
    pub buffer_reads: u64,
    /// 64-byte lines of btree blocks touched by lookups (header, binary
    /// search probes, the pointer followed) and by the descent of an
    /// increment/decrement, the first time in this call.
    pub lines_cold: u64,
    /// The same lines touched again later in the same call.
    pub lines_warm: u64,
    /// Lines touched for the first time in this call that an earlier
    /// call of the run touched (only when the tree keeps lines warm
    /// between calls, [`AllocBtree::keep_warm`]; otherwise they are
    /// `lines_cold`).
    pub lines_recent: u64,
    /// `xfs_extent_busy_trim` calls that found the AG's busy tree
    /// non-empty and so took `eb_lock` and walked it.
    pub busy_searches: u64,
    /// Busy-tree nodes visited by those walks.
    pub busy_nodes: u64,
    /// Free extents the busy tree trimmed (or emptied): each fires the
    /// `xfs_extent_busy_trim` tracepoint.
    pub busy_trims: u64,
    /// Btree cursors made and deleted (`xfs_allocbt_init_cursor` +
    /// `xfs_btree_del_cursor`), counted by the allocator functions.
    pub cursors: u64,
    /// AGF field logs (`xfs_alloc_log_agf`), e.g. `agf_longest` by
    /// `xfs_alloc_fixup_longest`.
    pub agf_logs: u64,
    /// Calls through `cur->bc_ops` (6.x fs/xfs/libxfs/xfs_btree.c), each
    /// an indirect call: per lookup `init_ptr_from_cur`
    /// (`xfs_btree_init_ptr_from_cur`); per node level `get_maxrecs`
    /// (`xfs_btree_ptr_addr` -> `xfs_btree_ptr_offset`); per probe
    /// `cmp_key_with_cur` (`key_diff` before 6.15), and in a leaf also
    /// `init_key_from_rec` (`xfs_lookup_get_search_key`); per record
    /// inserted `init_rec_from_cur`, `init_key_from_rec` and
    /// `get_maxrecs` (`xfs_btree_insrec`); per record deleted from a
    /// tree of more than one level `get_minrecs` (`xfs_btree_delrec`);
    /// per parent-key rewrite after a block's first entry changed
    /// `init_key_from_rec` (`xfs_btree_update_keys`).
    pub indirect_calls: u64,
}

impl BtreeStats {
    /// The sum of two sets of counters.
    pub fn plus(self, o: BtreeStats) -> BtreeStats {
        BtreeStats {
            blocks_visited: self.blocks_visited.saturating_add(o.blocks_visited),
            records_examined: self.records_examined.saturating_add(o.records_examined),
            keys_compared: self.keys_compared.saturating_add(o.keys_compared),
            indirect_calls: self.indirect_calls.saturating_add(o.indirect_calls),
            updates: self.updates.saturating_add(o.updates),
            splits: self.splits.saturating_add(o.splits),
            joins: self.joins.saturating_add(o.joins),
            buffer_reads: self.buffer_reads.saturating_add(o.buffer_reads),
            lines_cold: self.lines_cold.saturating_add(o.lines_cold),
            lines_warm: self.lines_warm.saturating_add(o.lines_warm),
            lines_recent: self.lines_recent.saturating_add(o.lines_recent),
            busy_searches: self.busy_searches.saturating_add(o.busy_searches),
            busy_nodes: self.busy_nodes.saturating_add(o.busy_nodes),
            busy_trims: self.busy_trims.saturating_add(o.busy_trims),
            cursors: self.cursors.saturating_add(o.cursors),
            agf_logs: self.agf_logs.saturating_add(o.agf_logs),
        }
    }
}

/// One allocation btree: an arena of blocks, a root and a height.
#[derive(Clone, Debug)]
pub struct AllocBtree {
    pub(crate) kind: BtreeKind,
    pub(crate) geo: BtreeGeometry,
    pub(crate) blocks: Vec<Block>,
    pub(crate) free_list: Vec<u32>,
    pub(crate) root: u32,
    pub(crate) height: usize,
    pub(crate) nrecs: u64,
    /// What this tree's code touched; callers reset and read it.
    pub stats: BtreeStats,
    /// Lines (block << 16 | line) touched in this call and, when kept
    /// warm, by earlier calls.
    lines: LineSet,
}

/// The lines a call has touched, to tell `lines_cold`, `lines_recent`
/// and `lines_warm` apart; shared by the allocation btrees and the busy
/// tree.
#[derive(Clone, Debug, Default)]
pub(crate) struct LineSet {
    /// Lines touched since the call began.
    touched: std::collections::BTreeSet<u64>,
    /// Lines touched by earlier calls (`None`: every call starts cold).
    earlier: Option<std::collections::BTreeSet<u64>>,
    /// Touches are not recorded (a tree being built, not a call).
    paused: bool,
}

impl LineSet {
    /// Whether lines of earlier calls are remembered (see
    /// [`AllocBtree::keep_warm`]).
    pub(crate) fn keep_warm(&mut self, on: bool) {
        self.earlier = on.then(std::collections::BTreeSet::new);
    }

    /// The start of a call: this call's lines become earlier ones, or are
    /// forgotten.
    pub(crate) fn next_call(&mut self) {
        match &mut self.earlier {
            Some(e) => e.append(&mut self.touched),
            None => self.touched.clear(),
        }
    }

    /// Counts a touch of `line` in `stats`: cold the first time in the
    /// run (or in the call, when not kept warm), recent the first time in
    /// this call if an earlier call touched it, warm after.
    pub(crate) fn touch(&mut self, line: u64, stats: &mut BtreeStats) {
        if self.paused {
            return;
        }
        if self.touched.insert(line) {
            if self.earlier.as_ref().is_some_and(|e| e.contains(&line)) {
                stats.lines_recent += 1;
            } else {
                stats.lines_cold += 1;
            }
        } else {
            stats.lines_warm += 1;
        }
    }
}

impl AllocBtree {
    /// An empty tree: a single empty root leaf.
    pub fn new(kind: BtreeKind, geo: BtreeGeometry) -> Self {
        let leaf = Leaf {
            recs: Vec::new(),
            left: NULLBLOCK,
            right: NULLBLOCK,
        };
        Self {
            kind,
            geo,
            blocks: vec![Block::Leaf(leaf)],
            free_list: Vec::new(),
            root: 0,
            height: 1,
            nrecs: 0,
            stats: BtreeStats::default(),
            lines: LineSet::default(),
        }
    }

    /// Inserts `recs` one by one as [`AllocBtree::insert`] does, without
    /// recording the lines they touch (building a tree, not a timed call),
    /// then zeroes the counters.
    pub fn insert_all_uncounted(&mut self, recs: impl IntoIterator<Item = AllocRec>) {
        self.lines.paused = true;
        for r in recs {
            self.insert(r);
        }
        self.lines.paused = false;
        self.reset_stats();
    }

    /// Lines an earlier call touched count as `lines_recent` instead of
    /// `lines_cold` (calls in quick succession on a warm AG, as a loop of
    /// allocations finds it); off by default (every call starts cold).
    pub fn keep_warm(&mut self, on: bool) {
        self.lines.keep_warm(on);
    }

    /// Bulk-loads a tree from records already sorted in this tree's key
    /// order (as `xfs_repair` rebuilds the trees), filling each block to
    /// `fill` of its maximum (clamped so every non-root block holds at
    /// least the minimum).
    pub fn bulk_load(kind: BtreeKind, geo: BtreeGeometry, recs: &[AllocRec], fill: f64) -> Self {
        Self::assemble(kind, geo, recs, |level, n| {
            if level == 0 {
                split_sizes(n, geo.leaf_maxrecs, geo.leaf_minrecs, fill)
            } else {
                split_sizes(n, geo.node_maxrecs, geo.node_minrecs, fill)
            }
        })
    }

    /// A tree over `recs` (sorted in this tree's key order) with the
    /// blocks of `levels` (leaves first: entries per block, left to
    /// right), as `xfs_db` read them from a live AG
    /// ([`super::layout::BtreeLayout`]). Fails if the levels do not hold
    /// exactly `recs`, or fail `check_tree` (`super::layout`).
    pub fn from_layout(kind: BtreeKind, geo: BtreeGeometry, recs: &[AllocRec], levels: &[Vec<usize>]) -> Result<Self, String> {
        let leaves: usize = levels.first().map_or(0, |l| l.iter().fold(0usize, |a, &n| a.saturating_add(n)));
        if leaves != recs.len() || recs.is_empty() {
            return Err(format!(
                "its leaves hold {leaves} records, the free space has {} extents",
                recs.len()
            ));
        }
        super::layout::check_tree(levels, &geo)?;
        Ok(Self::assemble(kind, geo, recs, |level, _| levels[level].clone()))
    }

    /// Builds the tree bottom up: `sizes(level, entries)` gives the
    /// entries of each block of a level holding `entries` in all.
    fn assemble(kind: BtreeKind, geo: BtreeGeometry, recs: &[AllocRec], mut sizes: impl FnMut(usize, usize) -> Vec<usize>) -> Self {
        let mut t = Self::new(kind, geo);
        if recs.is_empty() {
            return t;
        }
        t.blocks.clear();
        let leaf_sizes = sizes(0, recs.len());
        let mut level: Vec<(u64, u32)> = Vec::with_capacity(leaf_sizes.len());
        let mut at = 0;
        for (i, n) in leaf_sizes.iter().enumerate() {
            let chunk = recs[at..at + n].to_vec();
            at += n;
            let left = if i == 0 { NULLBLOCK } else { (i - 1) as u32 };
            let right = if i + 1 == leaf_sizes.len() { NULLBLOCK } else { (i + 1) as u32 };
            level.push((kind.key(chunk[0]), i as u32));
            t.blocks.push(Block::Leaf(Leaf { recs: chunk, left, right }));
        }
        while level.len() > 1 {
            let mut next = Vec::new();
            let mut at = 0;
            for n in sizes(t.height, level.len()) {
                let part = &level[at..at + n];
                at += n;
                let node = Node {
                    keys: part.iter().map(|p| p.0).collect(),
                    ptrs: part.iter().map(|p| p.1).collect(),
                };
                next.push((part[0].0, t.blocks.len() as u32));
                t.blocks.push(Block::Node(node));
            }
            level = next;
            t.height += 1;
        }
        t.root = level[0].1;
        t.nrecs = recs.len() as u64;
        t
    }

    /// Zeroes the counters and forgets which lines were touched (the start
    /// of a call: every btree line is then cold).
    pub fn reset_stats(&mut self) {
        self.stats = BtreeStats::default();
        self.lines.next_call();
    }

    /// Counts a touch of the 64-byte line holding byte `offset` of block
    /// `b`: cold the first time since the last reset, warm after.
    pub(crate) fn touch(&mut self, b: u32, offset: u32) {
        let line = (u64::from(b) << 16) | u64::from(offset / 64);
        self.lines.touch(line, &mut self.stats);
    }

    /// Byte offset of entry `i` of a leaf (record) or node (key).
    pub(crate) fn entry_offset(&self, i: usize) -> u32 {
        self.geo.header_len + (i as u32) * BtreeGeometry::REC_LEN
    }

    /// Byte offset of pointer `i` of a node (after all `node_maxrecs` keys,
    /// `XFS_ALLOC_PTR_ADDR`).
    pub(crate) fn ptr_offset(&self, i: usize) -> u32 {
        self.geo.header_len + (self.geo.node_maxrecs as u32) * BtreeGeometry::REC_LEN + (i as u32) * BtreeGeometry::PTR_LEN
    }

    /// Which ordering this tree uses.
    pub fn kind(&self) -> BtreeKind {
        self.kind
    }

    /// The block geometry.
    pub fn geometry(&self) -> BtreeGeometry {
        self.geo
    }

    /// Number of records.
    pub fn len(&self) -> u64 {
        self.nrecs
    }

    /// True if the tree holds no record.
    pub fn is_empty(&self) -> bool {
        self.nrecs == 0
    }

    /// Number of levels (1 = the root is a leaf).
    pub fn height(&self) -> usize {
        self.height
    }

    /// Number of blocks in use (leaves and nodes).
    pub fn block_count(&self) -> usize {
        self.blocks.len() - self.free_list.len()
    }

    /// All records in key order, read leaf by leaf along the sibling chain
    /// (not counted in `stats`).
    pub fn records(&self) -> Vec<AllocRec> {
        let mut out = Vec::with_capacity(self.nrecs as usize);
        let mut b = self.root;
        while let Block::Node(n) = &self.blocks[b as usize] {
            b = n.ptrs[0];
        }
        while b != NULLBLOCK {
            let Block::Leaf(l) = &self.blocks[b as usize] else {
                break;
            };
            out.extend_from_slice(&l.recs);
            b = l.right;
        }
        out
    }

    /// The entries of each block at `level` (0 = leaves), left to right
    /// (not counted in `stats`): the tree's shape, as `xfs_db` prints
    /// `numrecs` block by block.
    pub fn level_sizes(&self, level: usize) -> Vec<usize> {
        let mut row = vec![self.root];
        for _ in level + 1..self.height {
            row = row
                .iter()
                .flat_map(|&b| match &self.blocks[b as usize] {
                    Block::Node(n) => n.ptrs.clone(),
                    _ => Vec::new(),
                })
                .collect();
        }
        row.iter().map(|&b| self.numrecs(b)).collect()
    }

    pub(crate) fn leaf(&self, b: u32) -> &Leaf {
        match &self.blocks[b as usize] {
            Block::Leaf(l) => l,
            _ => unreachable_block(),
        }
    }

    pub(crate) fn leaf_mut(&mut self, b: u32) -> &mut Leaf {
        match &mut self.blocks[b as usize] {
            Block::Leaf(l) => l,
            _ => unreachable_block(),
        }
    }

    pub(crate) fn node(&self, b: u32) -> &Node {
        match &self.blocks[b as usize] {
            Block::Node(n) => n,
            _ => unreachable_block(),
        }
    }

    pub(crate) fn node_mut(&mut self, b: u32) -> &mut Node {
        match &mut self.blocks[b as usize] {
            Block::Node(n) => n,
            _ => unreachable_block(),
        }
    }

    /// Number of entries (records or pointers) in block `b`.
    pub(crate) fn numrecs(&self, b: u32) -> usize {
        match &self.blocks[b as usize] {
            Block::Leaf(l) => l.recs.len(),
            Block::Node(n) => n.ptrs.len(),
            Block::Free => 0,
        }
    }

    /// Lowest key in block `b` (None if empty).
    pub(crate) fn first_key(&self, b: u32) -> Option<u64> {
        match &self.blocks[b as usize] {
            Block::Leaf(l) => l.recs.first().map(|r| self.kind.key(*r)),
            Block::Node(n) => n.keys.first().copied(),
            Block::Free => None,
        }
    }

    /// Takes a block from the free list or grows the arena.
    pub(crate) fn alloc_block(&mut self, blk: Block) -> u32 {
        if let Some(b) = self.free_list.pop() {
            self.blocks[b as usize] = blk;
            b
        } else {
            self.blocks.push(blk);
            (self.blocks.len() - 1) as u32
        }
    }

    /// Returns a block to the free list.
    pub(crate) fn free_block(&mut self, b: u32) {
        self.blocks[b as usize] = Block::Free;
        self.free_list.push(b);
    }

    /// Checks every structural invariant: key order, exact node keys,
    /// min/max entries per non-root block, uniform leaf depth, sibling
    /// chain, record count. Returns a description of the first violation.
    pub fn check(&self) -> Result<(), String> {
        let mut leaves = Vec::new();
        self.check_block(self.root, self.height - 1, true, &mut leaves)?;
        for (i, &b) in leaves.iter().enumerate() {
            let l = self.leaf(b);
            let want_left = if i == 0 { NULLBLOCK } else { leaves[i - 1] };
            let want_right = leaves.get(i + 1).copied().unwrap_or(NULLBLOCK);
            if l.left != want_left || l.right != want_right {
                return Err(format!("leaf {b}: bad sibling pointers"));
            }
        }
        let recs = self.records();
        if recs.len() as u64 != self.nrecs {
            return Err(format!("{} records, nrecs {}", recs.len(), self.nrecs));
        }
        for w in recs.windows(2) {
            if self.kind.key(w[0]) >= self.kind.key(w[1]) {
                return Err(format!("records out of order: {:?} {:?}", w[0], w[1]));
            }
        }
        Ok(())
    }

    fn check_block(&self, b: u32, level: usize, root: bool, leaves: &mut Vec<u32>) -> Result<(), String> {
        let n = self.numrecs(b);
        let (min, max) = if level == 0 {
            (self.geo.leaf_minrecs, self.geo.leaf_maxrecs)
        } else {
            (self.geo.node_minrecs, self.geo.node_maxrecs)
        };
        if n > max || (!root && n < min) || (root && level > 0 && n < 2) {
            return Err(format!("block {b} level {level}: {n} entries (min {min}, max {max})"));
        }
        match &self.blocks[b as usize] {
            Block::Leaf(_) if level == 0 => {
                leaves.push(b);
                Ok(())
            }
            Block::Node(node) if level > 0 => {
                for (k, &c) in node.keys.iter().zip(&node.ptrs) {
                    if self.first_key(c) != Some(*k) {
                        return Err(format!("block {b}: key {k} != first key of child {c}"));
                    }
                    self.check_block(c, level - 1, false, leaves)?;
                }
                Ok(())
            }
            _ => Err(format!("block {b}: wrong type at level {level}")),
        }
    }
}

/// Sizes of the blocks that hold `n` entries, each near `fill * max` and
/// all within [min, max] when there is more than one block.
fn split_sizes(n: usize, max: usize, min: usize, fill: f64) -> Vec<usize> {
    let per = ((max as f64 * fill).round() as usize).clamp(min.max(1), max);
    let mut count = n.div_ceil(per).max(1);
    if n >= min && min > 0 {
        count = count.clamp(n.div_ceil(max), (n / min).max(1));
    }
    let (base, extra) = (n / count, n % count);
    (0..count).map(|i| base + usize::from(i < extra)).collect()
}

/// A block of the wrong type was reached: an internal bug, never user input.
#[cold]
fn unreachable_block() -> ! {
    unreachable!("allocation btree: block of the wrong type")
}
