//! The counted code of whole XFS operations on 6.18, by name: what one
//! transaction handle of a create, an unlink or the inactivation does
//! beyond the shared lines its scenario models as steps, with the VFS
//! syscall side around it ([`crate::kernel::vfs`]), the directory
//! ([`super::dir2`]), the inode allocator ([`super::inode`]) and the
//! transaction ([`super::trans`]). A `path` workload's `[work.NAME]`
//! names one with `code = "NAME"` and the table [`CODE_PATHS`] is the
//! only place the names are matched.
//!
//! Sizes come from the scenario: `dir_entries`, the names (`f1`, `f2`,
//! ...) each thread's directory holds at the end of its creates. A
//! create's work is the mean over the directory growing from 0 to
//! `dir_entries` entries; an unlink's over it shrinking back, in creation
//! order (the lab's). The inode btrees hold one 64-inode chunk per 64
//! files of the thread's AG (the inode64 rotor gives each thread
//! directory its own AG).
//!
//! The CIL's background push of a checkpoint of creates is a path of its
//! own (`xlog_cil_push_work`, counted in [`super::log`]).
//!
//! Not counted (a named remainder, not a fitted constant): the inode's
//! reclaim (`xfs_reclaim_inode` in the background reclaim worker, the
//! RCU free), the log's I/O and its completion, and the user-space side
//! of the lab's loop (the path formatted and converted per call).

use super::dir2::{self, Form, Shape};
use super::inode::{self as ino, INODES_PER_CHUNK};
use super::trans::{BUF_ITEM, ILOCK_PAIR, INODE_ITEM, INODE_ITEM_ATTACH, INODE_ITEM_INIT, TRANS_ALLOC, TRANS_COMMIT, commit_sort};
use crate::kernel::vfs;
use crate::kernel::work::{Tally, Work};

/// The sizes a counted path depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeParams {
    /// Names in each thread's directory at the end of its creates (the
    /// lab's `files`).
    pub dir_entries: u64,
}

/// A counted kernel path a scenario can name.
#[derive(Clone, Copy, Debug)]
pub struct CodePath {
    /// The name a scenario gives (`code = "NAME"`): the kernel function
    /// the handle is allocated for.
    pub name: &'static str,
    /// What one run of it stands for.
    pub about: &'static str,
    /// Its work per run, a mean over the run's directory sizes.
    pub count: fn(&CodeParams) -> Tally,
    /// Points inside the path, in path order, at which a scenario can
    /// split it (`[[path]]` steps' `from` and `to`): where a lock the
    /// path's scenario models as a step is taken or released.
    pub points: &'static [CodePoint],
}

/// A point inside a counted path: the name of the kernel function the
/// path reaches there, and the path's work before it.
#[derive(Clone, Copy, Debug)]
pub struct CodePoint {
    /// The kernel function at the point (`xfs_dialloc`).
    pub name: &'static str,
    /// What happens there.
    pub about: &'static str,
    /// The path's work before the point, a mean over the same sizes as
    /// [`CodePath::count`] (so the stretches add up to the whole).
    pub before: fn(&CodeParams) -> Tally,
}

/// Every counted path, by name.
pub const CODE_PATHS: &[CodePath] = &[
    CodePath {
        name: "xfs_create",
        about: "open(O_CREAT|O_EXCL) and close of a new file: the VFS side and xfs_create's handle (xfs_trans_alloc_icreate), the chunk allocation apart",
        count: create,
        points: &[
            CodePoint {
                name: "xfs_dialloc",
                about: "xfs_create calls xfs_dialloc, which reads and locks the AGI buffer (xfs_ialloc_read_agi): held to the commit",
                before: create_to_dialloc,
            },
            CodePoint {
                name: "xfs_trans_commit",
                about: "the end of xfs_create's commit: the AGI and the parent's ILOCK are released with the log items (xfs_trans_free_items)",
                before: create_to_commit_end,
            },
        ],
    },
    CodePath {
        name: "xfs_ialloc_ag_alloc",
        about: "a new 64-inode chunk in xfs_dialloc (every 64 creates) and the xfs_dialloc_roll that commits it",
        count: chunk_alloc,
        points: &[],
    },
    CodePath {
        name: "xlog_cil_push_work",
        about: "the CIL's background push of a checkpoint of creates (as many as fill XLOG_CIL_SPACE_LIMIT of the lab's log): the log vectors walked, sorted, copied and checksummed into iclogs (src/kernel/xfs/log.rs)",
        count: cil_push,
        points: &[CodePoint {
            name: "xlog_cil_ctx_switch",
            about: "the items walked into the vector chain and the new context switched in under down_write(xc_ctx_lock), released right after (up_write); the sort, the copies and the iclogs follow outside it",
            before: cil_push_to_switch,
        }],
    },
    CodePath {
        name: "xfs_remove",
        about: "unlink: the VFS side, xfs_remove's handle (xfs_trans_alloc_dir) and the eviction that queues the inode on the inodegc worker",
        count: remove,
        points: &[
            CodePoint {
                name: "xfs_iunlink",
                about: "xfs_droplink -> xfs_iunlink reads and locks the AGI of the victim's AG (its unlinked bucket): held to the commit",
                before: remove_to_iunlink,
            },
            CodePoint {
                name: "xfs_trans_commit",
                about: "the end of xfs_remove's commit: the AGI and both ILOCKs released with the log items",
                before: remove_to_commit_end,
            },
        ],
    },
    CodePath {
        name: "xfs_attr_inactive",
        about: "the inodegc worker's first handle per inode (xfs_inactive -> xfs_attr_inactive), with the worker's per-inode share",
        count: attr_inactive,
        points: &[],
    },
    CodePath {
        name: "xfs_inactive_ifree",
        about: "the inodegc worker's second handle per inode: xfs_ifree (unlinked list, inobt and finobt, a chunk freed every 64)",
        count: inactive_ifree,
        points: &[CodePoint {
            name: "xfs_ifree",
            about: "xfs_inactive_ifree calls xfs_ifree: xfs_difree and xfs_iunlink_remove read and lock the AGI, held to the commit that ends the handle",
            before: ifree_to_ifree,
        }],
    },
];

/// The counted path named `name`.
pub fn find(name: &str) -> Option<&'static CodePath> {
    CODE_PATHS.iter().find(|p| p.name == name)
}

/// `xfs_create`'s own logic around its calls: `xfs_qm_vop_dqalloc` with
/// quota off, `xfs_create_space_res`, `xfs_parent_start` (no parent
/// pointers: mkfs.xfs 6.1), `xfs_trans_ijoin` of the parent,
/// `xfs_dir_create_child`'s `xfs_trans_ichgtime` and the parent logged,
/// `xfs_dir_update_hook`, `xfs_qm_vop_create_dqattach`: about 90 loads.
pub const CREATE_LOGIC: Work = Work::straight(90.0, 0.0);

/// `xfs_vn_unlink` and `xfs_remove`'s own logic: `xfs_qm_dqattach` with
/// quota off, `xfs_remove_space_res`, `xfs_lock_two_inodes` (the inode
/// order), both joined, `xfs_dir_remove_child`'s `xfs_trans_ichgtime`,
/// `xfs_droplink` (`drop_nlink`), `xfs_dir_update_hook`: about 110 loads.
pub const REMOVE_LOGIC: Work = Work::straight(110.0, 0.0);

/// Directory buffers a change logs: the block (block form); the data
/// block and the leaf (leaf form); and the free-index block (node form).
pub fn dir_logged_buffers(form: Form) -> f64 {
    match form {
        Form::Block => 1.0,
        Form::Leaf => 2.0,
        Form::Node => 3.0,
    }
}

/// Inode chunks in a thread's AG when it holds `inodes` of its files.
fn chunks(inodes: u64) -> u64 {
    inodes.div_ceil(INODES_PER_CHUNK).max(1)
}

/// One create into a directory of `n` names (the `n + 1`-th file), the
/// chunk allocation apart: [`create_pre_at`], [`create_held_at`] and
/// [`create_post_at`].
pub fn create_at(n: u64) -> Tally {
    let mut t = create_pre_at(n);
    t.add_tally(&create_held_at(n), 1.0).add_tally(&create_post_at(n), 1.0);
    t
}

/// A create up to `xfs_dialloc`: `open` and its lookup under the parent's
/// `i_rwsem` (`open_last_lookups`), `xfs_create`'s logic, the handle
/// (`xfs_trans_alloc_icreate`) and the parent's ILOCK.
pub fn create_pre_at(n: u64) -> Tally {
    let s = dir2::shape(n);
    let mut t = Tally::default();
    t.add(vfs::SYSCALL, 1.0).add(vfs::GETNAME, 1.0).add(vfs::LAB_PREFIX_WALK, 1.0);
    t.add(vfs::OPEN_CREATE_LOOKUP, 1.0).add(vfs::NEGATIVE_LOOKUP, 1.0);
    t.add_tally(&dir2::lookup_absent(&s), 1.0);
    t.add(vfs::GENERIC_CREATE, 1.0);
    t.add(CREATE_LOGIC, 1.0).add(ILOCK_PAIR, 1.0).add(TRANS_ALLOC, 1.0);
    t
}

/// A create from `xfs_dialloc` to the end of its commit, the AGI held:
/// the finobt record (one chunk with free inodes), the inobt record of
/// the chunk, `xfs_icreate` (the new inode and its ILOCK), the directory
/// entry and the commit of the new inode (attached to its cluster
/// buffer), the parent, the AGI, the inobt and finobt leaves and the
/// directory's buffers.
pub fn create_held_at(n: u64) -> Tally {
    let s = dir2::shape(n);
    let mut t = Tally::default();
    t.add(ino::DIALLOC_LOGIC, 1.0).add(ino::AG_BUF, 1.0).add(ino::CURSOR, 2.0);
    ino::btree_lookup(&mut t, 1);
    ino::btree_lookup(&mut t, chunks(n + 1));
    t.add(ino::RECORD_UPDATE, 2.0);
    t.add(ino::IGET_CREATE, 1.0).add(INODE_ITEM_INIT, 1.0).add(ILOCK_PAIR, 1.0);
    t.add_tally(&dir2::insert(&s), 1.0);
    t.add(INODE_ITEM, 2.0).add(INODE_ITEM_ATTACH, 1.0);
    let bufs = 3.0 + dir_logged_buffers(s.form);
    t.add(BUF_ITEM, bufs).add(TRANS_COMMIT, 1.0).add(commit_sort(2.0 + bufs, true), 1.0);
    t
}

/// A create after its commit: `do_open` and the `close` syscall.
pub fn create_post_at(_n: u64) -> Tally {
    let mut t = Tally::default();
    t.add(vfs::SYSCALL, 1.0).add(vfs::DO_OPEN, 1.0).add(vfs::CLOSE, 1.0);
    t
}

/// The chunk allocation of the create that finds no free inode, when the
/// AG holds `chunks` chunks: the extent, the cluster buffers initialised,
/// the inobt and finobt inserts, the commit of `xfs_dialloc_roll` and the
/// rolled handle's re-reservation.
pub fn chunk_alloc_at(chunks: u64) -> Tally {
    let mut t = Tally::default();
    t.add(ino::CHUNK_EXTENT_ALLOC, 1.0);
    t.add(ino::CLUSTER_BUF_NEW, ino::CLUSTERS_PER_CHUNK as f64);
    t.add(ino::CHUNK_INODE_INIT, INODES_PER_CHUNK as f64);
    t.add(ino::CHUNK_LOGIC, 1.0).add(ino::CURSOR, 2.0);
    ino::btree_lookup(&mut t, chunks);
    ino::btree_lookup(&mut t, 1);
    t.add(ino::RECORD_UPDATE, 2.0);
    // Logged: AGI, AGF, AGFL, the by-block and by-size leaves, inobt,
    // finobt, the icreate item.
    t.add(BUF_ITEM, 8.0).add(TRANS_COMMIT, 1.0).add(commit_sort(9.0, false), 1.0);
    t.add(TRANS_ALLOC, 1.0);
    t
}

/// One unlink of the oldest name of a directory of `n` names whose
/// full size was `full`: [`remove_pre_at`], [`remove_held_at`], and the
/// eviction after the commit.
pub fn remove_at(n: u64, full: &Shape) -> Tally {
    let mut t = remove_pre_at(n, full);
    t.add_tally(&remove_held_at(n), 1.0).add(vfs::EVICT, 1.0);
    t
}

/// An unlink up to `xfs_iunlink`: the syscall, `xfs_remove`'s logic, the
/// handle, both ILOCKs and the directory entry's removal.
pub fn remove_pre_at(n: u64, full: &Shape) -> Tally {
    let s = dir2::shape(n.saturating_sub(1));
    let mut t = Tally::default();
    t.add(vfs::SYSCALL, 1.0).add(vfs::GETNAME, 1.0).add(vfs::LAB_PREFIX_WALK, 1.0);
    t.add(vfs::UNLINK_VFS, 1.0);
    t.add(REMOVE_LOGIC, 1.0).add(ILOCK_PAIR, 2.0).add(TRANS_ALLOC, 1.0);
    t.add_tally(&dir2::remove(&s, full.leaves, full.entries), 1.0);
    t
}

/// An unlink from `xfs_droplink -> xfs_iunlink` (the AGI bucket) to the
/// end of its commit: parent and victim (re-attached to its cluster
/// buffer after the syncfs that cleaned it), the AGI, the cluster buffer
/// (the victim's di_next_unlinked), the directory's buffers.
pub fn remove_held_at(n: u64) -> Tally {
    let s = dir2::shape(n.saturating_sub(1));
    let mut t = Tally::default();
    t.add(ino::IUNLINK, 1.0).add(ino::AG_BUF, 1.0);
    t.add(INODE_ITEM, 2.0).add(INODE_ITEM_ATTACH, 1.0);
    let bufs = 2.0 + dir_logged_buffers(s.form);
    t.add(BUF_ITEM, bufs).add(TRANS_COMMIT, 1.0).add(commit_sort(2.0 + bufs, true), 1.0);
    t
}

/// `xfs_inactive_ifree` of one inode when the AG holds `inodes` of the
/// thread's inodes (before this one is freed).
pub fn ifree_at(inodes: u64) -> Tally {
    let mut t = ifree_pre();
    t.add(ino::IUNLINK, 1.0).add(ino::AG_BUF, 1.0).add(ino::IFREE_LOGIC, 1.0);
    t.add(ino::CURSOR, 2.0);
    ino::btree_lookup(&mut t, chunks(inodes));
    ino::btree_lookup(&mut t, 1);
    t.add(ino::RECORD_UPDATE, 2.0);
    // Committed: the inode, the AGI, the inobt and finobt leaves, the
    // cluster buffer (di_next_unlinked).
    t.add(INODE_ITEM, 1.0).add(BUF_ITEM, 4.0).add(TRANS_COMMIT, 1.0);
    t.add(commit_sort(5.0, false), 1.0);
    // Every 64th free empties a chunk.
    let per = 1.0 / INODES_PER_CHUNK as f64;
    t.add(ino::CHUNK_FREE, per)
        .add(ino::CHUNK_INODE_STALE, per * INODES_PER_CHUNK as f64);
    t
}

/// `xfs_inactive_ifree` up to `xfs_ifree`: the handle and the inode's
/// ILOCK.
pub fn ifree_pre() -> Tally {
    let mut t = Tally::default();
    t.add(TRANS_ALLOC, 1.0).add(ILOCK_PAIR, 1.0);
    t
}

/// The mean of `f(n)` over `n` in `ns` (empty: zero).
fn mean(ns: impl Iterator<Item = u64>, f: impl Fn(u64) -> Tally) -> Tally {
    let mut sum = Tally::default();
    let mut count = 0u64;
    for n in ns {
        sum.add_tally(&f(n), 1.0);
        count += 1;
    }
    sum.scaled(1.0 / count.max(1) as f64)
}

/// `xfs_create`: the mean over the directory growing from 0 to
/// `dir_entries` names.
pub fn create(p: &CodeParams) -> Tally {
    mean(0..p.dir_entries, create_at)
}

/// `xfs_create` up to `xfs_dialloc` (the mean, as [`create`]).
pub fn create_to_dialloc(p: &CodeParams) -> Tally {
    mean(0..p.dir_entries, create_pre_at)
}

/// `xfs_create` up to the end of its commit (the mean, as [`create`]).
pub fn create_to_commit_end(p: &CodeParams) -> Tally {
    mean(0..p.dir_entries, |n| {
        let mut t = create_pre_at(n);
        t.add_tally(&create_held_at(n), 1.0);
        t
    })
}

/// `xfs_remove` up to `xfs_iunlink` (the mean, as [`remove`]).
pub fn remove_to_iunlink(p: &CodeParams) -> Tally {
    let full = dir2::shape(p.dir_entries);
    mean(1..=p.dir_entries, |n| remove_pre_at(n, &full))
}

/// `xfs_remove` up to the end of its commit (the mean, as [`remove`]).
pub fn remove_to_commit_end(p: &CodeParams) -> Tally {
    let full = dir2::shape(p.dir_entries);
    mean(1..=p.dir_entries, |n| {
        let mut t = remove_pre_at(n, &full);
        t.add_tally(&remove_held_at(n), 1.0);
        t
    })
}

/// `xfs_inactive_ifree` up to `xfs_ifree`.
pub fn ifree_to_ifree(_: &CodeParams) -> Tally {
    ifree_pre()
}

/// `xfs_ialloc_ag_alloc`: the mean over the chunks the creates allocate.
pub fn chunk_alloc(p: &CodeParams) -> Tally {
    mean(0..chunks(p.dir_entries), chunk_alloc_at)
}

/// `xfs_remove`: the mean over the directory shrinking from
/// `dir_entries` names to none.
pub fn remove(p: &CodeParams) -> Tally {
    let full = dir2::shape(p.dir_entries);
    mean(1..=p.dir_entries, |n| remove_at(n, &full))
}

/// `xlog_cil_push_work` of a checkpoint of creates into directories of
/// `dir_entries` names ([`super::log::push`]).
pub fn cil_push(p: &CodeParams) -> Tally {
    super::log::push(p.dir_entries)
}

/// `xlog_cil_push_work` up to `xlog_cil_ctx_switch`
/// ([`super::log::push_to_switch`]).
pub fn cil_push_to_switch(p: &CodeParams) -> Tally {
    super::log::push_to_switch(p.dir_entries)
}

/// `xfs_attr_inactive` with the inodegc worker's share per inode.
pub fn attr_inactive(_: &CodeParams) -> Tally {
    let mut t = Tally::default();
    t.add(ino::INODEGC_ITEM, 1.0).add(TRANS_ALLOC, 1.0).add(ILOCK_PAIR, 1.0);
    t.add(ino::ATTR_INACTIVE_LOGIC, 1.0).add(INODE_ITEM, 1.0).add(TRANS_COMMIT, 1.0);
    t.add(commit_sort(1.0, false), 1.0);
    t
}

/// `xfs_inactive_ifree`: the mean over the AG's inodes going from
/// `dir_entries` to none.
pub fn inactive_ifree(p: &CodeParams) -> Tally {
    mean(1..=p.dir_entries, ifree_at)
}

#[cfg(test)]
mod tests;
