//! The lock tables of one run, built from `[locks]`: each declared lock
//! (one per instance for a lock with `per`) in the spinlock and mutex
//! table or the reader-writer table, with the line its word lives on.
//! The words of per-instance locks are placed after every other reported
//! line ([`LockTables::place_instance_words`]), since their number
//! follows `[fs]`, not the scenario's names.

use super::build::Lines;
use super::config::{LockConfig, LockKindName, Per};
use super::layout::Layout;
use crate::machine::lock::{LockKind, LockTable};
use crate::machine::rwlock::{RwKind, RwTable};
use crate::param::ParamError;
use std::collections::BTreeMap;

/// The locks of `[locks]`, as the simulator takes them.
#[derive(Debug, Default)]
pub(super) struct LockTables {
    /// Spinlocks and mutexes.
    pub locks: LockTable,
    /// Their names -> the (first instance's) id in `locks`.
    pub lock_ids: BTreeMap<String, u32>,
    /// Reader-writer locks (rwsems, qrwlocks, seqlocks).
    pub rw: RwTable,
    /// Their names -> (the first instance's id in `rw`, kind).
    pub rw_ids: BTreeMap<String, (u32, LockKindName)>,
    /// Locks with `per` -> (per what, instances).
    pub per: BTreeMap<String, (Per, u32)>,
    /// Per-instance locks: (name, in `locks` rather than `rw`, first id,
    /// instances), their words placed by [`Self::place_instance_words`].
    instance_words: Vec<(String, bool, u32, u32)>,
}

impl LockTables {
    /// Builds the tables for `locks` (`layout`: the filesystem's, when
    /// `[fs]` is set), naming each lock's line in `lines`: its own
    /// `NAME.word`, or the declared line of its `line`.
    pub(super) fn new(locks: &BTreeMap<String, LockConfig>, layout: Option<&Layout>, lines: &mut Lines) -> Result<Self, ParamError> {
        let mut t = LockTables::default();
        for (name, l) in locks {
            let n = match (l.per, layout) {
                (Some(p), Some(layout)) => {
                    if l.line.is_some() {
                        return Err(ParamError::new(
                            format!("locks.{name}.line"),
                            "a lock with `per` has a word on each instance's own line (NAME[i].word): `line` would put every instance on one line; remove it",
                        ));
                    }
                    t.per.insert(name.clone(), (p, layout.count(p)));
                    Some(layout.count(p))
                }
                _ => None,
            };
            let line = match (n, l.line.as_deref()) {
                // Placed once the reported lines are known.
                (Some(_), _) => 0,
                (None, Some(line)) => lines.named(line, &format!("locks.{name}.line"))?,
                (None, None) => lines.id(&format!("{name}.word")),
            };
            if l.spin.is_some() && l.kind != LockKindName::Rwsem {
                return Err(ParamError::new(format!("locks.{name}.spin"), "only an `rwsem` lock reads spin"));
            }
            let classic = match l.kind {
                LockKindName::Ticket => Some(LockKind::Ticket),
                LockKindName::Queued => Some(LockKind::Queued),
                LockKindName::Mutex => Some(LockKind::Mutex),
                _ => None,
            };
            let rw_kind = match l.kind {
                LockKindName::Rwsem => RwKind::Rwsem {
                    spin: l.spin.unwrap_or(true),
                },
                LockKindName::Qrwlock => RwKind::Qrwlock,
                _ => RwKind::Seqlock,
            };
            let first = (0..n.unwrap_or(1))
                .map(|_| match classic {
                    Some(kind) => t.locks.add(kind, line),
                    None => t.rw.add(rw_kind, line),
                })
                .min()
                .unwrap_or(0);
            if let Some(n) = n {
                t.instance_words.push((name.clone(), classic.is_some(), first, n));
            }
            match classic {
                Some(_) => t.lock_ids.insert(name.clone(), first).map(|_| ()),
                None => t.rw_ids.insert(name.clone(), (first, l.kind)).map(|_| ()),
            };
        }
        Ok(t)
    }

    /// Gives each instance of a per-instance lock its word's line
    /// (`NAME[k].word`), after every reported line.
    pub(super) fn place_instance_words(&mut self, lines: &mut Lines) {
        for (name, classic, first, n) in &self.instance_words {
            for k in 0..*n {
                let line = lines.id(&format!("{name}[{k}].word"));
                match classic {
                    true => self.locks.set_line(first + k, line),
                    false => self.rw.set_line(first + k, line),
                }
            }
        }
    }

    /// (first id, instances) of every spinlock or mutex, by name order.
    pub(super) fn lock_arrays(&self) -> Vec<(u32, u32)> {
        self.lock_ids.iter().map(|(n, &id)| (id, self.count_of(n))).collect()
    }

    /// (first id, instances) of every reader-writer lock, by name order.
    pub(super) fn rwlock_arrays(&self) -> Vec<(u32, u32)> {
        self.rw_ids.iter().map(|(n, &(id, _))| (id, self.count_of(n))).collect()
    }

    /// Instances of lock `name` (1 without `per`).
    fn count_of(&self, name: &str) -> u32 {
        self.per.get(name).map_or(1, |&(_, n)| n)
    }
}
