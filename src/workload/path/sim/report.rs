//! The run's metrics from the interpreter's state at the end
//! ([`World::metrics`]): the run's own (operations, latency, the
//! precision stop), then per reported line, lock, counter, reader-writer
//! lock and work queue, under the names [`metrics`] declares.

use super::super::metrics;
use super::World;
use crate::engine::Metrics;
use crate::engine::time::SimTimePs;
use crate::machine::coherence::LineId;

impl World {
    /// The metrics of a run that ended at `end`: the first `reported`
    /// lines, the locks, counters, reader-writer locks and queues under
    /// `names`, the queues' shares over `threads`.
    pub(super) fn metrics(&mut self, end: SimTimePs, reported: usize, names: &metrics::Names, threads: usize) -> Metrics {
        self.rw.close_holds(end);
        let mut m = Metrics::new();
        let elapsed = end.0.max(1) as f64;
        self.run_metrics(&mut m, end);
        self.line_metrics(&mut m, reported, elapsed);
        self.lock_metrics(&mut m, names, elapsed);
        self.counter_metrics(&mut m, &names.counters, end, elapsed);
        self.rwlock_metrics(&mut m, names, elapsed);
        for wq in &mut self.queues {
            let values = wq.values(end, threads);
            fill(&mut m, &wq.spec.name.clone(), metrics::QUEUE, &values);
        }
        m
    }

    /// The run's own metrics ([`metrics::RUN`]) and the precision stop's
    /// ([`metrics::STOP`]) when it had one.
    fn run_metrics(&self, m: &mut Metrics, end: SimTimePs) {
        let secs = end.as_secs_f64();
        let h = &self.latency;
        let run = [
            self.ops as f64,
            if secs > 0.0 { self.ops as f64 / secs } else { 0.0 },
            self.events as f64,
            end.as_secs_f64() * 1e3,
            h.mean() / 1000.0,
            h.quantile(0.5) as f64 / 1000.0,
            h.quantile(0.9) as f64 / 1000.0,
            h.quantile(0.95) as f64 / 1000.0,
            h.quantile(0.99) as f64 / 1000.0,
            h.max() as f64 / 1000.0,
        ];
        fill(m, "", metrics::RUN, &run);
        if let Some(b) = &self.precision {
            let e = b.estimate();
            let values = [
                e.ops_per_sec,
                if e.half_width.is_finite() { e.half_width * 100.0 } else { -1.0 },
                e.warmup_ops as f64,
                e.batches as f64,
                e.batch_ops as f64,
            ];
            fill(m, "stop", metrics::STOP, &values);
        }
    }

    /// The first `reported` lines' metrics ([`metrics::LINE`]) over
    /// `elapsed` ps.
    fn line_metrics(&self, m: &mut Metrics, reported: usize, elapsed: f64) {
        for (i, name) in self.lines.names().iter().enumerate().take(reported) {
            let s = self.lines.stats(i as LineId);
            let t = &s.transfers;
            let values = [
                // A transfer still under way at the stop is counted whole,
                // which could put the share a hair over 1.
                (s.busy_ps as f64 / elapsed).clamp(0.0, 1.0),
                s.read_misses as f64,
                s.wait_ps as f64 / s.misses.max(1) as f64 / 1000.0,
                t[1..].iter().sum::<u64>() as f64,
                t[1] as f64,
                t[2] as f64,
                t[3] as f64,
                t[4] as f64,
                self.lines.version(i as LineId) as f64,
                s.cas_retries as f64,
            ];
            fill(m, name, metrics::LINE, &values);
        }
    }

    /// Each lock's metrics ([`metrics::LOCK`]; of an array of instances,
    /// the busiest's and [`metrics::ARRAY`]) over `elapsed` ps.
    fn lock_metrics(&self, m: &mut Metrics, names: &metrics::Names, elapsed: f64) {
        for (k, name) in names.locks.iter().enumerate() {
            let (first, n) = names.lock_arrays.get(k).copied().unwrap_or((k as u32, 1));
            let held = |i: u32| self.locks.stats(i).hold_ps;
            let (i, sum) = busiest(first, n, held);
            let s = self.locks.stats(i);
            let values = [
                (s.hold_ps as f64 / elapsed).clamp(0.0, 1.0),
                s.wait_ps as f64 / s.acquisitions.max(1) as f64 / 1000.0,
                s.acquisitions as f64,
                s.contended as f64,
                s.handoff_ps as f64 / s.contended.max(1) as f64 / 1000.0,
            ];
            fill(m, name, metrics::LOCK, &values);
            if names.arrays.contains(name) {
                fill_array(m, name, (first, n), i, sum, elapsed);
            }
        }
    }

    /// Each counter's metrics ([`metrics::COUNTER`]), named `counters`,
    /// for a run that ended at `end` (`elapsed` ps).
    fn counter_metrics(&self, m: &mut Metrics, counters: &[String], end: SimTimePs, elapsed: f64) {
        let secs = end.as_secs_f64();
        for ((c, name), &incs) in self.counters.iter().zip(counters).zip(&self.counter_incs) {
            let inc_rate = if secs > 0.0 { incs as f64 / secs } else { 0.0 };
            let per_op = incs as f64 / self.ops.max(1) as f64;
            let lock = self.locks.stats(c.lock());
            let values = [
                c.folds as f64,
                inc_rate,
                per_op,
                c.read_error_max as f64,
                c.slow_compares as f64,
                (lock.hold_ps as f64 / elapsed).clamp(0.0, 1.0),
                lock.wait_ps as f64 / lock.acquisitions.max(1) as f64 / 1000.0,
            ];
            fill(m, name, metrics::COUNTER, &values);
        }
    }

    /// Each reader-writer lock's metrics ([`metrics::RWLOCK`]; of an
    /// array, the busiest's and [`metrics::ARRAY`]) over `elapsed` ps.
    fn rwlock_metrics(&self, m: &mut Metrics, names: &metrics::Names, elapsed: f64) {
        for (k, name) in names.rwlocks.iter().enumerate() {
            let (first, n) = names.rwlock_arrays.get(k).copied().unwrap_or((k as u32, 1));
            let (i, sum) = busiest(first, n, |i| self.rw.stats(i).hold_ps);
            let s = self.rw.stats(i);
            let acq = s.read_acquisitions + s.write_acquisitions;
            let values = [
                (s.hold_ps as f64 / elapsed).clamp(0.0, 1.0),
                (s.write_hold_ps as f64 / elapsed).clamp(0.0, 1.0),
                s.wait_ps as f64 / (acq + s.retries).max(1) as f64 / 1000.0,
                acq as f64,
                s.read_acquisitions as f64,
                s.write_acquisitions as f64,
                s.contended as f64,
                s.handoff_ps as f64 / s.contended.max(1) as f64 / 1000.0,
                s.spins as f64,
                s.retries as f64,
            ];
            fill(m, name, metrics::RWLOCK, &values);
            if names.arrays.contains(name) {
                fill_array(m, name, (first, n), i, sum, elapsed);
            }
        }
    }
}

/// The instance of ids `first .. first + n` held longest (the lowest on a
/// tie) and the held time of all of them, ps.
fn busiest(first: u32, n: u32, held: impl Fn(u32) -> u64) -> (u32, u64) {
    let mut best = (first, 0u64);
    let mut sum = 0u64;
    for i in first..first + n.max(1) {
        let h = held(i);
        sum = sum.saturating_add(h);
        if h > best.1 {
            best = (i, h);
        }
    }
    (best.0, sum)
}

/// Inserts `values` under the declared names, prefixed by `owner.`.
fn fill(m: &mut Metrics, owner: &str, decls: &[metrics::Decl], values: &[f64]) {
    debug_assert_eq!(decls.len(), values.len());
    for (&(name, _, _), &v) in decls.iter().zip(values) {
        let key = if owner.is_empty() {
            name.to_string()
        } else {
            format!("{owner}.{name}")
        };
        m.insert(key, v);
    }
}

/// The [`metrics::ARRAY`] values of a lock with an instance per AG or
/// directory: ids `first .. first + n`, `busiest` the busiest of them,
/// `sum_ps` all instances' hold time over `elapsed` ps.
fn fill_array(m: &mut Metrics, owner: &str, (first, n): (u32, u32), busiest: u32, sum_ps: u64, elapsed: f64) {
    let values = [f64::from(n), f64::from(busiest - first), sum_ps as f64 / elapsed];
    fill(m, owner, metrics::ARRAY, &values);
}
