//! `lock` and `unlock` steps: the lock a name resolves to (a spinlock or
//! mutex, a side of a reader-writer lock, each instance of a lock with
//! `per`), and the check that every lock a path takes it releases.

use super::build::{BuildError, Names};
use super::config::{LockKindName, LockMode, Per, StepConfig};
use super::sim::Step;
use crate::param::ParamError;

fn err(field: impl Into<String>, message: impl Into<String>) -> BuildError {
    ParamError::new(field, message)
}

/// A `lock` or `unlock` step: a spinlock or mutex, or a side of a
/// reader-writer lock (`mode`, default write); an `unlock` releases
/// whatever side the thread holds. A lock with `per` gives a
/// [`Step::Keyed`] with the step on each instance.
pub fn lock_step(s: &StepConfig, field: &str, names: &Names<'_>) -> Result<Step, BuildError> {
    let name = s.lock.as_deref().or(s.unlock.as_deref()).unwrap_or_default();
    let key = if s.lock.is_some() { "lock" } else { "unlock" };
    let on = |first: u32, one: &dyn Fn(u32) -> Step| -> Step {
        match names.per.get(name) {
            Some(&(per, n)) => Step::Keyed {
                key: match per {
                    Per::Ag => super::sim::KEY_AG,
                    Per::Dir => super::sim::KEY_DIR,
                },
                steps: (first..first + n).map(one).collect(),
            },
            None => one(first),
        }
    };
    if let Some(&id) = names.locks.get(name) {
        if s.mode.is_some() {
            return Err(err(
                format!("{field}.mode"),
                format!("lock `{name}` has no read side: `mode` is read only by rwsem, qrwlock and seqlock locks; remove it"),
            ));
        }
        let take = s.lock.is_some();
        return Ok(on(id, &|i| if take { Step::Lock(i) } else { Step::Unlock(i) }));
    }
    let Some(&(id, kind)) = names.rwlocks.get(name) else {
        let all = names.locks.keys().chain(names.rwlocks.keys()).map(String::as_str);
        return Err(err(
            format!("{field}.{key}"),
            format!("no lock named `{name}` is declared under [locks]"),
        )
        .suggest(crate::text::closest(name, all)));
    };
    if s.unlock.is_some() {
        return Ok(on(id, &Step::RwUnlock));
    }
    let write = s.mode.unwrap_or(LockMode::Write) == LockMode::Write;
    Ok(match kind {
        LockKindName::Seqlock if !write => on(id, &Step::SeqBegin),
        _ => on(id, &|i| Step::RwLock { id: i, write }),
    })
}

/// The key of the lock a step takes (true) or releases (false): a
/// spinlock's id, a reader-writer lock's id above `rw`; a keyed step's
/// first instance stands for all (they follow the same steps).
fn lock_key(step: &Step, rw: u64) -> Option<(u64, bool)> {
    match step {
        Step::Lock(l) => Some((u64::from(*l), true)),
        Step::Unlock(l) => Some((u64::from(*l), false)),
        Step::RwLock { id, .. } | Step::SeqBegin(id) => Some((rw + u64::from(*id), true)),
        Step::RwUnlock(id) => Some((rw + u64::from(*id), false)),
        Step::Keyed { steps, .. } => steps.first().and_then(|s| lock_key(s, rw)),
        _ => None,
    }
}

/// A seqlock read section's `unlock` at step `i` becomes the retry back
/// to its `read_seqbegin` at step `j` (on each instance of a keyed one).
fn seq_retry(path: &mut [Step], i: usize, j: usize) {
    let begin = path[j].clone();
    match (&begin, &mut path[i]) {
        (Step::SeqBegin(id), at @ Step::RwUnlock(_)) => *at = Step::SeqRetry { id: *id, begin: j },
        (Step::Keyed { steps: b, .. }, Step::Keyed { steps: u, .. }) => {
            for (b, u) in b.iter().zip(u.iter_mut()) {
                if let (Step::SeqBegin(id), Step::RwUnlock(_)) = (b, &*u) {
                    *u = Step::SeqRetry { id: *id, begin: j };
                }
            }
        }
        _ => {}
    }
}

/// Checks that every lock the path takes is released later in the same
/// operation by a step that runs on the same operations (the same
/// `every`), and that no step takes a lock the path already holds or
/// releases one it does not hold. The lock model trusts its callers: an
/// unpaired unlock would release another thread's lock (utilisation above
/// 1, throughput past mutual exclusion), an unpaired lock would deadlock.
///
/// A seqlock's read section ends in a retry: its `unlock` becomes
/// [`Step::SeqRetry`] back to the section's `read_seqbegin`. `at` is the
/// prefix of the steps' fields (`path` or `workqueues.NAME.path`).
pub fn check_lock_pairs(path: &mut [Step], every: &[u32], names: &Names<'_>, at: &str) -> Result<(), BuildError> {
    // Reader-writer locks get keys above the spinlocks' ids.
    const RW: u64 = 1 << 32;
    let name = |key: u64| {
        let found = if key >= RW {
            names.rwlocks.iter().find(|(_, v)| u64::from(v.0) + RW == key).map(|(k, _)| k)
        } else {
            names.locks.iter().find(|(_, v)| u64::from(**v) == key).map(|(k, _)| k)
        };
        found.map_or("?", String::as_str)
    };
    // (lock key, step that took it)
    let mut held: Vec<(u64, usize)> = Vec::new();
    for i in 0..path.len() {
        let every_at = |j: usize| every.get(j).copied().unwrap_or(1);
        let Some((l, take)) = lock_key(&path[i], RW) else { continue };
        match take {
            true => {
                if let Some(&(_, j)) = held.iter().find(|(h, _)| *h == l) {
                    return Err(err(
                        format!("{at}[{i}].lock"),
                        format!(
                            "takes lock `{}` again while the path holds it (taken at {at}[{j}]): the thread would wait for itself",
                            name(l)
                        ),
                    ));
                }
                held.push((l, i));
            }
            false => {
                let Some(k) = held.iter().position(|(h, _)| *h == l) else {
                    return Err(err(
                        format!("{at}[{i}].unlock"),
                        format!(
                            "releases lock `{}`, which the path does not hold here: take it with a `lock` step before",
                            name(l)
                        ),
                    ));
                };
                let (_, j) = held.remove(k);
                seq_retry(path, i, j);
                if every_at(i) != every_at(j) {
                    return Err(err(
                        format!("{at}[{i}].every"),
                        format!(
                            "the unlock of `{}` runs every {} operations and its lock ({at}[{j}]) every {}: they must match",
                            name(l),
                            every_at(i),
                            every_at(j)
                        ),
                    ));
                }
            }
        }
    }
    match held.first() {
        Some(&(l, j)) => Err(err(
            format!("{at}[{j}].lock"),
            format!("lock `{}` is never released: add an `unlock` step after it", name(l)),
        )),
        None => Ok(()),
    }
}
