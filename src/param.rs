//! The one parameter-error type every layer returns for a bad value: the
//! dotted field path, what was expected, and the closest valid name as
//! data. The scenario layer alone turns it into a located `file:line:col`
//! message.

use std::fmt;
use std::ops::Range;

/// A parameter is out of range, inconsistent, misspelt or unused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    /// Dotted path of the parameter, e.g. `btrfs_dir.files` (may be empty
    /// for an error about the whole document).
    pub field: String,
    /// What was wrong and what was expected, in plain words.
    pub message: String,
    /// The closest valid name, for a misspelling.
    pub suggestion: Option<String>,
    /// Byte range in the scenario text, when the error came from parsing
    /// the text itself.
    pub span: Option<Range<usize>>,
}

impl ParamError {
    /// An error on `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ParamError {
            field: field.into(),
            message: message.into(),
            suggestion: None,
            span: None,
        }
    }

    /// Adds the closest valid name.
    pub fn suggest(mut self, suggestion: Option<String>) -> Self {
        self.suggestion = suggestion;
        self
    }

    /// Puts the field under `prefix` (`files` -> `btrfs_dir.files`).
    pub fn under(mut self, prefix: &str) -> Self {
        self.field = match (prefix.is_empty(), self.field.is_empty()) {
            (true, _) => self.field,
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}.{}", self.field),
        };
        self
    }

    /// From a toml/serde error while reading section `field`: keeps the
    /// span and the closest candidate of an "unknown field" message.
    pub fn from_toml(field: &str, e: &toml::de::Error) -> Self {
        let raw = e.message().trim().to_string();
        let suggestion = crate::text::suggestion_from_serde(&raw).map(|(_, c)| c);
        ParamError {
            field: field.to_string(),
            message: crate::text::plain(&raw),
            suggestion,
            span: e.span(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::write_field_message(f, &self.field, &self.message, self.suggestion.as_deref())
    }
}

impl std::error::Error for ParamError {}

/// A data file a scenario names (a machine profile, `xfs_db freesp` text)
/// could not be read or is malformed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The file is malformed at a line.
    #[error("{}:{line}: {message}", path.display())]
    Malformed {
        /// The file that was read.
        path: std::path::PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong with it.
        message: String,
    },
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file that was read.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl InputError {
    /// [`InputError::Malformed`]: `path` at 1-based `line`.
    pub fn malformed(path: &std::path::Path, line: usize, message: impl Into<String>) -> Self {
        InputError::Malformed {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

/// Reads a scenario value that is a number or one keyword (`work_scale =
/// "host"`, `record_ns = "counted"`): `Some(x)` for a number, `None` for
/// `word`; anything else is refused with `expecting` ("a cost in ns or
/// \"counted\"").
pub fn number_or_word<'de, D: serde::Deserializer<'de>>(
    d: D,
    word: &'static str,
    expecting: &'static str,
) -> Result<Option<f64>, D::Error> {
    Ok(number_or_words(d, &[word], expecting)?.ok())
}

/// As [`number_or_word`] with several keywords: `Ok(x)` for a number,
/// `Err(word)` for one of `words`.
pub fn number_or_words<'de, D: serde::Deserializer<'de>>(
    d: D,
    words: &[&'static str],
    expecting: &'static str,
) -> Result<Result<f64, &'static str>, D::Error> {
    struct V<'w> {
        words: &'w [&'static str],
        expecting: &'static str,
    }
    impl serde::de::Visitor<'_> for V<'_> {
        type Value = Result<f64, &'static str>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok(Ok(v))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Ok(v as f64))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Ok(v as f64))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            if let Some(w) = self.words.iter().find(|w| **w == v) {
                Ok(Err(w))
            } else {
                Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
        }
    }
    d.deserialize_any(V { words, expecting })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_prefixes_the_field_once() {
        let e = ParamError::new("files", "expected 1..=10").under("btrfs_dir");
        assert_eq!(e.field, "btrfs_dir.files");
        assert_eq!(ParamError::new("", "x").under("a").field, "a");
        assert_eq!(e.to_string(), "btrfs_dir.files: expected 1..=10");
    }
}
