//! The lab's filesystem as `mkfs.btrfs` and the lab's preparation leave
//! it (the parent module's header): its block groups, where each tree's
//! block is, and the extent, free space and root trees' first items.

use super::{
    BLOCK_GROUP_ITEM_KEY, BLOCK_GROUP_ITEM_SIZE, DIR_ITEM_KEY, EXTENT_TREE, FREE_SPACE_INFO_KEY, FREE_SPACE_INFO_SIZE, FREE_SPACE_TREE,
    FS_TREE, ROOT_ITEM_KEY, ROOT_ITEM_SIZE, extent_item, metadata_item,
};
use crate::kernel::btrfs::ctree::{INODE_ITEM_KEY, INODE_REF_KEY, ITEM_HEADER_SIZE, Item, Key, RefExtent, Tree};

/// One block group: its start and length, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockGroup {
    /// Start, bytes.
    pub start: u64,
    /// Length, bytes.
    pub length: u64,
}

impl BlockGroup {
    /// One past its last byte.
    pub fn end(&self) -> u64 {
        self.start + self.length
    }

    /// `btrfs_block_group::bitmap_high_thresh`
    /// (`btrfs_set_free_space_tree_thresholds`): the free extents above
    /// which the kernel converts the group to bitmaps, at 4 KiB sectors
    /// (fs/btrfs/free-space-tree.h: `BTRFS_FREE_SPACE_BITMAP_SIZE` 256
    /// bytes a bitmap item, 2,048 sectors; with its 25-byte item header,
    /// against an extent item's header alone).
    pub fn bitmap_high_thresh(&self) -> u64 {
        let range = 4096 * 2048u64;
        self.length.div_ceil(range) * (25 + 256) / 25
    }
}

/// The lab's filesystem before its script (module header), at node size
/// `n`: where each tree's block is and what is free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The metadata block group (DUP).
    pub metadata: BlockGroup,
    /// The other block groups, each one free extent but the system
    /// group's, which holds the chunk tree's leaf.
    pub others: [BlockGroup; 4],
    /// The chunk tree's leaf, in the system group (`others[3]`).
    pub chunk_leaf: u64,
    /// The extent, free space, csum, fs, data reloc and uuid trees' leaves,
    /// then the root and dev trees', in the metadata group.
    pub leaves: [u64; 8],
    /// The metadata group's free extents, in order.
    pub free: [(u64, u64); 3],
}

impl Layout {
    /// At 16 KiB nodes as `dump-tree` showed it, the metadata group's
    /// blocks scaled to node size `n` (module header).
    pub fn lab(n: u32) -> Self {
        let n = u64::from(n);
        let metadata = BlockGroup {
            start: 30_408_704,
            length: 53_673_984,
        };
        let at = |i: u64| metadata.start + i * n;
        Layout {
            metadata,
            others: [
                BlockGroup {
                    start: 1 << 20,
                    length: 4 << 20,
                },
                BlockGroup {
                    start: 5 << 20,
                    length: 8 << 20,
                },
                BlockGroup {
                    start: 13_631_488,
                    length: 8 << 20,
                },
                BlockGroup {
                    start: 22_020_096,
                    length: 8 << 20,
                },
            ],
            chunk_leaf: 22_020_096 + n,
            // Three blocks free, the six trees, three free, root and dev.
            leaves: [at(3), at(4), at(5), at(6), at(7), at(8), at(12), at(13)],
            free: [(at(0), 3 * n), (at(9), 3 * n), (at(14), metadata.end() - at(14))],
        }
    }

    /// The fs tree's leaf.
    pub fn fs_leaf(&self) -> u64 {
        self.leaves[3]
    }

    /// The allocator's first address: the start of the last free extent.
    pub fn cursor(&self) -> u64 {
        self.free[2].0
    }
}

impl Layout {
    /// The extent, free space and root trees as the layout has them, at
    /// node size `nodesize` (`fs_tree`'s blocks have their extent items),
    /// each at its leaf's address.
    pub(super) fn mkfs_trees(&self, nodesize: u32, fs_tree: &Tree) -> [Tree; 3] {
        let layout = self;
        let [ext, fst, csum, _fs, reloc, uuid, root, dev] = layout.leaves;
        let others = [layout.chunk_leaf, ext, fst, csum, reloc, uuid, root, dev];
        let mut extent: Vec<Item> = fs_tree
            .extents()
            .into_iter()
            .chain(others.map(|bytenr| RefExtent { bytenr, level: 0 }))
            .map(metadata_item)
            .chain(
                [layout.metadata]
                    .into_iter()
                    .chain(layout.others[2..].iter().copied())
                    .map(|g| Item::new(Key::new(g.start, BLOCK_GROUP_ITEM_KEY, g.length), BLOCK_GROUP_ITEM_SIZE)),
            )
            .collect();
        extent.sort_by_key(|i| i.key);
        let mut free = Vec::new();
        for g in layout.others {
            free.push(Item::new(Key::new(g.start, FREE_SPACE_INFO_KEY, g.length), FREE_SPACE_INFO_SIZE));
            let chunk = layout.chunk_leaf;
            if (g.start..g.end()).contains(&chunk) {
                free.push(extent_item(g.start, chunk - g.start));
                free.push(extent_item(chunk + u64::from(nodesize), g.end() - chunk - u64::from(nodesize)));
            } else {
                free.push(extent_item(g.start, g.length));
            }
        }
        let m = layout.metadata;
        free.push(Item::new(Key::new(m.start, FREE_SPACE_INFO_KEY, m.length), FREE_SPACE_INFO_SIZE));
        free.extend(layout.free.iter().map(|&(s, l)| extent_item(s, l)));
        // One leaf each at the lab's node sizes; below 4 KiB (tests) the
        // items fill as many leaves as they need, whose blocks but the
        // root lie below the metadata group.
        let cap = Tree::new(nodesize).geometry().leaf_data_size();
        let at = |leaf: u64, items: Vec<Item>| {
            let mut leaves: Vec<Vec<Item>> = vec![Vec::new()];
            let mut used = 0;
            for i in items {
                let size = i.data_size + ITEM_HEADER_SIZE;
                if used + size > cap && leaves.last().is_some_and(|l| !l.is_empty()) {
                    leaves.push(Vec::new());
                    used = 0;
                }
                used += size;
                if let Some(l) = leaves.last_mut() {
                    l.push(i);
                }
            }
            let mut t = Tree::from_leaves(nodesize, leaves);
            t.relocate_root(leaf);
            t
        };
        [at(ext, extent), at(fst, free), at(root, root_items())]
    }
}

/// The root tree's items after `mkfs.btrfs` (module header): the root
/// items of the extent, dev, fs, csum, uuid, free space and data reloc
/// trees, the fs tree's back reference and the root tree's own directory
/// (`default` subvolume link: inode item, inode ref, dir item).
fn root_items() -> Vec<Item> {
    const DATA_RELOC_TREE: u64 = (-9i64) as u64;
    const ROOT_TREE_DIR: u64 = 6;
    let root = |id: u64| Item::new(Key::new(id, ROOT_ITEM_KEY, 0), ROOT_ITEM_SIZE);
    vec![
        root(EXTENT_TREE),
        root(4),
        Item::new(Key::new(FS_TREE, INODE_REF_KEY, ROOT_TREE_DIR), 17),
        root(FS_TREE),
        Item::new(Key::new(ROOT_TREE_DIR, INODE_ITEM_KEY, 0), 160),
        Item::new(Key::new(ROOT_TREE_DIR, INODE_REF_KEY, ROOT_TREE_DIR), 12),
        Item::new(Key::new(ROOT_TREE_DIR, DIR_ITEM_KEY, 2_378_154_706), 37),
        root(7),
        root(9),
        root(FREE_SPACE_TREE),
        root(DATA_RELOC_TREE),
    ]
}
