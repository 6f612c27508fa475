//! Typed scenario errors that point at the bad field.

use std::fmt;
use std::path::PathBuf;

/// Where in a scenario file a problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The scenario file.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// The line's text and the offending span in it, for showing the
    /// error as rustc does (absent when the text is not at hand).
    pub source: Option<crate::text::SourceLine>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// A mistake in a scenario file, or a file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// Where the problem is (absent when the file itself cannot be read).
    pub location: Option<Location>,
    /// The file, for errors without a location.
    pub file: PathBuf,
    /// Dotted path of the field, e.g. `workload.threads` (may be empty).
    pub field: String,
    /// What was wrong and what was expected.
    pub message: String,
    /// The closest valid key or value, for a misspelling.
    pub suggestion: Option<String>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{loc}: ")?,
            None => write!(f, "{}: ", self.file.display())?,
        }
        crate::text::write_field_message(f, &self.field, &self.message, self.suggestion.as_deref())
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// The error as a located diagnostic (`None` when it has no place in
    /// the file, e.g. a file that cannot be read).
    pub fn diagnostic(&self) -> Option<crate::diagnostic::Diagnostic> {
        let at = self.location.as_ref()?;
        let message = if self.field.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.field, self.message)
        };
        Some(crate::diagnostic::Diagnostic {
            file: at.file.clone(),
            line: at.line,
            column: at.column,
            source: at.source.clone(),
            message,
            help: self.suggestion.as_ref().map(|s| format!("did you mean `{s}`?")),
        })
    }
}

pub use crate::text::{closest, suggestion_from_serde};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_field() {
        let m = "unknown field `thraeds`, expected one of `kind`, `threads`, `placement`";
        assert_eq!(suggestion_from_serde(m), Some(("thraeds".into(), "threads".into())));
        let m = "unknown variant `percpus`, expected `atomic` or `percpu`";
        assert_eq!(suggestion_from_serde(m).map(|s| s.1), Some("percpu".into()));
        assert_eq!(suggestion_from_serde("unknown field `zzzzzzzz`, expected `a`"), None);
    }
}
