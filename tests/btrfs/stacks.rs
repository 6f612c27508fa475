//! The twin's `release_stack_ns` and `reserve_stack_ns`: the stacks the
//! lab's kept reservation events record, as the twin prices them, so the
//! lab's table shows them beside its own.

use fsmeta::kernel::btrfs::delayed::WorkerMode;
use fsmeta::machine::{find_builtin, load_profile};
use fsmeta::workload::btrfs_dir::{BtrfsDirParams, SyncBy, run_btrfs_dir};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::path::Path;

fn run(p: &BtrfsDirParams, machine: &fsmeta::machine::MachineProfile) -> BTreeMap<String, f64> {
    run_btrfs_dir(p, machine, &mut ChaCha8Rng::seed_from_u64(7)).expect("run")
}

/// On a profile that measured a stack (the eIBRS VM's: 412.03 ns at 5
/// frames shown, 4 more walked), a stack of `shown` frames costs that in
/// proportion to the frames walked: the flush worker's release 9, the
/// unlink's reserve 10. With the commits on the script's thread, as the
/// lab runs them (`sync_by = "script"`), the sync's and the unmount's
/// deletion batches are a commit's (8 frames), fewer than the worker's,
/// so the upper median is the worker's.
#[test]
fn the_twins_stacks_are_the_profiles_measured_stack_by_frames() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let machine = load_profile(&root.join("scenarios/machines/lab-xeon-6-207-eibrs.toml")).expect("profile");
    let per_walked = 412.03 / 9.0;
    let traced = BtrfsDirParams {
        reservation_tracepoints: true,
        worker: WorkerMode::Concurrent,
        sync_by: SyncBy::Script,
        ..Default::default()
    };
    let m = run(&traced, &machine);
    let close = |got: f64, want: f64| (got - want).abs() < 0.01;
    assert!(close(m["release_stack_ns"], 13.0 * per_walked), "{}", m["release_stack_ns"]);
    assert!(close(m["reserve_stack_ns"], 14.0 * per_walked), "{}", m["reserve_stack_ns"]);
    // Without the reservation events there is no stack.
    let untraced = run(&BtrfsDirParams::default(), &machine);
    assert_eq!((untraced["release_stack_ns"], untraced["reserve_stack_ns"]), (0.0, 0.0));
    // A profile with no measured stack prices the unwinder's counted
    // loads, the same for every stack.
    let counted = run(&traced, &find_builtin("icelake-2s").expect("built-in"));
    assert!(counted["release_stack_ns"] > 0.0);
    assert_eq!(counted["release_stack_ns"], counted["reserve_stack_ns"]);
}
