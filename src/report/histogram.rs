//! Text histograms of latencies in the power-of-two layout that bpftrace's
//! `hist()` and the BCC `*dist` tools print, so kernel developers can read
//! a simulated distribution the way they read a measured one.

/// Width of the longest bar, in `#` characters.
const BAR_WIDTH: u64 = 50;

/// Number of power-of-two buckets a `u64` can fall into: `[0, 1)` plus one
/// per bit length 1..=64.
const BUCKETS: usize = 65;

/// Formats `samples_ns` (latencies in ns, any order) as a summary header
/// followed by a log2 histogram.
///
/// Header, one line: `count N  min A  max B  mean M  median D  stddev S
/// p90 P  p99 Q  (ns)`. `min`, `max`, `p90` and `p99` are sample values
/// (percentiles by nearest rank: the value at rank `ceil(p/100 * n)` of the
/// sorted samples); `mean`, `median` (mean of the two middle values when n is
/// even) and `stddev` (sample standard deviation, divisor n - 1; 0 when
/// n < 2) are printed with one decimal.
///
/// Then one line per bucket from the lowest to the highest non-empty one
/// (empty buckets between them included): bucket 0 is `[0, 1)`, bucket k is
/// `[2^(k-1), 2^k)`. Each line is the bucket label padded to the widest
/// label, the count right-aligned, and a bar of `#` of
/// `round(50 * count / largest count)` characters (at least one for a
/// non-empty bucket) between `|`s. Every line ends in `\n`. An empty input
/// gives the single line `count 0`.
pub fn log2_histogram_text(samples_ns: &[u64]) -> String {
    if samples_ns.is_empty() {
        return "count 0\n".to_string();
    }
    let mut sorted = samples_ns.to_vec();
    sorted.sort_unstable();
    let mut out = summary_line(&sorted);
    out.push_str(&bucket_lines(&bucket_counts(&sorted)));
    out
}

/// The header line for non-empty, sorted samples.
fn summary_line(sorted: &[u64]) -> String {
    let n = sorted.len();
    let first = sorted.first().copied().unwrap_or(0);
    let last = sorted.last().copied().unwrap_or(0);
    let sum: u128 = sorted.iter().map(|&v| u128::from(v)).sum();
    let mean = sum as f64 / n as f64;
    let median = if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0
    };
    let stddev = if n < 2 {
        0.0
    } else {
        let ss: f64 = sorted.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
        (ss / (n - 1) as f64).sqrt()
    };
    format!(
        "count {n}  min {first}  max {last}  mean {mean:.1}  median {median:.1}  \
         stddev {stddev:.1}  p90 {}  p99 {}  (ns)\n",
        nearest_rank(sorted, 90),
        nearest_rank(sorted, 99),
    )
}

/// The `pct`-th percentile of non-empty sorted samples by nearest rank.
fn nearest_rank(sorted: &[u64], pct: usize) -> u64 {
    let rank = (pct * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).or(sorted.last()).copied().unwrap_or(0)
}

/// The bucket of value `v`: 0 for 0, else its bit length.
fn bucket_of(v: u64) -> usize {
    (u64::BITS - v.leading_zeros()) as usize
}

/// `[lo, hi)` of bucket `k` (as u128: the top bucket ends at 2^64).
fn bucket_bounds(k: usize) -> (u128, u128) {
    if k == 0 { (0, 1) } else { (1u128 << (k - 1), 1u128 << k) }
}

/// Sample count of every bucket.
fn bucket_counts(samples: &[u64]) -> [u64; BUCKETS] {
    let mut counts = [0u64; BUCKETS];
    for &v in samples {
        counts[bucket_of(v)] += 1;
    }
    counts
}

/// The bucket lines from the lowest to the highest non-empty bucket.
fn bucket_lines(counts: &[u64; BUCKETS]) -> String {
    let Some(first) = counts.iter().position(|&c| c > 0) else {
        return String::new();
    };
    let last = counts.iter().rposition(|&c| c > 0).unwrap_or(first);
    let largest = counts.iter().copied().max().unwrap_or(1).max(1);
    let labels: Vec<String> = (first..=last)
        .map(|k| {
            let (lo, hi) = bucket_bounds(k);
            format!("[{lo}, {hi})")
        })
        .collect();
    let label_w = labels.iter().map(String::len).max().unwrap_or(0);
    let count_w = largest.to_string().len();
    let mut out = String::new();
    for (label, &count) in labels.iter().zip(&counts[first..=last]) {
        let bar = "#".repeat(bar_len(count, largest));
        out.push_str(&format!(
            "{label:<label_w$} {count:>count_w$} |{bar:<w$}|\n",
            w = BAR_WIDTH as usize
        ));
    }
    out
}

/// Bar length for `count` when `largest` fills [`BAR_WIDTH`]: rounded to
/// nearest, at least 1 for a non-empty bucket.
fn bar_len(count: u64, largest: u64) -> usize {
    if count == 0 {
        return 0;
    }
    let scaled = (u128::from(count) * u128::from(BAR_WIDTH) * 2 + u128::from(largest)) / (2 * u128::from(largest));
    scaled.max(1) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_input_gives_exact_text() {
        let samples = [0, 1, 2, 3, 3, 5, 9, 12, 100, 3];
        let expected = "\
count 10  min 0  max 100  mean 13.8  median 3.0  stddev 30.5  p90 12  p99 100  (ns)
[0, 1)    1 |#############                                     |
[1, 2)    1 |#############                                     |
[2, 4)    4 |##################################################|
[4, 8)    1 |#############                                     |
[8, 16)   2 |#########################                         |
[16, 32)  0 |                                                  |
[32, 64)  0 |                                                  |
[64, 128) 1 |#############                                     |
";
        assert_eq!(log2_histogram_text(&samples), expected);
    }

    #[test]
    fn empty_and_single_inputs() {
        assert_eq!(log2_histogram_text(&[]), "count 0\n");
        let one = log2_histogram_text(&[u64::MAX]);
        assert!(one.contains("[9223372036854775808, 18446744073709551616) 1 |"));
        assert!(one.starts_with("count 1  min 18446744073709551615"));
    }

    #[test]
    fn buckets_follow_bit_length() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1), 1);
        assert_eq!(bucket_of(1023), 10);
        assert_eq!(bucket_of(1024), 11);
        assert_eq!(bucket_bounds(11), (1024, 2048));
    }

    /// Counts parsed back from the text.
    fn printed_counts(text: &str) -> Vec<u64> {
        text.lines()
            .skip(1)
            .filter_map(|l| l.split(')').nth(1)?.split('|').next()?.trim().parse().ok())
            .collect()
    }

    proptest! {
        #[test]
        fn bucket_counts_sum_to_n(samples in prop::collection::vec(any::<u64>(), 0..200)) {
            let text = log2_histogram_text(&samples);
            let counts = printed_counts(&text);
            prop_assert_eq!(counts.iter().sum::<u64>(), samples.len() as u64);
            prop_assert_eq!(text.clone(), log2_histogram_text(&samples));
            let widest = text.lines().skip(1).map(|l| l.matches('#').count()).max();
            prop_assert!(widest.is_none_or(|w| w == BAR_WIDTH as usize));
        }
    }
}
