//! The kernel's delayed-item accounting on the case-3 script, unlink by
//! unlink: what `btrfs_balance_delayed_items` sees at the end of each
//! syscall and on which one the background flush fires
//! (docs/reference/kernel.md sections 8.3 to 8.6).

use fsmeta::kernel::btrfs::ctree::Task;
use fsmeta::kernel::btrfs::delayed::{BatchStrategy, InsertStrategy, RsvRelease, Rules, Thresholds, WorkerMode};
use fsmeta::kernel::btrfs::fs::{Fs, ROOT_DIR_INO};

fn name(i: u64) -> Vec<u8> {
    format!("file_{i}").into_bytes()
}

/// The case-3 filesystem after `mkdir testdir` and 1000 creates; returns
/// it, testdir's inode and the creates on which a flush fired.
fn created() -> (Fs, u64, Vec<u64>) {
    let rules = Rules {
        delete: BatchStrategy::Sequential,
        insert: InsertStrategy::Contiguous,
        rsv_release: RsvRelease::PerItem,
    };
    let mut fs = Fs::new(16384, Thresholds::default(), rules);
    let dir = fs.mkdir(ROOT_DIR_INO, b"testdir").expect("mkdir");
    let mut fired = Vec::new();
    for c in 1..=1000u64 {
        fs.create(dir, &name(c));
        let check = fs.delayed.last_check();
        if check.fired {
            fired.push(c);
        }
    }
    (fs, dir, fired)
}

#[test]
fn creates_flush_at_125_then_every_127() {
    // mkdir leaves 2 items on the root's node; the first create adds its
    // insertion and dirties testdir: 3 + c at create c.
    let (fs, _, fired) = created();
    assert_eq!(fired, vec![125, 252, 379, 506, 633, 760, 887]);
    // 113 insertions (indexes 889..=1001) and testdir's update wait.
    assert_eq!(fs.delayed.items(), 114);
}

#[test]
fn unlinks_count_four_kinds_of_item_and_flush_every_125() {
    let (mut fs, dir, _) = created();
    // Phase C: rm -f file_1, file_3, ...: 114 + j + 2 at unlink j.
    let mut fired = Vec::new();
    for (j, i) in (1..=1000u64).step_by(2).enumerate() {
        assert!(fs.unlink(dir, &name(i)));
        let check = fs.last_unlink_check;
        if check.fired {
            fired.push(j as u64 + 1);
        }
        if j == 0 {
            assert_eq!(check.items, 114 + 1 + 2);
        }
        // After the file's eviction its two items are gone.
        assert!(fs.delayed.node(257 + i).is_none());
    }
    assert_eq!(fired, vec![12, 137, 262, 387]);
    fs.sync();
    assert_eq!(fs.delayed.items(), 0);
    // Phase D: rm -fr. The first getdents dirties testdir (1 item); each
    // unlink adds its dir-index deletion and the file's iref and inode
    // update: n + 3 at the n-th unlink since the last flush.
    fs.readdir_atime(dir);
    assert_eq!(fs.delayed.items(), 1);
    let mut since = 0usize;
    let mut fired = Vec::new();
    for (n, i) in (2..=1000u64).step_by(2).enumerate() {
        assert!(fs.unlink(dir, &name(i)));
        since += 1;
        let check = fs.last_unlink_check;
        assert_eq!(check.items, since + 3, "unlink {}", n + 1);
        if check.fired {
            fired.push(n + 1);
            since = 0;
        }
    }
    assert_eq!(fired, vec![125, 250, 375, 500]);
    // The last flush came on the last unlink: nothing left for the kill.
    assert_eq!(fs.delayed.node(dir).map_or(0, |n| n.del.len()), 0);
    assert!(fs.rmdir(ROOT_DIR_INO, b"testdir"));
    assert_eq!(fs.killed_at_evict, 0);
}

#[test]
fn rmdir_counts_the_directorys_own_items_and_eviction_writes_them() {
    let mut fs = Fs::new(16384, Thresholds::default(), Rules::default());
    let dir = fs.mkdir(ROOT_DIR_INO, b"d").expect("mkdir");
    fs.sync();
    assert!(fs.rmdir(ROOT_DIR_INO, b"d"));
    // rmdir: testdir's iref and inode update, the parent's deletion item
    // and update: 4 at the check; eviction then writes d's two items.
    assert_eq!(fs.last_unlink_check.items, 4);
    assert_eq!(fs.delayed.items(), 2);
    assert!(fs.delayed.node(dir).is_none());
    fs.sync();
    assert_eq!(fs.tree.all_items().len(), 2, "only the root dir's items remain");
}

#[test]
fn every_flush_hands_the_tree_back_to_the_syscall_thread() {
    // The worker's steps (inline or queued), the sync and the unmount each
    // run as their own task; the syscall thread's next operation must find
    // the tree its own again, or its searches would be priced as another
    // CPU's.
    for mode in [WorkerMode::Inline, WorkerMode::Concurrent] {
        let (mut fs, dir, _) = created();
        fs.delayed.set_worker_mode(mode);
        for i in (1..=1000u64).step_by(2) {
            assert!(fs.unlink(dir, &name(i)));
            while fs.worker_step().is_some() {}
            assert_eq!(fs.tree.task(), Task::Syscall, "{mode:?}, unlink {i}");
        }
        assert!(fs.delayed.delete_stats().batches > 0, "{mode:?}: the worker ran");
        fs.sync();
        assert_eq!(fs.tree.task(), Task::Syscall, "{mode:?}, sync");
        fsmeta::kernel::btrfs::fs::rm_rf(&mut fs, dir, &mut |f| while f.worker_step().is_some() {});
        assert_eq!(fs.tree.task(), Task::Syscall, "{mode:?}, rm -fr");
    }
}
