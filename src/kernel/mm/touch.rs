//! Cache-line touches: what a kernel model reports for each operation.
//!
//! A model that reads or writes a field at a simulated byte address records
//! the line holding it (`address / 64`) and whether the access was a read or
//! a write. The cache model ([`crate::cache`]) consumes the list in order;
//! time is derived from its outcomes elsewhere.

/// Bytes per cache line on every machine fsmeta models (x86-64 and arm64
/// server parts), so a line address is `byte address / 64`.
pub const LINE_BYTES: u64 = 64;

/// Kind of a memory access, as the coherence protocol sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// A load: may share the line with other cores.
    Read,
    /// A store: needs the line exclusive, invalidating other cores' copies.
    Write,
}

/// One access to one cache line, recorded by a model in program order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Touch {
    /// Line address: byte address / [`LINE_BYTES`].
    pub line: u64,
    /// Read or write.
    pub access: Access,
}

/// Line address of a simulated byte address.
pub fn line_of(addr: u64) -> u64 {
    addr / LINE_BYTES
}

/// Records an access to the field at byte address `addr`.
///
/// An access identical to the previous one (same line, same kind) is not
/// recorded again: back-to-back accesses to one line are one visit (the
/// second would be an L1 hit in the same few instructions). A write after a
/// read of the same line is recorded, because it needs ownership.
pub fn record(touches: &mut Vec<Touch>, addr: u64, access: Access) {
    let touch = Touch {
        line: line_of(addr),
        access,
    };
    if touches.last() != Some(&touch) {
        touches.push(touch);
    }
}

/// Number of distinct lines in a touch list (for reports and tests).
pub fn distinct_lines(touches: &[Touch]) -> usize {
    let mut lines: Vec<u64> = touches.iter().map(|t| t.line).collect();
    lines.sort_unstable();
    lines.dedup();
    lines.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_collapses_only_identical_neighbours() {
        let mut t = Vec::new();
        record(&mut t, 0, Access::Read);
        record(&mut t, 63, Access::Read); // same line, same kind: collapsed
        record(&mut t, 8, Access::Write); // same line, now a write: kept
        record(&mut t, 64, Access::Read); // next line
        record(&mut t, 0, Access::Read); // back to line 0: kept
        let lines: Vec<(u64, Access)> = t.iter().map(|x| (x.line, x.access)).collect();
        assert_eq!(
            lines,
            vec![(0, Access::Read), (0, Access::Write), (1, Access::Read), (0, Access::Read)]
        );
        assert_eq!(distinct_lines(&t), 2);
    }
}
