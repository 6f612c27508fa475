//! Located errors shown as rustc shows them: the message, the file, line
//! and column, the line of the file with a caret under the offending
//! span, and the suggestion; or as the one line `file:line:col: message`
//! that scripts and editors parse.
//!
//! Rendered by `annotate-snippets`, the renderer rustc's own diagnostics
//! moved to: it draws exactly rustc's layout from plain data (a title, a
//! source line, a span, a help line), has no derive or global hook, and
//! shortens long lines and replaces control characters as rustc does.
//! (`miette` was the other candidate: its default look is its own boxed
//! layout rather than rustc's, and it asks errors to implement its
//! `Diagnostic` trait with source code attached, more than a renderer.)

use crate::text::SourceLine;
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use std::path::PathBuf;

/// A located error, ready to be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file the error is in.
    pub file: PathBuf,
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1 (in characters).
    pub column: usize,
    /// The line's text and the span, when the file could be read.
    pub source: Option<SourceLine>,
    /// What is wrong (the field path first, when there is one).
    pub message: String,
    /// The suggestion, e.g. "did you mean `workload.threads`?".
    pub help: Option<String>,
}

/// How located errors are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `file:line:col: message (did you mean ...?)` on one line.
    Plain,
    /// rustc's layout, without colour.
    Rich,
    /// rustc's layout with ANSI colours (for a terminal).
    RichColour,
}

impl Diagnostic {
    /// The one-line form: `file:line:col: message (help)`.
    pub fn plain(&self) -> String {
        let mut s = format!("{}:{}:{}: {}", self.file.display(), self.line, self.column, self.message);
        if let Some(h) = &self.help {
            s.push_str(&format!(" ({h})"));
        }
        s
    }

    /// The rustc-style form (several lines, ending in a newline), with
    /// ANSI colours when `colour`.
    pub fn rich(&self, colour: bool) -> String {
        let path = self.file.display().to_string();
        let title = Level::ERROR.primary_title(self.message.as_str());
        let text;
        let group: Group<'_> = match &self.source {
            Some(src) => {
                text = src.text.clone();
                let span = src.span.start.min(text.len())..src.span.end.min(text.len());
                title.element(
                    Snippet::source(text.as_str())
                        .line_start(self.line)
                        .path(path.as_str())
                        .annotation(AnnotationKind::Primary.span(span)),
                )
            }
            None => title.element(
                annotate_snippets::Origin::path(path.as_str())
                    .line(self.line)
                    .char_column(self.column),
            ),
        };
        let group = match &self.help {
            Some(h) => group.element(Level::HELP.message(h.as_str())),
            None => group,
        };
        let renderer = if colour { Renderer::styled() } else { Renderer::plain() };
        let mut out = renderer.render(&[group]);
        out.push('\n');
        out
    }

    /// The form `style` asks for (the plain one is one line, ending in a
    /// newline, like the rich one).
    pub fn show(&self, style: Style) -> String {
        match style {
            Style::Plain => format!("{}\n", self.plain()),
            Style::Rich => self.rich(false),
            Style::RichColour => self.rich(true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(source: bool) -> Diagnostic {
        let text = "[workload]\nthraeds = 4\n";
        Diagnostic {
            file: PathBuf::from("s.toml"),
            line: 2,
            column: 1,
            source: source.then(|| SourceLine::of(text, 11..18)),
            message: "workload.thraeds: unknown field `thraeds`".into(),
            help: Some("did you mean `workload.threads`?".into()),
        }
    }

    #[test]
    fn rich_form_is_rustcs_layout_with_a_caret_under_the_span() {
        let shown = sample(true).show(Style::Rich);
        let want = "\
error: workload.thraeds: unknown field `thraeds`
 --> s.toml:2:1
  |
2 | thraeds = 4
  | ^^^^^^^
  |
  = help: did you mean `workload.threads`?
";
        assert_eq!(shown, want, "\n{shown}");
        assert!(sample(true).show(Style::RichColour).contains("\u{1b}["), "colours");
    }

    #[test]
    fn plain_form_is_one_line() {
        assert_eq!(
            sample(true).show(Style::Plain),
            "s.toml:2:1: workload.thraeds: unknown field `thraeds` (did you mean `workload.threads`?)\n"
        );
        let shown = sample(false).show(Style::Rich);
        assert!(shown.contains("--> s.toml:2:1"), "{shown}");
    }
}
