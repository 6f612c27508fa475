//! Cache-line touches: what a kernel model reports for each operation.
//!
//! A model that reads or writes a field at a simulated byte address records
//! the line holding it (`address / 64`) and whether the access was a read or
//! a write. The cache model ([`crate::machine::cache`]) consumes the list in order;
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

/// When an access can start, relative to the access recorded before it:
/// what an out-of-order core overlaps (memory-level parallelism).
///
/// A load whose address is known without the previous load's data, behind
/// a branch the core predicted correctly, is issued while the previous one
/// is still outstanding; the pair costs the slower of the two, not the sum
/// (Golden Cove keeps 16 L1d misses in flight). A load whose address comes
/// from the previous load (pointer chasing), or that sits behind a
/// mispredicted branch, waits for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Issue {
    /// Starts when the previous access's data has arrived.
    #[default]
    AfterPrevious,
    /// Starts together with the previous access (and with every access
    /// grouped with it): independent of its data.
    WithPrevious,
}

/// One access to one cache line, recorded by a model in program order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Touch {
    /// Line address: byte address / [`LINE_BYTES`].
    pub line: u64,
    /// Read or write.
    pub access: Access,
    /// Whether it overlaps the previous access.
    pub issue: Issue,
}

impl Touch {
    /// An access that waits for the previous one ([`Issue::AfterPrevious`]).
    pub fn new(line: u64, access: Access) -> Self {
        Self {
            line,
            access,
            issue: Issue::AfterPrevious,
        }
    }
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
    record_issued(touches, addr, access, Issue::AfterPrevious);
}

/// Records an access as [`record`] does, saying when it can start.
pub fn record_issued(touches: &mut Vec<Touch>, addr: u64, access: Access, issue: Issue) {
    let line = line_of(addr);
    if touches.last().is_some_and(|t| t.line == line && t.access == access) {
        return;
    }
    touches.push(Touch { line, access, issue });
}

/// Total latency of a touch list whose accesses cost `cost(touch)` each:
/// groups of accesses issued together ([`Issue::WithPrevious`]) cost their
/// slowest member, groups follow one another. Units are the caller's.
pub fn critical_path<F: FnMut(&Touch) -> u64>(touches: &[Touch], mut cost: F) -> u64 {
    let (mut total, mut group) = (0u64, 0u64);
    for t in touches {
        let c = cost(t);
        // Written as selects rather than a branch on the issue: the walk
        // of a tree alternates the two kinds in data-dependent order.
        let after = t.issue == Issue::AfterPrevious;
        total += if after { group } else { 0 };
        group = if after { c } else { group.max(c) };
    }
    total + group
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

    #[test]
    fn overlapped_accesses_cost_their_slowest() {
        let mut t = Vec::new();
        record(&mut t, 0, Access::Read); // 10
        record_issued(&mut t, 64, Access::Read, Issue::WithPrevious); // 50, with the 10
        record(&mut t, 128, Access::Read); // 5
        record_issued(&mut t, 192, Access::Read, Issue::WithPrevious); // 1
        record_issued(&mut t, 256, Access::Read, Issue::WithPrevious); // 7
        let cost = |x: &Touch| [10, 50, 5, 1, 7][x.line as usize];
        assert_eq!(critical_path(&t, cost), 50 + 7);
        // All dependent: the sum.
        let serial: Vec<Touch> = t.iter().map(|x| Touch::new(x.line, x.access)).collect();
        assert_eq!(critical_path(&serial, cost), 73);
        // A leading WithPrevious has nothing to overlap but still counts.
        assert_eq!(critical_path(&t[1..2], cost), 50);
    }
}
