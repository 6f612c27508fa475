//! What the result cache and the shard files share: the exact JSON form
//! of one run's metrics, the checksum of a file's content, the build of
//! fsmeta that wrote it, and the check of a file's format and version
//! before the rest of it is read.
//!
//! A metric is a JSON number when it is finite: `serde_json` writes the
//! shortest text that reads back to the same `f64` and (with its
//! `float_roundtrip` feature) reads it back to exactly those bits, so
//! outputs built from stored runs are byte-identical to computed ones.
//! JSON has no NaN or infinity: those are the strings `"NaN"`, `"inf"`
//! and `"-inf"`.

use crate::engine::Metrics;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// A stored metric value: a number, or a word for a non-finite one.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(untagged)]
enum Stored {
    Number(f64),
    Word(NonFinite),
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum NonFinite {
    #[serde(rename = "NaN")]
    NaN,
    #[serde(rename = "inf")]
    Inf,
    #[serde(rename = "-inf")]
    NegInf,
}

impl From<f64> for Stored {
    fn from(v: f64) -> Stored {
        match v {
            v if v.is_finite() => Stored::Number(v),
            v if v.is_nan() => Stored::Word(NonFinite::NaN),
            v if v > 0.0 => Stored::Word(NonFinite::Inf),
            _ => Stored::Word(NonFinite::NegInf),
        }
    }
}

impl From<Stored> for f64 {
    fn from(v: Stored) -> f64 {
        match v {
            Stored::Number(x) => x,
            Stored::Word(NonFinite::NaN) => f64::NAN,
            Stored::Word(NonFinite::Inf) => f64::INFINITY,
            Stored::Word(NonFinite::NegInf) => f64::NEG_INFINITY,
        }
    }
}

/// `#[serde(with = "exact")]` for a [`Metrics`] field: a JSON object of
/// metric name to value, in name order, exact (see the module doc).
pub mod exact {
    use super::*;

    /// Writes the metrics.
    pub fn serialize<S: Serializer>(m: &Metrics, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(m.iter().map(|(k, &v)| (k, Stored::from(v))))
    }

    /// Reads the metrics.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Metrics, D::Error> {
        let m = BTreeMap::<String, Stored>::deserialize(d)?;
        Ok(m.into_iter().map(|(k, v)| (k, f64::from(v))).collect())
    }
}

/// The checksum of `value`'s canonical JSON (compact, fields in
/// declaration order, maps in key order): what a file's `checksum` field
/// holds, recomputed from the values read back.
pub fn checksum<T: Serialize>(value: &T) -> String {
    // Serializing plain data (strings, numbers, maps with string keys)
    // into memory cannot fail; an empty text would only make the
    // checksum disagree.
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    Fingerprint::default().update(&bytes).hex()
}

/// The build of this fsmeta: its version and the fingerprint of the
/// running executable's bytes (a rebuilt fsmeta whose models changed
/// never reads the results of the old one). Computed once.
pub fn build_id() -> Result<&'static str, String> {
    static BUILD: OnceLock<Result<String, String>> = OnceLock::new();
    BUILD
        .get_or_init(|| {
            let mut fp = Fingerprint::default();
            fp.update(env!("CARGO_PKG_VERSION").as_bytes());
            if let Ok(exe) = std::env::current_exe() {
                let bytes = std::fs::read(&exe).map_err(|e| format!("cannot read {}: {e}", exe.display()))?;
                fp.update(&bytes);
            }
            Ok(format!("{}+{}", env!("CARGO_PKG_VERSION"), fp.hex()))
        })
        .as_ref()
        .map(String::as_str)
        .map_err(Clone::clone)
}

/// The `format` and `version` fields of a versioned JSON file, read
/// before the rest so that a file of another version is named as such
/// and never misread.
#[derive(Debug, Deserialize)]
pub struct Header {
    /// What the file is (`fsmeta-shard`, `fsmeta-run`, `fsmeta-summary`).
    pub format: Option<serde_json::Value>,
    /// Its version.
    pub version: Option<serde_json::Value>,
}

/// Why a versioned JSON file was refused (the caller adds the path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not JSON of the expected shape: where, and what.
    Malformed {
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// What was wrong.
        message: String,
    },
    /// Another format or version.
    Version {
        /// `format version` as the file says it.
        found: String,
        /// What this fsmeta reads.
        expected: String,
    },
}

fn malformed(e: &serde_json::Error) -> Refusal {
    // serde_json's message ends with " at line L column C"; the place is
    // given apart.
    let text = e.to_string();
    // Its message may quote the file (an unknown key): one clean line.
    let message = match text.rfind(" at line ") {
        Some(i) => crate::text::one_line(&text[..i], 300),
        None => crate::text::one_line(&text, 300),
    };
    Refusal::Malformed {
        line: e.line().max(1),
        column: e.column().max(1),
        message,
    }
}

/// Reads `text` as a `T` after checking its `format` and `version`.
pub fn read_versioned<T: for<'de> Deserialize<'de>>(text: &str, format: &str, version: u32) -> Result<T, Refusal> {
    let h: Header = serde_json::from_str(text).map_err(|e| malformed(&e))?;
    let format_ok = h.format.as_ref().and_then(serde_json::Value::as_str) == Some(format);
    let version_ok = h.version.as_ref().and_then(serde_json::Value::as_u64) == Some(u64::from(version));
    if !(format_ok && version_ok) {
        let show = |v: Option<serde_json::Value>| v.map_or("(none)".to_string(), |v| crate::text::quote_short(&v.to_string()));
        return Err(Refusal::Version {
            found: format!("{} version {}", show(h.format), show(h.version)),
            expected: format!("\"{format}\" version {version}"),
        });
    }
    serde_json::from_str(text).map_err(|e| malformed(&e))
}

/// The line and column (from 1) of the first occurrence of `needle` in
/// `text`, or the top of the file.
pub fn place_of(text: &str, needle: &str) -> (usize, usize) {
    let Some(at) = text.find(needle) else { return (1, 1) };
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Reads a file fsmeta wrote: a regular file (never a device or a FIFO,
/// which could block or never end), as UTF-8.
pub fn read_regular(path: &Path) -> Result<String, std::io::Error> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let bytes = std::fs::read(path)?;
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8 text: {e}")))
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

    #[derive(Debug, Serialize, Deserialize)]
    struct M {
        #[serde(with = "exact")]
        m: Metrics,
    }

    #[test]
    fn metrics_round_trip_exactly() {
        let mut m = Metrics::new();
        m.insert("a".into(), 0.1 + 0.2);
        m.insert("b.c".into(), f64::NAN);
        m.insert("d".into(), -0.0);
        m.insert("e".into(), f64::NEG_INFINITY);
        m.insert("f".into(), 5e-324);
        m.insert("g".into(), f64::MAX);
        let text = serde_json::to_string(&M { m: m.clone() }).expect("write");
        assert!(text.contains("\"b.c\":\"NaN\"") && text.contains("\"e\":\"-inf\""), "{text}");
        let back: M = serde_json::from_str(&text).expect("read");
        assert_eq!(back.m.len(), m.len());
        for (k, v) in &m {
            assert_eq!(back.m[k].to_bits(), v.to_bits(), "{k}");
        }
        assert!(serde_json::from_str::<M>("{\"m\":{\"x\":\"nan\"}}").is_err());
        assert!(serde_json::from_str::<M>("{\"m\":{\"x\":1e999}}").is_err());
    }

    #[test]
    fn versioned_files_are_checked_before_their_content() {
        #[derive(Debug, Deserialize)]
        struct F {
            #[allow(dead_code)]
            x: u32,
        }
        let ok = read_versioned::<F>("{\"format\":\"f\",\"version\":2,\"x\":1}", "f", 2);
        assert!(ok.is_ok(), "{ok:?}");
        let old = read_versioned::<F>("{\"format\":\"f\",\"version\":1,\"y\":1}", "f", 2);
        assert_eq!(
            old.expect_err("old"),
            Refusal::Version {
                found: "\"f\" version 1".into(),
                expected: "\"f\" version 2".into()
            }
        );
        match read_versioned::<F>("{\"format\":\"f\",\n\"version\":2,\n\"x\":\"no\"}", "f", 2) {
            Err(Refusal::Malformed { line, .. }) => assert_eq!(line, 3),
            other => panic!("{other:?}"),
        }
        assert_eq!(place_of("a\nbc\"k\"", "\"k\""), (2, 3));
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
