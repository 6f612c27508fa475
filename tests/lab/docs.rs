//! `docs/lab.md` as `validate --lab` rewrites it, and the lab's load
//! warning.

use fsmeta::lab::{load_warning, merge_markdown};

const OLD: &str = "# The lab\n\nold head\n\n## `a`: A\n\nold a\n\n## `b`: B\n\nold b\n\n## `d`: D\n\nold d\n";
const FRESH: &str = "# The lab\n\nnew head\n\n## `b`: B\n\nnew b\n\n## `c`: C\n\nnew c\n";

#[test]
fn validating_some_experiments_keeps_the_other_sections() {
    let m = merge_markdown(OLD, FRESH);
    assert_eq!(
        m,
        "# The lab\n\nnew head\n\n## `a`: A\n\nold a\n\n## `b`: B\n\nnew b\n\n## `c`: C\n\nnew c\n\n## `d`: D\n\nold d\n"
    );
    // No old document, or one without sections: the fresh text.
    assert_eq!(merge_markdown("", FRESH), FRESH);
    assert_eq!(merge_markdown("# just a head\n", FRESH), FRESH);
}

#[test]
fn a_busy_host_is_warned_about() {
    assert!(load_warning("1.74 2.69 3.84 2/78 17388", 2).is_some_and(|w| w.contains("1.74 on 2 CPU(s)")));
    assert_eq!(load_warning("0.90 2.69 3.84 2/78 17388", 2), None);
    assert_eq!(load_warning("", 2), None);
    assert_eq!(load_warning("x y", 2), None);
}
