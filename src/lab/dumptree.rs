//! `btrfs inspect-internal dump-tree` text: leaves, nodes, items by type.
//!
//! The lines read (btrfs-progs' print-tree.c):
//! `node BYTENR level L items N free space F generation G owner O`,
//! `leaf BYTENR items N free space F generation G owner O`, and per item
//! `item I key (OBJECTID TYPE OFFSET) itemoff X itemsize Y`. Everything
//! else (flags, uuids, item bodies) is skipped.

use std::collections::BTreeMap;

/// One leaf: its items by key type, and the object ids of its DIR_INDEX
/// items.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Leaf {
    /// Items in the header's count.
    pub items: u64,
    /// Items by type name (`INODE_ITEM`, `DIR_INDEX`, ...).
    pub by_type: BTreeMap<String, u64>,
    /// Object ids of the DIR_INDEX items in the leaf.
    pub dir_index_owners: Vec<u64>,
}

/// A tree as dump-tree printed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    /// Leaves in print order.
    pub leaves: Vec<Leaf>,
    /// The highest node level seen (0 when the root is a leaf).
    pub top_level: u64,
}

/// Why a dump could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("dump-tree text, line {line}: {message}")]
pub struct DumpError {
    /// 1-based line.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

fn after<'a>(words: &[&'a str], key: &str) -> Option<&'a str> {
    words.iter().position(|w| *w == key).and_then(|i| words.get(i + 1).copied())
}

impl Tree {
    /// Parses dump-tree text; a leaf whose item lines disagree with its
    /// header's count, or no leaf at all, is an error (a cut-short dump).
    pub fn parse(text: &str) -> Result<Tree, DumpError> {
        let mut t = Tree::default();
        let mut seen_items = 0u64;
        let mut last_line = 0;
        let check = |t: &Tree, seen: u64, line: usize| -> Result<(), DumpError> {
            match t.leaves.last() {
                Some(l) if l.items != seen => Err(DumpError {
                    line,
                    message: format!("a leaf's header says {} items, {seen} item lines follow", l.items),
                }),
                _ => Ok(()),
            }
        };
        for (i, raw) in text.lines().enumerate() {
            last_line = i + 1;
            let line = raw.trim_start();
            let words: Vec<&str> = line.split_whitespace().collect();
            let bad = |m: &str| DumpError {
                line: i + 1,
                message: m.to_string(),
            };
            match words.first() {
                Some(&"node") if words.get(2) == Some(&"level") => {
                    let lvl: u64 = after(&words, "level")
                        .and_then(|v| v.parse().ok())
                        .ok_or_else(|| bad("node level"))?;
                    t.top_level = t.top_level.max(lvl);
                }
                Some(&"leaf") if words.get(2) == Some(&"items") => {
                    check(&t, seen_items, i + 1)?;
                    let items = after(&words, "items")
                        .and_then(|v| v.parse().ok())
                        .ok_or_else(|| bad("leaf items"))?;
                    t.leaves.push(Leaf { items, ..Leaf::default() });
                    seen_items = 0;
                }
                Some(&"item") if raw.starts_with('\t') && words.get(2) == Some(&"key") => {
                    let leaf = t.leaves.last_mut().ok_or_else(|| bad("an item before any leaf"))?;
                    let obj = words.get(3).map(|w| w.trim_start_matches('(')).and_then(|w| w.parse::<u64>().ok());
                    let ty = words.get(4).ok_or_else(|| bad("item key"))?;
                    let obj = obj.ok_or_else(|| bad("item key objectid"))?;
                    *leaf.by_type.entry((*ty).to_string()).or_default() += 1;
                    if *ty == "DIR_INDEX" {
                        leaf.dir_index_owners.push(obj);
                    }
                    seen_items += 1;
                }
                _ => {}
            }
        }
        check(&t, seen_items, last_line)?;
        if t.leaves.is_empty() {
            return Err(DumpError {
                line: last_line,
                message: "no leaf in the dump".into(),
            });
        }
        Ok(t)
    }

    /// Height in levels (1 for a lone leaf).
    pub fn height(&self) -> u64 {
        self.top_level + 1
    }

    /// Items of each type over all leaves.
    pub fn items_by_type(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for l in &self.leaves {
            for (k, v) in &l.by_type {
                *m.entry(k.clone()).or_default() += v;
            }
        }
        m
    }

    /// Leaves holding DIR_INDEX items of directory `dir`.
    pub fn dir_index_leaves(&self, dir: u64) -> u64 {
        self.leaves.iter().filter(|l| l.dir_index_owners.contains(&dir)).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "btrfs-progs v6.2\nfs tree key (FS_TREE ROOT_ITEM 0) \n\
node 30982144 level 1 items 2 free space 469 generation 7 owner FS_TREE\n\
node 30982144 flags 0x1(WRITTEN) backref revision 1\n\
\tkey (256 INODE_ITEM 0) block 31014912 gen 7\n\
leaf 31014912 items 2 free space 113 generation 7 owner FS_TREE\n\
leaf 31014912 flags 0x1(WRITTEN) backref revision 1\n\
\titem 0 key (256 INODE_ITEM 0) itemoff 16123 itemsize 160\n\
\t\tgeneration 3 transid 7 size 14 nbytes 16384\n\
\titem 1 key (257 DIR_INDEX 2) itemoff 16000 itemsize 36\n\
leaf 31014913 items 1 free space 113 generation 7 owner FS_TREE\n\
\titem 0 key (258 INODE_REF 257) itemoff 16123 itemsize 16\n";

    #[test]
    fn a_small_dump_is_read() {
        let t = Tree::parse(SMALL).unwrap();
        assert_eq!(t.leaves.len(), 2);
        assert_eq!(t.height(), 2);
        assert_eq!(t.items_by_type().get("INODE_ITEM"), Some(&1));
        assert_eq!(t.dir_index_leaves(257), 1);
        assert_eq!(t.dir_index_leaves(256), 0);
    }

    #[test]
    fn a_cut_dump_is_refused() {
        let cut = &SMALL[..SMALL.find("\titem 1").unwrap()];
        let e = Tree::parse(cut).unwrap_err();
        assert!(e.message.contains("2 items, 1 item lines"), "{e}");
        assert!(Tree::parse("btrfs-progs v6.2\n").is_err());
    }
}
