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

use crate::text::{SourceLine, escape_controls, shorten_words};
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use std::borrow::Cow;
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
        let mut s = format!("{}:{}:{}: {}", self.path(), self.line, self.column, safe(&self.message));
        if let Some(h) = &self.help {
            s.push_str(&format!(" ({})", safe(h)));
        }
        s
    }

    /// The file's path as shown: control characters escaped (a file may
    /// be named with an ESC sequence).
    fn path(&self) -> String {
        crate::text::one_line(&self.file.display().to_string(), usize::MAX)
    }

    /// The rustc-style form (several lines, ending in a newline), with
    /// ANSI colours when `colour`.
    pub fn rich(&self, colour: bool) -> String {
        let path = self.path();
        let message = safe(&self.message);
        let help = self.help.as_deref().map(safe);
        let title = Level::ERROR.primary_title(message.as_ref());
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
        let group = match &help {
            Some(h) => group.element(Level::HELP.message(h.as_ref())),
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

/// What a message quotes, made safe to show: control characters escaped,
/// huge words cut to their start and length.
fn safe(text: &str) -> Cow<'_, str> {
    match escape_controls(text) {
        Cow::Borrowed(b) => shorten_words(b),
        Cow::Owned(o) => Cow::Owned(shorten_words(&o).into_owned()),
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

    #[test]
    fn control_characters_are_escaped_in_every_form() {
        let mut d = sample(true);
        d.file = PathBuf::from("\u{1b}]0;t\u{7}.toml");
        d.message = "no metric `a\u{1b}[2J`".into();
        d.help = Some("did you mean `\u{9b}x`?".into());
        for style in [Style::Plain, Style::Rich, Style::RichColour] {
            let shown = d.show(style);
            let bare = shown.replace("\u{1b}[", "");
            assert!(
                !shown.contains('\u{7}') && !shown.contains('\u{9b}') && !shown.contains("\u{1b}]"),
                "{style:?}: {shown:?}"
            );
            if style != Style::RichColour {
                assert!(!shown.contains('\u{1b}'), "{style:?}: {shown:?}");
            }
            assert!(
                bare.contains("\\u{1b}[2J") && shown.contains("\\u{1b}]0;t\\u{7}.toml"),
                "{style:?}: {shown:?}"
            );
        }
    }
}
