//! The work of one directory insert, remove and lookup in an XFS v5
//! directory (`fs/xfs/libxfs/xfs_dir2*.c`, `xfs_da_btree.c`, 6.18), at a
//! given number of entries: the directory's form and shape (block, leaf
//! or node form; data blocks, leaf blocks, da btree levels, entries per
//! leaf) are computed from the on-disk geometry of 4 KiB directory blocks
//! and the names the lab makes (`f1`, `f2`, ...), and each stretch of code
//! is counted in [`Work`] (see [`crate::kernel::work`]).
//!
//! Geometry (`xfs_da_format.h`): a data block starts with the 64-byte
//! `xfs_dir3_data_hdr`; an entry takes `xfs_dir2_data_entsize(namelen)`,
//! 8 (inumber) + 1 (namelen) + name + 1 (ftype) + 2 (tag) rounded up to
//! 8 bytes; a hash/address leaf entry (`xfs_dir2_leaf_entry`) is 8 bytes
//! after the 64-byte `xfs_dir3_leaf_hdr`; a leaf-form leaf also holds a
//! 2-byte best-free per data block and a 4-byte tail; a block-form block
//! holds data, its leaf entries and an 8-byte tail; a da node
//! (`xfs_da3_intnode`) holds 8-byte (hash, before) entries after a 64-byte
//! header. Node-form leaves split at 504 entries and, under hash-random
//! inserts, sit ln 2 full on average (Yao, "On random 2-3 trees", 1978).

use crate::kernel::work::{Tally, Work};

/// Directory block size, bytes (mkfs default: the filesystem block).
pub const DIR_BLOCK: u64 = 4096;
/// `sizeof(struct xfs_dir3_data_hdr)`, `xfs_dir3_leaf_hdr`,
/// `xfs_dir3_free_hdr`, `xfs_da3_node_hdr` (v5): 64 bytes each.
pub const HDR: u64 = 64;
/// `sizeof(xfs_dir2_leaf_entry_t)` and of a da node entry.
pub const LEAF_ENTRY: u64 = 8;
/// Block-form tail (`xfs_dir2_block_tail`).
const BLOCK_TAIL: u64 = 8;
/// Leaf-form tail (`xfs_dir2_leaf_tail`).
const LEAF_TAIL: u64 = 4;
/// A leaf-form best-free entry (`__be16`).
const BEST: u64 = 2;

/// `xfs_dir2_data_entsize`: bytes of a data entry with a `namelen` name
/// (ftype on).
pub fn entsize(namelen: u64) -> u64 {
    (8 + 1 + namelen + 1 + 2).div_ceil(8) * 8
}

/// The length of the lab's `i`-th name, `f<i>` (i from 1).
pub fn lab_namelen(i: u64) -> u64 {
    1 + i.checked_ilog10().map_or(1, |d| u64::from(d) + 1)
}

/// Entries a node-form leaf holds: `(4096 - 64) / 8`.
pub const LEAFN_MAX: u64 = (DIR_BLOCK - HDR) / LEAF_ENTRY;
/// Entries a da node holds.
pub const NODE_MAX: u64 = (DIR_BLOCK - HDR) / LEAF_ENTRY;

/// The form of a directory (`xfs_dir2_format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// One block: data, leaf entries and tail.
    Block,
    /// Data blocks and one leaf block with the best-free table.
    Leaf,
    /// Data blocks, a da btree of leaves, free-index blocks.
    Node,
}

/// A directory's shape at a number of entries (the lab's names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// The form.
    pub form: Form,
    /// Entries, `.` and `..` included.
    pub entries: u64,
    /// Data blocks.
    pub data_blocks: u64,
    /// Hash-ordered leaf blocks (1 in block and leaf form: the block's
    /// or the leaf's own table).
    pub leaves: u64,
    /// Da node levels above the leaves (node form; 0 otherwise).
    pub node_levels: u32,
    /// Mean leaf entries in the leaf a name lands in.
    pub leaf_entries: f64,
    /// Mean data entries per data block.
    pub per_data_block: f64,
}

/// The shape of a directory holding the lab's names `f1..=files` (plus
/// `.` and `..`), grown by inserts in that order.
pub fn shape(files: u64) -> Shape {
    let entries = files + 2;
    let data_bytes: u64 = 2 * entsize(2) + sum_entsize(files);
    let block_bytes = HDR + data_bytes + LEAF_ENTRY * entries + BLOCK_TAIL;
    if block_bytes <= DIR_BLOCK {
        return Shape {
            form: Form::Block,
            entries,
            data_blocks: 1,
            leaves: 1,
            node_levels: 0,
            leaf_entries: entries as f64,
            per_data_block: entries as f64,
        };
    }
    let mean_ent = data_bytes as f64 / entries as f64;
    let per_block = ((DIR_BLOCK - HDR) as f64 / mean_ent).floor().max(1.0);
    let data_blocks = (entries as f64 / per_block).ceil() as u64;
    let leaf_bytes = HDR + LEAF_ENTRY * entries + BEST * data_blocks + LEAF_TAIL;
    if leaf_bytes <= DIR_BLOCK {
        return Shape {
            form: Form::Leaf,
            entries,
            data_blocks,
            leaves: 1,
            node_levels: 0,
            leaf_entries: entries as f64,
            per_data_block: per_block,
        };
    }
    let fill = LEAFN_MAX as f64 * std::f64::consts::LN_2;
    let leaves = ((entries as f64 / fill).ceil() as u64).max(1);
    let mut node_levels = 0;
    let mut fan = 1u64;
    while fan < leaves {
        fan = fan.saturating_mul(NODE_MAX);
        node_levels += 1;
    }
    Shape {
        form: Form::Node,
        entries,
        data_blocks,
        leaves,
        node_levels,
        leaf_entries: entries as f64 / leaves as f64,
        per_data_block: per_block,
    }
}

/// Sum of `entsize` over the lab's names `f1..=files`, by digit count.
fn sum_entsize(files: u64) -> u64 {
    let mut sum = 0;
    let mut lo = 1u64;
    while lo <= files {
        let hi = lo.saturating_mul(10).saturating_sub(1).min(files);
        sum += (hi - lo + 1) * entsize(lab_namelen(lo));
        lo = lo.saturating_mul(10);
    }
    sum
}

/// Binary-search probes over `n` sorted entries: `ceil(log2(n + 1))`.
pub fn probes(n: f64) -> f64 {
    (n + 1.0).log2().ceil().max(1.0)
}

/// A directory buffer got and released in a transaction
/// (`xfs_da_read_buf` -> `xfs_trans_read_buf_map` of a cached buffer,
/// `xfs_dir3_*_read_verify` skipped for a cached buffer, the magic check;
/// release at commit or `xfs_trans_brelse`): as `xfs_alloc`'s
/// `BUFFER_READ` (rhashtable lookup, hold, `b_sema` trylock, log item
/// init/join, release) plus `xfs_dabuf_map` (the bmap lookup of the
/// directory offset in the in-core extent tree, `xfs_iext_lookup_extent`:
/// about 25 loads). Lines warm: the directory's blocks stay cached.
pub const DA_BUF: Work = Work::straight(105.0, 9.0);

/// One probe of a hash binary search (`xfs_dir2_leaf_search_hash`,
/// `xfs_da3_node_lookup_int`'s node search): the entry's `hashval`
/// (`be32_to_cpu`), the compare, the bounds: about 4 loads.
pub const HASH_PROBE: Work = Work::looped(4.0);

/// `xfs_da3_node_lookup_int` per level and `xfs_dir2_leafn_lookup_int` /
/// `xfs_dir2_leaf_lookup_int` set-up: `xfs_da_state` level fields
/// (`blk->bp`, `blk->magic`, `blk->index`, `blk->hashval`), the node
/// header decode (`xfs_da3_node_hdr_from_disk`: 4 fields), the
/// `xfs_da3_node_verify`-free path checks: about 30 loads.
pub const DA_LEVEL: Work = Work::straight(30.0, 0.0);

/// `xfs_dir_createname` / `xfs_dir_removename` / `xfs_dir_lookup` entry:
/// `xfs_dir_ino_validate`, `xfs_da_args` set-up (zeroed: 15 fields),
/// `xfs_dir2_hashname` -> `xfs_da_hashname` over the name (a few loads
/// per byte), `xfs_dir2_format` (the form from `di_format`, `i_disk_size`
/// and the data fork's extent count), the `xfs_da_state_alloc` of node
/// form (slab alloc, one locked operation) and its free: about 70 loads.
pub const DIR_OP_SETUP: Work = Work::straight(70.0, 2.0);

/// `xfs_dir2_node_addname` -> `xfs_dir2_node_addname_int` with a hint
/// from the lookup (`xfs_dir2_leafn_lookup_for_addname` found a data
/// block with room through the free-index block: the free block read is
/// [`DA_BUF`]), then the data block: `xfs_dir3_data_read`,
/// `xfs_dir2_data_use_free` (find the free region by its tag, split it,
/// `xfs_dir2_data_freeremove` / `xfs_dir2_data_freeinsert` on the 3-entry
/// bestfree table, `xfs_dir2_data_freefind`), the entry's fields written
/// (inumber, namelen, name, ftype, tag), `xfs_dir2_data_log_entry`,
/// `xfs_dir2_data_log_header`, and the free-index best update
/// (`xfs_dir2_free_log_bests`, `xfs_dir2_free_log_header`): four
/// `xfs_trans_log_buf` (bitmap set, `XFS_LI_DIRTY`: one locked bit
/// operation each). About 190 loads.
pub const DATA_ADD: Work = Work::straight(190.0, 4.0);

/// `xfs_dir2_leafn_add` / `xfs_dir3_leaf_find_entry` (6.18,
/// xfs_dir2_leaf.c): the header decode, the stale checks (none stale in
/// a create-only directory), the new entry's hash and address written,
/// the header count, `xfs_dir3_leaf_log_header` and
/// `xfs_dir3_leaf_log_ents` (two `xfs_trans_log_buf`): about 60 loads
/// and two locked operations. The `memmove` of the entries after the
/// slot is [`LEAF_SHIFT_ENTRY`] per entry moved.
pub const LEAF_ADD: Work = Work::straight(60.0, 2.0);

/// One leaf entry moved by `xfs_dir3_leaf_find_entry`'s `memmove`
/// (8 bytes), and logged by `xfs_dir3_leaf_log_ents` from the slot to the
/// end of the leaf (the same bytes copied into the CIL at commit by
/// `xfs_buf_item_format`): counted at one load per 8 bytes moved and one
/// per 8 bytes copied, an inner loop over data.
pub const LEAF_SHIFT_ENTRY: Work = Work::looped(2.0);

/// `xfs_dir2_leafn_remove` (node form) / `xfs_dir2_leaf_removename`
/// (leaf form): the entry's address set to `XFS_DIR2_NULL_DATAPTR`, the
/// stale count bumped, header and entry logged (two
/// `xfs_trans_log_buf`); the data side: `xfs_dir2_data_make_free` (the
/// previous region through its tag, the next region, the merge, the
/// bestfree table update: `xfs_dir2_data_freefind`, `_freeremove`,
/// `_freeinsert`), `xfs_dir2_data_log_unused`, the header logged; the
/// free-index best of the block updated and logged
/// (`xfs_dir3_data_block_free` path when not empty). About 230 loads, 5
/// locked operations.
pub const ENTRY_REMOVE: Work = Work::straight(230.0, 5.0);

/// A positive name match (`xfs_dir2_leafn_lookup_for_entry` /
/// `xfs_dir2_block_lookup_int`): the data block read ([`DA_BUF`] counted
/// apart), the entry's address from the leaf, `xfs_dir2_compname` ->
/// `xfs_da_compname` (namelen and a byte compare), `xfs_dir2_data_get_ftype`:
/// about 30 loads.
pub const NAME_MATCH: Work = Work::straight(30.0, 0.0);

/// `xfs_dir2_grow_inode` of one directory block: `xfs_bmapi_write` ->
/// `xfs_bmapi_allocate` -> `xfs_bmap_btalloc` -> `xfs_alloc_vextent_near_bno`
/// (AGF and AGFL read, `xfs_alloc_fix_freelist`, by-block and by-size
/// cursors and lookups on a nearly empty AG, the free record trimmed in
/// both trees, `xfs_alloc_log_agf`: about 720 loads and 44 locked
/// operations, as `xfs_alloc`'s costs count them), the extent merged into
/// the in-core extent tree (`xfs_bmap_add_extent_hole_real`,
/// `xfs_iext_update_extent`), the data fork logged, `i_disk_size`
/// updated, then the new block's buffer got and its header initialised
/// and logged (`xfs_dir3_data_init` or `xfs_dir3_leaf_get_buf`,
/// `xfs_da_get_buf`): about 1,000 loads, 50 locked operations.
///
/// About 20 indirect calls, all through the free-space btrees' `bc_ops`
/// (`fs/xfs/libxfs/xfs_btree.c`): four lookups (`xfs_alloc_cur_setup`'s
/// by-size `GE`, then `xfs_alloc_fixup_trees`' three `EQ`s), each one
/// `init_ptr_from_cur` and two per leaf probe (`init_key_from_rec`,
/// `cmp_key_with_cur`) over one or two probes in a near-empty leaf; the
/// by-size delete's `init_key_from_rec`; the insert's `init_rec_from_cur`,
/// `init_key_from_rec` and `get_maxrecs`. A count by reading, not by a
/// run of the model's btree: the range is 15 to 35.
pub const BLOCK_GROW: Work = Work::straight(1000.0, 50.0).indirect(20.0);

/// `xfs_dir2_shrink_inode` of an emptied data block: `xfs_bunmapi`
/// (extent tree update, `xfs_free_extent_later`: the EFI intent), the
/// buffer invalidated (`xfs_trans_binval`), the free-index entry cleared,
/// and the deferred free finished in a rolled transaction
/// (`xfs_defer_finish` -> `xfs_trans_roll`: commit and re-reserve, then
/// `xfs_free_extent` on both free-space trees and the EFD): about 1,400
/// loads, 60 locked operations.
///
/// About 50 indirect calls: the deferred free's `create_intent`,
/// `create_done` and `finish_item` (`xfs_extent_free_defer_type`); the
/// free-space btrees' `bc_ops` in `xfs_free_ag_extent` (three or four
/// lookups at one plus two per leaf probe, the delete, insert and update:
/// about 20); and the roll's extra commit (`list_sort`'s comparisons, the
/// AGF, by-block, by-size, EFI and EFD items' `iop_size`, `iop_format`,
/// `iop_pin` and `iop_committing`: about 25). By reading; the range is 40
/// to 75.
pub const BLOCK_SHRINK: Work = Work::straight(1400.0, 60.0).indirect(50.0);

/// A leaf split (`xfs_da3_split` -> `xfs_dir2_leafn_split`): the new leaf
/// ([`BLOCK_GROW`] counted apart), `xfs_dir3_leafn_rebalance` moving half
/// the entries (see [`LEAF_SHIFT_ENTRY`] per entry), both leaves'
/// headers and entries logged, the parent node's new entry
/// (`xfs_da3_node_add`: shift and log), `xfs_da3_fixhashpath`: about 300
/// loads, 8 locked operations.
pub const LEAF_SPLIT: Work = Work::straight(300.0, 8.0);

/// A leaf join (`xfs_da3_join` -> `xfs_dir2_leafn_toosmall`,
/// `xfs_dir2_leafn_unbalance` moving the survivor's live entries,
/// `xfs_da3_node_remove` in the parent, the emptied leaf freed with
/// [`BLOCK_SHRINK`] counted apart): about 300 loads, 8 locked operations.
pub const LEAF_JOIN: Work = Work::straight(300.0, 8.0);

/// The buffers a lookup reads at `shape` before the leaf: the da nodes
/// (node form) or none; the leaf or block itself.
fn lookup_to_leaf(t: &mut Tally, s: &Shape) {
    let levels = f64::from(s.node_levels) + 1.0;
    t.add(DA_BUF, levels).add(DA_LEVEL, levels);
    if s.node_levels > 0 {
        t.add(
            HASH_PROBE,
            f64::from(s.node_levels) * probes((s.leaves as f64).min(NODE_MAX as f64)),
        );
    }
    t.add(HASH_PROBE, probes(s.leaf_entries));
}

/// A lookup that finds no entry (`xfs_dir_lookup` from `xfs_vn_lookup`,
/// the name not there): down to the leaf, the hash binary search, no
/// match (the lab's names have distinct hashes with high probability).
pub fn lookup_absent(s: &Shape) -> Tally {
    let mut t = Tally::default();
    t.add(DIR_OP_SETUP, 1.0);
    lookup_to_leaf(&mut t, s);
    t
}

/// One `xfs_dir_createname` into a directory of shape `s`, the `files +
/// 1`-th name: the lookup for the add (`xfs_da3_node_lookup_int` with
/// the free block read in node form), the data entry, the leaf entry and
/// the entries shifted after it (half the leaf on average), and the
/// amortised block growth and leaf splits.
pub fn insert(s: &Shape) -> Tally {
    let mut t = lookup_absent(s);
    let free_block = if s.form == Form::Node { 1.0 } else { 0.0 };
    // Data block (all forms: block form's block is the data block).
    t.add(DA_BUF, 1.0 + free_block).add(DATA_ADD, 1.0).add(LEAF_ADD, 1.0);
    t.add(LEAF_SHIFT_ENTRY, s.leaf_entries / 2.0);
    if s.form != Form::Block {
        t.add(BLOCK_GROW, 1.0 / s.per_data_block);
    }
    if s.form == Form::Node {
        // One split per LEAFN_MAX x ln 2 inserts: the leaf count's growth.
        let rate = 1.0 / (LEAFN_MAX as f64 * std::f64::consts::LN_2);
        t.add(BLOCK_GROW, rate)
            .add(LEAF_SPLIT, rate)
            .add(LEAF_SHIFT_ENTRY, rate * (LEAFN_MAX / 2) as f64);
    }
    t
}

/// One `xfs_dir_removename` from a directory of shape `s` whose names are
/// removed in creation order: the lookup to the leaf, the positive match
/// in the data block, the entry freed and made stale (no shift), and the
/// amortised data-block frees (each data block empties after
/// `per_data_block` removals, in order) and leaf joins (the leaves
/// `s.leaves` of the full directory merge back to one over its
/// `s.entries` removals).
pub fn remove(s: &Shape, leaves_at_full: u64, entries_at_full: u64) -> Tally {
    let mut t = Tally::default();
    t.add(DIR_OP_SETUP, 1.0);
    lookup_to_leaf(&mut t, s);
    t.add(DA_BUF, 1.0).add(NAME_MATCH, 1.0).add(ENTRY_REMOVE, 1.0);
    if s.form == Form::Node {
        t.add(DA_BUF, 1.0); // the free-index block
        let joins = leaves_at_full.saturating_sub(1) as f64 / entries_at_full.max(1) as f64;
        t.add(LEAF_JOIN, joins).add(BLOCK_SHRINK, joins);
        t.add(LEAF_SHIFT_ENTRY, joins * (LEAFN_MAX as f64 * 0.375));
    }
    if s.form != Form::Block {
        t.add(BLOCK_SHRINK, 1.0 / s.per_data_block);
    }
    t
}

#[cfg(test)]
mod tests;
