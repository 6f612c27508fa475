//! The VFS side of the syscalls the XFS paths are driven by (6.18,
//! `fs/namei.c`, `fs/open.c`, `fs/file.c`, `fs/file_table.c`,
//! `fs/dcache.c`, `fs/inode.c`, `arch/x86/entry`), counted in [`Work`]
//! (see [`crate::kernel::work`] for how).
//!
//! The lab's paths are `/proc/self/fd/N/dT/f<i>` (`Fs::base` names the
//! mount root through the lab's open descriptor), so every open and
//! unlink walks `proc`, `self` (a symlink to the pid), `fd`, `N` (a
//! magic link to the mount root, revalidated each time) and `dT` before
//! the last component: [`LAB_PREFIX_WALK`].

use crate::kernel::work::Work;

/// One syscall's entry and exit (`entry_SYSCALL_64`, `do_syscall_64`,
/// `x64_sys_call`, `syscall_exit_to_user_mode` with its work checks, the
/// speculation mitigations' stores): about 60 loads. No indirect call:
/// `x64_sys_call` is a `switch` of direct calls
/// (`arch/x86/entry/syscall_64.c`, 6.9 on); a seccomp filter would add
/// one (`bpf_prog_run`), and the lab runs without one.
pub const SYSCALL: Work = Work::straight(60.0, 0.0);

/// `getname` -> `getname_flags`: a `names_cache` slab object
/// (`kmem_cache_alloc`, one locked operation as `xfs_alloc`'s costs count
/// a slab fast path), `strncpy_from_user` of the ~25-byte path (word at a
/// time), the `filename` fields; `putname` (refcount, slab free): about
/// 55 loads, 3 locked operations.
pub const GETNAME: Work = Work::straight(55.0, 3.0);

/// The lab's path prefix `/proc/self/fd/N/dT/` (see the module header):
/// `path_init` (root from `current->fs` under `fs->seq`), five
/// `link_path_walk` components, each `hash_name` (word at a time),
/// `may_lookup` -> `inode_permission` (`generic_permission`, the LSM
/// hook), `lookup_fast` -> `__d_lookup_rcu` (hash bucket, the dentry's
/// `d_name` and `d_seq`), `step_into` (mount and link checks), about 75
/// loads each under RCU; plus `self`'s link (`proc_self_get_link`: the
/// pid formatted) and `N`'s magic link, about 220 loads more;
/// `complete_walk` / `terminate_walk`: 30. About 625 loads.
///
/// 27 locked operations, 6 of them here and 21 in
/// [`LAB_PREFIX_WALK_SHARED`] (on lines every thread of the lab's process
/// writes). Under RCU only `self`'s link body takes any: its
/// `kmalloc` and the delayed `kfree_link` (2, one each as every slab fast
/// path here). `tid_fd_revalidate` (`fs/proc/fd.c`) refuses RCU walk with
/// `-ECHILD`, so from `N` on the walk takes references (`fs/namei.c`):
/// - `try_to_unlazy_next`: `legitimize_mnt`'s `smp_mb()` (a locked add on
///   x86-64), `lockref_get_not_dead` on the parent and on `N`, and
///   `legitimize_root` (`smp_mb()` and a lockref): 5;
/// - `tid_fd_revalidate` again, in ref-walk: `get_proc_task`,
///   `tid_fd_mode` (`fget_task`: `task_lock`, the file's reference;
///   `fput`; since the file cache became `SLAB_TYPESAFE_BY_RCU`, 6.8) and
///   `put_task_struct`: 5;
/// - `proc_pid_get_link` (`fs/proc/base.c`): `proc_fd_access_allowed`
///   (`get_proc_task`, `ptrace_may_access`'s `task_lock`,
///   `put_task_struct`) 3; `proc_fd_link`: `get_proc_task`, `fget_task`
///   (`task_lock`, the file's reference), `path_get`'s `dget` (`mntget`
///   is a per-CPU add), `fput`, `put_task_struct` 6; `nd_jump_link`'s
///   `path_put` of the old path (a `dput`; `mntput` per-CPU) 1: 10;
/// - the link's saved path put after the jump: 1;
/// - `dT` in ref-walk: `__d_lookup`'s `d_lock`, `step_into`'s `dput` of
///   the parent: 2;
/// - the walk's end: `path_put` of the path and of the grabbed root: 2.
///
/// Until session 49 this counted 6 (the link's `path_get` / `path_put`
/// and two more), short of the ref-walk.
///
/// Private to the walking thread (here): the two `smp_mb()`, the link
/// body's `kmalloc` and `kfree_link`, `dT`'s `d_lock` and the final
/// `dput` of `dT`: 6. On lines the lab's threads share (one process, one
/// descriptor `N`), [`LAB_PREFIX_WALK_SHARED`]: 21. (Until session 59 the
/// count was 24: it missed `tid_fd_mode`'s `fget_task` and `fput`.)
///
/// Ten indirect calls, all in `proc`: `i_op->permission` twice
/// (`proc_pid_permission` on `<pid>`, `proc_fd_permission` on `fd`),
/// `d_op->d_revalidate` four times (`pid_revalidate` on `<pid>` and `fd`,
/// `tid_fd_revalidate` on `N` under RCU, refused, then again in ref-walk),
/// `i_op->get_link` twice (`proc_self_get_link`, `proc_pid_get_link`) and
/// its `proc_get_link` (`proc_fd_link`), and the delayed `kfree_link` of
/// `self`'s body (`do_delayed_call`).
pub const LAB_PREFIX_WALK: Work = Work::straight(625.0, 6.0).indirect(10.0);

/// The locked operations of [`LAB_PREFIX_WALK`]'s ref-walk on lines that
/// every thread of the lab's process writes, since the threads are one
/// process walking one descriptor's `/proc` link: the task's `usage`
/// (`get_proc_task` / `put_task_struct` in `tid_fd_revalidate`,
/// `proc_fd_access_allowed` and `proc_fd_link`: 6), its `alloc_lock`
/// (`task_lock` in `tid_fd_mode`'s and `proc_fd_link`'s `fget_task` and
/// in `ptrace_may_access`: 3), descriptor `N`'s file reference
/// (`fget_task` and `fput`, twice: 4), and the lockrefs of
/// four dentries taken and dropped: `fd` and `N` (`try_to_unlazy_next`;
/// `nd_jump_link`'s and the followed link's `path_put`), the process root
/// (`legitimize_root`, `terminate_walk`) and the mount root (`proc_fd_link`'s
/// `path_get`, `step_into`'s `dput` of the parent at `dT`): 8. 21 in all.
/// A scenario whose threads share these lines models each access as a
/// step on its own line (`scenarios/lab/xfs-create-scaling.toml`) and
/// leaves this out of its counted path; a model of one thread counts it
/// here.
pub const LAB_PREFIX_WALK_SHARED: Work = Work::straight(0.0, 21.0);

/// `path_openat` for `O_CREAT|O_EXCL` up to the filesystem's create:
/// `alloc_empty_file` -> `init_file` (a `filp` slab object, the
/// `nr_files` percpu counter, `security_file_alloc`, `get_cred`),
/// `open_last_lookups` -> `lookup_open`: `inode_lock` of the parent
/// (`down_write` of `i_rwsem`), `d_lookup` (miss), `d_alloc_parallel` ->
/// `d_alloc` (a new dentry: slab object, ~20 fields initialised,
/// `d_lock`), the in-lookup hash (bit spinlock), `may_o_create`
/// (`security_inode_create`), then after the create `__d_lookup_done`,
/// `inode_unlock`: about 260 loads, 10 locked operations, 9 here:
/// `get_cred` of the process's cred, which the lab's threads share, is a
/// step of the scenario's path (`lab_cred`). The new
/// dentry's 3 lines (192 bytes) are in no cache: the slab hands out
/// objects no CPU has touched in a create-only run, and `dentry_cache` has
/// no constructor, so `__d_alloc`'s stores are their first touch
/// ([`Work::new_lines`]). Two indirect calls, counted here
/// at their call sites in `lookup_open`: `dir_inode->i_op->lookup`
/// (`xfs_vn_lookup`) and `dir_inode->i_op->create` (`xfs_vn_create`; XFS
/// has no `atomic_open`).
pub const OPEN_CREATE_LOOKUP: Work = Work {
    atomics: 9.0,
    hits: 260.0,
    indirect_calls: 2.0,
    new_lines: 3.0,
    ..Work::ZERO
};

/// `xfs_vn_lookup` for a name that is not there (the XFS lookup itself is
/// counted by the directory model): `xfs_dentry_to_name`, the `-ENOENT`
/// path, `d_splice_alias(NULL)` -> `d_add` of the negative dentry: about
/// 40 loads, 2 locked operations.
pub const NEGATIVE_LOOKUP: Work = Work::straight(40.0, 2.0);

/// `lookup_open` -> `i_op->create` = `xfs_vn_create` -> `xfs_generic_create` around
/// `xfs_create`: `may_create`, `posix_acl_create` (the parent's cached
/// ACL: none), `xfs_setup_iops`, `xfs_finish_inode_setup`
/// (`unlock_new_inode`: `i_lock`, the state bits, the wake-up check),
/// `d_instantiate` (`d_lock`, `i_lock`, `hlist_add_head` on the inode's
/// aliases, `security_d_instantiate`), `fsnotify_create`: about 150
/// loads, 7 locked operations. No indirect call on a host whose LSMs
/// keep no xattrs (`security_inode_init_security` returns before its hook
/// loop when `lbs_xattr_count` is 0; SELinux or Smack would add one per
/// hook plus `xfs_initxattrs`).
pub const GENERIC_CREATE: Work = Work::straight(150.0, 7.0);

/// `do_open` of the new file: `may_open`, `vfs_open` ->
/// `do_dentry_open` (`path_get`: dentry and mount references, `fops_get`,
/// `xfs_file_open` -> `generic_file_open`, `file_ra_state_init`,
/// `security_file_open`, the mode bits), `fsnotify_open`; then
/// `get_unused_fd_flags` (`file_lock`, the open-fd bitmap search) and
/// `fd_install`: about 190 loads, 6 locked operations, 5 here:
/// `alloc_fd`'s `file_lock` of the process's `files_struct`, which the
/// lab's threads share, is a step of the scenario's path (`files_struct`).
/// One indirect call:
/// `do_dentry_open`'s `f_op->open` (`xfs_file_open`).
pub const DO_OPEN: Work = Work::straight(190.0, 5.0).indirect(1.0);

/// `close` -> `file_close_fd` (`file_lock`, the fd bit cleared),
/// `filp_flush` (`dnotify_flush`, `locks_remove_posix`), then `__fput`
/// inside the syscall (`fput_close_sync`, 6.15 on; no task work):
/// `fsnotify_close`,
/// `locks_remove_file`, `xfs_file_release` -> `xfs_release` (its
/// checks on a clean empty file), `fops_put`, `dput` (lockref), `mntput`,
/// `file_free` (`put_cred`, percpu `nr_files`, slab free): about 230
/// loads, 9 locked operations, 7 here: `file_close_fd`'s `file_lock` and
/// `put_cred`, on lines the lab's threads share, are steps of the
/// scenario's path (`files_struct`, `lab_cred`), as is the new dentry's
/// `d_lru_add` (`dentry_lru`), which this count did not hold. One
/// indirect call: `f_op->release`
/// (`xfs_file_release`).
pub const CLOSE: Work = Work::straight(230.0, 7.0).indirect(1.0);

/// `do_unlinkat` around the filesystem's unlink: `filename_parentat`'s
/// last component split, `mnt_want_write` (percpu), `inode_lock_nested`
/// of the parent, `lookup_one_qstr_excl` (a dcache hit: `d_lookup`,
/// `d_lock`/lockref), `vfs_unlink` (`may_delete_dentry`,
/// `security_inode_unlink`, `inode_lock` of the victim,
/// `try_break_deleg`, `dont_mount` checks), `d_delete` ->
/// `dentry_unlink_inode` (`d_lock`, `i_lock`, the alias unlinked),
/// `fsnotify_unlink`, the unlocks, `dput`, `mnt_drop_write`: about 320
/// loads, 12 locked operations. The victim's dentry and inode were
/// created long before (20,000 of each per directory): their 2 + 6 lines
/// this path reads are cold. One indirect call: `vfs_unlink`'s
/// `dir->i_op->unlink` (`xfs_vn_unlink`, `btrfs_unlink`).
pub const UNLINK_VFS: Work = Work {
    cold_lines: 8.0,
    atomics: 12.0,
    hits: 320.0,
    indirect_calls: 1.0,
    ..Work::ZERO
};

/// `iput` of the unlinked inode -> `iput_final` -> `evict`:
/// `inode_sb_list_del` (`s_inode_list_lock`), `inode_wait_for_writeback`,
/// `truncate_inode_pages_final` of the empty mapping, `clear_inode`,
/// `destroy_inode` -> `xfs_fs_destroy_inode` ->
/// `xfs_inode_mark_reclaimable` -> `xfs_inodegc_queue` (the per-CPU
/// `xfs_inodegc` list: `llist_add`, the item count, `mod_delayed_work_on`
/// on every queueing): about 260 loads, 9 locked operations, 8 here:
/// `inode_sb_list_del`'s `s_inode_list_lock`, which every thread's
/// inodes share, is a step of the scenario's path (`s_inode_list`). Three
/// indirect calls through `sb->s_op` (`fs/inode.c`): `drop_inode`
/// (`iput_final`), `evict_inode` (`xfs_fs_evict_inode`, 6.15 on) and
/// `destroy_inode`; the RCU callback that frees the LSM blob runs later,
/// in softirq, and is not counted.
pub const EVICT: Work = Work::straight(260.0, 8.0).indirect(3.0);
