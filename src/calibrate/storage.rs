//! What the filesystem holding the lab's images charges for a btrfs
//! commit's flushes through the loop device (issue 30: the wall times of
//! case 3's `sync` and unmount). The loop driver serves a flush by
//! `vfs_fsync` of its image file (drivers/block/loop.c, `lo_req_flush`),
//! after buffered writes of the commit's blocks into the file's page
//! cache (`lo_write_simple`); a commit flushes twice
//! (`write_all_supers`: `barrier_all_devices`, then the primary
//! superblock's FUA write, completed by a flush after it on a device
//! without FUA).
//!
//! Method: in a new folder under the temporary folder the lab makes its
//! images in (`std::env::temp_dir()`), recorded in the lab's ledger before
//! it is made and removed on every exit path but a kill (then the next
//! `fsmeta lab` removes it, as it does a killed lab run's), for each size in
//! [`SIZES_KIB`], [`SAMPLES`] times, a new sparse file of
//! [`IMAGE_BYTES`] (the lab's btrfs image) gets two runs of 16 KiB
//! buffered writes of that many KiB each, far apart (at [`RUNS_AT`], as
//! the two stripes of a DUP metadata chunk), then an `fsync` (timed),
//! then 4 KiB at 64 KiB and at 64 MiB (the superblock and its first
//! copy), then another `fsync` (timed). Each file is removed before the
//! next is made. The sizes are a fixed grid, not any experiment's. Each
//! size is measured twice over: in two contiguous runs, and as separate
//! 16 KiB blocks with a 16 KiB gap after each ([`Layout::Blocks`]): a
//! btrfs commit's tree blocks reach the loop device one write request a
//! block copy (the lab's block trace), and on the project's VM (ext4 on
//! virtio) 30 separate blocks a run took about twice the `fsync` of 30
//! contiguous ones (session 67). The superblocks' `fsync` is timed after
//! the contiguous files.
//!
//! The write requests themselves: a sparse image of the same size in the
//! same folder, attached to a loop device (recorded in the ledger before,
//! checked to be the one device backed by that file), gets
//! [`WRITE_SAMPLES`] times [`QUEUED`] buffered 16 KiB writes through the device, every
//! other block of a new region, which `sync_file_range` sends as
//! [`QUEUED`] requests at once and waits for (timed, no flush): the
//! loop driver's worker writes each into the image's page cache and
//! completes it, as it does a commit's blocks. The time also holds what
//! the lab's trace of a sync does not put in a request: the device's own
//! page-cache writeback (its folios' writeback set-up and bios, about
//! what the btrfs twin counts for a tree block's folios in the flusher's
//! write-out) and `sync_file_range`'s wait and wake-up, spread over the
//! 16 (on the family 23 model 49 host about 12 us a request here against
//! about 7.8 between completions in a traced sync; docs/lab-hosts.md).
//!
//! The page cache's drop of a clean folio (`drop_folio_us`; session 69):
//! a file of [`DROP_PAGES`] pages in the same folder, written, synced and
//! dropped, is read back into the page cache with readahead off
//! (`POSIX_FADV_RANDOM`: order-0 folios, as a btrfs tree block's; ext4
//! makes large folios for a regular file's writes and readahead since
//! 6.16) and dropped by `posix_fadvise(POSIX_FADV_DONTNEED)`
//! ([`DROP_SAMPLES`] times, the drop timed): `invalidate_mapping_pages`
//! looks the folios up in batches and takes each out of the mapping and
//! frees it, as `close_ctree`'s `invalidate_inode_pages2` does the btree
//! inode's at a btrfs unmount (which also detaches each folio's extent
//! buffer, not measured here). The first drop is checked by `mincore`:
//! on a filesystem that keeps the pages (tmpfs) the call times nothing,
//! and `drop_folio_us` alone is left out (with a note saying why).
//!
//! A failure here leaves the whole `[storage]` table out.

use super::stats::Spread;
use crate::lab::btrfs_delayed::SUPER_OFFSETS;
use crate::lab::host::UndoOnDrop;
use crate::lab::ledger::{Entry, Ledger};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// KiB per run written before the first `fsync`.
pub const SIZES_KIB: [u64; 4] = [16, 64, 256, 1024];

/// Files per size.
pub const SAMPLES: usize = 7;

/// Size of each sparse file: the lab's btrfs image (1 GiB).
pub use crate::lab::btrfs_delayed::IMAGE_BYTES;

/// Where the two runs start (bytes): 32 MiB and 96 MiB.
pub const RUNS_AT: [u64; 2] = [32 << 20, 96 << 20];

/// Offsets of the two superblock writes (`btrfs_sb_offset(0)` and `(1)`,
/// the copies a 1 GiB device holds).
const SUPERS_AT: [u64; 2] = [SUPER_OFFSETS[0], SUPER_OFFSETS[1]];

/// One write (a tree block of the lab's 16 KiB nodes).
const BLOCK: usize = 16 << 10;

/// Samples of the write requests (each [`QUEUED`] requests).
pub const WRITE_SAMPLES: usize = 15;

/// Write requests sent through the loop device at once: the writeback
/// flusher's plug sends the lab's tree blocks 16 at a time (8 blocks, two
/// copies each).
pub const QUEUED: usize = 16;

/// The measured `fsync` times and write requests.
#[derive(Debug, Clone)]
pub struct StorageCost {
    /// The folder the files were made in.
    pub folder: PathBuf,
    /// Per size of [`SIZES_KIB`]: the first `fsync`, us.
    pub flush: Vec<(u64, Spread)>,
    /// The same with each run written as separate blocks
    /// ([`Layout::Blocks`]), us.
    pub block_flush: Vec<(u64, Spread)>,
    /// The `fsync` after the superblocks, over every contiguous file, us.
    pub super_flush: Spread,
    /// One 16 KiB write request through the loop device, [`QUEUED`] at
    /// once, us (a sample's time over [`QUEUED`]).
    pub write: Spread,
    /// One clean order-0 folio dropped from a file's page cache, us (a
    /// sample's time over [`DROP_PAGES`]), or why not (the table keeps
    /// its other figures).
    pub drop_folio: Result<Spread, NotMeasured>,
}

/// Pages of the file whose page cache `folio_drops` drops: 4 MiB, as
/// many folios as a btrfs unmount invalidates a few times over.
pub const DROP_PAGES: usize = 1024;

/// Samples of the drop.
pub const DROP_SAMPLES: usize = 15;

/// Why the storage was not measured (the profile says so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotMeasured(pub String);

/// Measures the `fsync` times and the write requests in a new folder
/// under `tmp`.
pub fn measure(tmp: &Path) -> Result<StorageCost, NotMeasured> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(NotMeasured(
            "not root (the lab's ledger, which removes the files on any exit, needs root)".into(),
        ));
    }
    // A ledger line and a profile comment hold the path: a plain one only.
    crate::lab::host::plain_dir(tmp).map_err(|e| NotMeasured(e.to_string()))?;
    // The kernel names a loop device's backing file by its real path.
    let tmp = &tmp.canonicalize().map_err(|e| NotMeasured(format!("{}: {e}", tmp.display())))?;
    let folder = tmp.join(format!("fsmeta-calibrate-storage-{}", std::process::id()));
    let mut ledger = Ledger::open().map_err(|e| NotMeasured(format!("the lab's ledger: {e}")))?;
    ledger
        .record(Entry::Dir(folder.clone()))
        .map_err(|e| NotMeasured(format!("the lab's ledger: {e}")))?;
    if let Err(e) = std::fs::create_dir(&folder) {
        // Not ours: forget it rather than remove it.
        ledger.close();
        return Err(NotMeasured(format!("mkdir {}: {e}", folder.display())));
    }
    let mut guard = UndoOnDrop::new(ledger);
    let out = timed(&folder).and_then(|(flush, block_flush, super_flush)| {
        let write = loop_writes(&folder, &mut guard)?;
        let drop_folio = folio_drops(&folder);
        Ok(StorageCost {
            folder: folder.clone(),
            flush,
            block_flush,
            super_flush,
            write,
            drop_folio,
        })
    });
    drop(guard);
    out
}

/// The write requests through a loop device over a new sparse image in
/// `folder` (module header); `guard` records the image and the device
/// before they are made, and undoes them.
fn loop_writes(folder: &Path, guard: &mut UndoOnDrop) -> Result<Spread, NotMeasured> {
    use crate::lab::host::{cmd, loops_backed_by};
    use std::os::fd::AsRawFd;
    let image = folder.join("loop-image");
    let ledger = |e| NotMeasured(format!("the lab's ledger: {e}"));
    let io = |what: &str, e: std::io::Error| NotMeasured(format!("{what}: {e}"));
    guard.record(Entry::Image(image.clone())).map_err(ledger)?;
    let f = File::create_new(&image).map_err(|e| io("create the loop image", e))?;
    f.set_len(IMAGE_BYTES).map_err(|e| io("size the loop image", e))?;
    drop(f);
    guard.record(Entry::Loop(image.clone())).map_err(ledger)?;
    let path = image.to_string_lossy().into_owned();
    let dev = cmd("attach a loop device", "losetup", &["--find", "--show", &path])
        .map_err(|e| NotMeasured(e.to_string()))?
        .trim()
        .to_string();
    if !dev.starts_with("/dev/loop") || loops_backed_by(&image) != [dev.clone()] {
        return Err(NotMeasured(format!(
            "losetup gave `{dev}`, not the one loop device backed by the image"
        )));
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&dev)
        .map_err(|e| io(&format!("open {dev}"), e))?;
    // Still ours once open, and again before each sample's writes.
    let ours = || {
        if loops_backed_by(&image) == [dev.clone()] {
            Ok(())
        } else {
            Err(NotMeasured(format!("{dev} is no longer the one loop device backed by the image")))
        }
    };
    let block = vec![0x5au8; BLOCK];
    let span = (2 * QUEUED * BLOCK) as u64;
    let mut us = Vec::with_capacity(WRITE_SAMPLES);
    for k in 0..WRITE_SAMPLES as u64 {
        ours()?;
        let base = RUNS_AT[0] + k * span;
        for i in 0..QUEUED as u64 {
            f.write_all_at(&block, base + 2 * i * BLOCK as u64).map_err(|e| io("write", e))?;
        }
        let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER;
        let t = Instant::now();
        let (at, len) = (i64::try_from(base), i64::try_from(span));
        let (Ok(at), Ok(len)) = (at, len) else {
            return Err(NotMeasured(format!("a range of {span} bytes at {base} is past i64")));
        };
        // SAFETY: a valid open descriptor; the range lies in the device.
        let rc = unsafe { libc::sync_file_range(f.as_raw_fd(), at, len, flags) };
        let elapsed = t.elapsed().as_secs_f64() * 1e6;
        if rc != 0 {
            return Err(io("sync_file_range", std::io::Error::last_os_error()));
        }
        us.push(elapsed / QUEUED as f64);
    }
    Spread::of(&us).ok_or_else(|| NotMeasured("no write samples".into()))
}

/// The drop of a file's clean page cache, per folio (module header): a
/// file of [`DROP_PAGES`] pages in `folder`, written, synced and dropped;
/// per sample it is read back with readahead off (untimed: order-0
/// folios), then `posix_fadvise(DONTNEED)` over it is timed. The first
/// drop is checked by `mincore`: a filesystem whose pages that call leaves
/// in place (tmpfs) would time nothing, and is refused.
fn folio_drops(folder: &Path) -> Result<Spread, NotMeasured> {
    use std::os::fd::AsRawFd;
    let path = folder.join("page-cache");
    let io = |what: &str, e: std::io::Error| NotMeasured(format!("{what} {}: {e}", path.display()));
    let bytes = DROP_PAGES * 4096;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| io("create", e))?;
    f.write_all_at(&vec![0x5au8; bytes], 0).map_err(|e| io("write", e))?;
    f.sync_all().map_err(|e| io("fsync", e))?;
    // SAFETY (both calls): a valid open descriptor; offset 0, length 0 is
    // the whole file.
    let advise = |advice| match unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) } {
        0 => Ok(()),
        rc => Err(io("posix_fadvise", std::io::Error::from_raw_os_error(rc))),
    };
    // The written folios (large ones, on a filesystem that makes them)
    // dropped untimed; with readahead off, a read brings order-0 folios
    // back (`force_page_cache_ra`), as a btrfs tree block's are.
    advise(libc::POSIX_FADV_DONTNEED)?;
    advise(libc::POSIX_FADV_RANDOM)?;
    let mut buf = vec![0u8; bytes];
    let mut us = Vec::with_capacity(DROP_SAMPLES);
    for k in 0..DROP_SAMPLES {
        f.read_exact_at(&mut buf, 0).map_err(|e| io("read", e))?;
        let t = Instant::now();
        let dropped = advise(libc::POSIX_FADV_DONTNEED);
        let elapsed = t.elapsed().as_secs_f64() * 1e6;
        dropped?;
        if k == 0 {
            let left = resident_pages(&f, bytes).map_err(|e| io("mincore", e))?;
            if left > 0 {
                return Err(NotMeasured(format!(
                    "{left} of {DROP_PAGES} pages stayed cached after POSIX_FADV_DONTNEED in {} (a filesystem that keeps its pages, as tmpfs does, gives no drop to time)",
                    folder.display()
                )));
            }
        }
        us.push(elapsed / DROP_PAGES as f64);
    }
    drop(f);
    let _ = std::fs::remove_file(&path);
    Spread::of(&us).ok_or_else(|| NotMeasured("no drop samples".into()))
}

/// Pages of the first `bytes` of `f` in the page cache (`mincore` of a
/// read-only shared mapping).
fn resident_pages(f: &File, bytes: usize) -> Result<usize, std::io::Error> {
    use std::os::fd::AsRawFd;
    // SAFETY: a new read-only shared mapping of an open file's first
    // `bytes`, unmapped below; nothing reads through it.
    let map = unsafe { libc::mmap(std::ptr::null_mut(), bytes, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0) };
    if map == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let mut vec = vec![0u8; bytes.div_ceil(4096)];
    // SAFETY: `map` is a mapping of `bytes`; `vec` has a byte per page.
    let rc = unsafe { libc::mincore(map, bytes, vec.as_mut_ptr()) };
    let err = std::io::Error::last_os_error();
    // SAFETY: the mapping made above, of that length.
    unsafe { libc::munmap(map, bytes) };
    if rc != 0 {
        return Err(err);
    }
    Ok(vec.iter().filter(|b| **b & 1 == 1).count())
}

/// How a run's blocks lie in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One after another: one region a run.
    Contiguous,
    /// A block's size of gap after every block: each block its own
    /// region, as a btrfs commit's tree blocks reach the loop device (the
    /// lab's block trace: one write request a block copy).
    Blocks,
}

impl Layout {
    /// Byte offset of block `b` of a run.
    pub fn offset(self, b: u64) -> u64 {
        match self {
            Layout::Contiguous => b * BLOCK as u64,
            Layout::Blocks => 2 * b * BLOCK as u64,
        }
    }
}

/// Each size's first `fsync` times (KiB, us).
type Table = Vec<(u64, Spread)>;

/// The first `fsync` per size in each layout ([`Layout::Contiguous`],
/// [`Layout::Blocks`]), and the one after the superblocks (of the
/// contiguous files). Within a size the two layouts' files alternate, so
/// a slow spell of the host's disk falls on both.
fn timed(folder: &Path) -> Result<(Table, Table, Spread), NotMeasured> {
    let block = vec![0x5au8; BLOCK];
    let (mut runs, mut blocks, mut supers) = (Table::new(), Table::new(), Vec::new());
    for (i, &kib) in SIZES_KIB.iter().enumerate() {
        let (mut run_us, mut block_us) = (Vec::with_capacity(SAMPLES), Vec::with_capacity(SAMPLES));
        for k in 0..SAMPLES {
            for layout in [Layout::Contiguous, Layout::Blocks] {
                let path = folder.join(format!("image-{i}-{k}-{layout:?}"));
                let times = one_file(&path, kib, layout, &block);
                let _ = std::fs::remove_file(&path);
                let (first, second) = times?;
                match second {
                    Some(us) => {
                        run_us.push(first);
                        supers.push(us);
                    }
                    None => block_us.push(first),
                }
            }
        }
        let no = || NotMeasured(format!("no samples at {kib} KiB"));
        runs.push((kib, Spread::of(&run_us).ok_or_else(no)?));
        blocks.push((kib, Spread::of(&block_us).ok_or_else(no)?));
    }
    let super_flush = Spread::of(&supers).ok_or_else(|| NotMeasured("no superblock samples".into()))?;
    Ok((runs, blocks, super_flush))
}

/// One sparse file: the two runs of `kib` KiB laid out as `layout` says
/// and an `fsync`, timed; then, for [`Layout::Contiguous`] only, the
/// superblocks and another `fsync`, timed (us; the file is closed on
/// return, for the caller to remove).
fn one_file(path: &Path, kib: u64, layout: Layout, block: &[u8]) -> Result<(f64, Option<f64>), NotMeasured> {
    let io = |what: &str, e: std::io::Error| NotMeasured(format!("{what} {}: {e}", path.display()));
    let f = File::create_new(path).map_err(|e| io("create", e))?;
    f.set_len(IMAGE_BYTES).map_err(|e| io("size", e))?;
    let blocks = (kib << 10).div_ceil(BLOCK as u64);
    for at in RUNS_AT {
        for b in 0..blocks {
            f.write_all_at(block, at + layout.offset(b)).map_err(|e| io("write", e))?;
        }
    }
    let sync = |f: &File| {
        let t = Instant::now();
        f.sync_all().map(|()| t.elapsed().as_secs_f64() * 1e6).map_err(|e| io("fsync", e))
    };
    let first = sync(&f)?;
    if layout == Layout::Blocks {
        return Ok((first, None));
    }
    for at in SUPERS_AT {
        f.write_all_at(&block[..4096], at).map_err(|e| io("write", e))?;
    }
    Ok((first, Some(sync(&f)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_and_superblocks_fit_the_image_and_do_not_overlap() {
        // The separate blocks' layout spans the most: twice the size.
        let run = |at: u64, kib: u64| (at, at + Layout::Blocks.offset((kib << 10).div_ceil(BLOCK as u64)));
        let largest = *SIZES_KIB.last().expect("sizes");
        let (a, b) = (run(RUNS_AT[0], largest), run(RUNS_AT[1], largest));
        assert!(a.1 <= b.0 && b.1 <= IMAGE_BYTES);
        for s in SUPERS_AT {
            assert!(!(a.0..a.1).contains(&s) && !(b.0..b.1).contains(&s) && s + 4096 <= IMAGE_BYTES);
        }
        assert!(SIZES_KIB.windows(2).all(|w| w[0] < w[1]));
    }
}
