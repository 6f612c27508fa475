//! The case's report shapes: the insert function's latency summary with a
//! log2 histogram of `#` bars (as bpftrace's `hist()` prints it), and
//! fs_mark's per-loop table (Count, Files/sec).

use std::fmt::Write as _;

use super::sim::Outcome;
use super::{HIST_BUCKETS, hist_metric, loop_metrics};
use crate::engine::Metrics;

/// The run's metrics from its outcome.
pub fn metrics(o: &Outcome, loops: u32) -> Metrics {
    let mut m = Metrics::new();
    let mut put = |k: &str, v: f64| {
        m.insert(k.to_string(), v);
    };
    let n = o.latency.count();
    let nf = n.max(1) as f64;
    let mean = o.latency.mean() / 1000.0;
    let var = (o.sum_sq_ns / nf - mean * mean).max(0.0);
    let q = |x: f64| o.latency.quantile(x) as f64 / 1000.0;
    put("insert_mean_ns", mean);
    put("insert_p50_ns", q(0.5));
    put("insert_p90_ns", q(0.9));
    put("insert_p95_ns", q(0.95));
    put("insert_p99_ns", q(0.99));
    put("insert_max_ns", o.latency.max() as f64 / 1000.0);
    put("insert_min_ns", o.min_ps as f64 / 1000.0);
    put("insert_stddev_ns", var.sqrt());
    put("inserts", n as f64);
    let files: u64 = o.loops.iter().map(|l| l.0).sum();
    let secs = o.end_ps as f64 / 1e12;
    put("files_per_sec", if secs > 0.0 { files as f64 / secs } else { 0.0 });
    put("index_depth_mean", o.depth_sum as f64 / nf);
    put("index_height", f64::from(o.height));
    put("index_node_depth_mean", o.mean_depth);
    put("cache_misses_per_insert", o.l1_misses as f64 / nf);
    put("peer_transfers_per_insert", o.peer as f64 / nf);
    put("memory_misses_per_insert", o.memory as f64 / nf);
    put("lines_per_insert", o.touches as f64 / nf);
    let (acq, wait, hold) = o.inode_lock;
    put("inode_lock.wait_mean_ns", wait as f64 / acq.max(1) as f64 / 1000.0);
    put("inode_lock.utilisation", share(hold as f64, o.end_ps as f64));
    let total = o.latency.mean() * n as f64;
    put("lock_wait_share", share(o.insert_wait_ps as f64, total));
    put("failed_inserts", o.failed as f64);
    put("open_inodes", o.open as f64);
    for k in 0..HIST_BUCKETS {
        let extra: u64 = if k + 1 == HIST_BUCKETS {
            o.log2_ns[HIST_BUCKETS..].iter().sum()
        } else {
            0
        };
        m.insert(hist_metric(k), (o.log2_ns[k] + extra) as f64);
    }
    for (l, &(count, ps)) in (1..=loops).zip(o.loops.iter()) {
        let (c, r) = loop_metrics(l);
        m.insert(c, count as f64);
        m.insert(r, if ps > 0 { count as f64 / (ps as f64 / 1e12) } else { 0.0 });
    }
    m
}

/// `[lo, hi)` label of log2 bucket `k`, bpftrace style (`[512, 1K)`).
pub fn bucket_label(k: usize) -> String {
    let size = |v: u64| match v {
        v if v >= 1 << 30 => format!("{}G", v >> 30),
        v if v >= 1 << 20 => format!("{}M", v >> 20),
        v if v >= 1 << 10 => format!("{}K", v >> 10),
        v => v.to_string(),
    };
    if k == 0 {
        return "[0, 2)".to_string();
    }
    format!("[{}, {})", size(1 << k), size(1 << (k + 1)))
}

/// The text report of one run: the insert function's summary and
/// histogram, then the per-loop table.
pub fn text(m: &Metrics, loops: u32) -> String {
    let g = |k: &str| m.get(k).copied().unwrap_or(0.0);
    let mut s = String::new();
    let _ = writeln!(s, "insert function latency (ns):");
    let _ = writeln!(
        s,
        "  count {:.0}, range [{:.0}, {:.0}]",
        g("inserts"),
        g("insert_min_ns"),
        g("insert_max_ns")
    );
    let _ = writeln!(
        s,
        "  mean {:.3}, median {:.0}, stddev {:.3}",
        g("insert_mean_ns"),
        g("insert_p50_ns"),
        g("insert_stddev_ns")
    );
    let _ = writeln!(
        s,
        "  p90 {:.0}, p95 {:.0}, p99 {:.0}",
        g("insert_p90_ns"),
        g("insert_p95_ns"),
        g("insert_p99_ns")
    );
    let counts: Vec<f64> = (0..HIST_BUCKETS).map(|k| g(&hist_metric(k))).collect();
    let top = counts.iter().copied().fold(0.0, f64::max);
    let first = counts.iter().position(|&c| c > 0.0);
    let last = counts.iter().rposition(|&c| c > 0.0);
    if let (Some(a), Some(b)) = (first, last) {
        let _ = writeln!(s);
        for (k, &c) in counts.iter().enumerate().take(b + 1).skip(a) {
            let bar = if top > 0.0 { (c / top * 52.0).round() as usize } else { 0 };
            let bar = if c > 0.0 { bar.max(1) } else { 0 };
            let _ = writeln!(s, "{:>16} {:>9.0} |{:<52}|", bucket_label(k), c, "#".repeat(bar));
        }
    }
    let _ = writeln!(s, "\nfs_mark loops:");
    let _ = writeln!(s, "{:>6} {:>12} {:>14}", "Loop", "Count", "Files/sec");
    for l in 1..=loops {
        let (c, r) = loop_metrics(l);
        let _ = writeln!(s, "{:>6} {:>12.0} {:>14.1}", l, g(&c), g(&r));
    }
    s
}

/// `part / whole` as a fraction in [0, 1] (0 for an empty whole): a hold
/// or wait still running when the run stops is counted whole, which can
/// put the ratio a hair over 1.
fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { (part / whole).clamp(0.0, 1.0) } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_labels_follow_bpftrace() {
        assert_eq!(bucket_label(0), "[0, 2)");
        assert_eq!(bucket_label(9), "[512, 1K)");
        assert_eq!(bucket_label(20), "[1M, 2M)");
    }

    #[test]
    fn text_has_bars_and_loops() {
        let mut m = Metrics::new();
        m.insert(hist_metric(9), 100.0);
        m.insert(hist_metric(10), 50.0);
        m.insert("loop01.count".into(), 1200.0);
        let t = text(&m, 1);
        assert!(
            t.contains("[512, 1K)       100 |####################################################|"),
            "{t}"
        );
        assert!(t.contains("[1K, 2K)        50 |##########################"), "{t}");
        assert!(t.contains("     1         1200"), "{t}");
    }
}
