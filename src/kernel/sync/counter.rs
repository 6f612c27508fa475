//! Shared counters as models on cache lines: a single atomic, the kernel's
//! `percpu_counter`, a hierarchical per-socket counter, and `percpu_ref`.
//!
//! Each model keeps the real values (per-CPU `s32` deltas, the global
//! `count`, the exact value) and, for every operation, emits the line and
//! lock accesses it makes. The engine prices those accesses; this module
//! only decides *which* accesses happen, following
//! `lib/percpu_counter.c` (`percpu_counter_add_batch`, `__percpu_counter_sum`).

use crate::machine::coherence::LineId;
use crate::machine::lock::LockId;

/// The kind of counter and its batch sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterKind {
    /// `atomic_t`: every inc/dec is a locked RMW of one shared line.
    Atomic,
    /// `percpu_counter` with the given batch: a CPU folds its delta into
    /// the global count under the counter's spinlock when `|delta + amount|
    /// >= batch`.
    Percpu {
        /// Fold threshold (`percpu_counter_batch`).
        batch: i64,
    },
    /// Per-CPU deltas fold into a per-socket count (under a per-socket
    /// lock) at `batch`; a socket folds into the global count at
    /// `socket_batch`. Cross-socket traffic happens once per
    /// `socket_batch` net operations per socket instead of once per
    /// `batch` per CPU.
    Hierarchical {
        /// Per-CPU fold threshold.
        batch: i64,
        /// Per-socket fold threshold.
        socket_batch: i64,
    },
    /// `struct percpu_ref` (include/linux/percpu-refcount.h,
    /// lib/percpu-refcount.c). `percpu_ref_get_many` / `percpu_ref_put_many`
    /// read `ref->percpu_count_ptr` (`__ref_is_percpu`, on the line of the
    /// `percpu_ref` itself, written only when the mode changes); in per-CPU
    /// mode they then add to this CPU's count (`this_cpu_add`, no shared
    /// line), and once the ref is killed (`percpu_ref_kill`, which switches
    /// it to atomic mode) they make an atomic add on
    /// `ref->data->count` (`atomic_long_add`, `atomic_long_sub_and_test`),
    /// one line all CPUs share.
    PercpuRef {
        /// Atomic mode (killed), else per-CPU mode.
        atomic: bool,
    },
}

/// An operation on a counter, as the kernel API names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CounterOp {
    /// `percpu_counter_inc` / `atomic_inc`.
    Inc,
    /// `percpu_counter_dec` / `atomic_dec`.
    Dec,
    /// `percpu_counter_sum`: exact, locks and walks every CPU.
    Sum,
    /// `percpu_counter_read`: the rough global count, no lock.
    Read,
    /// `percpu_ref_get` (a `percpu-ref` counter only).
    Get,
    /// `percpu_ref_put` (a `percpu-ref` counter only).
    Put,
    /// `percpu_counter_add(fbc, amount)` / `atomic_add`: the step's
    /// `amount` (e.g. `xfs_mod_ifree(mp, 64)` when an inode chunk is
    /// allocated).
    Add,
    /// `percpu_counter_compare(fbc, rhs)` (lib/percpu_counter.c
    /// `__percpu_counter_compare` with the counter's batch): the rough
    /// count (`percpu_counter_read`), and when it is within
    /// `batch x online CPUs` of `rhs` (the step's `amount`), the exact sum
    /// (`percpu_counter_sum`: the counter's lock and every CPU's slot).
    /// An atomic counter reads its line.
    Compare,
}

/// One line or lock access a counter operation makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MicroOp {
    /// Locked RMW or store to a line (takes it exclusive).
    Write(LineId),
    /// A load of a line.
    Read(LineId),
    /// Acquire a lock.
    Lock(LockId),
    /// Release a lock.
    Unlock(LockId),
}

/// Where a counter's state lives.
#[derive(Debug, Clone)]
pub struct CounterPlacement {
    /// Line of the global count (and the `fbc->lock` word, same line).
    pub main_line: LineId,
    /// The counter's spinlock (percpu/hierarchical).
    pub lock: LockId,
    /// Each process's own per-CPU slot line.
    pub slot_lines: Vec<LineId>,
    /// Per-socket count lines (hierarchical), indexed by socket.
    pub socket_lines: Vec<LineId>,
    /// Per-socket locks (hierarchical), indexed by socket.
    pub socket_locks: Vec<LockId>,
    /// Socket of each process.
    pub socket_of: Vec<u32>,
    /// `percpu-ref`: the line of `struct percpu_ref_data` (the atomic count).
    pub data_line: LineId,
    /// `num_online_cpus()`, for the compare's fast-path bound.
    pub online_cpus: u32,
}

/// A counter's values and statistics.
#[derive(Debug, Clone)]
pub struct Counter {
    kind: CounterKind,
    at: CounterPlacement,
    slots: Vec<i64>,
    socket_slots: Vec<i64>,
    count: i64,
    exact: i64,
    /// Folds of a CPU delta into the global (or socket) count.
    pub folds: u64,
    /// Folds of a socket count into the global count (hierarchical).
    pub socket_folds: u64,
    /// Largest `|count - exact|` seen after any operation: the worst error
    /// of `percpu_counter_read`.
    pub read_error_max: i64,
    /// Compares whose rough count was too close to call, so they summed
    /// every CPU's slot under the lock.
    pub slow_compares: u64,
}

impl Counter {
    /// A zeroed counter of `kind` placed as `at`.
    pub fn new(kind: CounterKind, at: CounterPlacement) -> Self {
        let procs = at.slot_lines.len();
        let sockets = at.socket_lines.len();
        Counter {
            kind,
            at,
            slots: vec![0; procs],
            socket_slots: vec![0; sockets],
            count: 0,
            exact: 0,
            folds: 0,
            socket_folds: 0,
            read_error_max: 0,
            slow_compares: 0,
        }
    }

    /// The counter's spinlock (`fbc->lock`): taken by folds of a CPU
    /// delta into the count and by `__percpu_counter_sum`.
    pub fn lock(&self) -> LockId {
        self.at.lock
    }

    /// The exact value.
    pub fn exact(&self) -> i64 {
        self.exact
    }

    /// The rough value `percpu_counter_read` returns.
    pub fn rough(&self) -> i64 {
        self.count
    }

    /// Process `p` performs `op` (`amount`: what `Add` adds, the value
    /// `Compare` compares against; unused by the others); the accesses are
    /// appended to `out`.
    pub fn apply(&mut self, p: u32, op: CounterOp, amount: i64, out: &mut Vec<MicroOp>) {
        match op {
            CounterOp::Inc | CounterOp::Get => self.add(p, 1, out),
            CounterOp::Dec | CounterOp::Put => self.add(p, -1, out),
            CounterOp::Add => self.add(p, amount, out),
            CounterOp::Read => out.push(MicroOp::Read(self.at.main_line)),
            CounterOp::Sum => self.sum(out),
            CounterOp::Compare => self.compare(amount, out),
        }
        self.read_error_max = self.read_error_max.max((self.count - self.exact).abs());
    }

    fn add(&mut self, p: u32, amount: i64, out: &mut Vec<MicroOp>) {
        self.exact += amount;
        let pi = p as usize;
        match self.kind {
            CounterKind::Atomic => {
                self.count += amount;
                out.push(MicroOp::Write(self.at.main_line));
            }
            CounterKind::Percpu { batch } => {
                // percpu_counter_add_batch: `__this_cpu_read(*fbc->counters)`
                // loads the per-CPU pointer from the counter's own line
                // (written only by folds), then adds to this CPU's slot.
                let local = self.slots[pi] + amount;
                out.push(MicroOp::Read(self.at.main_line));
                out.push(MicroOp::Write(self.at.slot_lines[pi]));
                if local.abs() >= batch {
                    self.folds += 1;
                    self.slots[pi] = 0;
                    self.count += local;
                    self.fold_into(self.at.lock, self.at.main_line, out);
                } else {
                    self.slots[pi] = local;
                }
            }
            CounterKind::PercpuRef { atomic } => {
                out.push(MicroOp::Read(self.at.main_line));
                if atomic {
                    self.count += amount;
                    out.push(MicroOp::Write(self.at.data_line));
                } else {
                    self.slots[pi] += amount;
                    out.push(MicroOp::Write(self.at.slot_lines[pi]));
                }
            }
            CounterKind::Hierarchical { batch, socket_batch } => {
                let local = self.slots[pi] + amount;
                out.push(MicroOp::Read(self.at.main_line));
                out.push(MicroOp::Write(self.at.slot_lines[pi]));
                if local.abs() < batch {
                    self.slots[pi] = local;
                    return;
                }
                self.folds += 1;
                self.slots[pi] = 0;
                let s = self.at.socket_of[pi] as usize;
                let (slock, sline) = (self.at.socket_locks[s], self.at.socket_lines[s]);
                out.push(MicroOp::Lock(slock));
                out.push(MicroOp::Write(sline));
                let socket = self.socket_slots[s] + local;
                if socket.abs() >= socket_batch {
                    self.socket_folds += 1;
                    self.socket_slots[s] = 0;
                    self.count += socket;
                    self.fold_into(self.at.lock, self.at.main_line, out);
                } else {
                    self.socket_slots[s] = socket;
                }
                out.push(MicroOp::Unlock(slock));
            }
        }
    }

    fn fold_into(&self, lock: LockId, line: LineId, out: &mut Vec<MicroOp>) {
        out.push(MicroOp::Lock(lock));
        out.push(MicroOp::Write(line));
        out.push(MicroOp::Unlock(lock));
    }

    /// `__percpu_counter_compare(fbc, rhs, batch)`: reads the rough count;
    /// sums exactly when `|count - rhs| <= batch x num_online_cpus()`.
    /// The bound of a hierarchical counter adds each socket's batch.
    fn compare(&mut self, rhs: i64, out: &mut Vec<MicroOp>) {
        out.push(MicroOp::Read(self.at.main_line));
        let online = i64::from(self.at.online_cpus);
        let bound = match self.kind {
            CounterKind::Atomic | CounterKind::PercpuRef { .. } => return,
            CounterKind::Percpu { batch } => batch.saturating_mul(online),
            CounterKind::Hierarchical { batch, socket_batch } => batch
                .saturating_mul(online)
                .saturating_add(socket_batch.saturating_mul(self.at.socket_lines.len() as i64)),
        };
        if self.count.saturating_sub(rhs).saturating_abs() > bound {
            return;
        }
        self.slow_compares += 1;
        self.sum(out);
    }

    /// `__percpu_counter_sum`: lock, read count and every CPU's slot, unlock.
    fn sum(&mut self, out: &mut Vec<MicroOp>) {
        if self.kind == CounterKind::Atomic {
            out.push(MicroOp::Read(self.at.main_line));
            return;
        }
        out.push(MicroOp::Lock(self.at.lock));
        out.push(MicroOp::Read(self.at.main_line));
        out.extend(self.at.socket_lines.iter().map(|&l| MicroOp::Read(l)));
        out.extend(self.at.slot_lines.iter().map(|&l| MicroOp::Read(l)));
        out.push(MicroOp::Unlock(self.at.lock));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placement(procs: u32, sockets: u32) -> CounterPlacement {
        CounterPlacement {
            main_line: 0,
            lock: 0,
            slot_lines: (1..=procs).collect(),
            socket_lines: (100..100 + sockets).collect(),
            socket_locks: (1..=sockets).collect(),
            socket_of: (0..procs).map(|p| p % sockets).collect(),
            data_line: 99,
            online_cpus: procs,
        }
    }

    /// Whether one compare against `rhs` summed (took the slow path).
    fn compare_sums(c: &mut Counter, rhs: i64) -> bool {
        let before = c.slow_compares;
        let mut out = Vec::new();
        c.apply(0, CounterOp::Compare, rhs, &mut out);
        let summed = c.slow_compares > before;
        assert_eq!(out.contains(&MicroOp::Lock(0)), summed, "the sum takes the lock");
        summed
    }

    #[test]
    fn compare_sums_only_within_batch_times_online_cpus() {
        // 4 CPUs, batch 32: the rough count decides when it is more than
        // 128 from rhs.
        let mut c = Counter::new(CounterKind::Percpu { batch: 32 }, placement(4, 1));
        assert!(compare_sums(&mut c, 0));
        assert!(compare_sums(&mut c, 128));
        assert!(!compare_sums(&mut c, 129));
        assert!(!compare_sums(&mut c, -129));
        // Adds of 64 fold at once (|64| >= 32): the rough count is 192.
        let mut out = Vec::new();
        c.apply(1, CounterOp::Add, 64, &mut out);
        c.apply(1, CounterOp::Add, 128, &mut out);
        assert_eq!((c.rough(), c.exact(), c.folds), (192, 192, 2));
        assert!(!compare_sums(&mut c, 0));
        assert!(compare_sums(&mut c, 100));
        // An atomic counter's compare is one read of its line.
        let mut a = Counter::new(CounterKind::Atomic, placement(4, 1));
        let mut out = Vec::new();
        a.apply(0, CounterOp::Compare, 0, &mut out);
        assert_eq!(out, vec![MicroOp::Read(0)]);
    }

    #[test]
    fn free_inode_count_near_zero_sums_on_every_compare() {
        // xfs_mod_ifree in 5.7: one free inode used per create, 64 added
        // per inode chunk, each followed by a compare against 0; the count
        // stays in 0..=64, never beyond 32 x 2 CPUs: every compare sums.
        let mut c = Counter::new(CounterKind::Percpu { batch: 32 }, placement(2, 1));
        let mut out = Vec::new();
        let mut sums = 0;
        for create in 0..640u32 {
            if create % 64 == 0 {
                c.apply(create % 2, CounterOp::Add, 64, &mut out);
                sums += u32::from(compare_sums(&mut c, 0));
            }
            c.apply(create % 2, CounterOp::Dec, 0, &mut out);
            sums += u32::from(compare_sums(&mut c, 0));
        }
        assert_eq!(sums, 650);
        assert_eq!(c.exact(), 0);
    }

    #[test]
    fn percpu_ref_touches_no_shared_line_until_killed_then_one_atomic_per_op() {
        for atomic in [false, true] {
            let mut c = Counter::new(CounterKind::PercpuRef { atomic }, placement(4, 1));
            let mut out = Vec::new();
            for i in 0..100u32 {
                c.apply(i % 4, CounterOp::Get, 0, &mut out);
                c.apply(i % 4, CounterOp::Put, 0, &mut out);
            }
            let writes: Vec<LineId> = out
                .iter()
                .filter_map(|m| if let MicroOp::Write(l) = m { Some(*l) } else { None })
                .collect();
            assert_eq!(writes.len(), 200, "one write per get or put");
            let shared = writes.iter().filter(|&&l| l == 99).count();
            assert_eq!(shared, if atomic { 200 } else { 0 }, "atomic = {atomic}");
            assert!(out.iter().all(|m| !matches!(m, MicroOp::Write(0) | MicroOp::Lock(_))));
            assert_eq!(c.exact(), 0);
        }
    }

    #[test]
    fn percpu_folds_floor_n_over_batch_times() {
        for (n, batch) in [(1000u64, 32i64), (31, 32), (32, 32), (4096, 64)] {
            let mut c = Counter::new(CounterKind::Percpu { batch }, placement(4, 1));
            let mut out = Vec::new();
            for _ in 0..n {
                c.apply(2, CounterOp::Inc, 0, &mut out);
            }
            assert_eq!(c.folds, n / batch as u64, "n={n} batch={batch}");
            assert_eq!(c.exact(), n as i64);
            assert!(c.read_error_max < batch);
        }
    }

    #[test]
    fn inc_then_dec_on_one_cpu_never_folds() {
        let mut c = Counter::new(CounterKind::Percpu { batch: 32 }, placement(2, 1));
        let mut out = Vec::new();
        for _ in 0..10_000 {
            c.apply(0, CounterOp::Inc, 0, &mut out);
            c.apply(0, CounterOp::Dec, 0, &mut out);
        }
        assert_eq!(c.folds, 0);
        assert!(!out.contains(&MicroOp::Lock(0)));
        assert!(!out.contains(&MicroOp::Write(0)), "the shared line is only read");
    }

    #[test]
    fn sum_reads_every_cpu_slot_linearly() {
        for procs in [1u32, 8, 64] {
            let mut c = Counter::new(CounterKind::Percpu { batch: 32 }, placement(procs, 1));
            let mut out = Vec::new();
            c.apply(0, CounterOp::Sum, 0, &mut out);
            let reads = out.iter().filter(|m| matches!(m, MicroOp::Read(_))).count();
            assert_eq!(reads, procs as usize + 2, "count + socket line + one per CPU");
        }
    }

    #[test]
    fn hierarchical_error_is_bounded_and_exact_sum_holds() {
        let mut c = Counter::new(
            CounterKind::Hierarchical {
                batch: 8,
                socket_batch: 64,
            },
            placement(8, 2),
        );
        let mut out = Vec::new();
        for i in 0..10_000u32 {
            c.apply(i % 8, CounterOp::Inc, 0, &mut out);
        }
        assert_eq!(c.exact(), 10_000);
        assert!(c.read_error_max < 8 * 8 + 2 * 64);
        assert!(c.socket_folds > 0 && c.socket_folds < c.folds);
    }
}
