//! The deletion window's growth per item after the deleted one, live:
//! `btrfs_del_items` rewrites the data offset of every item after the
//! deleted range and memmoves their headers and data (6.x
//! fs/btrfs/ctree.c), so a one-item window grows with the items after
//! its slot. In the unlink phase the files go in dir-index order, every
//! k-th (`delete_every`): consecutive one-item windows on one leaf delete
//! slots one further right each time with one item fewer, so the items
//! after the slot fall by k from one window to the next (a sawtooth
//! over the leaves). The slope of the windows over those runs, per item,
//! is [`shift_ns_per_item`]; the twin computes its own from its batches'
//! counts (`crate::workload::btrfs_dir`), so the two compare the price
//! of the items after the slot apart from the window's fixed part.

use crate::slope::{MIN_POINTS, Point, theil_sen};

/// One deletion window, in trace order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Batch {
    /// Its window, us.
    pub us: f64,
    /// Items it deleted.
    pub items: f64,
    /// The last block its task write-locked in the window other than the
    /// root (`btrfs_tree_lock`): the leaf the items were deleted from (its
    /// copy, where the window copied it on write), or a sibling where a
    /// thin leaf pushed items into it, which [`Batch::write_locks`] tells
    /// apart.
    pub leaf: Option<u64>,
    /// The blocks its task write-locked after the root: the path's, plus a
    /// new copy or a sibling.
    pub write_locks: u32,
    /// Whether it copied a block on write.
    pub copied: bool,
    /// How many items fewer the next deletion on the leaf has after its
    /// slot: `delete_every` while every k-th file goes, 1 in `rm -fr`.
    pub step: u64,
}

impl Batch {
    /// A deletion the trace has no window for: it ends a run.
    pub const UNTIMED: Batch = Batch {
        us: 0.0,
        items: 0.0,
        leaf: None,
        write_locks: 0,
        copied: false,
        step: 0,
    };

    /// The run it may join: one item, on a known leaf, no copy on write.
    fn run_key(&self) -> Option<(u64, u32, u64)> {
        let one = (self.items - 1.0).abs() < 1e-9 && !self.copied;
        self.leaf.filter(|_| one).map(|l| (l, self.write_locks, self.step))
    }
}

/// ns per item after the deleted one: the Theil-Sen slope of the windows
/// over each run of at least [`MIN_POINTS`] consecutive one-item windows on
/// one leaf, with the same number of blocks write-locked and no copy on
/// write, the items after the slot falling by the batch's
/// [`Batch::step`] from one window to the next; `None` without such a
/// run.
pub(super) fn shift_ns_per_item(batches: &[Batch]) -> Option<f64> {
    let mut groups: Vec<Vec<Point>> = Vec::new();
    let mut run: Vec<&Batch> = Vec::new();
    let mut close = |run: &mut Vec<&Batch>| {
        if run.len() >= MIN_POINTS {
            let mut x = 0.0;
            let mut points = Vec::with_capacity(run.len());
            for b in run.iter() {
                points.push((x, b.us * 1e3, 1));
                x -= b.step as f64;
            }
            groups.push(points);
        }
        run.clear();
    };
    let mut key = None;
    for b in batches {
        let next = b.run_key();
        if next.is_none() || next != key {
            close(&mut run);
        }
        key = next;
        if key.is_some() {
            run.push(b);
        }
    }
    close(&mut run);
    theil_sen(&groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(us: f64, leaf: u64) -> Batch {
        Batch {
            us,
            items: 1.0,
            leaf: Some(leaf),
            write_locks: 2,
            copied: false,
            step: 2,
        }
    }

    fn stepped(b: &[Batch], step: u64) -> Vec<Batch> {
        b.iter().map(|&x| Batch { step, ..x }).collect()
    }

    #[test]
    fn a_sawtooth_over_two_leaves_gives_the_cost_per_item() {
        // 20 ns per item, every second file: 40 ns less per window.
        let mut b: Vec<Batch> = (0..10).map(|j| batch(5.0 - 0.04 * f64::from(j), 7)).collect();
        b.extend((0..12).map(|j| batch(4.0 - 0.04 * f64::from(j), 9)));
        let ns = shift_ns_per_item(&b).unwrap();
        assert!((ns - 20.0).abs() < 1e-6, "{ns}");
        // A window the task spent switched out does not move it.
        b[3].us += 30.0;
        let ns = shift_ns_per_item(&b).unwrap();
        assert!((ns - 20.0).abs() < 1e-6, "{ns}");
        // Every third file: the same windows are 40 / 3 ns per item.
        let ns = shift_ns_per_item(&stepped(&b, 3)).unwrap();
        assert!((ns - 40.0 / 3.0).abs() < 1e-6, "{ns}");
    }

    #[test]
    fn a_copy_at_the_head_of_a_run_is_left_out() {
        // After a commit the first window copies the leaf (30 us more):
        // the run is the windows after it, one short of a run here.
        let mut b: Vec<Batch> = (0..MIN_POINTS).map(|j| batch(5.0 - 0.04 * j as f64, 7)).collect();
        b[0].us += 30.0;
        b[0].copied = true;
        assert_eq!(shift_ns_per_item(&b), None);
        b.push(batch(5.0 - 0.04 * MIN_POINTS as f64, 7));
        let ns = shift_ns_per_item(&b).unwrap();
        assert!((ns - 20.0).abs() < 1e-6, "{ns}");
    }

    #[test]
    fn rm_fr_s_windows_fall_by_one_item() {
        // rm -fr: every file left, 20 ns an item is 20 ns a window.
        let b: Vec<Batch> = (0..9).map(|j| batch(5.0 - 0.02 * f64::from(j), 7)).collect();
        let ns = shift_ns_per_item(&stepped(&b, 1)).unwrap();
        assert!((ns - 20.0).abs() < 1e-6, "{ns}");
    }

    #[test]
    fn short_runs_and_batches_of_more_items_are_left_out() {
        let short: Vec<Batch> = (0..MIN_POINTS - 1).map(|j| batch(5.0 - 0.04 * j as f64, 7)).collect();
        assert_eq!(shift_ns_per_item(&short), None);
        let run: Vec<Batch> = (0..13).map(|j| batch(5.0 - 0.04 * f64::from(j), 7)).collect();
        assert!(shift_ns_per_item(&run).is_some());
        // A two-item batch, a window without its trace, a copy on write
        // or a push into a sibling (one more block write-locked) splits a
        // run of 13 into two of 6.
        for split in [
            Batch { items: 2.0, ..run[6] },
            Batch::UNTIMED,
            Batch { copied: true, ..run[6] },
            Batch { write_locks: 3, ..run[6] },
        ] {
            let mut b = run.clone();
            b[6] = split;
            assert_eq!(shift_ns_per_item(&b), None, "{split:?}");
        }
    }
}
