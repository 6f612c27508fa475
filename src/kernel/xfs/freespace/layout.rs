//! The block layout of an AG's two free-space btrees as `xfs_db` reads it
//! from disk: for each tree and level, the entries (records in a leaf,
//! keys in a node) of every block, left to right. The lab saves it after
//! its hole punching (`xfs_db -r -c 'agf 1' -c 'addr cntroot' -c 'btdump
//! -i'`), beside the `freesp` text of the same AG, so that a twin starts
//! from the trees the live calls met: how full the kernel's inserts left
//! each block depends on the order the extents were freed in, which the
//! free space alone does not tell.
//!
//! The text, one line per tree and level, leaves first within a tree:
//!
//! ```text
//! # comment
//! bnobt level 0: 505 300
//! bnobt level 1: 2
//! cntbt level 0: 404 401
//! cntbt level 1: 2
//! ```

use std::path::Path;

use super::BtreeGeometry;
use crate::kernel::ModelError;

/// Most entries a block can hold: `bb_numrecs` is 16 bits.
pub const MAX_ENTRIES: usize = 65_535;

/// Entries per block of each level of both trees; index 0 is the leaves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BtreeLayout {
    /// The by-block tree (bnobt).
    pub bno: Vec<Vec<usize>>,
    /// The by-size tree (cntbt).
    pub cnt: Vec<Vec<usize>>,
}

impl BtreeLayout {
    /// Reads a layout file (module docs).
    pub fn read_file(path: &Path) -> Result<Self, ModelError> {
        let text = crate::engine::input::read_text_file(path)?;
        Self::parse(&text, path)
    }

    /// Parses the text of a layout file; `path` names it in errors. Each
    /// tree needs every level from 0 up to a single root block, each
    /// level's entries adding up to the blocks of the level below.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ModelError> {
        let err = |line: usize, message: String| -> ModelError { crate::param::InputError::malformed(path, line, message).into() };
        let mut layout = Self::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (head, sizes) = line.split_once(':').ok_or_else(|| {
                err(
                    i + 1,
                    format!("expected `bnobt level N: sizes` or `cntbt level N: sizes`, found `{line}`"),
                )
            })?;
            let mut words = head.split_whitespace();
            let levels = match words.next() {
                Some("bnobt") => &mut layout.bno,
                Some("cntbt") => &mut layout.cnt,
                other => {
                    return Err(err(
                        i + 1,
                        format!("unknown tree `{}`: expected bnobt or cntbt", other.unwrap_or("")),
                    ));
                }
            };
            let level: usize = match (words.next(), words.next().map(str::parse), words.next()) {
                (Some("level"), Some(Ok(l)), None) => l,
                _ => return Err(err(i + 1, format!("expected `level N` after the tree's name, found `{head}`"))),
            };
            if level != levels.len() {
                return Err(err(i + 1, format!("level {level} out of order: expected level {}", levels.len())));
            }
            let sizes: Vec<usize> = sizes
                .split_whitespace()
                .map(|w| w.parse().ok().filter(|n| (1..=MAX_ENTRIES).contains(n)))
                .collect::<Option<_>>()
                .ok_or_else(|| err(i + 1, format!("block sizes must be whole numbers in 1..={MAX_ENTRIES}")))?;
            if sizes.is_empty() {
                return Err(err(i + 1, "a level needs at least one block".to_string()));
            }
            levels.push(sizes);
        }
        for (name, levels) in [("bnobt", &layout.bno), ("cntbt", &layout.cnt)] {
            check_levels(levels).map_err(|m| err(text.lines().count().max(1), format!("{name}: {m}")))?;
        }
        Ok(layout)
    }

    /// The text of this layout (module docs), after a `#` line naming
    /// where it came from.
    pub fn to_text(&self, comment: &str) -> String {
        let mut out = format!("# {comment}\n");
        for (name, levels) in [("bnobt", &self.bno), ("cntbt", &self.cnt)] {
            for (l, sizes) in levels.iter().enumerate() {
                let s: Vec<String> = sizes.iter().map(usize::to_string).collect();
                out.push_str(&format!("{name} level {l}: {}\n", s.join(" ")));
            }
        }
        out
    }

    /// Records in the leaves of the by-block tree (the free extents).
    pub fn records(&self) -> usize {
        leaf_records(&self.bno)
    }

    /// Checks that both trees could be on disk with geometry `geo`: the
    /// same records in each, every block but the root within its level's
    /// minimum and maximum entries (`xfs_btree_delrec` and
    /// `xfs_btree_make_block_unfull` keep them so), a root node with at
    /// least two.
    pub fn check(&self, geo: &BtreeGeometry) -> Result<(), String> {
        let cnt = leaf_records(&self.cnt);
        if self.records() != cnt {
            return Err(format!("the bnobt's leaves hold {} records, the cntbt's {cnt}", self.records()));
        }
        for (name, levels) in [("bnobt", &self.bno), ("cntbt", &self.cnt)] {
            check_tree(levels, geo).map_err(|m| format!("{name}: {m}"))?;
        }
        Ok(())
    }
}

/// One tree's levels as [`BtreeLayout::check`] takes them: the structure
/// of [`check_levels`], and every block but the root within its level's
/// minimum and maximum entries for `geo`, a root node with at least two.
pub(crate) fn check_tree(levels: &[Vec<usize>], geo: &BtreeGeometry) -> Result<(), String> {
    check_levels(levels)?;
    let top = levels.len() - 1;
    for (l, sizes) in levels.iter().enumerate() {
        let (min, max) = if l == 0 {
            (geo.leaf_minrecs, geo.leaf_maxrecs)
        } else {
            (geo.node_minrecs, geo.node_maxrecs)
        };
        let min = match (l == top, l > 0) {
            (true, true) => 2,
            (true, false) => 1,
            _ => min,
        };
        if let Some(&n) = sizes.iter().find(|&&n| n < min || n > max) {
            return Err(format!(
                "a level {l} block holds {n} entries: this geometry takes {min} to {max} there"
            ));
        }
    }
    Ok(())
}

/// Records in one tree's leaves (saturating: sizes are at most
/// [`MAX_ENTRIES`] each, but a file may list many).
fn leaf_records(levels: &[Vec<usize>]) -> usize {
    levels.first().map_or(0, |l| l.iter().fold(0usize, |a, &n| a.saturating_add(n)))
}

/// One tree's levels: each level's entries count the blocks below, only
/// the top level is a single block, and it is the root.
fn check_levels(levels: &[Vec<usize>]) -> Result<(), String> {
    let Some(top) = levels.last() else {
        return Err("no levels".into());
    };
    if top.len() != 1 {
        return Err(format!(
            "the top level {} has {} blocks: expected one root",
            levels.len() - 1,
            top.len()
        ));
    }
    if let Some(l) = levels[..levels.len() - 1].iter().position(|v| v.len() == 1) {
        return Err(format!(
            "level {l} is a single block below level {}: a root has nothing above it",
            levels.len() - 1
        ));
    }
    for l in 1..levels.len() {
        let entries = levels[l].iter().fold(0usize, |a, &n| a.saturating_add(n));
        let below = levels[l - 1].len();
        if entries != below {
            return Err(format!("level {l} points to {entries} blocks but level {} has {below}", l - 1));
        }
    }
    Ok(())
}

/// Reads one tree's levels from `xfs_db`'s `btdump -i` text: a block's
/// header (`cntbt level 0 block 3 daddr 819400`), then `recs[1-N] = ...`
/// or `keys[1-N] = ...` giving its N entries; blocks are dumped level by
/// level from the root, left to right. Returns the levels leaves first.
pub fn levels_from_btdump(text: &str) -> Result<Vec<Vec<usize>>, String> {
    let mut by_level: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut pending: Option<usize> = None;
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let [_, "level", l, "block", ..] = words.as_slice() {
            let l: usize = l.parse().map_err(|_| format!("bad level in `{line}`"))?;
            if pending.is_some() {
                return Err(format!("a block without entries before `{line}`"));
            }
            pending = Some(l);
            continue;
        }
        let count = ["recs[", "keys["].iter().find_map(|p| line.strip_prefix(p)).and_then(|rest| {
            let range = rest.split(']').next()?;
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
            (a == 1 && b >= 1).then_some(b)
        });
        if let (Some(n), Some(l)) = (count, pending) {
            match by_level.iter_mut().find(|(lv, _)| *lv == l) {
                Some((_, v)) => v.push(n),
                None => by_level.push((l, vec![n])),
            }
            pending = None;
        }
    }
    if pending.is_some() {
        return Err("the last block has no entries".into());
    }
    by_level.sort_by_key(|(l, _)| *l);
    if by_level.iter().enumerate().any(|(i, (l, _))| i != *l) {
        return Err("a level is missing".into());
    }
    let levels: Vec<Vec<usize>> = by_level.into_iter().map(|(_, v)| v).collect();
    check_levels(&levels)?;
    Ok(levels)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "cntbt level 1 block 1 daddr 72\nkeys[1-2] = [blockcount,startblock]\n1:[1,24]\n2:[1,90]\nptrs[1-2] = 1:2 2:8\n\
        cntbt level 0 block 1 daddr 16\nrecs[1-3] = [startblock,blockcount]\n1:[24,1]\n2:[26,1]\n3:[28,1]\n\
        cntbt level 0 block 2 daddr 64\nrecs[1] = [startblock,blockcount]\n1:[90,1]\n";

    #[test]
    fn a_btdump_gives_each_levels_block_sizes() {
        assert_eq!(levels_from_btdump(DUMP), Ok(vec![vec![3, 1], vec![2]]));
        assert!(levels_from_btdump("cntbt level 0 block 1 daddr 16\n").is_err());
    }

    #[test]
    fn the_text_reads_back_and_bad_lines_are_refused() {
        let l = BtreeLayout {
            bno: vec![vec![3, 1], vec![2]],
            cnt: vec![vec![4]],
        };
        let p = Path::new("x.layout");
        assert_eq!(BtreeLayout::parse(&l.to_text("test"), p).ok(), Some(l.clone()));
        assert_eq!(l.records(), 4);
        let cnt = "cntbt level 0: 4\n";
        for (bad, why) in [
            (
                "bnobt level 0: 3 1\nbnobt level 1: 3\n",
                "level 1 points to 3 blocks but level 0 has 2",
            ),
            ("bnobt level 1: 2\n", "level 1 out of order"),
            ("xbt level 0: 1\n", "unknown tree `xbt`"),
            ("bnobt level 0: 0\n", "whole numbers in 1..=65535"),
            ("bnobt level 0: 65536\n", "whole numbers in 1..=65535"),
            ("bnobt level 0: 4\nbnobt level 1: 1\n", "level 0 is a single block below level 1"),
        ] {
            let e = BtreeLayout::parse(&format!("{bad}{cnt}"), p).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = BtreeLayout::parse("bnobt level 0: 4\n", p).unwrap_err().to_string();
        assert!(e.contains("cntbt: no levels"), "{e}");
    }

    #[test]
    fn a_layout_the_geometry_cannot_hold_is_refused() {
        let geo = BtreeGeometry::v5_4k();
        let ok = BtreeLayout {
            bno: vec![vec![300, 300], vec![2]],
            cnt: vec![vec![253, 347], vec![2]],
        };
        assert_eq!(ok.check(&geo), Ok(()));
        let thin = BtreeLayout {
            cnt: vec![vec![599, 1], vec![2]],
            ..ok.clone()
        };
        assert!(thin.check(&geo).unwrap_err().contains("599 entries"));
        let uneven = BtreeLayout {
            cnt: vec![vec![300, 299], vec![2]],
            ..ok
        };
        assert!(uneven.check(&geo).unwrap_err().contains("600 records, the cntbt's 599"));
    }
}
