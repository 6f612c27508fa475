//! What a btrfs unmount waits for after its last commit, besides I/O:
//! the kernel's helper threads stopped and woken, counted from Linux
//! 6.18.2 (fs/btrfs/disk-io.c, fs/namespace.c, fs/super.c,
//! mm/backing-dev.c, kernel/workqueue.c). All of it runs before
//! `umount2(2)` returns: the superblock's shutdown is task work that
//! `mntput_no_expire` queues for the return to user space (fs/
//! namespace.c), so the lab's `umount_us` holds it.
//!
//! Priced by the profile's `[sched]` table ([`SchedPrices`], `fsmeta
//! calibrate`): the workqueue rescuers' stops at `placed_stop_us` where
//! measured (a thread asleep since it was made on the stopper's CPU,
//! placed at its wake by the host's scheduler; session 73), else at
//! `thread_stop_us`; the transaction and cleaner kthreads' stops at
//! `thread_stop_us` (the thread on the other, idle CPU: they run after
//! each commit, and the lab's trace shows them there); each other wait
//! at `wake_us` (its helper runs on the other CPU: the expedited grace
//! period's kthread, the writeback work, a work item queued on each
//! CPU). The lab's trace of one unmount on the Xeon 6 VM (session
//! 67; docs/lab-hosts.md) shows the waits in this order, the helpers on
//! either CPU (session 68's trace: the rescuers' stops 22-44 us each,
//! more than the measured price; docs/lab-hosts.md).
//!
//! Counted as work, not a wait: the btree inode's folios `close_ctree`
//! invalidates ([`btree_folios`], priced by the profile's
//! `storage.drop_folio_us`; session 69).
//!
//! Not counted: the rest of `close_ctree`'s own CPU work (the block
//! groups, the roots and the extent buffers freed, the workqueues
//! destroyed, the sysfs entries removed; kernel samples in session 69,
//! per unmount, of two sets: the folios 88 and 131 us, the workers 73 and
//! 81, sysfs 51 and 66, the block groups 11 and 17) and
//! `bdi_unregister`'s (42 and 59), waits that
//! happen only when something is running (a scrub, a balance, a
//! qgroup rescan, a block group's caching), and `sb->s_dio_done_wq`,
//! made only when asynchronous direct I/O ran.

use crate::machine::SchedPrices;

/// `kthread_stop` calls of one unmount, each waiting for the thread's
/// exit (kernel/kthread.c: `wait_for_completion(&kthread->exited)`):
/// `close_ctree` stops the transaction and the cleaner kthreads (2), and
/// `btrfs_stop_all_workers` destroys 14 workqueues, 13 of them made with
/// `WQ_MEM_RECLAIM` (`btrfs_init_workqueues`: every queue but
/// `btrfs-discard`), whose `destroy_workqueue` stops the rescuer
/// (kernel/workqueue.c: `kthread_stop(rescuer->task)`): 13. The
/// workqueues' `pool_workqueue` releases are queued to a kthread
/// worker and not waited for.
pub const THREAD_STOPS: u32 = KTHREAD_STOPS + RESCUER_STOPS;

/// Of [`THREAD_STOPS`], the transaction and cleaner kthreads': they run
/// after each commit, wherever the scheduler put them then (in the lab's
/// trace on the family 6 model 167 VM, session 73: on the other CPU).
pub const KTHREAD_STOPS: u32 = 2;

/// Of [`THREAD_STOPS`], the workqueue rescuers': each made at the mount
/// (`alloc_workqueue` from `btrfs_init_workqueues`: forked by kthreadd,
/// which the mounting task wakes, so placed from the mounting task's CPU;
/// the lab mounts and unmounts from one thread on one CPU) and asleep
/// since (`rescuer_thread` runs only under memory
/// pressure), so its wake is placed from there: in the lab's trace on
/// the family 6 model 167 VM (session 73), 11 of the 13 ran on the
/// unmounting thread's own CPU, each stop back in 6.5-12.5 us.
pub const RESCUER_STOPS: u32 = 13;

/// Other waits of one unmount for a helper thread to run and wake it
/// back:
/// - `kthread_park` of the cleaner at the start of `close_ctree`;
/// - `synchronize_rcu_expedited` in `namespace_unlock` (fs/namespace.c)
///   and in `bdi_remove_from_list` (mm/backing-dev.c, from
///   `bdi_unregister` in `generic_shutdown_super`: btrfs has its own bdi);
/// - `wb_shutdown`'s `flush_delayed_work` of the bdi's writeback work;
/// - `invalidate_bdev`'s `lru_add_drain_all` (`btrfs_close_bdev`), a work
///   item on each CPU, flushed.
pub const WAKE_WAITS: u32 = 1 + 2 + 1 + 1;

/// Tree blocks an unmount of the lab's filesystem finds in the btree
/// inode besides those the run allocated: the roots `open_ctree` reads
/// on a filesystem `mkfs.btrfs -m dup -R free-space-tree` made (the root
/// tree, the chunk, extent, device, fs, checksum, free space, uuid and
/// data relocation trees, each a single leaf: 9; fs/btrfs/disk-io.c
/// `btrfs_read_roots`), and the lab's preparation before its script
/// (`mkdir testdir` and `syncfs`: one commit, which copies the fs tree's
/// leaf and the [`super::fs::COW_ONLY_ROOT_BLOCKS`] roots: 4). By hand on
/// 6.18.44 (session 69): 36 folios at the mount and 24 more by the
/// preparation's commit (`mm_filemap_add_to_page_cache` of inode 1), 15
/// blocks of 16 KiB, of which these count 13.
pub const BLOCKS_BEFORE_SCRIPT: u64 = 9 + 1 + super::fs::COW_ONLY_ROOT_BLOCKS;

/// Folios of the btree inode an unmount invalidates
/// (`invalidate_inode_pages2` of its mapping in `close_ctree`): every
/// extent buffer instantiated since the mount keeps its folios in the
/// btree inode's page cache until then, the stale ones (freed or copied
/// blocks) too (`release_extent_buffer` detaches a buffer's folios, it
/// does not remove them). So: the blocks found before the script
/// ([`BLOCKS_BEFORE_SCRIPT`]) and every block the run allocated
/// (`allocated`: copies on write, splits, the commits' root copies),
/// `folios_per_block` each. By hand on 6.18.44 (session 69, 3 runs of
/// the lab's script at 1,000 files): 288 to 300 folios removed from
/// inode 1's page cache at each of 6 unmounts
/// (`mm_filemap_delete_from_page_cache`), none before.
pub fn btree_folios(allocated: u64, folios_per_block: u32) -> u64 {
    (BLOCKS_BEFORE_SCRIPT + allocated) * u64::from(folios_per_block)
}

/// The teardown's waits priced on `prices`, us.
pub fn teardown_waits_us(prices: &SchedPrices) -> f64 {
    // Without a placed stop, the 15 at one price, as before it was
    // measured (to the last bit).
    let stops = match prices.placed_stop_us {
        None => f64::from(THREAD_STOPS) * prices.thread_stop_us,
        Some(placed) => f64::from(KTHREAD_STOPS) * prices.thread_stop_us + f64::from(RESCUER_STOPS) * placed,
    };
    stops + f64::from(WAKE_WAITS) * prices.wake_us
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_teardown_is_fifteen_stops_and_five_round_trips() {
        let p = SchedPrices {
            wake_us: 1.0,
            thread_stop_us: 100.0,
            placed_stop_us: None,
        };
        assert_eq!(teardown_waits_us(&p), 15.0 * 100.0 + 5.0);
        // A stop placed by the scheduler, where measured, prices the
        // rescuers' 13; the two kthreads stay at the pinned stop.
        let placed = SchedPrices {
            placed_stop_us: Some(8.0),
            ..p
        };
        assert_eq!(teardown_waits_us(&placed), 2.0 * 100.0 + 13.0 * 8.0 + 5.0);
        // Without it, the 15 stops at one price to the last bit (2t + 13t
        // is not always 15t in floating point).
        let odd = SchedPrices {
            wake_us: 0.0,
            thread_stop_us: 0.07,
            placed_stop_us: None,
        };
        assert_eq!(teardown_waits_us(&odd).to_bits(), (15.0f64 * 0.07).to_bits());
    }

    #[test]
    fn the_btree_inode_holds_every_block_since_the_mount() {
        // 9 roots read at the mount, the preparation's commit (the fs
        // tree's leaf and 3 roots), then what the run allocated.
        assert_eq!(BLOCKS_BEFORE_SCRIPT, 13);
        assert_eq!(btree_folios(0, 4), 52);
        assert_eq!(btree_folios(59, 4), 288);
        assert_eq!(btree_folios(59, 1), 72, "a 4 KiB node is one folio");
    }
}
