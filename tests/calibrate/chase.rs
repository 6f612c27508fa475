use fsmeta::calibrate::chase::Chase;
use fsmeta::calibrate::sysfs::{HostTopology, SYSFS_CPU_ROOT, Snapshot};
use fsmeta::calibrate::{allowed_cpus, chase_curve, pin_to};

/// The real chase on this host, pinned to one CPU, at a quarter of the L1d
/// sysfs reports, at four times the L1d (inside L2) and at four times the
/// L2: each must be clearly slower than the one before (1.5x; the levels
/// differ by 3x or more on any machine we know), or the chase is not
/// finding the caches sysfs describes. Medians of 7 samples: a sample
/// spoilt by a preemption does not decide.
#[test]
fn the_chase_sees_the_cache_sizes_sysfs_reports() {
    let snap = Snapshot::read(std::path::Path::new(SYSFS_CPU_ROOT)).expect("this test needs Linux sysfs");
    let host = HostTopology::parse(&snap).unwrap();
    let cpu = allowed_cpus().unwrap()[0];
    let caches = &host.cpu(cpu).unwrap().caches;
    let l1 = caches.iter().find(|c| c.level == 1).expect("sysfs lists an L1d").size as usize;
    let l2 = caches.iter().find(|c| c.level == 2).expect("sysfs lists an L2").size as usize;
    let sizes = [l1 / 4, 4 * l1, 4 * l2];
    let (points, _) = std::thread::spawn(move || {
        pin_to(cpu).unwrap();
        chase_curve(&sizes, 7).unwrap()
    })
    .join()
    .unwrap();
    let ns: Vec<f64> = points.iter().map(|p| p.ns.median).collect();
    assert!(ns[0] * 1.5 < ns[1], "L1d/4 {} ns vs 4x L1d {} ns (sysfs L1d {l1} B)", ns[0], ns[1]);
    assert!(ns[1] * 1.5 < ns[2], "4x L1d {} ns vs 4x L2 {} ns (sysfs L2 {l2} B)", ns[1], ns[2]);
}

#[test]
fn a_chase_visits_every_line_once_per_cycle() {
    // The cycle's length is the working set's line count: after `lines`
    // loads the chase is back where it started, and not before.
    for bytes in [4096, 6144, 3 << 20] {
        let c = fsmeta::calibrate::chase::Chase::new(bytes);
        assert_eq!(c.lines(), bytes / 64);
        assert_eq!(c.cycle_length(), c.lines(), "{bytes} B");
    }
}

#[test]
fn the_default_chase_reaches_dram_past_a_large_llc() {
    // DRAM's window starts at 4x the LLC (calibrate::derive::fit_levels);
    // a 2-vCPU VM of a Xeon 6 model 207 lists a 260 MiB L3.
    for llc_mib in [8u64, 32, 96, 260, 512] {
        let llc = llc_mib << 20;
        let max = fsmeta::calibrate::default_max_chase(llc);
        let reach = fsmeta::calibrate::chase::sizes(max).into_iter().max().unwrap_or(0);
        assert!(reach as u64 >= 4 * llc, "LLC {llc_mib} MiB: the chase stops at {reach} B");
    }
}

#[test]
fn a_timed_walk_goes_on_from_where_the_last_stopped() {
    // 64 lines: one cycle through all of them.
    let c = Chase::new(64 * 64);
    assert_eq!(c.cycle_length(), 64);
    let (mut one, mut two) = (c.start(), c.start());
    assert_eq!(c.time_from(&mut one, 1, 3).len(), 3);
    c.time_from(&mut two, 3, 1);
    assert_eq!(one, two, "three walks of one load end where one walk of three does");
    assert_ne!(one, c.start());
    // A whole cycle comes back to the start.
    let mut round = c.start();
    c.time_from(&mut round, 64, 2);
    assert_eq!(round, c.start());
}
