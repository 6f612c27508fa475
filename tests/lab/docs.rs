//! `docs/lab.md` as `validate --lab` rewrites it, and the lab's busy-host
//! warning.

use fsmeta::lab::{busy_share, load_warning, mask_warning, merge_markdown};

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
fn a_process_confined_to_fewer_cpus_is_warned_about() {
    let w = mask_warning(1, 2);
    assert!(w.is_some_and(|w| w.contains("1 of the 2 online CPUs") && w.contains("multi-thread")));
    assert_eq!(mask_warning(2, 2), None);
    assert_eq!(mask_warning(0, 2), None, "the mask unknown");
    assert_eq!(mask_warning(2, 0), None, "the online count unknown");
}

#[test]
fn a_busy_host_is_warned_about() {
    // user nice system idle iowait irq softirq steal: 100 ticks between
    // the readings, 60 of them idle or waiting: 40% busy.
    let before = "cpu  100 0 50 1000 10 0 0 0 0 0\ncpu0 50 0 25 500 5 0 0 0 0 0\n";
    let after = "cpu  125 0 65 1050 20 0 0 0 0 0\n";
    let busy = busy_share(before, after).unwrap_or_default();
    assert!((busy - 0.40).abs() < 1e-9, "{busy}");
    let w = load_warning(busy, "3.74 2.69 3.84 2/78 17388");
    assert!(w.is_some_and(|w| w.contains("40% of the CPUs") && w.contains("load average 3.74")));
    // A quiet interval (the lab alone, after a busy minute): no warning.
    let quiet = busy_share(before, "cpu  105 0 52 1093 10 0 0 0 0 0\n").unwrap_or_default();
    assert!((quiet - 0.07).abs() < 1e-9, "{quiet}");
    assert_eq!(load_warning(quiet, "1.49 1.2 1.0 1/80 1"), None);
    // Unreadable or inconsistent text: no figure.
    assert_eq!(busy_share("", after), None);
    assert_eq!(busy_share(after, before), None);
    assert_eq!(busy_share(before, before), None);
}
