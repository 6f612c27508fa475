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

use crate::slope::{Point, theil_sen};

/// One deletion window, in trace order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Batch {
    /// Its window, us.
    pub us: f64,
    /// Items it deleted.
    pub items: f64,
    /// The last block its task write-locked in the window other than the
    /// root (`btrfs_tree_lock`): the leaf the items were deleted from
    /// (its copy, where the window copied it on write).
    pub leaf: Option<u64>,
}

/// Fewest consecutive one-item windows on one leaf taken as a run.
pub const MIN_RUN: usize = 8;

/// ns per item after the deleted one: the Theil-Sen slope of the windows
/// over each run of at least [`MIN_RUN`] consecutive one-item windows on
/// one leaf, the items after the slot falling by `delete_every` from one
/// window to the next; `None` without such a run.
pub(super) fn shift_ns_per_item(batches: &[Batch], delete_every: u64) -> Option<f64> {
    let k = delete_every as f64;
    let mut groups: Vec<Vec<Point>> = Vec::new();
    let mut run: Vec<f64> = Vec::new();
    let mut leaf = None;
    let mut close = |run: &mut Vec<f64>| {
        if run.len() >= MIN_RUN {
            groups.push(run.iter().enumerate().map(|(j, &us)| (-(j as f64) * k, us * 1e3, 1)).collect());
        }
        run.clear();
    };
    for b in batches {
        let one = (b.items - 1.0).abs() < 1e-9 && b.leaf.is_some();
        if !one || b.leaf != leaf {
            close(&mut run);
        }
        leaf = b.leaf;
        if one {
            run.push(b.us);
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
        }
    }

    #[test]
    fn a_sawtooth_over_two_leaves_gives_the_cost_per_item() {
        // 20 ns per item, every second file: 40 ns less per window.
        let mut b: Vec<Batch> = (0..10).map(|j| batch(5.0 - 0.04 * f64::from(j), 7)).collect();
        b.extend((0..12).map(|j| batch(4.0 - 0.04 * f64::from(j), 9)));
        let ns = shift_ns_per_item(&b, 2).unwrap();
        assert!((ns - 20.0).abs() < 1e-6, "{ns}");
        // A copy on write in a run does not move it.
        b[3].us += 30.0;
        let ns = shift_ns_per_item(&b, 2).unwrap();
        assert!((ns - 20.0).abs() < 1e-6, "{ns}");
        // Every third file: the same windows are 40 / 3 ns per item.
        let ns = shift_ns_per_item(&b, 3).unwrap();
        assert!((ns - 40.0 / 3.0).abs() < 1e-6, "{ns}");
    }

    #[test]
    fn short_runs_and_batches_of_more_items_are_left_out() {
        let short: Vec<Batch> = (0..MIN_RUN - 1).map(|j| batch(5.0 - 0.04 * j as f64, 7)).collect();
        assert_eq!(shift_ns_per_item(&short, 2), None);
        // A two-item batch splits a run of 12 into two of 6.
        let mut b: Vec<Batch> = (0..13).map(|j| batch(5.0 - 0.04 * f64::from(j), 7)).collect();
        b[6].items = 2.0;
        assert_eq!(shift_ns_per_item(&b, 2), None);
    }
}
