//! Writing one tree block out, as the writeback flusher does it
//! (`btree_writepages`, 6.18), counted in [`Work`] (see
//! [`crate::kernel::work`] for how). Line numbers cite Linux 6.18.15 as
//! read (Debian's orig tarball); the lab's host runs 6.18.44, whose
//! stable updates since may differ in detail.
//!
//! Per block, whatever it holds ([`EB_WRITE`], [`EB_FOLIO`] per folio):
//! - `btree_writepages` (extent_io.c:2289) takes the block from a batch
//!   of the `buffer_tree` xarray (`xas_find_marked`,
//!   `refcount_inc_not_zero`) and drops it after (`free_extent_buffer`);
//! - `lock_extent_buffer_for_io` (1902): `btrfs_tree_lock` (with the
//!   lab's tracepoint and its two `ktime_get_ns` when enabled), the
//!   `refs_lock`, the DIRTY and WRITEBACK bits, one irqsave section of the
//!   `buffer_tree` xarray with three marks, the header's WRITTEN flag,
//!   `percpu_counter_add_batch`, `btrfs_tree_unlock`;
//! - `write_one_eb` (2214): `prepare_eb_write` zeroes the free space
//!   (a leaf's between its item headers and its data, a node's after its
//!   key pointers; [`ZERO_LINE`] a line), `btrfs_bio_alloc`, then per
//!   folio (16 KiB is four order-0 folios) `folio_lock`,
//!   `folio_clear_dirty_for_io`, `__folio_start_writeback` (the
//!   `i_pages` xarray's irqsave lock, three marks, the stat updates),
//!   `bio_add_folio_nofail`, `folio_unlock`;
//! - `btrfs_submit_chunk` (bio.c:704): `btrfs_map_block` (the chunk
//!   map's rb-tree under `read_lock`, the `dev_replace` rwsem, a `bioc`
//!   of two stripes from `kzalloc`), then, crc32c being fast
//!   (`should_async_write` false), `btree_csum_one_bio` in this thread
//!   (disk-io.c:260): `csum_tree_block` through `crypto_shash` (init, an
//!   update per folio, final: indirect calls; [`CRC_LINE`] a line of the
//!   block) and the tree checker (below); then per DUP stripe a bio (one
//!   clone) and `submit_bio` into the plug.
//!
//! The tree checker (`btrfs_check_leaf`, tree-checker.c:2054) reads every
//! field through out-of-line accessors (`btrfs_get_8/16/32/64`,
//! accessors.c:50: the folio index and offset from the buffer's fields,
//! `folio_address`, the bounds check, the load; [`ACCESSOR`]), keys
//! through `read_extent_buffer` ([`READ_EB`]) and compares them with
//! `btrfs_comp_cpu_keys` ([`KEY_COMPARE`]). Per slot it reads the key,
//! compares it with the last, and checks the item's offset and size (four
//! `btrfs_get_32`); then by type ([`BlockShape`]): `check_inode_item`
//! (1098), `check_inode_ref` (1736), `check_dir_item` (521, with the
//! name's `btrfs_name_hash` for a DIR_ITEM only), nothing more for an
//! orphan item. A node (`__btrfs_check_node`, 2136): per key pointer its
//! block pointer and two keys (`btrfs_node_key` reads each) and a compare.
//!
//! The completions (`end_bbio_meta_write`) run on the `endio_meta`
//! workers, not in the flusher: not counted here.

use super::ctree::{DIR_INDEX_KEY, DIR_ITEM_KEY, DIR_ITEM_SIZE, INODE_ITEM_KEY, INODE_REF_KEY, Item};
use crate::kernel::work::{Tally, Work};
use crate::machine::MachineProfile;

/// What the write-out of one tree block depends on: its level, its slots
/// by what the tree checker does with them, and its free space.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockShape {
    /// 0 for a leaf.
    pub level: u8,
    /// Items (a leaf) or key pointers (a node).
    pub slots: u32,
    /// `INODE_ITEM`s.
    pub inode_items: u32,
    /// `INODE_REF`s (one ref each: one name per inode here).
    pub inode_refs: u32,
    /// `DIR_ITEM`s (one entry each: no hash collisions here).
    pub dir_items: u32,
    /// The names of those `DIR_ITEM`s, bytes (hashed by the checker).
    pub dir_item_name_bytes: u32,
    /// `DIR_INDEX` items.
    pub dir_indexes: u32,
    /// Bytes `prepare_eb_write` zeroes: a leaf's free space, a node's room
    /// after its pointers.
    pub free_bytes: u32,
}

impl BlockShape {
    /// A leaf of `items` with `free_bytes` free.
    pub fn leaf(items: &[Item], free_bytes: u32) -> Self {
        let mut s = BlockShape {
            slots: items.len() as u32,
            free_bytes,
            ..BlockShape::default()
        };
        for i in items {
            match i.key.item_type {
                INODE_ITEM_KEY => s.inode_items += 1,
                INODE_REF_KEY => s.inode_refs += 1,
                DIR_ITEM_KEY => {
                    s.dir_items += 1;
                    s.dir_item_name_bytes += i.data_size.saturating_sub(DIR_ITEM_SIZE);
                }
                DIR_INDEX_KEY => s.dir_indexes += 1,
                _ => {}
            }
        }
        s
    }
}

/// The per-block work outside the tree checker and the per-folio and
/// per-line loops (module header), estimated function by function from
/// reading the code (loads as [`crate::kernel::work`] counts them; no
/// instruction count was taken):
///
/// | step | loads | locked ops | indirect calls |
/// | --- | --- | --- | --- |
/// | `btree_writepages`' turn: `xas_find_marked`, `refcount_inc_not_zero`, `xas_reload`, later `free_extent_buffer` | 60 | 2 | |
/// | `lock_extent_buffer_for_io`: `down_write` / `up_write`, `refs_lock`, the DIRTY and WRITEBACK bits, the `buffer_tree` xarray section and its three marks, the WRITTEN flag, `percpu_counter_add_batch` | 120 | 8 | |
/// | `write_one_eb`: `prepare_eb_write`'s `btrfs_get_32`, `btrfs_bio_alloc` (a bio from its slab, the btrfs_bio's fields) | 100 | 2 | |
/// | `btrfs_submit_chunk`: `btrfs_map_block` (the chunk map's rb-tree under `read_lock`, its reference, the `dev_replace` rwsem, a `bioc` from `kzalloc`, two stripes), `btrfs_free_chunk_map` | 180 | 8 | |
/// | `btree_csum_one_bio`: the header checks, `crypto_shash` init and final, the checksum's store | 80 | | 2 |
/// | per DUP stripe (two): a clone or the bio itself, `bio_set_dev`, `submit_bio` into the plug (a request from the tag set) | 2 x 180 | 2 x 5 | 2 x 1 |
///
/// About 900 loads, 30 locked operations, 4 indirect calls.
pub const EB_WRITE: Work = Work::straight(900.0, 30.0).indirect(4.0);

/// Per folio of the block (`write_one_eb`'s loop): `folio_lock`,
/// `folio_clear_dirty_for_io`, `__folio_start_writeback`,
/// `bio_add_folio_nofail`, `folio_unlock`, and the checksum's
/// `crypto_shash_update` of the folio (an indirect call, the FPU section
/// around `crc32c_x86_3way`): about 90 loads, 9 locked operations.
pub const EB_FOLIO: Work = Work::straight(90.0, 9.0).indirect(1.0);

/// One out-of-line accessor (`btrfs_get_16/32/64`): the buffer's
/// `start`, `folio_shift`, `folio_size` and `len`, the folio pointer,
/// the two globals of `folio_address`, the field: 8 loads and a return.
pub const ACCESSOR: Work = Work::looped(8.0).returning(1.0);

/// `read_extent_buffer` of a 17-byte key: the bounds, the folio index and
/// address, the copy (a `memcpy` call): 10 loads, two returns.
pub const READ_EB: Work = Work::looped(10.0).returning(2.0);

/// `btrfs_comp_cpu_keys`: the two keys' three fields, a return.
pub const KEY_COMPARE: Work = Work::looped(6.0).returning(1.0);

/// One 64-byte line checksummed by `crc32c_x86_3way`: eight `crc32q`
/// in three streams, about 8 cycles: counted as two loads.
pub const CRC_LINE: Work = Work::looped(2.0);

/// One 64-byte line zeroed by `memzero_extent_buffer` (`rep stosb`).
pub const ZERO_LINE: Work = Work::looped(1.0);

/// Eight name bytes hashed by `btrfs_name_hash` (`crc32c` of a short
/// name: one `crc32q`, no FPU section); [`writeout`] counts a block's
/// DIR_ITEM names' bytes over eight, and one more per name for its tail.
pub const NAME_HASH_WORD: Work = Work::looped(1.0);

/// The tree checker's calls for one block of `shape` (module header):
/// (accessors, key reads, key compares).
pub fn checker_calls(shape: &BlockShape) -> (f64, f64, f64) {
    if shape.level > 0 {
        // Per pointer after the first: the block pointer, two keys.
        let n = f64::from(shape.slots.saturating_sub(1));
        return (n, 2.0 * n, n);
    }
    let s = |v: u32| f64::from(v);
    // Every slot: its key, one compare, four btrfs_get_32.
    let (mut acc, mut reads, cmps) = (4.0 * s(shape.slots), s(shape.slots), s(shape.slots));
    // check_inode_item: the key again; 3 get_32 (size, ptr, mode), 3 get_64.
    acc += 6.0 * s(shape.inode_items);
    reads += s(shape.inode_items);
    // check_inode_ref: 3 get_32, the ref's name_len.
    acc += 4.0 * s(shape.inode_refs);
    // check_dir_item: the location key, the slot's key again; 2 get_32,
    // type, name_len, data_len; a DIR_ITEM reads its name too.
    let dirs = s(shape.dir_items + shape.dir_indexes);
    acc += 5.0 * dirs;
    reads += 2.0 * dirs + s(shape.dir_items);
    (acc, reads, cmps)
}

/// [`writeout`] of a block of `shape` (`nodesize` bytes in order-0
/// folios) priced on `machine` with the run's `work_scale`, ps.
pub fn writeout_ps(shape: &BlockShape, nodesize: u32, machine: &MachineProfile, work_scale: f64) -> u64 {
    let ns = writeout(shape, nodesize, nodesize.div_ceil(4096)).ns(machine, work_scale);
    crate::machine::ns_to_ps(ns)
}

/// The work of writing out one block of `shape`, `nodesize` bytes in
/// `folios` folios, on the flusher's CPU (module header).
pub fn writeout(shape: &BlockShape, nodesize: u32, folios: u32) -> Tally {
    let (acc, reads, cmps) = checker_calls(shape);
    let lines = f64::from(nodesize.div_ceil(64));
    let mut t = Tally::default();
    t.add(EB_WRITE, 1.0)
        .add(EB_FOLIO, f64::from(folios))
        .add(ACCESSOR, acc)
        .add(READ_EB, reads)
        .add(KEY_COMPARE, cmps)
        .add(CRC_LINE, lines)
        .add(ZERO_LINE, f64::from(shape.free_bytes.div_ceil(64)))
        .add(
            NAME_HASH_WORD,
            f64::from(shape.dir_item_name_bytes.div_ceil(8)) + f64::from(shape.dir_items),
        );
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::btrfs::ctree::{Key, ORPHAN_ITEM_KEY};

    #[test]
    fn the_checker_counts_each_item_type_as_its_function_reads_it() {
        let items = [
            Item::new(Key::new(257, INODE_ITEM_KEY, 0), 160),
            Item::new(Key::new(257, INODE_REF_KEY, 256), 16),
            Item::new(Key::new(256, DIR_ITEM_KEY, 99), 36),
            Item::new(Key::new(256, DIR_INDEX_KEY, 2), 36),
            Item::new(Key::new(u64::MAX - 4, ORPHAN_ITEM_KEY, 257), 0),
        ];
        let shape = BlockShape::leaf(&items, 1000);
        assert_eq!(
            (shape.inode_items, shape.inode_refs, shape.dir_items, shape.dir_indexes),
            (1, 1, 1, 1)
        );
        assert_eq!(shape.dir_item_name_bytes, 6);
        let (acc, reads, cmps) = checker_calls(&shape);
        // Per slot 4 + 1 key read + 1 compare (5 slots); inode item +6 and
        // +1 read; ref +4; each dir item +5 and +2 reads, the DIR_ITEM +1.
        assert_eq!(acc, 20.0 + 6.0 + 4.0 + 10.0);
        assert_eq!(reads, 5.0 + 1.0 + 4.0 + 1.0);
        assert_eq!(cmps, 5.0);
    }

    #[test]
    fn a_node_checks_each_pointer_after_the_first() {
        let node = BlockShape {
            level: 1,
            slots: 30,
            ..BlockShape::default()
        };
        assert_eq!(checker_calls(&node), (29.0, 58.0, 29.0));
    }

    #[test]
    fn a_fuller_leaf_costs_more_and_zeroes_less() {
        let item = |i: u64| Item::new(Key::new(300 + i, INODE_ITEM_KEY, 0), 160);
        let few: Vec<Item> = (0..10).map(item).collect();
        let many: Vec<Item> = (0..80).map(item).collect();
        let small = writeout(&BlockShape::leaf(&few, 14_000), 16384, 4);
        let big = writeout(&BlockShape::leaf(&many, 1_000), 16384, 4);
        assert!(big.iterated_hits > small.iterated_hits);
        assert!(big.returns > small.returns);
        assert_eq!(big.hits, small.hits, "the straight-line part does not depend on the items");
    }
}
