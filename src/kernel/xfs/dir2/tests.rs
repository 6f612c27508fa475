use super::*;

#[test]
fn entry_sizes_follow_xfs_dir2_data_entsize() {
    // 8 + 1 + namelen + 1 + 2, rounded up to 8.
    assert_eq!(entsize(1), 16);
    assert_eq!(entsize(4), 16);
    assert_eq!(entsize(5), 24);
    assert_eq!(entsize(12), 24);
    assert_eq!(entsize(13), 32);
    assert_eq!(lab_namelen(1), 2);
    assert_eq!(lab_namelen(9), 2);
    assert_eq!(lab_namelen(10), 3);
    assert_eq!(lab_namelen(20_000), 6);
}

#[test]
fn the_forms_change_where_the_blocks_fill() {
    // f1..f999 have 2..4-byte names: 16-byte entries. Block form while
    // 64 + 16 (n + 2) + 8 (n + 2) + 8 <= 4096: n <= 165.
    assert_eq!(shape(0).form, Form::Block);
    assert_eq!(shape(165).form, Form::Block);
    assert_eq!(shape(166).form, Form::Leaf);
    // Leaf form while 64 + 8 (n + 2) + 2 x data blocks + 4 <= 4096, with
    // 252 entries per data block (4032 / 16): n = 501 gives 503 entries,
    // 2 data blocks, 4096 bytes.
    assert_eq!(shape(501).form, Form::Leaf);
    assert_eq!(shape(501).data_blocks, 2);
    assert_eq!(shape(502).form, Form::Node);
    let s = shape(20_000);
    assert_eq!(s.form, Form::Node);
    // 20,002 / (504 x ln 2) = 57.26 -> 58 leaves under one da node.
    assert_eq!(s.leaves, 58);
    assert_eq!(s.node_levels, 1);
    // Data: 2 x 16 + 999 x 16 + 19,001 x 24 = 472,040 bytes over 20,002
    // entries: 23.6 bytes, 170 per block (4032 / 23.6), 118 blocks.
    assert_eq!(s.per_data_block, 170.0);
    assert_eq!(s.data_blocks, 118);
}
