//! The text form of one run's metrics, shared by the result cache and the
//! shard files: one `name<TAB>bits` line per metric, `bits` the 16 hex
//! digits of the `f64`'s IEEE-754 bit pattern, so a value read back is
//! the exact value written (outputs built from it are byte-identical).

use crate::engine::Metrics;
use std::fmt::Write as _;

/// Appends `m` to `out`, one line per metric in name order.
pub fn write_metrics(out: &mut String, m: &Metrics) {
    for (name, v) in m {
        let _ = writeln!(out, "{name}\t{:016x}", v.to_bits());
    }
}

/// Parses one `name<TAB>bits` line; `None` when it is not one.
pub fn parse_metric(line: &str) -> Option<(String, f64)> {
    let (name, bits) = line.split_once('\t')?;
    if name.is_empty() || bits.len() != 16 {
        return None;
    }
    let bits = u64::from_str_radix(bits, 16).ok()?;
    Some((name.to_string(), f64::from_bits(bits)))
}

/// A 128-bit fingerprint of a byte stream: two 64-bit multiply-xorshift
/// lanes with different seeds, finalised with SplitMix64. Not
/// cryptographic; it tells apart configurations and builds, which are not
/// adversarial.
#[derive(Debug, Clone, Copy)]
pub struct Fingerprint {
    a: u64,
    b: u64,
    len: u64,
}

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint {
            a: 0xcbf2_9ce4_8422_2325,
            b: 0x6c62_272e_07bb_0142,
            len: 0,
        }
    }
}

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Fingerprint {
    /// Feeds `bytes` (8 at a time, the tail zero-padded).
    pub fn update(&mut self, bytes: &[u8]) -> &mut Self {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.word(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(w));
        }
        self.len = self.len.wrapping_add(bytes.len() as u64);
        self
    }

    /// Feeds one `u64`.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.update(&v.to_le_bytes())
    }

    #[inline]
    fn word(&mut self, w: u64) {
        self.a = (self.a ^ w).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(23);
        self.b = (self.b.rotate_left(29) ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    /// The fingerprint as 32 hex digits.
    pub fn hex(&self) -> String {
        let a = mix(self.a ^ self.len);
        let b = mix(self.b ^ a);
        format!("{a:016x}{b:016x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_round_trip_exactly() {
        let mut m = Metrics::new();
        m.insert("a".into(), 0.1 + 0.2);
        m.insert("b.c".into(), f64::NAN);
        m.insert("d".into(), -0.0);
        let mut t = String::new();
        write_metrics(&mut t, &m);
        let back: Metrics = t.lines().map(|l| parse_metric(l).expect("line")).collect();
        assert_eq!(back.len(), 3);
        for (k, v) in &m {
            assert_eq!(back[k].to_bits(), v.to_bits(), "{k}");
        }
        assert!(parse_metric("x\t123").is_none());
        assert!(parse_metric("no tab").is_none());
    }

    #[test]
    fn fingerprints_tell_apart_near_inputs() {
        let h = |b: &[u8]| Fingerprint::default().update(b).hex();
        assert_eq!(h(b"abc"), h(b"abc"));
        assert_ne!(h(b"abc"), h(b"abd"));
        assert_ne!(h(b"abc"), h(b"abc\0"));
        assert_ne!(h(b""), h(b"\0"));
        assert_eq!(h(b"abc").len(), 32);
    }
}
