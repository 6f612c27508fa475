//! `xfs-alloc`: by-size allocations in an AG shaped to K one-block free
//! extents, on the live kernel (the recipe of `shared/reference/lab.md`).
//!
//! A 2-AG XFS (`-d agcount=2 -m reflink=0,finobt=0`); a few hundred empty
//! files made while AG 0 has room; the reserve pool set to 0; the
//! filesystem filled with `fallocate` until ENOSPC; in the filler's
//! blocks that lie in AG 1 (found with FIEMAP), every other block punched
//! out for K blocks: AG 1 then holds K one-block free extents. After a
//! `syncfs` (so the freed extents are no longer busy) the image is
//! unmounted and `xfs_db -r -c 'freesp -s -a 1'` saved (the twin reads the
//! very same free space) and the AGF's `btreeblks` read (`btree_blocks`:
//! the two free-space btrees' blocks, the shape the hole punching grew
//! them to) and both trees dumped block by block (`ag1.layout`: entries
//! per block, the twin's `btree_layout_file`), then each call is `fallocate(16 KiB)` on one of
//! the empty files: AG 0 is full, so the first extent comes from AG 1
//! through `xfs_alloc_ag_vextent_size` with maxlen 4.
//!
//! With `quiet=1` (and `busy=0`), the same calls again with only the
//! window's bounds traced (`le-quiet`: `xfs_alloc_read_agf` and
//! `xfs_alloc_size_done`, no `xfs_trans_read_buf`): `le` less what its
//! buffer reads' events cost inside the window, beside the price the
//! host's knob is fitted with. Its buffer reads are not counted (their
//! event is off). Not by default: the pass takes 4 extents a call from
//! the top of the by-size order, and at 10^6 extents that changes the
//! leaves the busy passes after it walk (docs/lab-notes/xfs-alloc.md).
//!
//! Then, unless `busy` is 0, the busy variant (`le-busy`): `busy` more
//! blocks at the top of the by-size order are taken by `fallocate` on new
//! files (16 KiB each: one by-size allocation from the top, three near
//! ones beside it) and freed again at once by `FALLOC_FL_PUNCH_HOLE`,
//! with no `syncfs`: their frees are not yet in the log, so the blocks
//! are busy (`xfs_extent_busy_insert`), and the same `calls` allocations
//! follow, each walking past them (`xfs_extent_busy_trim` fires for each
//! busy candidate it trims).
//!
//! Then the same walk with its loop's tracepoint off (`le-busy-quiet`):
//! `calls` more allocations with `xfs_extent_busy_trim` not enabled (the
//! window's own events stay), then `calls` more with it enabled again,
//! whose trims per call (`busy_trims_after`) show the records were still
//! busy during the quiet calls (a busy extent stays busy until the log
//! checkpoint that commits its free; nothing makes it busy again). The
//! difference between `le-busy` and `le-busy-quiet` is what the loop's
//! tracepoint costs the walk, per busy record, inside the kernel's own
//! loop rather than in a microbenchmark's.
//!
//! Per call, from the events of one task: buffer reads are the
//! `xfs_trans_read_buf` events of btree blocks (more than one sector;
//! the AGF and AGFL reads, one sector each, are `header_reads`) between
//! the last `xfs_alloc_read_agf` and `xfs_alloc_size_done`, the time is
//! between those two events, and the chosen extent is
//! `xfs_alloc_size_done`'s `len`.

use super::host::{self, Fs, FsType, Host, check_interrupt};
use super::trace::{self, EventSpec, Instance};
use super::{Experiment, LabError, Metrics, Params, Trial};
use crate::kernel::xfs::freespace::layout::{BtreeLayout, levels_from_btdump};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd as _;

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "xfs-alloc",
    about: "by-size allocation (maxlen 4) in an AG of K one-block free extents: buffer reads, chosen extent, time",
    params: &[
        ("extents", 10_000, 100, 2_000_000),
        ("calls", 19, 1, 1000),
        ("busy", 256, 0, 4096),
        ("quiet", 0, 0, 1),
    ],
    run,
    check,
    twin_param: Some("extents"),
    sample_roots: &["xfs_alloc_ag_vextent_size", "xfs_alloc_vextent_start_ag"],
    twin_models,
};

/// The twin's variants cover the quiet pass (`le-quiet`,
/// `le-busy-quiet`) and a run without busy passes (`busy=0`: those
/// variants are simply not live); another busy count is not its run.
fn twin_models(name: &str, value: u64) -> bool {
    name == "quiet" || (name == "busy" && value == 0)
}

const BLOCK: u64 = 4096;

fn fallocate(f: &File, mode: i32, off: u64, len: u64) -> std::io::Result<()> {
    // SAFETY: plain syscall on an open descriptor.
    let r = unsafe { libc::fallocate(f.as_raw_fd(), mode, off as libc::off_t, len as libc::off_t) };
    if r == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// Fills the filesystem from `file` until ENOSPC, in halving chunks.
fn fill(f: &File) -> Result<u64, LabError> {
    let (mut off, mut chunk) = (0u64, 1u64 << 34);
    while chunk >= BLOCK {
        check_interrupt()?;
        match fallocate(f, 0, off, chunk) {
            Ok(()) => off += chunk,
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => chunk /= 2,
            Err(e) => return Err(LabError::step("fill with fallocate", e)),
        }
    }
    Ok(off)
}

/// The file's extents (logical byte, physical byte, length bytes), by
/// the FIEMAP ioctl (include/uapi/linux/fiemap.h).
fn fiemap(f: &File) -> Result<Vec<(u64, u64, u64)>, LabError> {
    const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
    const N: usize = 512;
    let mut out = Vec::new();
    let mut start = 0u64;
    loop {
        // struct fiemap: 32-byte header then N 56-byte extents, as u64s.
        let mut buf = vec![0u64; 4 + N * 7];
        buf[0] = start;
        buf[1] = u64::MAX - start;
        buf[3] = N as u64; // fm_extent_count = N (low half), fm_reserved = 0
        // SAFETY: buf is a writable, 8-aligned fiemap with room for N extents.
        if unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP, buf.as_mut_ptr()) } != 0 {
            return Err(LabError::step("FIEMAP", std::io::Error::last_os_error()));
        }
        let mapped = (buf[2] >> 32) as usize;
        let mut last = false;
        let before = start;
        for e in 0..mapped.min(N) {
            let x = &buf[4 + e * 7..4 + e * 7 + 7];
            out.push((x[0], x[1], x[2]));
            let flags = (x[5] & 0xffff_ffff) as u32;
            last |= flags & 1 != 0; // FIEMAP_EXTENT_LAST
            start = x[0] + x[2];
        }
        if mapped == 0 || last {
            return Ok(out);
        }
        if start <= before || out.len() > 10_000_000 {
            return Err(LabError::step("FIEMAP", "the extent map does not advance"));
        }
    }
}

/// `quiet=1` only with `busy=0`.
fn check(p: &Params) -> Result<(), LabError> {
    if p.get("quiet") > 0 && p.get("busy") > 0 {
        return Err(LabError::Param(
            "quiet=1 needs busy=0: its pass would move the leaves the busy passes walk, which the twin's busy variants do not replay"
                .into(),
        ));
    }
    Ok(())
}

fn run(host: &Host, p: &Params, _rep: u32) -> Result<Trial, LabError> {
    let (k, calls, busy, quiet) = (p.get("extents"), p.get("calls"), p.get("busy"), p.get("quiet") > 0);
    // AG 1 must hold 2K blocks of the filler; 300 MiB is mkfs.xfs's floor.
    // Slack: the internal log sits in the middle AG (AG 1 of 2).
    let ag_blocks = (2 * k + k / 8 + 65_536).max(300 << 20 >> 12 >> 1);
    let size = 2 * ag_blocks * BLOCK;
    let sz = format!("agcount=2,size={size}");
    let mut fs = Fs::create(host, FsType::Xfs, size, &["-f", "-q", "-d", &sz, "-m", "reflink=0,finobt=0"], "")?;
    empty_files(&fs.base()?.join("e"), calls, busy, quiet)?;
    let mnt = fs.mount_point()?.to_string_lossy().into_owned();
    host::cmd("set the reserve pool to 0", "xfs_io", &["-x", "-c", "resblks 0", &mnt])?;
    let filler = OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(fs.base()?.join("filler"))
        .map_err(|e| LabError::step("create the filler", e))?;
    fill(&filler)?;
    let agblocks = geometry(&mnt)?;
    punch_ag1(&filler, agblocks, k)?;
    drop(filler);
    host::syncfs(&fs.base()?)?;
    fs.unmount()?;
    let img = fs.image().to_string_lossy().into_owned();
    let freesp = host::cmd("read AG 1's free space", "xfs_db", &["-r", "-c", "freesp -s -a 1", &img])?;
    let agf = host::cmd("read AG 1's AGF", "xfs_db", &["-r", "-c", "agf 1", "-c", "p btreeblks", &img])?;
    let layout = btree_layout(&img)?;
    fs.mount("")?;
    let (_, dev) = fs.dev()?;
    let filter = Some(format!("dev == {dev}"));
    let ev = |event| EventSpec {
        event,
        filter: filter.clone(),
        stack: false,
    };
    let events = [
        ev("xfs/xfs_alloc_read_agf"),
        ev("xfs/xfs_trans_read_buf"),
        ev("xfs/xfs_alloc_size_done"),
        ev("xfs/xfs_extent_busy_trim"),
    ];
    let tr = Instance::create(&mut fs, &events, 16384)?;
    timed_calls(&fs, "f", calls)?;
    let text = tr.finish()?;
    let quiet_le = if quiet { Some(bounds_pass(&mut fs, &events, calls)?) } else { None };
    let busy_texts = if busy > 0 {
        Some(busy_passes(&mut fs, &events, busy, calls)?)
    } else {
        None
    };
    let mut setup = fs.setup.clone();
    setup.extend(tr.describe());
    setup.push(format!(
        "AG 1 ({agblocks} blocks) shaped to {k} one-block free extents (FALLOC_FL_PUNCH_HOLE every other filler block), syncfs, then {calls} x fallocate(16 KiB) on new empty files (maxlen 4)"
    ));
    let mut m = analyse(&text)?;
    m.insert("freesp_extents".into(), freesp_extents(&freesp) as f64);
    let btreeblks =
        agf_field(&agf, "btreeblks").ok_or_else(|| LabError::step("read AG 1's AGF", format!("no btreeblks in `{}`", agf.trim())))?;
    m.insert("btree_blocks".into(), btreeblks as f64);
    let mut variants = vec![("le".to_string(), m)];
    let mut files = [
        vec![
            ("ag1.freesp".to_string(), freesp.into_bytes()),
            (
                "ag1.layout".to_string(),
                layout
                    .to_text("AG 1's free-space btrees after the hole punching: entries per block, left to right (xfs_db -r -c 'agf 1' -c 'addr bnoroot|cntroot' -c 'btdump -i')")
                    .into_bytes(),
            ),
        ],
        super::keep("trace.txt", text),
    ]
    .concat();
    if let Some(q) = quiet_le {
        setup.push(format!(
            "le-quiet: then {calls} more calls with only xfs_alloc_read_agf and xfs_alloc_size_done traced (no buffer read counted)"
        ));
        variants.push(("le-quiet".to_string(), bounds_metrics(&q)?));
        files.extend(super::keep("trace-quiet.txt", q));
    }
    if let Some(texts) = busy_texts {
        busy_variants(texts, busy, calls, &mut setup, &mut variants, &mut files)?;
    }
    Ok(Trial { variants, setup, files })
}

/// The empty files the passes allocate into, made in `dir` while AG 0
/// has room: `f` (le), `g` (le-busy), `q` (le-quiet, with `quiet`), `b`
/// (the blocks made busy), `h` and `i` (the quiet busy pass and the one
/// after it).
fn empty_files(dir: &std::path::Path, calls: u64, busy: u64, quiet: bool) -> Result<(), LabError> {
    std::fs::create_dir(dir).map_err(|e| LabError::step("mkdir e", e))?;
    host::create_files(dir, "f", calls)?;
    host::create_files(dir, "g", calls)?;
    if quiet {
        host::create_files(dir, "q", calls)?;
    }
    host::create_files(dir, "b", busy.div_ceil(4))?;
    if busy > 0 {
        host::create_files(dir, "h", calls)?;
        host::create_files(dir, "i", calls)?;
    }
    Ok(())
}

/// The busy passes' variants, setup lines and traces from their texts
/// (traced, quiet, after).
fn busy_variants(
    (t, quiet, after): (String, String, String),
    busy: u64,
    calls: u64,
    setup: &mut Vec<String>,
    variants: &mut Vec<(String, Metrics)>,
    files: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), LabError> {
    setup.push(format!(
        "le-busy: then {busy} blocks taken from the top of the by-size order (fallocate of 16 KiB on new files) and punched out again without syncfs (busy), then {calls} more calls"
    ));
    setup.push(format!(
        "le-busy-quiet: then {calls} more calls with xfs_extent_busy_trim off, and {calls} with it on again (busy_trims_after: the records were still busy)"
    ));
    variants.push(("le-busy".to_string(), analyse(&t)?));
    variants.push(("le-busy-quiet".to_string(), quiet_metrics(&quiet, &after)?));
    files.extend(super::keep("trace-busy.txt", t));
    files.extend(super::keep("trace-busy-quiet.txt", quiet));
    Ok(())
}

/// Punches every other block of the filler's extents in AG 1 (of
/// `agblocks` blocks) for `k` one-block holes: AG 1's free space becomes
/// `k` one-block extents.
fn punch_ag1(filler: &File, agblocks: u64, k: u64) -> Result<(), LabError> {
    let ag1: Vec<(u64, u64, u64)> = fiemap(filler)?
        .into_iter()
        .filter(|&(_, phys, _)| phys / BLOCK / agblocks == 1)
        .collect();
    let mut punched = 0;
    'outer: for (logical, _, len) in ag1 {
        let mut off = logical;
        while off + 2 * BLOCK <= logical + len {
            if punched == k {
                break 'outer;
            }
            if punched % 1024 == 0 {
                check_interrupt()?;
            }
            fallocate(filler, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, off, BLOCK)
                .map_err(|e| LabError::step("punch a hole", e))?;
            punched += 1;
            off += 2 * BLOCK;
        }
    }
    if punched < k {
        return Err(LabError::step("shape AG 1", format!("only {punched} of {k} holes fit in AG 1")));
    }
    Ok(())
}

/// The busy passes after `busy` blocks were made busy: the walk traced
/// (`le-busy`), with its loop's event off (`le-busy-quiet`), then traced
/// again (its trims show the records stayed busy); their traces.
fn busy_passes(fs: &mut Fs, events: &[EventSpec], busy: u64, calls: u64) -> Result<(String, String, String), LabError> {
    make_busy(fs, busy)?;
    let tr = Instance::create(fs, events, 16384)?;
    timed_calls(fs, "g", calls)?;
    let traced = tr.finish()?;
    // The window's events only: the walk's loop fires none.
    let window: Vec<EventSpec> = events.iter().filter(|e| e.event != "xfs/xfs_extent_busy_trim").cloned().collect();
    let tr = Instance::create(fs, &window, 16384)?;
    timed_calls(fs, "h", calls)?;
    let quiet = tr.finish()?;
    let tr = Instance::create(fs, events, 16384)?;
    timed_calls(fs, "i", calls)?;
    let after = tr.finish()?;
    Ok((traced, quiet, after))
}

/// The `le-quiet` pass: `calls` more calls traced by their window's
/// bounds alone (files `e/qi`); its trace.
fn bounds_pass(fs: &mut Fs, events: &[EventSpec], calls: u64) -> Result<String, LabError> {
    let bounds: Vec<EventSpec> = events.iter().filter(|e| WINDOW_BOUNDS.contains(&e.event)).cloned().collect();
    let tr = Instance::create(fs, &bounds, 16384)?;
    timed_calls(fs, "q", calls)?;
    tr.finish()
}

/// The events that open and close a call's window.
const WINDOW_BOUNDS: [&str; 2] = ["xfs/xfs_alloc_read_agf", "xfs/xfs_alloc_size_done"];

/// The figures of a pass traced by its window's bounds alone: its calls
/// as [`analyse`] reads them, less the counts their events were off for
/// (`buffer_reads`, `header_reads`, `busy_trims`: no zero that reads as
/// a count).
pub fn bounds_metrics(text: &str) -> Result<Metrics, LabError> {
    let mut m = analyse(text)?;
    for count in ["buffer_reads", "header_reads", "busy_trims"] {
        m.remove(count);
    }
    Ok(m)
}

/// The quiet pass's figures: its calls as [`analyse`] reads them, less
/// `busy_trims` (the event was off, so the trace cannot count them),
/// plus `busy_trims_after`, the trims per call of the traced pass that
/// followed it (as many as before: the records were busy throughout).
pub fn quiet_metrics(quiet: &str, after: &str) -> Result<Metrics, LabError> {
    let mut m = analyse(quiet)?;
    m.remove("busy_trims");
    let after = analyse(after)?;
    m.insert("busy_trims_after".into(), after.get("busy_trims").copied().unwrap_or(0.0));
    Ok(m)
}

/// `calls` timed `fallocate(16 KiB)` on the empty files `e/PREFIXi`.
fn timed_calls(fs: &Fs, prefix: &str, calls: u64) -> Result<(), LabError> {
    for i in 1..=calls {
        let f = OpenOptions::new()
            .write(true)
            .open(fs.base()?.join(format!("e/{prefix}{i}")))
            .map_err(|e| LabError::step("open an empty file", e))?;
        fallocate(&f, 0, 0, 4 * BLOCK).map_err(|e| LabError::step("allocate 16 KiB", e))?;
    }
    Ok(())
}

/// Takes `blocks` blocks from the top of the by-size order (files
/// `e/bi`, 16 KiB each, the last shorter) and frees them again by
/// punching, without syncfs: they stay busy until the log checkpoint.
fn make_busy(fs: &Fs, blocks: u64) -> Result<(), LabError> {
    let files = blocks.div_ceil(4);
    for i in 1..=files {
        check_interrupt()?;
        let len = (blocks - (i - 1) * 4).min(4) * BLOCK;
        let f = OpenOptions::new()
            .write(true)
            .open(fs.base()?.join(format!("e/b{i}")))
            .map_err(|e| LabError::step("open an empty file", e))?;
        fallocate(&f, 0, 0, len).map_err(|e| LabError::step("allocate the blocks to make busy", e))?;
        fallocate(&f, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 0, len)
            .map_err(|e| LabError::step("punch the blocks out again (busy)", e))?;
    }
    Ok(())
}

/// `agblocks` from `xfs_info`-style geometry (`xfs_io -c statfs`).
fn geometry(mnt: &str) -> Result<u64, LabError> {
    let out = host::cmd("read the geometry", "xfs_io", &["-c", "statfs", mnt])?;
    out.lines()
        .find_map(|l| l.trim().strip_prefix("geom.agblocks = "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| LabError::step("read the geometry", "no geom.agblocks line"))
}

/// The extents total of `xfs_db freesp -s` text (its `total free
/// extents N` line), 0 if absent.
pub fn freesp_extents(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("total free extents "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Both free-space btrees of AG 1 on the unmounted image, block by block
/// (`xfs_db btdump -i` from each root).
fn btree_layout(img: &str) -> Result<BtreeLayout, LabError> {
    let levels = |root: &str| -> Result<Vec<Vec<usize>>, LabError> {
        let addr = format!("addr {root}");
        let out = host::cmd(
            "dump AG 1's free-space btrees",
            "xfs_db",
            &["-r", "-c", "agf 1", "-c", &addr, "-c", "btdump -i", img],
        )?;
        levels_from_btdump(&out).map_err(|m| LabError::step("read AG 1's free-space btrees", format!("{root}: {m}")))
    };
    Ok(BtreeLayout {
        bno: levels("bnoroot")?,
        cnt: levels("cntroot")?,
    })
}

/// Field `name` of `xfs_db`'s `p` output (`name = N`).
pub fn agf_field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == name).then(|| v.trim().parse().ok()).flatten()
    })
}

/// Per-call figures from the trace: `buffer_reads`, `alloc_us`,
/// `alloc_us_p50`, `alloc_len` (means over calls, the twin's names),
/// `calls`, and the lab's `alloc_us_min` / `alloc_us_max`.
pub fn analyse(text: &str) -> Result<Metrics, LabError> {
    let recs = trace::parse(text);
    let mut open: std::collections::BTreeMap<u32, (u64, u64, u64, u64)> = Default::default();
    let mut calls: Vec<(f64, f64, f64, f64, f64)> = Vec::new(); // (btree reads, us, len, header reads, busy trims)
    for r in &recs {
        match r.event.as_str() {
            "xfs_alloc_read_agf" => {
                open.insert(r.pid, (r.ts_ns, 0, 0, 0));
            }
            "xfs_trans_read_buf" => {
                // AG headers (AGF, AGFL) are one sector; btree blocks are
                // a filesystem block.
                let sectors = trace::field(&r.body, "bbcount").and_then(trace::number).unwrap_or(0);
                if let Some(o) = open.get_mut(&r.pid) {
                    if sectors > 1 {
                        o.1 += 1;
                    } else {
                        o.2 += 1;
                    }
                }
            }
            "xfs_extent_busy_trim" => {
                if let Some(o) = open.get_mut(&r.pid) {
                    o.3 += 1;
                }
            }
            "xfs_alloc_size_done" => {
                if let Some((t0, reads, headers, trims)) = open.remove(&r.pid) {
                    let len = trace::field(&r.body, "len").and_then(trace::number).unwrap_or(0);
                    let us = r.ts_ns.saturating_sub(t0) as f64 / 1e3;
                    calls.push((reads as f64, us, len as f64, headers as f64, trims as f64));
                }
            }
            _ => {}
        }
    }
    if calls.is_empty() {
        return Err(LabError::step("trace", "no xfs_alloc_size_done after an xfs_alloc_read_agf"));
    }
    let n = calls.len() as f64;
    let mut us: Vec<f64> = calls.iter().map(|c| c.1).collect();
    us.sort_by(f64::total_cmp);
    let mut m = Metrics::new();
    m.insert("calls".into(), n);
    m.insert("buffer_reads".into(), calls.iter().map(|c| c.0).sum::<f64>() / n);
    m.insert("alloc_us".into(), us.iter().sum::<f64>() / n);
    m.insert("alloc_us_p50".into(), us[us.len() / 2]);
    m.insert("alloc_us_min".into(), us[0]);
    m.insert("alloc_us_max".into(), us[us.len() - 1]);
    m.insert("alloc_len".into(), calls.iter().map(|c| c.2).sum::<f64>() / n);
    m.insert("header_reads".into(), calls.iter().map(|c| c.3).sum::<f64>() / n);
    m.insert("busy_trims".into(), calls.iter().map(|c| c.4).sum::<f64>() / n);
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agf_fields_are_read() {
        let t = "btreeblks = 3960\nflcount = 8\n";
        assert_eq!(agf_field(t, "btreeblks"), Some(3960));
        assert_eq!(agf_field(t, "flcount"), Some(8));
        assert_eq!(agf_field(t, "freeblks"), None);
        assert_eq!(agf_field("btreeblks = x", "btreeblks"), None);
    }

    #[test]
    fn freesp_totals_are_read() {
        let t = "   from      to extents  blocks    pct\n      1       1   10000   10000 100.00\ntotal free extents 10000\ntotal free blocks 10000\naverage free extent size 1\n";
        assert_eq!(freesp_extents(t), 10000);
        assert_eq!(freesp_extents("nothing"), 0);
    }

    fn call(t0_us: u64, us: u64, trims: usize) -> String {
        let l = |t: u64, e: &str, b: &str| format!("  fsmeta-7 [000] ..... 1.{t:06}: {e}: {b}\n");
        let mut s = l(t0_us, "xfs_alloc_read_agf", "dev 7:0 agno 0x1");
        for _ in 0..trims {
            s += &l(t0_us + 1, "xfs_extent_busy_trim", "dev 7:0 agno 0x1");
        }
        s + &l(t0_us + us, "xfs_alloc_size_done", "dev 7:0 agno 0x1 len 1")
    }

    #[test]
    fn a_pass_traced_by_its_bounds_reports_its_times_and_no_counts() {
        let text = call(10, 20, 0) + &call(100, 30, 0) + &call(200, 40, 0);
        let m = bounds_metrics(&text).expect("metrics");
        assert_eq!(m.get("alloc_us_p50"), Some(&30.0));
        assert_eq!(m.get("calls"), Some(&3.0));
        for count in ["buffer_reads", "header_reads", "busy_trims"] {
            assert_eq!(m.get(count), None, "{count}");
        }
    }

    #[test]
    fn the_quiet_pass_reports_its_time_and_the_trims_of_the_pass_after_it() {
        let quiet = call(10, 20, 0) + &call(100, 30, 0) + &call(200, 40, 0);
        let after = call(300, 90, 3) + &call(500, 90, 3);
        let m = quiet_metrics(&quiet, &after).expect("metrics");
        assert_eq!(m.get("alloc_us_p50"), Some(&30.0));
        assert_eq!(m.get("busy_trims_after"), Some(&3.0));
        // The quiet trace cannot count trims: no zero that reads as a count.
        assert_eq!(m.get("busy_trims"), None);
        // A traced pass with no trims says so.
        let m = quiet_metrics(&quiet, &call(300, 9, 0)).expect("metrics");
        assert_eq!(m.get("busy_trims_after"), Some(&0.0));
    }
}
