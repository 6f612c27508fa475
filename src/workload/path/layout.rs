//! `[fs]`: which allocation group and which directory each thread's
//! per-AG and per-directory objects belong to.
//!
//! Directories: one per thread (made in thread order), one shared by all,
//! or `N` shared round robin (thread `t` in directory `t mod N`).
//!
//! AGs, by the inode64 rotor (the default allocator since 3.7):
//! a new directory's inode goes to the AG the rotor names and the rotor
//! moves on by one; a file's inode goes to its parent's AG.
//! - 5.7 (`fs/xfs/libxfs/xfs_ialloc.c`): `xfs_ialloc_ag_select` takes
//!   `pagno = xfs_ialloc_next_ag(mp)` for `S_ISDIR(mode)`, which returns
//!   `mp->m_agirotor` under `m_agirotor_lock` and then increments it,
//!   wrapping to 0 at `m_maxagi`; for a file `pagno =
//!   XFS_INO_TO_AGNO(mp, parent)`. From `pagno` it walks the AGs
//!   (`if (++agno == agcount) agno = 0`) only while an AG has neither a
//!   free inode (`pagi_freecount`) nor room for a new chunk.
//! - 6.x: `xfs_dialloc` takes `start_agno = (atomic_inc_return(
//!   &mp->m_agirotor) - 1) % mp->m_maxagi` for a directory ("xfs:
//!   restore old agirotor behavior", 6e2985c938e8, keeps 5.7's old value
//!   first) and `XFS_INO_TO_AGNO(mp, parent)` for a file.
//!
//! So directory `d` (from 0, in the order made) lands in AG `(rotor + d)
//! mod agcount`, `rotor` being `m_agirotor` when the first one is made (0
//! after mount: `xfs_mount` is zeroed, kzalloc in `xfs_init_fs_context`),
//! and each thread's files in its directory's AG. The model assumes every
//! AG has room (zero-length files, 64-inode chunks of a few blocks), so
//! the walk past a full AG never happens.

use super::config::{DirLayout, FsSection, Per};
use crate::param::ParamError;

/// The largest `[fs] agcount`: each per-AG lock has an instance per AG.
/// 100,000 AGs of the smallest size (16 MiB) is 1.5 TiB.
pub const MAX_AGCOUNT: u32 = 100_000;

/// Where each thread's per-AG and per-directory objects are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Allocation groups (1 when no lock is per AG).
    pub agcount: u32,
    /// Directories.
    pub dirs: u32,
    /// Per thread: its directory.
    pub thread_dir: Vec<u32>,
    /// Per directory: its AG.
    pub dir_ag: Vec<u32>,
}

impl Layout {
    /// Thread `t`'s instances: [its AG, its directory] (the order of
    /// `sim::KEY_AG`, `sim::KEY_DIR`).
    pub fn instances(&self, t: usize) -> [u32; 2] {
        let d = self.thread_dir[t];
        [self.dir_ag[d as usize], d]
    }

    /// The instances of a `per` object.
    pub fn count(&self, per: Per) -> u32 {
        match per {
            Per::Ag => self.agcount,
            Per::Dir => self.dirs,
        }
    }
}

/// The AG of each of `dirs` directories made in order from rotor value
/// `rotor`, on `agcount` AGs: `(rotor + d) mod agcount`.
pub fn rotor_ags(dirs: u32, agcount: u32, rotor: u32) -> Vec<u32> {
    let agcount = agcount.max(1);
    (0..dirs)
        .map(|d| ((u64::from(rotor) + u64::from(d)) % u64::from(agcount)) as u32)
        .collect()
}

/// The layout of `threads` threads from `[fs]`, when some lock is per AG
/// (`first_ag`: its name) or per directory (`first_dir`); every key must
/// matter and every per object must find what it needs.
pub fn layout(fs: Option<&FsSection>, first_ag: Option<&str>, first_dir: Option<&str>, threads: u32) -> Result<Option<Layout>, ParamError> {
    let Some(any) = first_ag.or(first_dir) else {
        return match fs {
            Some(_) => Err(ParamError::new(
                "fs",
                "[fs] places per-AG and per-directory locks, but no lock has `per` (per = \"ag\" or \"dir\"): remove [fs] or add per to a lock",
            )),
            None => Ok(None),
        };
    };
    let Some(fs) = fs else {
        return Err(ParamError::new(
            format!("locks.{any}.per"),
            "a per-AG or per-directory lock needs [fs] with the directory layout (dirs = \"per-thread\", \"shared\" or a number)",
        ));
    };
    let dirs = match fs.dirs {
        None => {
            return Err(ParamError::new(
                format!("locks.{any}.per"),
                "a per-AG or per-directory lock needs [fs] dirs: \"per-thread\", \"shared\" or a number of directories shared round robin",
            ));
        }
        Some(DirLayout::PerThread) => threads,
        Some(DirLayout::Shared) => 1,
        Some(DirLayout::RoundRobin(n)) if n > threads => {
            return Err(ParamError::new(
                "fs.dirs",
                format!(
                    "expected 1 to {threads} directories (the thread count): {n} leaves {} without a thread",
                    n - threads
                ),
            ));
        }
        Some(DirLayout::RoundRobin(n)) => n,
    };
    let agcount = match (first_ag, fs.agcount) {
        (None, Some(_)) => {
            return Err(ParamError::new(
                "fs.agcount",
                "no lock has per = \"ag\", so the AG count would change nothing: remove it",
            ));
        }
        (Some(l), None) => {
            return Err(ParamError::new(
                format!("locks.{l}.per"),
                "a per = \"ag\" lock needs the AG count: set [fs] agcount",
            ));
        }
        (Some(_), Some(n)) if !(1..=MAX_AGCOUNT).contains(&n) => {
            return Err(ParamError::new("fs.agcount", format!("expected 1 to {MAX_AGCOUNT} AGs, found {n}")));
        }
        (_, n) => n.unwrap_or(1),
    };
    let rotor = match (first_ag, fs.rotor) {
        (None, Some(_)) => {
            return Err(ParamError::new(
                "fs.rotor",
                "no lock has per = \"ag\", so the rotor would change nothing: remove it",
            ));
        }
        (_, Some(r)) if r >= agcount => {
            return Err(ParamError::new(
                "fs.rotor",
                format!("expected 0 to {} (m_agirotor is below the AG count), found {r}", agcount - 1),
            ));
        }
        (_, r) => r.unwrap_or(0),
    };
    let thread_dir = (0..threads).map(|t| t % dirs).collect();
    Ok(Some(Layout {
        agcount,
        dirs,
        thread_dir,
        dir_ag: rotor_ags(dirs, agcount, rotor),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand list: 6 directories from rotor 0 on 4 AGs go 0 1 2 3 0 1; from
    /// rotor 3, 3 0 1 2 3 0.
    #[test]
    fn the_rotor_places_directories_round_the_ags() {
        assert_eq!(rotor_ags(6, 4, 0), vec![0, 1, 2, 3, 0, 1]);
        assert_eq!(rotor_ags(6, 4, 3), vec![3, 0, 1, 2, 3, 0]);
        assert_eq!(rotor_ags(3, 16, 0), vec![0, 1, 2]);
        assert_eq!(rotor_ags(5, 1, 0), vec![0, 0, 0, 0, 0]);
    }

    fn fs(agcount: Option<u32>, dirs: Option<DirLayout>, rotor: Option<u32>) -> FsSection {
        FsSection { agcount, dirs, rotor }
    }

    #[test]
    fn threads_share_directories_round_robin_and_their_ags() {
        let l = layout(Some(&fs(Some(4), Some(DirLayout::RoundRobin(3)), Some(1))), Some("agi"), None, 7)
            .unwrap()
            .unwrap();
        assert_eq!(l.thread_dir, vec![0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(l.dir_ag, vec![1, 2, 3]);
        assert_eq!(l.instances(4), [2, 1]);
        let shared = layout(Some(&fs(Some(4), Some(DirLayout::Shared), None)), Some("agi"), None, 3)
            .unwrap()
            .unwrap();
        assert_eq!((0..3).map(|t| shared.instances(t)).collect::<Vec<_>>(), vec![[0, 0]; 3]);
    }

    #[test]
    fn keys_that_would_change_nothing_are_refused() {
        let e = |r: Result<Option<Layout>, ParamError>| r.unwrap_err().to_string();
        assert!(e(layout(Some(&fs(None, Some(DirLayout::Shared), None)), None, None, 2)).contains("no lock has `per`"));
        assert!(e(layout(Some(&fs(Some(4), Some(DirLayout::Shared), None)), None, Some("i_rwsem"), 2)).contains("fs.agcount"));
        assert!(e(layout(Some(&fs(None, Some(DirLayout::Shared), Some(1))), None, Some("i_rwsem"), 2)).contains("fs.rotor"));
        assert!(e(layout(Some(&fs(None, Some(DirLayout::Shared), None)), Some("agi"), None, 2)).contains("agcount"));
        assert!(e(layout(Some(&fs(Some(4), None, None)), Some("agi"), None, 2)).contains("dirs"));
        assert!(e(layout(None, Some("agi"), None, 2)).contains("locks.agi.per"));
        assert!(
            e(layout(
                Some(&fs(Some(4), Some(DirLayout::RoundRobin(3)), None)),
                Some("agi"),
                None,
                2
            ))
            .contains("fs.dirs")
        );
        assert!(e(layout(Some(&fs(Some(4), Some(DirLayout::Shared), Some(4))), Some("agi"), None, 2)).contains("fs.rotor"));
        assert!(e(layout(Some(&fs(Some(0), Some(DirLayout::Shared), None)), Some("agi"), None, 2)).contains("fs.agcount"));
    }
}
