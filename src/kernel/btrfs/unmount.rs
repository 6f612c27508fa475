//! What a btrfs unmount waits for after its last commit, besides I/O:
//! the kernel's helper threads stopped and woken, counted from Linux
//! 6.18.2 (fs/btrfs/disk-io.c, fs/namespace.c, fs/super.c,
//! mm/backing-dev.c, kernel/workqueue.c). All of it runs before
//! `umount2(2)` returns: the superblock's shutdown is task work that
//! `mntput_no_expire` queues for the return to user space (fs/
//! namespace.c), so the lab's `umount_us` holds it.
//!
//! Priced by the profile's `[sched]` table ([`SchedPrices`], `fsmeta
//! calibrate`): each stop at `thread_stop_us`, each other wait at
//! `wake_us`. The lab's trace of one unmount on the Xeon 6 VM (session
//! 67; docs/lab-hosts.md) shows the waits in this order, the helpers on
//! either CPU (session 68's trace: the rescuers' stops 22-44 us each,
//! more than the measured price; docs/lab-hosts.md).
//!
//! Not counted: `close_ctree`'s own CPU work (the block groups, the
//! roots, the extent buffers and the btree inode's pages freed, the
//! sysfs entries removed: 400-600 us on CPU in that trace), waits that
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
pub const THREAD_STOPS: u32 = 2 + 13;

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

/// The teardown's waits priced on `prices`, us.
pub fn teardown_us(prices: &SchedPrices) -> f64 {
    f64::from(THREAD_STOPS) * prices.thread_stop_us + f64::from(WAKE_WAITS) * prices.wake_us
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_teardown_is_fifteen_stops_and_five_round_trips() {
        let p = SchedPrices {
            wake_us: 1.0,
            thread_stop_us: 100.0,
        };
        assert_eq!(teardown_us(&p), 15.0 * 100.0 + 5.0);
    }
}
