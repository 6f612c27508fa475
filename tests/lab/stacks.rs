//! The lab's stack times: from a reservation event's record to its
//! `<stack trace>` record (`release_stack_ns`, `reserve_stack_ns`).

use fsmeta::lab::btrfs_delayed;

/// A stack's time is its `<stack trace>` record's less its event's: the
/// deletion releases' and the unlinks' reserves' medians, each kind
/// apart, a create's reserve in neither.
#[test]
fn the_stacks_time_is_from_each_event_to_its_stack_record() {
    let f = "27687bd2-84f2-44eb-bab2-c0951f5d7cb0";
    // Built by hand: whole-us clock, stacks 1, 3 and 2 us after their
    // releases, 4 us after the one unlink reserve, none for a create's.
    let rel = |ts: &str, st: &str| {
        format!(
            "  kworker/u8:3-9 [000] ..... {ts}: btrfs_space_reservation: {f}: delayed_item: 257 release 262144\n  kworker/u8:3-9 [000] ..... {st}: <stack trace>\n => btrfs_delete_delayed_items+0x1a/0x300\n"
        )
    };
    let text = [
        rel("1.000010", "1.000011"),
        rel("1.000020", "1.000023"),
        rel("1.000030", "1.000032"),
        format!(
            "  fsmeta-77 [001] ..... 1.000040: btrfs_space_reservation: {f}: delayed_item: 257 reserve 262144\n  fsmeta-77 [001] ..... 1.000044: <stack trace>\n => btrfs_delayed_item_reserve_metadata+0x1/0x2\n => btrfs_delete_delayed_dir_index+0x1/0x2\n"
        ),
        format!(
            "  fsmeta-77 [001] ..... 1.000050: btrfs_space_reservation: {f}: delayed_item: 257 reserve 262144\n  fsmeta-77 [001] ..... 1.000059: <stack trace>\n => btrfs_delayed_item_reserve_metadata+0x1/0x2\n => btrfs_insert_delayed_dir_index+0x1/0x2\n"
        ),
    ]
    .concat();
    let m = btrfs_delayed::analyse(&text, f, 16384, 2).expect("analyse");
    assert_eq!((m["release_stack_ns"], m["reserve_stack_ns"]), (2000.0, 4000.0));
}
