use super::host;
use fsmeta::calibrate::chase::sizes;
use fsmeta::calibrate::derive::derive;
use fsmeta::calibrate::render::{Header, render};
use fsmeta::calibrate::stats::Spread;
use fsmeta::calibrate::{Calibration, ChasePoint, PairTransfer};
use fsmeta::machine::{Distance, load_profile};

const MIB: usize = 1 << 20;

fn spread(x: f64) -> Spread {
    Spread::of(&[x * 0.95, x, x * 1.05]).unwrap()
}

/// A calibration of `host` with a step chase curve (1.3 / 4 / 14 / 110 ns
/// for L1d / L2 / LLC / DRAM by the snapshot's sizes, 32 KiB / 512 KiB or
/// 1 MiB / 32 MiB) up to `max` bytes, and CAS transfers `cas` per class.
fn calibration(snapshot: &str, max: usize, cas: &[(Distance, f64)]) -> Calibration {
    let host = host(snapshot);
    let c = host.cpu(0).unwrap().clone();
    let size = |l: u32| c.caches.iter().find(|x| x.level == l).unwrap().size as usize;
    let chase = sizes(max)
        .into_iter()
        .map(|bytes| {
            let ns = if bytes <= size(1) {
                1.3
            } else if bytes <= size(2) {
                4.0
            } else if bytes <= size(3) {
                14.0
            } else {
                110.0
            };
            ChasePoint {
                bytes,
                loads: 1 << 16,
                ns: spread(ns),
                samples: vec![ns * 0.95, ns, ns * 1.05],
            }
        })
        .collect();
    let transfers = cas
        .iter()
        .map(|&(distance, ns)| PairTransfer {
            distance,
            a: 0,
            b: 1,
            load_store: spread(ns * 1.5),
            cas: spread(ns),
            contended_add: Some(spread(30.0)),
            contended_samples: 3,
            handoffs: Some(spread(0.2)),
        })
        .collect();
    Calibration {
        host,
        cpu: 0,
        transfers,
        atomic: spread(8.0),
        chase,
        huge_pages: true,
        tracepoint: Err(fsmeta::calibrate::tracepoint::NotMeasured("not root (test)".into())),
        indirect_call: Err(fsmeta::calibrate::mitigation::NotMeasured("not measured (test)".into())),
        returns: Err(fsmeta::calibrate::mitigation::NotMeasured("not measured (test)".into())),
        storage: Ok(fsmeta::calibrate::storage::StorageCost {
            folder: "/tmp/fsmeta-calibrate-storage-1".into(),
            flush: vec![
                (16, spread(200.0)),
                (64, spread(400.0)),
                (256, spread(900.0)),
                (1024, spread(3400.0)),
            ],
            block_flush: vec![
                (16, spread(210.0)),
                (64, spread(700.0)),
                (256, spread(1800.0)),
                (1024, spread(7000.0)),
            ],
            super_flush: spread(160.0),
            write: spread(7.25),
            drop_folio: Ok(spread(0.1374)),
        }),
        sched: Ok(fsmeta::calibrate::sched::SchedCost {
            a: 0,
            b: 1,
            wake: spread(21.5),
            thread_stop: spread(38.25),
            placed_stop: Some(spread(4.125)),
            placed_on_caller: Some(3),
        }),
        fresh_line: spread(17.5),
        loop_load: spread(0.34),
        memmove: Some(fsmeta::calibrate::MemmoveCost {
            backward: spread(1.62),
            forward_near: spread(20.694),
            forward: spread(0.88),
            how: fsmeta::calibrate::memmove::Forward::RepMovsb,
        }),
        repeat: 3,
        wall_s: 1.0,
    }
}

/// Writes `text` under the build's own temporary folder (not the host's
/// /tmp: nothing is left there).
fn write(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("calibrate-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_written_profile_loads_and_holds_the_measurements() {
    let cal = calibration("sysfs-epyc-2vcpu.txt", 256 * MIB, &[(Distance::SameLlc, 52.0)]);
    let d = derive(&cal, "epyc-test", "AMD EPYC test").unwrap();
    let mut header = Header {
        command: "fsmeta calibrate --out x.toml".to_string(),
        date: "2026-12-01 16:00:00 UTC".to_string(),
        ..Header::default()
    };
    header.info.mitigations = vec!["spec_rstack_overflow: Vulnerable: Safe RET, no microcode".to_string()];
    let text = render(&cal, &d, &header);
    let path = write("epyc-test", &text);
    let back = load_profile(&path).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back, d.profile);
    let p = &back;
    assert_eq!((p.hit_ns, p.atomic_ns, p.memory_ns), (1.3, 8.0, 110.0));
    assert_eq!(
        (p.smt_ns, p.same_llc_ns, p.same_socket_ns, p.cross_socket_ns),
        (52.0, 52.0, 52.0, 52.0)
    );
    let l = p.levels.as_ref().unwrap();
    assert_eq!((l.l2_hit_ns, l.llc_hit_ns, l.l1d_ways, l.l2_ways), (4.0, 14.0, 8, 8));
    assert_eq!((l.fresh_line_ns, l.loop_load_ns), (Some(17.5), Some(0.34)));
    let st = p.storage.as_ref().expect("the storage prices");
    assert_eq!(
        (st.flush_kib.as_slice(), st.flush_us.as_slice(), st.super_flush_us),
        (
            [16.0, 64.0, 256.0, 1024.0].as_slice(),
            [200.0, 400.0, 900.0, 3400.0].as_slice(),
            160.0
        )
    );
    assert!(
        text.contains("# flush_us: in /tmp (the lab's temporary folder): 7 new sparse files"),
        "{text}"
    );
    assert_eq!(st.block_flush_us.as_deref(), Some([210.0, 700.0, 1800.0, 7000.0].as_slice()));
    assert!(
        text.contains("# block_flush_us: 7 more files per size, each size written as separate 16 KiB blocks"),
        "{text}"
    );
    assert_eq!(st.write_us, 7.25);
    let sc = p.sched.as_ref().expect("the wake and stop prices");
    assert_eq!((sc.wake_us, sc.thread_stop_us, sc.placed_stop_us), (21.5, 38.25, Some(4.13)));
    assert!(
        text.contains(
            "# placed_stop_us: the same stop of a thread made on the caller's CPU 0 and asleep there, free to run on it or on CPU 1"
        ) && text.contains("; the thread ran on CPU 0 (getcpu after its wake) in 3 of them"),
        "{text}"
    );
    assert!(
        text.contains("# thread_stop_us: a thread running nothing but system calls (a raw clone) asleep in a futex wait, woken, exiting, and its exit waited for (the futex the kernel wakes at a thread's exit), the caller on CPU 0 and the woken thread on CPU 1"),
        "{text}"
    );
    assert!(
        text.contains("# write_us: a new sparse image of 1024 MiB there on a loop device"),
        "{text}"
    );
    // The page cache's drop of a folio, rounded to 0.001 us, with its method.
    assert_eq!(st.drop_folio_us, Some(0.137));
    assert!(
        text.contains("drop_folio_us = 0.137\n")
            && text.contains("# drop_folio_us: a file of 1024 pages there, written and fsynced (clean)"),
        "{text}"
    );
    // The kernel's memmove in a leaf, to 0.01 ns per 64 bytes, with its method.
    let m = p.memmove.as_ref().expect("the memmove prices");
    assert_eq!((m.backward_ns, m.forward_near_ns, m.forward_far_ns), (1.62, 20.69, 0.88));
    assert!(
        text.contains("\n[memmove]\n# backward_ns: 4800 bytes moved up by 41 inside a 16 KiB buffer, 32-byte turns from the top")
            && text.contains("# forward_near_ns: 2950 bytes moved down by 25 inside a 16 KiB buffer by rep movsb (fsrm or erms)")
            && text.contains("\nforward_far_ns = 0.88\n"),
        "{text}"
    );
    assert_eq!(
        (p.l1d_bytes, p.l2_bytes, p.llc_bytes_per_socket, p.cache_ways),
        (32 << 10, 1 << 20, 32 << 20, 16)
    );
    assert_eq!(p.smt_throughput, 1.0);
    for want in [
        "# Command: fsmeta calibrate --out x.toml",
        "# Date: 2026-12-01 16:00:00 UTC",
        "# hit_ns: L1d load-to-use: pointer chase over 4 KiB to 16 KiB",
        "# smt_ns: not measured",
        "# fresh_line_ns: write_bytes (memset) of 4096 1024-byte objects per sample",
        "# loop_load_ns: 256 64-byte records (16 KiB) walked last to first, 6 independent loads a record",
        "\nloop_load_ns = 0.340\n",
        "plateau ends at   32 KiB",
        "# Kernel mitigations on calls and returns (sysfs vulnerabilities): spec_rstack_overflow: Vulnerable: Safe RET, no microcode.",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
}

/// Where the memmove was not measured, or its price is out of range, the
/// profile has no `[memmove]` and says why in its place.
#[test]
fn a_memmove_not_measured_or_out_of_range_leaves_its_table_out_and_says_why() {
    let mut cal = calibration("sysfs-epyc-2vcpu.txt", 256 * MIB, &[(Distance::SameLlc, 52.0)]);
    cal.memmove = None;
    let d = derive(&cal, "none", "test").unwrap();
    assert!(d.profile.memmove.is_none());
    let text = render(&cal, &d, &Header::default());
    assert!(
        text.contains("\n# memmove: not measured: the kernel's memmove is measured on x86-64 only\n"),
        "{text}"
    );
    assert_eq!(load_profile(&write("no-memmove", &text)).unwrap(), d.profile);
    let mut cal = calibration("sysfs-epyc-2vcpu.txt", 256 * MIB, &[(Distance::SameLlc, 52.0)]);
    if let Some(m) = cal.memmove.as_mut() {
        m.forward_near = spread(1e4);
    }
    let d = derive(&cal, "slow", "test").unwrap();
    assert!(d.profile.memmove.is_none());
    let text = render(&cal, &d, &Header::default());
    assert!(
        text.contains("# memmove: not kept: memmove.forward_near_ns: 10000 ns is not in (0, 1000]"),
        "{text}"
    );
}

#[test]
fn every_class_measured_and_a_falling_one_raised() {
    let cas = [
        (Distance::SmtSibling, 9.0),
        (Distance::SameLlc, 25.0),
        (Distance::SameSocket, 20.0),
        (Distance::CrossSocket, 190.0),
    ];
    let cal = calibration("sysfs-2s-ccx-smt.txt", 256 * MIB, &cas);
    let d = derive(&cal, "big", "test").unwrap();
    let p = &d.profile;
    assert_eq!(
        (p.smt_ns, p.same_llc_ns, p.same_socket_ns, p.cross_socket_ns),
        (9.0, 25.0, 25.0, 190.0)
    );
    assert!(
        d.note("same_socket_ns").contains("raised from 20.00"),
        "{}",
        d.note("same_socket_ns")
    );
    assert_eq!((p.l2_bytes, p.llc_bytes_per_socket, p.smt_throughput), (512 << 10, 64 << 20, 1.25));
    let path = write("big", &render(&cal, &d, &Header::default()));
    assert_eq!(load_profile(&path).unwrap(), d.profile);
}

#[test]
fn an_llc_whose_plateau_ends_far_below_its_sysfs_size_is_taken_at_the_knee() {
    // sysfs says 32 MiB of L3, the chase finds 14 ns only up to 4 MiB and
    // DRAM's 110 ns past it (a VM listing its host's whole L3): the LLC's
    // latency is the plateau's, and DRAM's window starts at 4x 4 MiB.
    let mut cal = calibration("sysfs-epyc-2vcpu.txt", 256 * MIB, &[(Distance::SameLlc, 52.0)]);
    for p in cal.chase.iter_mut().filter(|p| p.bytes > 4 * MIB) {
        p.ns = spread(110.0);
        p.samples = vec![110.0 * 0.95, 110.0, 110.0 * 1.05];
    }
    let d = derive(&cal, "vm", "test").unwrap();
    let l = d.profile.levels.as_ref().unwrap();
    assert_eq!((l.llc_hit_ns, d.profile.memory_ns), (14.0, 110.0));
    let llc = d.levels.iter().find(|f| f.name == "L3").unwrap();
    assert_eq!((llc.effective_bytes, llc.window), (Some(4 * MIB), (3 * MIB / 2, 4 * MIB)));
    assert_eq!(d.levels.last().unwrap().window.0, 16 * MIB, "DRAM from 4x the knee");
    assert!(
        d.note("levels.llc_hit_ns").contains("knee at 4 MiB"),
        "{}",
        d.note("levels.llc_hit_ns")
    );
    // Where the plateau runs to the sysfs size, the sysfs size stands.
    let plain = derive(
        &calibration("sysfs-epyc-2vcpu.txt", 256 * MIB, &[(Distance::SameLlc, 52.0)]),
        "p",
        "t",
    )
    .unwrap();
    assert!(plain.levels.iter().all(|f| f.effective_bytes.is_none()));
}

#[test]
fn a_rise_spread_over_three_chase_sizes_still_ends_the_level_where_it_starts() {
    // As a Xeon 6 VM measured it (2026-12-03): the LLC's latency holds to
    // 4 MiB, then rises over 6 and 8 MiB (no two neighbours double) to
    // DRAM's by 12 MiB. The knee is 4 MiB, the last size on the plateau,
    // not 8 MiB where a neighbour finally doubles: 6 and 8 MiB are partly
    // DRAM, and the LLC's pooled latency must not include them.
    let mut cal = calibration("sysfs-epyc-2vcpu.txt", 256 * MIB, &[(Distance::SameLlc, 52.0)]);
    for p in cal.chase.iter_mut().filter(|p| p.bytes > 4 * MIB) {
        let ns = match p.bytes {
            b if b <= 6 * MIB => 22.0,
            b if b <= 8 * MIB => 26.0,
            _ => 110.0,
        };
        p.ns = spread(ns);
        p.samples = vec![ns * 0.95, ns, ns * 1.05];
    }
    let d = derive(&cal, "vm", "test").unwrap();
    let llc = d.levels.iter().find(|f| f.name == "L3").unwrap();
    assert_eq!((llc.effective_bytes, llc.window), (Some(4 * MIB), (3 * MIB / 2, 4 * MIB)));
    assert_eq!(d.levels.last().unwrap().window.0, 16 * MIB, "DRAM from 4x the knee");
    let l = d.profile.levels.as_ref().unwrap();
    assert_eq!((l.llc_hit_ns, d.profile.memory_ns), (14.0, 110.0));
}

#[test]
fn a_measured_tracepoint_cost_is_written_and_loaded_and_a_missing_one_says_why() {
    use fsmeta::calibrate::tracepoint::TracepointCost;
    let mut cal = calibration("sysfs-epyc-2vcpu.txt", 256 * MIB, &[(Distance::SameLlc, 52.0)]);
    let none = derive(&cal, "none", "t").unwrap();
    assert!(none.profile.tracepoint.is_none());
    let text = render(&cal, &none, &Header::default());
    assert!(text.contains("# tracepoint: not measured: not root (test)"), "{text}");
    cal.tracepoint = Ok(TracepointCost {
        kept: spread(96.0),
        discarded: spread(32.0),
        passed: spread(130.0),
        stack: spread(412.034),
        stack_frames: Some(5),
        clock: "x86-tsc",
    });
    let d = derive(&cal, "tp", "t").unwrap();
    let t = d.profile.tracepoint.as_ref().expect("measured");
    assert_eq!((t.event_ns, t.discard_ns, t.passed_ns), (96.0, 32.0, Some(130.0)));
    // The stack, to 0.01 ns, with the frames it was measured at.
    assert_eq!((t.stack_ns, t.stack_frames), (Some(412.03), Some(5)));
    let text = render(&cal, &d, &Header::default());
    assert!(text.contains("[tracepoint]\n# event_ns: a record kept"), "{text}");
    assert!(
        text.contains("\n# passed_ns: a record the filter passes (common_pid != 0)"),
        "{text}"
    );
    assert!(text.contains("\npassed_ns = 130.00\n"), "{text}");
    assert!(text.contains("(trace clock x86-tsc, as the lab's)"), "{text}");
    assert!(
        text.contains("\n# stack_ns: a kept record's stack on top of the record: the same calls with the instance's options/stacktrace on, less the kept timing beside them (5 frames shown")
            && text.contains("\nstack_ns = 412.03\nstack_frames = 5\n"),
        "{text}"
    );
    assert_eq!(load_profile(&write("tp", &text)).unwrap(), d.profile);
    // No stack read back, or a median that is no price: no stack, and why.
    for (frames, ns, why) in [
        (None, 412.0, "# stack_ns: not kept: no stack was read back from the trace"),
        (Some(5), -3.0, "# stack_ns: not kept (median -3.0 ns, not a price)"),
    ] {
        if let Ok(t) = cal.tracepoint.as_mut() {
            t.stack_frames = frames;
            t.stack = spread(ns);
        }
        let d = derive(&cal, "tp", "t").unwrap();
        let t = d.profile.tracepoint.as_ref().expect("measured");
        assert_eq!((t.stack_ns, t.stack_frames), (None, None));
        let text = render(&cal, &d, &Header::default());
        assert!(text.contains(why) && !text.contains("\nstack_ns ="), "{text}");
        assert_eq!(load_profile(&write("tp-no-stack", &text)).unwrap(), d.profile);
    }
}

#[test]
fn storage_not_measured_or_out_of_range_leaves_the_table_out_and_says_why() {
    use fsmeta::calibrate::storage::{NotMeasured, StorageCost};
    let mut cal = calibration("sysfs-epyc-2vcpu.txt", 256 * MIB, &[(Distance::SameLlc, 52.0)]);
    cal.storage = Err(NotMeasured("not root (test)".into()));
    let d = derive(&cal, "none", "t").unwrap();
    assert!(d.profile.storage.is_none());
    let text = render(&cal, &d, &Header::default());
    assert!(
        text.contains("# storage: not measured: not root (test)") && !text.contains("[storage]"),
        "{text}"
    );
    assert_eq!(load_profile(&write("no-storage", &text)).unwrap(), d.profile);
    // A median past 10 s: the rest of the profile is kept.
    cal.storage = Ok(StorageCost {
        folder: "/tmp/x".into(),
        flush: vec![(16, spread(200.0)), (64, spread(2e7))],
        block_flush: vec![(16, spread(200.0)), (64, spread(400.0))],
        super_flush: spread(160.0),
        write: spread(7.0),
        // Out of range too: the table's failure is the one reported.
        drop_folio: Ok(spread(2e6)),
    });
    let d = derive(&cal, "slow", "t").unwrap();
    assert!(d.profile.storage.is_none());
    let text = render(&cal, &d, &Header::default());
    assert!(text.contains("# storage: not kept: storage.flush_us:"), "{text}");
    assert!(!text.contains("# flush_us:"), "no note of a table not written: {text}");
    assert!(!text.contains("drop_folio"), "no note of a field of a table not written: {text}");
    // A folio's drop not measured (a tmpfs folder) or out of range: the
    // table keeps its other figures, the field says why it is missing.
    let fine = |drop_folio| StorageCost {
        folder: "/tmp/x".into(),
        flush: vec![(16, spread(200.0)), (64, spread(400.0))],
        block_flush: vec![(16, spread(200.0)), (64, spread(400.0))],
        super_flush: spread(160.0),
        write: spread(7.0),
        drop_folio,
    };
    for (drop, why) in [
        (
            Err(NotMeasured("1024 of 1024 pages stayed cached (test)".into())),
            "not measured: 1024 of 1024",
        ),
        (Ok(spread(2e6)), "not kept: 2000000 us is not in (0,"),
    ] {
        cal.storage = Ok(fine(drop));
        let d = derive(&cal, "no-drop", "t").unwrap();
        let st = d.profile.storage.as_ref().expect("the rest of the table kept");
        assert_eq!((st.drop_folio_us, st.write_us), (None, 7.0));
        let text = render(&cal, &d, &Header::default());
        assert!(
            text.contains(&format!("# drop_folio_us: {why}")) && !text.contains("drop_folio_us = "),
            "{text}"
        );
        assert_eq!(load_profile(&write("no-drop", &text)).unwrap(), d.profile);
    }
}

#[test]
fn an_l1_that_holds_less_than_sysfs_says_is_warned_of() {
    let mut cal = calibration("sysfs-epyc-2vcpu.txt", 256 * MIB, &[(Distance::SameLlc, 52.0)]);
    let quiet = derive(&cal, "quiet", "t").unwrap();
    assert!(quiet.warnings.is_empty(), "{:?}", quiet.warnings);
    assert!(!render(&cal, &quiet, &Header::default()).contains("# Warning:"));
    // 24 KiB of the 32 KiB L1d at L2 latency, as on a core whose other
    // SMT thread another VM runs on.
    for p in cal.chase.iter_mut().filter(|p| p.bytes > 16 << 10 && p.bytes <= 32 << 10) {
        p.ns = spread(4.0);
        p.samples = vec![3.8, 4.0, 4.2];
    }
    let shared = derive(&cal, "shared", "t").unwrap();
    assert_eq!(shared.warnings.len(), 1, "{:?}", shared.warnings);
    assert!(
        shared.warnings[0].contains("24 KiB") && shared.warnings[0].contains("the L1d holds less than sysfs says"),
        "{:?}",
        shared.warnings
    );
    let text = render(&cal, &shared, &Header::default());
    assert!(text.contains("\n# Warning: the chase's latency at 24 KiB"), "{text}");
    assert_eq!(load_profile(&write("shared-l1", &text)).unwrap(), shared.profile);
}

#[test]
fn a_chase_short_of_dram_is_an_error() {
    // 64 MiB is less than 4x the 32 MiB LLC: no DRAM figure.
    let cal = calibration("sysfs-epyc-2vcpu.txt", 64 * MIB, &[(Distance::SameLlc, 52.0)]);
    let e = derive(&cal, "short", "test").unwrap_err().to_string();
    assert!(e.contains("DRAM") && e.contains("128 MiB"), "{e}");
}

#[test]
fn the_shipped_lab_host_profile_loads_and_names_how_it_was_made() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/machines/lab-host.toml");
    let p = load_profile(&path).unwrap();
    assert_eq!(p.name, "lab-host");
    let text = std::fs::read_to_string(&path).unwrap();
    for want in [
        "# Command: fsmeta calibrate --out scenarios/machines/lab-host.toml",
        "# Date: ",
        "# CPU: ",
        "# Load average",
    ] {
        assert!(text.contains(want), "{want}");
    }
}

/// With both mitigation measurements taken, the written profile carries
/// the `[mitigation]` table with the return's price and the line it was
/// measured for, each with its method, and loads back to the same
/// prices; without the spectre_v2 one, the note says the return's price
/// is not written either.
#[test]
fn a_measured_return_is_written_loaded_and_explained() {
    use fsmeta::calibrate::mitigation::{IndirectCallCost, NotMeasured, Sequence};
    use fsmeta::calibrate::returns::{ReturnCost, ReturnSequence};
    let mut cal = calibration("sysfs-epyc-2vcpu.txt", 256 * MIB, &[(Distance::SameLlc, 52.0)]);
    cal.indirect_call = Ok(IndirectCallCost {
        spectre_v2: "Mitigation: Retpolines; IBPB: conditional".into(),
        sequence: Sequence::Retpoline,
        extra: Some(spread(6.0)),
    });
    cal.returns = Ok(ReturnCost {
        spec_rstack_overflow: "Mitigation: Safe RET".into(),
        retbleed: "Not affected".into(),
        sequence: ReturnSequence::SafeRet,
        extra: Some(spread(6.3)),
    });
    let d = derive(&cal, "epyc-test", "AMD EPYC test").unwrap();
    let text = render(&cal, &d, &Header::default());
    let back = load_profile(&write("epyc-returns", &text)).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back, d.profile);
    assert_eq!((back.indirect_call_ns(), back.return_ns()), (6.0, 6.3));
    let m = back.mitigation.as_ref().unwrap();
    assert_eq!(m.spec_rstack_overflow.as_deref(), Some("Mitigation: Safe RET"));
    for want in [
        "spec_rstack_overflow = \"Mitigation: Safe RET\"",
        "# return_ns: the SRSO Safe RET thunk",
        "return_ns = 6.30",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    cal.indirect_call = Err(NotMeasured("no spectre_v2 line (test)".into()));
    let d = derive(&cal, "epyc-test", "AMD EPYC test").unwrap();
    assert!(d.profile.mitigation.is_none());
    let text = render(&cal, &d, &Header::default());
    assert!(text.contains("no return price either"), "{text}");
}
