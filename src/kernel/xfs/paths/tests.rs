use super::*;

/// Counted figures equal their hand sums to within this share.
const REL: f64 = 1e-6;

fn close(what: &str, got: f64, want: f64) {
    crate::kernel::xfs::assert_close(what, got, want, REL);
}

/// The directory of 10,000 names the hand sums below use: node form.
/// Data: 2 x 16 + 999 x 16 + 9,001 x 24 = 232,040 bytes over 10,002
/// entries (23.2 bytes each): 173 entries per data block (4032 / 23.2),
/// 58 data blocks; 10,002 / (504 ln 2) = 28.6: 29 leaves under one node,
/// 344.9 entries each.
#[test]
fn the_hand_sums_use_this_directory() {
    let s = dir2::shape(10_000);
    assert_eq!((s.form, s.data_blocks, s.leaves, s.node_levels), (Form::Node, 58, 29, 1));
    assert_eq!(s.per_data_block, 173.0);
    assert_eq!(chunks(10_001), 157);
}

#[test]
fn a_create_into_10000_names_sums_its_stretches_by_hand() {
    let t = create_at(10_000);
    let split = 1.0 / (504.0 * std::f64::consts::LN_2);
    // Straight-line loads:
    // VFS: syscall 2 x 60, getname 55, prefix walk 625, open-create
    // lookup 260, negative lookup 40, generic create 150, do_open 190,
    // close 230 = 1,670.
    // xfs_vn_lookup's directory lookup: set-up 70, node and leaf buffers
    // 2 x 105, two levels 2 x 30 = 340.
    // xfs_create: logic 90, two ILOCK pairs 20, trans alloc 160, dialloc
    // 170, AGI 80, two cursors 60, finobt and inobt lookups (one level
    // each: buffer 80 + level 20) 200, two record updates 188, iget 430,
    // inode item init 45 = 1,443.
    // Directory insert: its lookup 340, data and free buffers 210, data
    // add 190, leaf add 60, a data block every 173 inserts (1,000 / 173),
    // a leaf split every 504 ln 2 inserts (grow 1,000 + split 300).
    // Commit: two inode items 460, one attach 110, six buffer items 540,
    // commit 260 = 1,370.
    let dir_insert = 340.0 + 210.0 + 190.0 + 60.0 + 1000.0 / 173.0 + split * 1300.0;
    close("hits", t.hits, 1670.0 + 340.0 + 1443.0 + dir_insert + 1370.0);
    // Inner-loop loads: two lookups' probes (node: ceil(log2 30) = 5,
    // leaf: ceil(log2 345.9) = 9, 4 loads each) 2 x 56; finobt probe 4,
    // inobt ceil(log2 158) = 8 probes 32; half the leaf shifted, 2 loads
    // per entry (10,002 / 29); a split's 252 entries moved.
    close(
        "iterated",
        t.iterated_hits,
        2.0 * 56.0 + 4.0 + 32.0 + 10_002.0 / 29.0 + split * 252.0 * 2.0,
    );
    // Locked operations: VFS 3 + 6 + 9 + 2 + 7 + 5 + 7 = 39 (the walk's
    // 18, get_cred, alloc_fd's and close's file_lock and put_cred are the
    // scenario's steps on shared lines); lookup 2 + 2 x 9 = 20; xfs_create
    // 4 + 3 + 4 + 9 + 8 + 9 + 9 + 4 + 11 + 1 = 62 (inode_sb_list_add a
    // step);
    // insert 20 + 18 + 4 + 2 + 50 / 173 + split x 58; commit 8 + 12 + 18
    // + 4 = 42.
    close(
        "atomics",
        t.atomics,
        39.0 + 20.0 + 62.0 + (44.0 + 50.0 / 173.0 + split * 58.0) + 42.0,
    );
    // Cold: none. New lines: the new dentry's 3, first touched by
    // __d_alloc's stores, and the new xfs_inode's 15, zeroed by its slab
    // constructor.
    close("cold", t.cold_lines, 0.0);
    close("new", t.new_lines, 18.0);
    // Indirect calls: VFS prefix walk 10 (proc's permission,
    // d_revalidate, get_link), i_op->lookup and ->create 2, f_op->open 1,
    // f_op->release 1 = 14; finobt lookup (one level, one probe: 1 + 2)
    // 3, inobt lookup (one level, 8 probes) 17, the inode slab's ctor 1
    // = 21; commit: two inode items 9, six buffer items 18, list_sort
    // over 8 items (8 x 3 - 10 = 14 comparisons, one pair of inodes
    // comparing through iop_sort: 2 more) 16 = 43; a data block's grow
    // every 173 inserts and a split's grow: 20 each.
    close("indirect", t.indirect_calls, 14.0 + 21.0 + 43.0 + 20.0 / 173.0 + split * 20.0);
}

#[test]
fn an_unlink_from_10001_names_sums_its_stretches_by_hand() {
    let full = dir2::shape(20_000);
    let t = remove_at(10_001, &full);
    // 57 joins over 20,002 removals (58 leaves merge back to one).
    let j = 57.0 / 20_002.0;
    // VFS: syscall 60, getname 55, prefix 625, unlink 320 = 1,060;
    // xfs_remove logic 110, two ILOCK pairs 20, trans alloc 160 = 290.
    // Directory remove: set-up 70, node and leaf 210, levels 60, data
    // buffer 105, name match 30, entry remove 230, free buffer 105,
    // joins (300 + 1,400) x j, a data block freed every 173 (1,400 / 173).
    // iunlink 120, AGI 80; commit: two inode items 460, attach 110, five
    // buffer items 450, commit 260; evict 260.
    let dir = 70.0 + 210.0 + 60.0 + 105.0 + 30.0 + 230.0 + 105.0 + 1700.0 * j + 1400.0 / 173.0;
    close("hits", t.hits, 1060.0 + 290.0 + dir + 200.0 + 460.0 + 110.0 + 450.0 + 260.0 + 260.0);
    // Probes 20 + 36; a join's 504 x 0.375 entries moved, 2 loads each.
    close("iterated", t.iterated_hits, 56.0 + j * 378.0);
    // Locked: VFS 3 + 6 + 12 (the walk's other 18 are the scenario's
    // steps); 4 + 3; directory 2 + 18 + 9 + 5 + 9 + j x 68 + 60 / 173;
    // iunlink 2 + 9; commit 8 + 12 + 15 + 4; evict 8 (inode_sb_list_del a
    // step).
    close(
        "atomics",
        t.atomics,
        21.0 + 7.0 + (43.0 + j * 68.0 + 60.0 / 173.0) + 11.0 + 39.0 + 8.0,
    );
    close("cold", t.cold_lines, 8.0);
    close("new", t.new_lines, 0.0);
    // Indirect calls: prefix walk 10, i_op->unlink 1; iunlink's
    // iop_precommit 1; two inode items 9, five buffer items 15, list_sort
    // over 7 items (7 log2 7 - 8.75 comparisons, 2 for the inode pair);
    // evict's drop_inode, evict_inode, destroy_inode 3; a shrink every
    // 173 removals and one per join: 50 each.
    let sort = 7.0 * 7f64.log2() - 8.75 + 2.0;
    close(
        "indirect",
        t.indirect_calls,
        11.0 + 1.0 + 9.0 + 15.0 + sort + 3.0 + 50.0 / 173.0 + 50.0 * j,
    );
}

#[test]
fn a_path_is_the_mean_over_the_directory_sizes_it_passes() {
    let one = CodeParams { dir_entries: 1 };
    assert_eq!(create(&one), create_at(0));
    let two = CodeParams { dir_entries: 2 };
    let mut want = create_at(0);
    want.add_tally(&create_at(1), 1.0);
    close("mean of two", create(&two).hits, want.hits / 2.0);
    // A node-form directory costs more per create than a block-form one:
    // more levels, a free-index block, more entries shifted.
    assert!(create_at(10_000).hits > create_at(10).hits + 300.0);
    assert!(create_at(10_000).iterated_hits > create_at(10).iterated_hits);
}

#[test]
fn every_name_in_the_table_is_found_and_distinct() {
    for p in CODE_PATHS {
        assert_eq!(find(p.name).map(|f| f.name), Some(p.name));
    }
    let mut names: Vec<&str> = CODE_PATHS.iter().map(|p| p.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CODE_PATHS.len());
    assert!(find("xfs_craete").is_none());
}
