//! A btrfs subvolume as the directory syscalls see it: one fs tree, the
//! delayed items, and per directory its entries and next dir index.
//! Each syscall does what `fs/btrfs/inode.c` does to the tree:
//!
//! - create (`btrfs_create_new_inode` + `btrfs_add_link`): one batch
//!   insertion of the new INODE_ITEM and INODE_REF, the DIR_ITEM inserted
//!   at once (or extended, if another name has the same hash), the
//!   DIR_INDEX queued as a delayed insertion, the parent's inode item
//!   dirtied; then `btrfs_balance_delayed_items`.
//! - unlink (`btrfs_unlink` -> `btrfs_unlink_inode` ->
//!   `__btrfs_unlink_inode`): the DIR_ITEM deleted (or truncated) at once;
//!   the INODE_REF deletion delayed on the *file's* node
//!   (`btrfs_delayed_delete_inode_ref`, taken because the file's
//!   `dir_index` is cached: every file here was created in this mount); the
//!   DIR_INDEX deletion delayed on the directory's node
//!   (`btrfs_delete_delayed_dir_index`); the directory's inode update
//!   (`btrfs_update_inode(dir)`), then the file's
//!   (`btrfs_update_inode(inode)` after `drop_nlink`); then the balance
//!   check of `btrfs_btree_balance_dirty`, which sees all four kinds.
//! - eviction (`btrfs_evict_inode`, in the same syscall: `do_unlinkat`'s
//!   final `iput`): `btrfs_commit_inode_delayed_inode` writes the inode
//!   item and deletes the INODE_REF, releasing the file's two items; a
//!   balance check; `btrfs_kill_delayed_inode_items` drops whatever
//!   dir-index work the inode still has pending (since 5.17, "btrfs: move
//!   btrfs_kill_delayed_inode_items into evict"); the truncate removes the
//!   inode's remaining items; a balance check.
//! - rmdir: as unlink in the parent, then eviction of the directory.
//! - readdir (the first `getdents` of `rm -fr`): the atime update dirties
//!   the directory's inode (`btrfs_dirty_inode`, which also balances).
//! - sync / umount: `btrfs_commit_transaction` runs every delayed node.
//!
//! - orphan items: `btrfs_unlink` (and `btrfs_rmdir`) adds the inode's
//!   orphan item (`btrfs_orphan_add`, at the far end of the key space)
//!   once its last link is gone, and the eviction deletes it after the
//!   truncate (`btrfs_orphan_del`).
//!
//! Each `unlink(2)`'s own tree work (its searches and item edits, not the
//! flush worker's batches that its balance checks run here and the
//! kernel runs on another CPU) is kept for the last call
//! ([`Fs::last_unlink`]), so the caller can price each call.
//!
//! - the commit's delayed refs: the fs tree's copies, allocations and
//!   frees run into the extent and free space trees, the roots' items
//!   written, the three trees' own copies' refs run too
//!   ([`ExtentTrees::commit`]); the commit writes their dirty leaves.
//!
//! Not modelled: xattrs.

use std::collections::BTreeMap;

use crate::kernel::btrfs::ctree::{
    DIR_ITEM_KEY, DIR_ITEM_SIZE, INODE_ITEM_KEY, INODE_ITEM_SIZE, INODE_REF_KEY, INODE_REF_SIZE, Item, Key, ORPHAN_ITEM_KEY,
    ORPHAN_OBJECTID, Task, Tree, TreeStats,
};
use crate::kernel::btrfs::delayed::{BalanceCheck, DelayedRoot, DeleteRunStats, InsertRunStats, Rules, Thresholds, WorkerStep};
use crate::kernel::btrfs::dirname::DirName;
use crate::kernel::btrfs::extent::{ExtentTrees, Layout, RefRunStats};
use crate::kernel::btrfs::writeout::BlockShape;

/// `BTRFS_FIRST_FREE_OBJECTID`: the subvolume's top directory.
pub const ROOT_DIR_INO: u64 = 256;
/// `BTRFS_DIR_START_INDEX`: first dir index (0 and 1 are "." and "..").
pub const DIR_START_INDEX: u64 = 2;

/// One directory's in-memory state.
#[derive(Debug, Clone, Default)]
pub struct Dir {
    /// Entries: name -> (inode number, dir index).
    pub entries: BTreeMap<DirName, (u64, u64)>,
    /// `index_cnt`: the next dir index to hand out.
    pub next_index: u64,
}

/// The filesystem under the script.
#[derive(Debug, Clone)]
pub struct Fs {
    /// The subvolume's fs tree.
    pub tree: Tree,
    /// The extent, free space and root trees, which each commit's
    /// delayed refs change.
    pub extents: ExtentTrees,
    /// Delayed items of the subvolume.
    pub delayed: DelayedRoot,
    /// Directories by inode number.
    pub dirs: BTreeMap<u64, Dir>,
    /// Eviction drops an inode's pending delayed dir-index items (kernel
    /// `btrfs_kill_delayed_inode_items`, since 5.17) instead of leaving
    /// them for the next commit. Default true.
    pub evict_kills_pending: bool,
    /// `sync` and the unmount write the dirty tree blocks back before they
    /// commit ([`Tree::write_back_dirty`]), and the commit's delayed items
    /// then copy every block they change again. `sync_filesystem`
    /// (fs/sync.c; `syncfs(2)` and the unmount) runs `writeback_inodes_sb`
    /// (WB_SYNC_NONE) and `sync_inodes_sb` (WB_SYNC_ALL) before
    /// `sync_fs(sb, 1)`, the commit, and `sync(2)` runs
    /// `sync_inodes_one_sb` before it; both reach the btree inode.
    /// `btree_writepages` skipped a WB_SYNC_NONE pass under 32 MiB of
    /// dirty metadata until upstream 4e159150a9a5 (6.18-stable since
    /// February 2026), never a WB_SYNC_ALL one, so the blocks are written
    /// before the commit on every kernel, only by an earlier pass since.
    /// Default true.
    pub writeback_on_sync: bool,
    /// The task whose `sync` commits: the syscall thread itself (its
    /// `syncfs`, as the lab calls it) or a `sync` process of its own
    /// ([`Task::Sync`]). Default [`Task::Sync`].
    pub sync_task: Task,
    /// The task whose unmount commits: the syscall thread (its own
    /// `umount2(2)`, whose superblock shutdown is its task work, as the
    /// lab unmounts since session 68) or an `umount` process of its own
    /// ([`Task::Unmount`]). Default [`Task::Unmount`].
    pub unmount_task: Task,
    /// Tree blocks written back by syncs and unmounts so far.
    pub blocks_written_back: u64,
    /// What each commit of a sync or unmount did, in order: the blocks
    /// written back before it, its delayed items, the blocks it wrote
    /// itself ([`Fs::commit_blocks`] counts them).
    pub commit_work: Vec<CommitWork>,
    /// Dir-index items dropped by evictions so far (never reached the
    /// delayed-item functions; the truncate removed their tree items).
    pub killed_at_evict: u64,
    /// The balance check at the end of the last unlink or rmdir.
    pub last_unlink_check: BalanceCheck,
    /// The last `unlink(2)` of a regular file: its own tree work
    /// (searches, item edits, copies on write; not the flush worker's).
    pub last_unlink: TreeStats,
    /// The running syscall's own tree work so far.
    call: TreeStats,
    next_ino: u64,
    deferred_evictions: Vec<u64>,
}

/// `btrfs_name_hash`: crc32c seeded with `~1`, without final inversion
/// (the DIR_ITEM key offset; UNCONFIRMED in docs/reference/kernel.md, crc32c assumed).
pub fn name_hash(name: &[u8]) -> u64 {
    let mut crc: u32 = !1;
    for &b in name {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0x82F6_3B78 & mask);
        }
    }
    u64::from(crc)
}

impl Fs {
    /// A new filesystem: an fs tree holding the top directory (inode 256).
    pub fn new(nodesize: u32, thresholds: Thresholds, rules: Rules) -> Self {
        let layout = Layout::lab(nodesize);
        let mut tree = Tree::new_at(nodesize, layout.fs_leaf());
        let root = [
            Item::new(Key::new(ROOT_DIR_INO, INODE_ITEM_KEY, 0), INODE_ITEM_SIZE),
            Item::new(Key::new(ROOT_DIR_INO, INODE_REF_KEY, ROOT_DIR_INO), INODE_REF_SIZE + 2),
        ];
        tree.insert_items(&root);
        tree.commit_transaction();
        tree.set_next_bytenr(layout.cursor());
        let extents = ExtentTrees::new(nodesize, &tree);
        let mut dirs = BTreeMap::new();
        dirs.insert(
            ROOT_DIR_INO,
            Dir {
                next_index: DIR_START_INDEX,
                ..Dir::default()
            },
        );
        let mut delayed = DelayedRoot::new(thresholds);
        delayed.set_rules(rules);
        Fs {
            tree,
            extents,
            delayed,
            dirs,
            evict_kills_pending: true,
            writeback_on_sync: true,
            sync_task: Task::Sync,
            unmount_task: Task::Unmount,
            blocks_written_back: 0,
            commit_work: Vec::new(),
            killed_at_evict: 0,
            last_unlink_check: BalanceCheck::default(),
            last_unlink: TreeStats::default(),
            call: TreeStats::default(),
            next_ino: ROOT_DIR_INO + 1,
            deferred_evictions: Vec::new(),
        }
    }

    /// mkdir: as create, and the new inode becomes a directory.
    pub fn mkdir(&mut self, parent: u64, name: &[u8]) -> Option<u64> {
        let ino = self.create(parent, name)?;
        self.dirs.insert(
            ino,
            Dir {
                next_index: DIR_START_INDEX,
                ..Dir::default()
            },
        );
        Some(ino)
    }

    /// create (open with O_CREAT of a new name). None if the parent is not
    /// a directory or the name exists.
    pub fn create(&mut self, parent: u64, name: &[u8]) -> Option<u64> {
        let dir = self.dirs.get_mut(&parent)?;
        if dir.entries.contains_key(name) {
            return None;
        }
        let (ino, index) = (self.next_ino, dir.next_index);
        dir.next_index += 1;
        dir.entries.insert(DirName::from(name), (ino, index));
        self.next_ino += 1;
        let len = name.len() as u32;
        let inode = [
            Item::new(Key::new(ino, INODE_ITEM_KEY, 0), INODE_ITEM_SIZE),
            Item::new(Key::new(ino, INODE_REF_KEY, parent), INODE_REF_SIZE + len),
        ];
        self.tree.insert_items(&inode);
        let dir_item = Key::new(parent, DIR_ITEM_KEY, name_hash(name));
        if !self.tree.extend_item(&dir_item, DIR_ITEM_SIZE + len) {
            self.tree.insert_items(&[Item::new(dir_item, DIR_ITEM_SIZE + len)]);
        }
        self.delayed.insert_dir_index(parent, index, DIR_ITEM_SIZE + len);
        self.delayed.update_inode(parent);
        self.delayed.balance(&mut self.tree);
        Some(ino)
    }

    /// `getdents` with an atime update (relatime, the directory changed
    /// since its last access): `btrfs_dirty_inode` dirties the directory's
    /// delayed inode and calls `btrfs_balance_delayed_items`.
    pub fn readdir_atime(&mut self, dir: u64) {
        self.delayed.update_inode(dir);
        self.delayed.balance(&mut self.tree);
    }

    /// unlink of a regular file, then its eviction. False if absent or the
    /// name is a non-empty directory.
    pub fn unlink(&mut self, parent: u64, name: &[u8]) -> bool {
        self.call = TreeStats::default();
        let Some(ino) = self.unlink_entry(parent, name) else {
            return false;
        };
        self.evict(ino);
        self.last_unlink = self.call;
        true
    }

    /// Runs `f` as the syscall thread's own tree work: its tree counts go
    /// to the running call's.
    fn own<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let before = self.tree.stats();
        let r = f(self);
        self.call = self.call.plus(&self.tree.stats().since(&before));
        r
    }

    /// rmdir of an empty directory, then its eviction.
    pub fn rmdir(&mut self, parent: u64, name: &[u8]) -> bool {
        let Some(&(ino, _)) = self.dirs.get(&parent).and_then(|d| d.entries.get(name)) else {
            return false;
        };
        if self.dirs.get(&ino).is_none_or(|d| !d.entries.is_empty()) {
            return false;
        }
        if self.unlink_entry(parent, name).is_none() {
            return false;
        }
        self.dirs.remove(&ino);
        self.evict(ino);
        true
    }

    /// `sync` (`syncfs`, and the unmount's `sync_filesystem`): with
    /// `writeback_on_sync` the dirty tree blocks are written back first;
    /// then commit the transaction, running all delayed items first;
    /// deferred evictions happen once their delayed work has run.
    ///
    /// The commit runs as [`Fs::sync_task`] (`syncfs(2)` commits in the
    /// caller's context); the write-back before it is the flusher's
    /// ([`Tree::write_back_dirty`]).
    pub fn sync(&mut self) {
        self.commit_as(self.sync_task);
    }

    /// Transactions committed by syncs and unmounts so far.
    pub fn commits(&self) -> u64 {
        self.commit_work.len() as u64
    }

    /// The tree blocks each commit of a sync or unmount wrote, in order,
    /// each block once (the device's metadata copies not counted): the
    /// write-back before the commit, the blocks the commit itself dirtied
    /// and the extent, free space and root trees' dirty leaves.
    pub fn commit_blocks(&self) -> Vec<u64> {
        self.commit_work.iter().map(CommitWork::blocks).collect()
    }

    /// Tree blocks the run allocated: the fs tree's copies on write and
    /// splits ([`super::ctree::TreeStats::cow_blocks`]) and the other
    /// three trees' copies in the commits ([`COW_ONLY_ROOT_BLOCKS`] a
    /// commit on the lab's filesystem; each copy a new extent buffer).
    pub fn blocks_allocated(&self) -> u64 {
        self.tree.stats().cow_blocks + self.extents.blocks_allocated()
    }

    /// Tree blocks those commits wrote ([`Fs::commit_blocks`] summed).
    pub fn blocks_written(&self) -> u64 {
        self.commit_work.iter().map(CommitWork::blocks).sum()
    }

    /// The unmount: the same (`sync_filesystem` from
    /// `generic_shutdown_super`), run as [`Fs::unmount_task`].
    pub fn unmount(&mut self) {
        self.commit_as(self.unmount_task);
    }

    /// Write-back, delayed items, deferred evictions and the commit, run
    /// as `task`.
    fn commit_as(&mut self, task: Task) {
        let caller = self.tree.set_task(task);
        let (shapes, back) = if self.writeback_on_sync {
            (self.tree.dirty_shapes(), self.tree.write_back_dirty())
        } else {
            (Vec::new(), 0)
        };
        self.blocks_written_back += back;
        let refs_before = self.extents.counts();
        self.extents.run_queued(&mut self.tree, task);
        let (deletes, inserts) = (self.delayed.delete_stats(), self.delayed.insert_stats());
        self.delayed.run_all(&mut self.tree);
        let deletes = self.delayed.delete_stats().since(&deletes);
        let inserts = self.delayed.insert_stats().since(&inserts);
        for ino in std::mem::take(&mut self.deferred_evictions) {
            self.truncate_inode_items(ino);
        }
        // `btrfs_sync_fs` and `btrfs_commit_super` commit only a running
        // transaction (`btrfs_attach_transaction_barrier`: -ENOENT without
        // one); a transaction that dirtied no block is taken as none.
        let dirty = back + self.tree.dirty_unwritten();
        if dirty > 0 {
            self.extents.commit(&mut self.tree, task);
            let refs = self.extents.counts().since(&refs_before);
            let mut written = self.tree.dirty_shapes();
            written.extend(self.extents.dirty_shapes());
            self.commit_work.push(CommitWork {
                writeback: shapes,
                deletes,
                inserts,
                refs,
                written,
            });
        }
        self.extents.end_transaction();
        self.tree.commit_transaction();
        self.tree.set_task(caller);
    }

    /// One step of the queued async worker (under
    /// [`crate::kernel::btrfs::delayed::WorkerMode::Concurrent`]; see
    /// [`DelayedRoot::worker_step`]). None once it has stopped.
    pub fn worker_step(&mut self) -> Option<WorkerStep> {
        self.delayed.worker_step(&mut self.tree)
    }

    /// `__btrfs_unlink_inode` for the entry, and the balance at the end of
    /// the syscall. Returns the unlinked inode.
    fn unlink_entry(&mut self, parent: u64, name: &[u8]) -> Option<u64> {
        let &(ino, _) = self.dirs.get(&parent)?.entries.get(name)?;
        if self.dirs.get(&ino).is_some_and(|d| !d.entries.is_empty()) {
            return None;
        }
        let (ino, index) = self.dirs.get_mut(&parent)?.entries.remove(name)?;
        let len = name.len() as u32;
        let key = Key::new(parent, DIR_ITEM_KEY, name_hash(name));
        self.own(|fs| {
            fs.tree.delete_or_truncate_item(&key, DIR_ITEM_SIZE + len);
            fs.tree.insert_items(&[Item::new(orphan_key(ino), 0)]);
        });
        self.delayed.delete_inode_ref(ino);
        self.delayed.delete_dir_index(parent, index);
        self.delayed.update_inode(parent);
        self.delayed.update_inode(ino);
        self.last_unlink_check = self.delayed.balance(&mut self.tree);
        Some(ino)
    }

    /// `btrfs_evict_inode` of an inode with no links:
    /// `btrfs_commit_inode_delayed_inode` (the inode item and the INODE_REF
    /// go to the tree) and its balance check; then with
    /// `evict_kills_pending` the pending dir-index work is dropped
    /// (`btrfs_kill_delayed_inode_items`) and the inode's items are
    /// truncated now; otherwise an inode that still has pending dir-index
    /// work is truncated after the next commit has run it.
    fn evict(&mut self, ino: u64) {
        self.own(|fs| fs.delayed.commit_delayed_inode(&mut fs.tree, ino));
        self.delayed.balance(&mut self.tree);
        if self.evict_kills_pending {
            self.killed_at_evict += self.delayed.kill_inode_items(ino) as u64;
        }
        if self.delayed.node(ino).is_some_and(|n| !n.del.is_empty() || !n.ins.is_empty()) {
            self.deferred_evictions.push(ino);
            return;
        }
        self.own(|fs| fs.truncate_inode_items(ino));
        self.delayed.balance(&mut self.tree);
    }

    /// `btrfs_truncate_inode_items` to size 0 (every item of the inode:
    /// one delete search and one `del_items` per leaf, a new search only
    /// when the run reached its leaf's end), then `btrfs_orphan_del`.
    fn truncate_inode_items(&mut self, ino: u64) {
        while let (1.., true) = self.tree.delete_objectid_run(ino) {}
        self.tree.delete_item(&orphan_key(ino));
    }
}

/// The key of `ino`'s orphan item.
fn orphan_key(ino: u64) -> Key {
    Key::new(ORPHAN_OBJECTID, ORPHAN_ITEM_KEY, ino)
}

/// Tree blocks of the other trees a commit writes, on a filesystem as
/// small as the lab's (each of these trees a single leaf; the lab's mkfs
/// sets `-R free-space-tree`, and no block group tree): the root tree's
/// leaf, which `commit_fs_roots` (the fs tree's root item: its root moved
/// by a copy on write) and `update_cowonly_root` change
/// (fs/btrfs/transaction.c); the extent tree's leaf, which
/// `btrfs_run_delayed_refs` changes (fs/btrfs/extent-tree.c: the metadata
/// extent items of the blocks allocated and freed, the block group item's
/// used bytes); the free space tree's leaf (fs/btrfs/free-space-tree.c:
/// the same extents added and removed). Each is copied on write once per
/// transaction; the chunk and device trees change only with a new chunk.
/// A larger filesystem, whose trees have more levels, writes more.
pub const COW_ONLY_ROOT_BLOCKS: u64 = 3;

/// What one commit of a sync or unmount did, for its time (the
/// workload prices it; `btrfs_commit_transaction` and the write-back
/// before it).
#[derive(Debug, Clone, Default)]
pub struct CommitWork {
    /// The blocks the writeback flusher wrote out before the commit.
    pub writeback: Vec<BlockShape>,
    /// The delayed deletions the commit ran (`btrfs_run_delayed_items`).
    pub deletes: DeleteRunStats,
    /// The delayed insertions it ran.
    pub inserts: InsertRunStats,
    /// Its delayed refs run ([`ExtentTrees::commit`]).
    pub refs: RefRunStats,
    /// The blocks it wrote itself (`btrfs_write_and_wait_transaction`):
    /// the fs tree's blocks it dirtied, then the extent, free space and
    /// root trees' ([`COW_ONLY_ROOT_BLOCKS`] leaves on the lab's
    /// filesystem).
    pub written: Vec<BlockShape>,
}

impl CommitWork {
    /// The tree blocks the commit wrote, each once: written back before
    /// it and written by it.
    pub fn blocks(&self) -> u64 {
        (self.writeback.len() + self.written.len()) as u64
    }
}

/// `rm -fr testdir`: unlink the entries in readdir (dir index) order
/// (`on_unlink` called after each, with the filesystem: the call's own
/// tree work is [`Fs::last_unlink`]), rmdir the directory, then unmount
/// (a final commit).
///
/// The readdir list is taken a slice of dir indexes at a time (at most 16
/// slices), so it never holds more than a sixteenth of the names beside the
/// directory map; the order is the same as one sorted list (indexes are
/// unique, and the unlinks of a slice only remove that slice's entries).
pub fn rm_rf(fs: &mut Fs, dir: u64, on_unlink: &mut dyn FnMut(&mut Fs)) {
    let Some(d) = fs.dirs.get(&dir) else {
        return;
    };
    let end = d.next_index;
    let width = (end / RM_RF_SLICES).max(RM_RF_MIN_SLICE);
    fs.readdir_atime(dir);
    let mut lo = 0;
    while lo < end {
        let hi = lo.saturating_add(width);
        let mut names: Vec<(u64, DirName)> = match fs.dirs.get(&dir) {
            Some(d) => d
                .entries
                .iter()
                .filter(|(_, (_, idx))| (lo..hi).contains(idx))
                .map(|(n, &(_, idx))| (idx, n.clone()))
                .collect(),
            None => break,
        };
        names.sort();
        for (_, name) in &names {
            if fs.unlink(dir, name.as_bytes()) {
                on_unlink(fs);
            }
        }
        lo = hi;
    }
    fs.rmdir(ROOT_DIR_INO, b"testdir");
    fs.unmount();
}

/// Most slices [`rm_rf`] reads the directory in.
const RM_RF_SLICES: u64 = 16;
/// Fewest dir indexes in one slice of [`rm_rf`].
const RM_RF_MIN_SLICE: u64 = 1 << 16;

/// Leaves holding at least one dir index item of `dir`.
pub fn dir_index_leaf_count(fs: &Fs, dir: u64) -> usize {
    let lo = crate::kernel::btrfs::ctree::Key::new(dir, crate::kernel::btrfs::ctree::DIR_INDEX_KEY, 0);
    let hi = crate::kernel::btrfs::ctree::Key::new(dir, crate::kernel::btrfs::ctree::DIR_INDEX_KEY, u64::MAX);
    let layout = fs.tree.leaf_layout();
    let mut count = 0;
    for (i, (_, _, first)) in layout.iter().enumerate() {
        let next_first = layout.get(i + 1).and_then(|l| l.2);
        let starts_before_hi = first.is_some_and(|k| k <= hi);
        let ends_after_lo = next_first.is_none_or(|k| k > lo);
        if starts_before_hi && ends_after_lo {
            count += 1;
        }
    }
    count
}
