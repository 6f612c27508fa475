use super::*;

/// Counted figures equal their hand sums to within this share.
const REL: f64 = 1e-9;

fn close(what: &str, got: f64, want: f64) {
    crate::kernel::xfs::assert_close(what, got, want, REL);
}

#[test]
fn the_space_limit_is_an_eighth_of_the_log_up_to_32_mib() {
    assert_eq!(cil_space_limit(LAB_LOG_BYTES), 8 << 20);
    assert_eq!(cil_space_limit(1 << 30), 32 << 20);
    assert_eq!(cil_space_limit(16 << 20), 2 << 20);
}

#[test]
fn a_checkpoint_of_creates_into_20000_names_by_hand() {
    let s = dir2::shape(20_000);
    let c = create_checkpoint(20_000, LAB_LOG_BYTES);
    // 256 bytes of inode, a 4,144-byte data block over its entries, a
    // 40-byte icreate item every 64 creates.
    let per = 256.0 + 4144.0 / s.per_data_block + 40.0 / 64.0;
    close("bytes per create", c.bytes_per_create, per);
    let fixed = (s.leaves as f64 + 5.0) * 4144.0;
    close("fixed", c.fixed_bytes, fixed);
    let creates = ((8_388_608.0 - fixed) / per).ceil();
    assert_eq!(c.creates as f64, creates);
    close(
        "items",
        c.items(),
        creates + s.leaves as f64 + 5.0 + creates / s.per_data_block + creates / 64.0,
    );
    // The bytes fill the space limit to within one create.
    assert!(c.bytes() >= 8_388_608.0 && c.bytes() < 8_388_608.0 + per, "{}", c.bytes());
    assert_eq!(c.iclogs(), (c.bytes() / 32_256.0).ceil());
}

#[test]
fn the_push_of_a_checkpoint_sums_its_stretches_by_hand() {
    let c = Checkpoint {
        creates: 1000,
        bytes_per_create: 300.0,
        fixed_bytes: 20_000.0,
        inodes: 1000.0,
        buffers: 20.0,
        icreates: 4.0,
    };
    let t = push_of(&c);
    let items: f64 = 1024.0;
    // 320,000 bytes: 10 iclogs of 32,256.
    assert_eq!(c.iclogs(), 10.0);
    let compares = 0.5 * items * items.log2() + items;
    close("straight loads", t.hits, 100.0 + 150.0 + 214.0 * 10.0);
    close("loop loads", t.iterated_hits, 35.0 * items + 5.0 * compares + 2.0 * 320_000.0 / 8.0);
    close("cold", t.cold_lines, 4.0 + 6.0 + 3.0 * items + 2.0 * 10.0);
    close("atomics", t.atomics, 12.0 + 18.0 + 6.0 * 10.0);
    // Under the context lock: the switch and the walk.
    let locked = push_to_switch_of(&c);
    close("locked loads", locked.hits + locked.iterated_hits, 100.0 + 15.0 * items);
    close("locked cold", locked.cold_lines, 4.0 + 3.0 * items);
    close("indirect", t.indirect_calls, compares);
    close("returns", t.returns, compares);
}

#[test]
fn the_twin_queues_the_push_at_the_counted_checkpoint() {
    // scenarios/lab/xfs-create-scaling.toml queues the push every
    // `create_checkpoint(dir_entries).creates` creates over both threads
    // (the scenario's [code] dir_entries): the scenario's literal is the
    // count's.
    let text = include_str!("../../../../scenarios/lab/xfs-create-scaling.toml");
    let entries: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("dir_entries = "))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.replace('_', "").parse().ok())
        .expect("[code] dir_entries in the scenario");
    let n = create_checkpoint(entries, LAB_LOG_BYTES).creates;
    let want = format!("every_total = {n} ");
    let steps = text.lines().filter(|l| l.contains("queue = \"cil\"")).collect::<Vec<_>>();
    assert_eq!(steps.len(), 2, "one push step in each create variant");
    for l in steps {
        assert!(l.contains(&want), "{l:?} does not queue at {want:?}");
    }
}
