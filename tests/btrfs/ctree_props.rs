//! After random create/unlink/mkdir/rmdir/sync sequences on 1 KiB and
//! 4 KiB blocks (deep trees, many splits, merges and node rebalances),
//! every leaf fits its byte budget, keys are sorted, parent keys match,
//! and after a sync the tree's items equal a `BTreeMap` kept beside it.

use std::collections::BTreeMap;

use fsmeta::kernel::btrfs::ctree::*;
use fsmeta::kernel::btrfs::delayed::{BatchStrategy, InsertStrategy, Rules, Thresholds};
use fsmeta::kernel::btrfs::fs::{Fs, ROOT_DIR_INO, name_hash};
use proptest::prelude::*;

#[derive(Default)]
struct Shadow {
    items: BTreeMap<Key, u32>,
}

impl Shadow {
    fn add(&mut self, key: Key, size: u32) {
        *self.items.entry(key).or_insert(0) += size;
    }
    fn sub(&mut self, key: Key, size: u32) {
        if let Some(v) = self.items.get_mut(&key) {
            *v -= size;
            if *v == 0 {
                self.items.remove(&key);
            }
        }
    }
    fn link(&mut self, parent: u64, ino: u64, index: u64, name: &[u8], add: bool) {
        let len = name.len() as u32;
        let entries = [
            (Key::new(ino, INODE_ITEM_KEY, 0), INODE_ITEM_SIZE),
            (Key::new(ino, INODE_REF_KEY, parent), INODE_REF_SIZE + len),
            (Key::new(parent, DIR_ITEM_KEY, name_hash(name)), DIR_ITEM_SIZE + len),
            (Key::new(parent, DIR_INDEX_KEY, index), DIR_ITEM_SIZE + len),
        ];
        for (k, s) in entries {
            if add { self.add(k, s) } else { self.sub(k, s) }
        }
    }
}

fn entry(fs: &Fs, dir: u64, name: &[u8]) -> Option<(u64, u64)> {
    fs.dirs.get(&dir)?.entries.get(name).copied()
}

fn apply(fs: &mut Fs, sh: &mut Shadow, op: u8, a: u16, b: u16) {
    let dirs: Vec<u64> = fs.dirs.keys().copied().collect();
    let dir = dirs[a as usize % dirs.len()];
    let name = format!("n{}{}", b % 300, "x".repeat((b % 13) as usize)).into_bytes();
    match op % 8 {
        0..=3 => {
            if let Some(ino) = fs.create(dir, &name) {
                let (_, idx) = entry(fs, dir, &name).unwrap_or((ino, 0));
                sh.link(dir, ino, idx, &name, true);
            }
        }
        4 => {
            if let Some(ino) = fs.mkdir(dir, &name) {
                let (_, idx) = entry(fs, dir, &name).unwrap_or((ino, 0));
                sh.link(dir, ino, idx, &name, true);
            }
        }
        5 | 6 => {
            let victim = fs
                .dirs
                .get(&dir)
                .and_then(|d| d.entries.iter().nth(b as usize % d.entries.len().max(1)));
            let Some((vname, &(ino, idx))) = victim.map(|(n, e)| (n.as_bytes().to_vec(), e)) else {
                return;
            };
            let ok = if fs.dirs.contains_key(&ino) {
                fs.rmdir(dir, &vname)
            } else {
                fs.unlink(dir, &vname)
            };
            if ok {
                sh.link(dir, ino, idx, &vname, false);
            }
        }
        _ => fs.sync(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn tree_matches_shadow(
        nodesize in prop_oneof![Just(1024u32), Just(4096u32)],
        strategy in prop_oneof![Just(BatchStrategy::Sequential), Just(BatchStrategy::LeafMatch), Just(BatchStrategy::LeafWalk)],
        insert in prop_oneof![Just(InsertStrategy::Contiguous), Just(InsertStrategy::LeafFit)],
        kill in any::<bool>(),
        ops in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 1..1500),
    ) {
        let small = Thresholds { background: 8, writeback: 32, batch: 2 };
        let mut fs = Fs::new(nodesize, small, Rules {
            delete: strategy,
            insert,
            ..Rules::default()
        });
        fs.evict_kills_pending = kill;
        let mut sh = Shadow::default();
        sh.add(Key::new(ROOT_DIR_INO, INODE_ITEM_KEY, 0), INODE_ITEM_SIZE);
        sh.add(Key::new(ROOT_DIR_INO, INODE_REF_KEY, ROOT_DIR_INO), INODE_REF_SIZE + 2);
        for (i, &(op, a, b)) in ops.iter().enumerate() {
            apply(&mut fs, &mut sh, op, a, b);
            if i % 64 == 0 {
                prop_assert!(fs.tree.check().is_ok(), "{:?}", fs.tree.check());
            }
        }
        fs.sync();
        prop_assert!(fs.tree.check().is_ok(), "{:?}", fs.tree.check());
        // The commits' refs found every extent where the extent and free
        // space trees should hold it (at 1 KiB nodes the trees' first
        // leaves lie below the metadata group: not checked).
        let refs = fs.extents.counts();
        prop_assert!(nodesize < 4096 || refs.unmatched == 0, "{:?}", refs);
        prop_assert!(refs.heads > 0 || fs.commits() == 0);
        let got: BTreeMap<Key, u32> = fs.tree.all_items().iter().map(|i| (i.key, i.data_size)).collect();
        prop_assert_eq!(got, sh.items);
    }
}
