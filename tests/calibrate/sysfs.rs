use super::host;
use fsmeta::calibrate::sysfs::{HostTopology, Snapshot, parse_cpu_list, parse_size};
use fsmeta::machine::{Distance, Topology};

fn topo(sockets: u32, cores_per_socket: u32, smt: u32, llcs_per_socket: u32) -> Topology {
    Topology {
        sockets,
        cores_per_socket,
        smt,
        llcs_per_socket,
    }
}

#[test]
fn cpu_lists_and_sizes() {
    assert_eq!(parse_cpu_list("0-3,8,10-11").unwrap(), vec![0, 1, 2, 3, 8, 10, 11]);
    assert_eq!(parse_cpu_list(" 5 ").unwrap(), vec![5]);
    assert_eq!(parse_cpu_list("3,1-2,2").unwrap(), vec![1, 2, 3]);
    for bad in ["", "1-", "3-1", "a", "0-2000000"] {
        assert!(parse_cpu_list(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_size("32K").unwrap(), 32 << 10);
    assert_eq!(parse_size("32768K").unwrap(), 32 << 20);
    assert_eq!(parse_size("2M").unwrap(), 2 << 20);
    for bad in ["", "K", "0K", "12Q", "99999999999999999999G"] {
        assert!(parse_size(bad).is_err(), "{bad}");
    }
}

#[test]
fn this_hosts_snapshot() {
    let h = host("sysfs-epyc-2vcpu.txt");
    assert_eq!(h.topology, topo(1, 2, 1, 1));
    let cpu0 = h.cpu(0).unwrap();
    let sizes: Vec<(u32, u64, u32)> = cpu0.caches.iter().map(|c| (c.level, c.size, c.ways)).collect();
    assert_eq!(sizes, vec![(1, 32 << 10, 8), (2, 1 << 20, 8), (3, 32 << 20, 16)]);
    assert_eq!(cpu0.llc().unwrap().shared, vec![0, 1]);
    assert_eq!(h.classify(0, 1), Some(Distance::SameLlc));
    assert_eq!(h.classify(1, 1), Some(Distance::SameCpu));
    assert_eq!(h.classify(0, 2), None);
    assert_eq!(h.representative_pairs(&[0, 1]), vec![(Distance::SameLlc, 0, 1)]);
    assert!(h.representative_pairs(&[1]).is_empty());
}

#[test]
fn two_sockets_of_two_ccx_with_smt() {
    let h = host("sysfs-2s-ccx-smt.txt");
    assert_eq!(h.topology, topo(2, 4, 2, 2));
    // CPU 0 is thread 0 of core 0; 8 its sibling; 1 shares its CCX; 2 is
    // the other CCX of socket 0; 4 is on socket 1.
    assert_eq!(h.classify(0, 8), Some(Distance::SmtSibling));
    assert_eq!(h.classify(0, 1), Some(Distance::SameLlc));
    assert_eq!(h.classify(9, 0), Some(Distance::SameLlc));
    assert_eq!(h.classify(0, 2), Some(Distance::SameSocket));
    assert_eq!(h.classify(0, 4), Some(Distance::CrossSocket));
    assert_eq!(h.classify(12, 3), Some(Distance::CrossSocket));
    let all: Vec<u32> = (0..16).collect();
    assert_eq!(
        h.representative_pairs(&all),
        vec![
            (Distance::SmtSibling, 0, 8),
            (Distance::SameLlc, 0, 1),
            (Distance::SameSocket, 0, 2),
            (Distance::CrossSocket, 0, 4)
        ]
    );
    // Restricted to socket 1's second CCX: siblings and one LLC only.
    assert_eq!(
        h.representative_pairs(&[6, 7, 14, 15]),
        vec![(Distance::SmtSibling, 6, 14), (Distance::SameLlc, 6, 7)]
    );
}

fn text(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/calibrate/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn parse_err(text: &str) -> String {
    let snap = Snapshot::parse_text(text).unwrap();
    match HostTopology::parse(&snap) {
        Ok(h) => panic!("expected an error, got {:?}", h.topology),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_snapshots_are_errors_naming_the_file() {
    let good = text("sysfs-epyc-2vcpu.txt");
    let e = parse_err(&good.replace("cpu1/topology/core_id: 1\n", ""));
    assert!(e.contains("cpu1/topology/core_id is missing"), "{e}");
    let e = parse_err(&good.replace("cpu0/cache/index3/shared_cpu_list: 0-1", "cpu0/cache/index3/shared_cpu_list: 1-0"));
    assert!(e.contains("cpu0/cache/index3/shared_cpu_list") && e.contains("backwards"), "{e}");
    let e = parse_err(&good.replace("cpu0/cache/index2/size: 1024K", "cpu0/cache/index2/size: lots"));
    assert!(e.contains("not a cache size"), "{e}");
    // Two cores with unequal thread counts.
    let e = parse_err(&good.replace("cpu0/topology/thread_siblings_list: 0", "cpu0/topology/thread_siblings_list: 0,5"));
    assert!(e.contains("unequal thread counts"), "{e}");
    // Three cores cannot split into two LLC domains ({0, 1} and {2}).
    let three = good.replace("online: 0-1", "online: 0-2")
        + "cpu2/topology/physical_package_id: 0\ncpu2/topology/core_id: 2\ncpu2/topology/thread_siblings_list: 2\n"
        + "cpu2/cache/index0/level: 3\ncpu2/cache/index0/type: Unified\ncpu2/cache/index0/size: 32768K\ncpu2/cache/index0/shared_cpu_list: 2\n";
    let e = parse_err(&three);
    assert!(e.contains("llcs_per_socket") && e.contains("do not split 3 cores"), "{e}");
    assert!(Snapshot::parse_text("no colon here").is_err());
}
