//! `xfs_db -c freesp` text: round trip and malformed input.

use std::path::Path;

use fsmeta::kernel::ModelError;
use fsmeta::kernel::xfs::freespace::source::lay_out;
use fsmeta::kernel::xfs::freespace::{BtreeGeometry, FreeSpace, FreespHistogram};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn line_of(text: &str) -> usize {
    match FreespHistogram::parse(text, Path::new("x.freesp")) {
        Err(ModelError::Input(fsmeta::param::InputError::Malformed { line, .. })) => line,
        other => panic!("expected InputFile error, got {other:?}"),
    }
}

#[test]
fn case4_text_parses() {
    let h = FreespHistogram::read_file(Path::new("scenarios/data/case4.freesp")).unwrap();
    assert_eq!(h.total_extents(), 994_691);
    assert_eq!(h.total_blocks(), 1_989_167);
    assert_eq!(h.bins.len(), 2);
}

#[test]
fn writes_xfs_db_format() {
    let h = FreespHistogram::from_lengths([1u32, 2, 2, 3, 9].into_iter(), 1000);
    let text = h.to_text(true);
    let want = "   from      to extents  blocks    pct\n\
                \x20     1       1       1       1   5.88\n\
                \x20     2       3       3       7  41.18\n\
                \x20     8      15       1       9  52.94\n\
                total free extents 5\n\
                total free blocks 17\n\
                average free extent size 3.4\n";
    assert_eq!(text, want);
    assert_eq!(FreespHistogram::parse(&text, Path::new("x")).unwrap(), h);
}

#[test]
fn malformed_text_names_the_line() {
    assert_eq!(line_of("      1       1     215     215   0.01\n"), 1);
    assert_eq!(line_of(""), 1);
    let hdr = "   from      to extents  blocks    pct\n";
    assert_eq!(
        line_of(&format!(
            "{hdr}      1       1     215     215   0.01\n      2       3  99x476 1988952  99.99\n"
        )),
        3
    );
    assert_eq!(line_of(&format!("{hdr}      1       1    -215     215   0.01\n")), 2);
    assert_eq!(line_of(&format!("\n{hdr}      1       1     215\n")), 3);
    assert_eq!(line_of(&format!("{hdr}      2       3       5     100   1.00\n")), 2);
    assert_eq!(
        line_of(&format!("{hdr}      1       1       5       5   1.00\ntotal free extents 6\n")),
        3
    );
}

/// Issue 33: no prefix of a shipped freesp file is read as another
/// histogram: a cut is refused unless what is left still holds every row
/// (the summary lines or a pct's trailing zeros lost). `head -c 84
/// case4.freesp` used to run with 214 extents.
#[test]
fn every_cut_of_a_shipped_freesp_file_is_refused_issue33() {
    for file in [
        "scenarios/data/case4.freesp",
        "scenarios/lab/data/xfs-alloc-10000.freesp",
        "scenarios/lab/data/xfs-alloc-100000.freesp",
        "scenarios/lab/data/xfs-alloc-1000000.freesp",
    ] {
        let text = std::fs::read_to_string(file).unwrap();
        let whole = FreespHistogram::parse(&text, Path::new(file)).unwrap();
        for cut in 0..text.len() {
            if let Ok(h) = FreespHistogram::parse(&text[..cut], Path::new(file)) {
                assert_eq!(h, whole, "{file} cut at {cut} gave another histogram");
            }
        }
    }
    let case4 = std::fs::read_to_string("scenarios/data/case4.freesp").unwrap();
    assert_eq!(line_of(&case4[..84]), 2);
}

/// Issue 33: a header alone, a zero-extent row, rows that disagree with
/// the summary or with their own pct, and a summary cut short are refused
/// with the line.
#[test]
fn inconsistent_freesp_text_is_refused_with_its_line_issue33() {
    let hdr = "   from      to extents  blocks    pct\n";
    assert_eq!(line_of(hdr), 1);
    assert_eq!(line_of(&format!("{hdr}      1       1       0       0 100.00\n")), 2);
    assert_eq!(line_of(&format!("{hdr}      1       1     215     215   0.01\n")), 2);
    assert_eq!(
        line_of(&format!(
            "{hdr}      1       1     215     215  33.33\n      2       3     100     430  50.00\n"
        )),
        3
    );
    let rows = format!("{hdr}      1       1       5       5 100.00\n");
    assert_eq!(line_of(&format!("{rows}total free extents 5\ntotal free blocks 6\n")), 4);
    assert_eq!(line_of(&format!("{rows}total free extents 5\ntotal free blocks 5\n")), 4);
    assert_eq!(line_of(&format!("{rows}total free blocks 5\n")), 3);
    assert_eq!(
        line_of(&format!(
            "{rows}total free extents 5\ntotal free blocks 5\naverage free extent size 2\n"
        )),
        5
    );
    assert_eq!(
        line_of(&format!(
            "{rows}total free extents 5\ntotal free blocks 5\naverage free extent size 1\n      2       2       1       2  10.00\n"
        )),
        6
    );
    let ok = FreespHistogram::parse(
        &format!("{rows}total free extents 5\ntotal free blocks 5\naverage free extent size 1\n"),
        Path::new("x"),
    );
    assert!(ok.is_ok(), "{ok:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn histogram_text_round_trip(lengths in prop::collection::vec(1u32..5000, 1..300), seed in any::<u64>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ext = lay_out(lengths, 4_000_000, &mut rng).unwrap();
        let fs = FreeSpace::from_extents(4_000_000, BtreeGeometry::new(256, 56).unwrap(), &ext, 0.75).unwrap();
        let h = fs.histogram();
        for summary in [false, true] {
            let back = FreespHistogram::parse(&h.to_text(summary), Path::new("x")).unwrap();
            prop_assert_eq!(&back, &h);
        }
        // And lengths rebuilt from the text give the same histogram again.
        let rebuilt = fsmeta::kernel::xfs::freespace::source::lengths_from_freesp(&h, 4_000_000, &mut rng).unwrap();
        prop_assert_eq!(FreespHistogram::from_lengths(rebuilt.into_iter(), 4_000_000), h);
    }
}
