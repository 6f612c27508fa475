//! Small text helpers shared across layers (no dependencies on any).

/// The candidate closest to `word` by Levenshtein distance (in chars,
/// `strsim::levenshtein`), if it is close enough to be a likely
/// misspelling (distance at most a third of the word, and at least 2);
/// ties go to the candidate that sorts first.
///
/// Bounded work: a word longer than [`MAX_SUGGEST_CHARS`] gets no
/// suggestion (nobody misspells a key that long), and a candidate whose
/// length differs from the word's by more than the limit is skipped
/// unmeasured (the distance is at least that difference), so a huge bad
/// name is refused at once instead of after a quadratic search.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let len = word.chars().count();
    if len > MAX_SUGGEST_CHARS {
        return None;
    }
    let limit = (len / 3).max(2);
    candidates
        .into_iter()
        .filter(|c| c.len() <= 4 * (len + limit) && c.chars().count().abs_diff(len) <= limit)
        .map(|c| (strsim::levenshtein(word, c), c))
        .filter(|&(d, _)| d <= limit)
        .min()
        .map(|(_, c)| c.to_string())
}

/// The longest word [`closest`] looks for a suggestion for, in characters.
pub const MAX_SUGGEST_CHARS: usize = 256;

/// How much of one long word a message keeps, in characters
/// ([`shorten_words`]).
pub const QUOTE_CHARS: usize = 100;

/// `s` with every run of non-blank characters longer than
/// `QUOTE_CHARS + 60` (a huge name quoted from a scenario file) cut to its
/// first [`QUOTE_CHARS`] characters, an ellipsis and its length: a 3 MB
/// bad metric name must not fill the terminal. Shorter runs (a long file
/// path) are kept whole. Borrowed when nothing is cut.
pub fn shorten_words(s: &str) -> std::borrow::Cow<'_, str> {
    const KEEP_WHOLE: usize = QUOTE_CHARS + 60;
    let long = |w: &str| w.len() > KEEP_WHOLE && w.chars().count() > KEEP_WHOLE;
    if !s.split(char::is_whitespace).any(long) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(KEEP_WHOLE * 4);
    let mut rest = s;
    while !rest.is_empty() {
        let blank = rest.find(|c: char| !c.is_whitespace()).unwrap_or(rest.len());
        out.push_str(&rest[..blank]);
        rest = &rest[blank..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        if long(word) {
            out.extend(word.chars().take(QUOTE_CHARS));
            out.push_str(&format!("... ({} characters in all)", word.chars().count()));
        } else {
            out.push_str(word);
        }
        rest = &rest[end..];
    }
    std::borrow::Cow::Owned(out)
}

/// `s` made safe to quote in a message: control characters escaped as
/// `\u{..}` (an ESC must not reach a terminal), at most 80 characters
/// (a longer text ends in `...`).
pub fn quote_short(s: &str) -> String {
    one_line(s, 80)
}

/// `s` as one clean line of at most `max` characters: control characters
/// (line ends included) escaped as `\u{..}` (see [`push_escaped`]), a
/// longer text cut and ended in `...`.
pub fn one_line(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push_str("...");
            break;
        }
        push_escaped(&mut out, c, false);
    }
    out
}

/// Pushes `c` onto `out`, a control character escaped as `\u{..}` (an ESC
/// must not reach a terminal: it could retitle it or clear the screen);
/// with `keep_lines`, line feeds and tabs are kept as they are. The one
/// escaping rule of every message, report and file name fsmeta writes.
pub fn push_escaped(out: &mut String, c: char, keep_lines: bool) {
    if c.is_control() && !(keep_lines && (c == '\n' || c == '\t')) {
        out.extend(c.escape_unicode());
    } else {
        out.push(c);
    }
}

/// `s` with every control character but line feeds and tabs escaped as
/// `\u{..}` ([`push_escaped`]): for multi-line text (a report, a message)
/// that may quote what a user wrote. Borrowed when there is nothing to
/// escape.
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        push_escaped(&mut out, c, true);
    }
    std::borrow::Cow::Owned(out)
}

/// The longest name fsmeta accepts for something that becomes a file or
/// folder name (a scenario, a plot, a variant), in bytes: with the
/// entries written beside it (`.<name>.tmp-<pid>-<n>`, a shard file's
/// `<name>.shard-K-of-N.runs`, `<before>-vs-<after>`) it stays well
/// below the 255-byte limit of a file name on Linux file systems.
pub const MAX_NAME_BYTES: usize = 100;

/// Why `name` cannot be used as (the stem of) a file name, if it cannot:
/// empty, longer than [`MAX_NAME_BYTES`], `.` or `..`, starting with `.`
/// (fsmeta's own hidden entries start so), or holding `/`, `\\`, NUL or
/// another control character.
pub fn file_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("expected a non-empty name".into());
    }
    if name.len() > MAX_NAME_BYTES {
        return Some(format!(
            "a name of {} bytes is too long for a file name: at most {MAX_NAME_BYTES}",
            name.len()
        ));
    }
    if name.starts_with('.') {
        return Some(format!("`{}` cannot name a file: it may not start with '.'", quote_short(name)));
    }
    if let Some(c) = name.chars().find(|&c| c == '/' || c == '\\' || c.is_control()) {
        return Some(format!(
            "`{}` cannot name a file: it holds {}",
            quote_short(name),
            match c {
                '/' => "'/'".to_string(),
                '\\' => "'\\'".to_string(),
                c => format!("the control character {}", c.escape_unicode()),
            }
        ));
    }
    None
}

/// The line of a text file that an error points into, with the span the
/// error is about: what a rustc-style message shows with a caret under
/// the span. Control characters are shown as U+FFFD and a line longer
/// than 4,096 characters is cut to a window of that many around the span,
/// so a hostile file cannot drive the terminal or flood it (the renderer
/// shortens long lines further to the terminal's width).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    /// The line's text (perhaps a window of it), without its newline.
    pub text: String,
    /// The span, as a byte range into `text` (empty spans point at one
    /// character).
    pub span: std::ops::Range<usize>,
}

impl SourceLine {
    /// The widest window of a line shown, in characters.
    const WINDOW: usize = 4096;

    /// The line `text[line_start..]` (up to its newline) and the span
    /// `span` (byte offsets into `text`, clipped to the line).
    pub fn of(text: &str, span: std::ops::Range<usize>) -> SourceLine {
        let start = span.start.min(text.len());
        let line_start = text[..floor_char(text, start)].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i);
        let line = text[line_start..line_end].trim_end_matches('\r');
        let chars: Vec<char> = line.chars().collect();
        let at = |byte: usize| {
            line.get(..byte.saturating_sub(line_start).min(line.len()))
                .map_or(0, |p| p.chars().count())
        };
        let (a, b) = (
            at(floor_char(text, start)),
            at(floor_char(text, span.end.max(start))).max(at(start) + 1),
        );
        let from = a.saturating_sub(Self::WINDOW / 2).min(chars.len());
        let to = (from + Self::WINDOW).min(chars.len()).max(from);
        let shown: String = chars[from..to]
            .iter()
            .map(|&c| if c.is_control() && c != '\t' { '\u{fffd}' } else { c })
            .collect();
        let byte = |k: usize| shown.char_indices().nth(k.saturating_sub(from)).map_or(shown.len(), |(i, _)| i);
        let (s0, s1) = (byte(a), byte(b.min(to.max(a + 1))));
        SourceLine {
            text: shown.clone(),
            span: s0..s1.max(s0),
        }
    }
}

/// The largest char boundary at or below `i`.
fn floor_char(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// From a serde message such as "unknown field `thraeds`, expected one of
/// `files`, `threads`" returns the misspelt word and the closest candidate.
pub fn suggestion_from_serde(message: &str) -> Option<(String, String)> {
    let (_, rest) = message.split_once("unknown ")?;
    let mut ticks = rest.split('`');
    ticks.next()?;
    let word = ticks.next()?.to_string();
    let (_, expected) = rest.split_once("expected")?;
    let cands: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    closest(&word, cands).map(|c| (word, c))
}

/// Writes `field: message (did you mean `suggestion`?)`, the shape of every
/// parameter error.
pub fn write_field_message(f: &mut std::fmt::Formatter<'_>, field: &str, message: &str, suggestion: Option<&str>) -> std::fmt::Result {
    if !field.is_empty() {
        write!(f, "{field}: ")?;
    }
    write!(f, "{message}")?;
    if let Some(s) = suggestion {
        write!(f, " (did you mean `{s}`?)")?;
    }
    Ok(())
}

/// A serde/toml message in plain words: Rust type names become what a
/// scenario writer types (`u32` -> "a whole number from 0 to
/// 4,294,967,295"), and an enum's "variant" becomes a "value" (so it is
/// not confused with a `[[variant]]`).
pub fn plain(message: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        // TOML integers are 64-bit signed, so a u64 field tops out at
        // i64::MAX in a scenario file.
        ("expected u64", "expected a whole number from 0 to 9,223,372,036,854,775,807"),
        (
            "u64 value was too large",
            "too large: expected a whole number from 0 to 9,223,372,036,854,775,807 (the largest TOML integer)",
        ),
        (
            "as i128, expected any valid TOML value",
            "beyond the largest TOML integer: expected a whole number from 0 to 9,223,372,036,854,775,807",
        ),
        ("expected u32", "expected a whole number from 0 to 4,294,967,295"),
        ("expected u16", "expected a whole number from 0 to 65,535"),
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected usize", "expected a whole number of 0 or more"),
        ("expected i64", "expected a whole number"),
        ("expected i32", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        ("expected a sequence", "expected a list [a, b, ...]"),
        ("expected a map", "expected a table { key = value, ... }"),
        ("expected a borrowed string", "expected a string in quotes"),
        ("unknown variant", "unknown value"),
        ("invalid type: integer", "found the whole number"),
        ("invalid type: floating point", "found the number"),
        ("invalid type: string", "found the string"),
        ("invalid type: sequence", "found a list"),
        ("invalid type: map", "found a table"),
        ("invalid type: boolean", "found"),
        ("invalid value: integer", "found the whole number"),
        (
            "invalid length 3, expected an array of length 2",
            "expected two values [lo, hi], found three",
        ),
        ("invalid length", "wrong number of values:"),
    ];
    let mut out = message.to_string();
    for (from, to) in WORDS {
        out = out.replace(from, to);
    }
    if let Some(i) = out.find("expected struct ") {
        let end = out[i..].find([',', '\n']).map_or(out.len(), |e| i + e);
        out.replace_range(i..end, "expected a table of settings");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_lines_hold_the_span_and_nothing_raw() {
        let text = "a = 1\nthreads = -1\n";
        let at = text.find("-1").expect("in text");
        let l = SourceLine::of(text, at..at + 2);
        assert_eq!(l.text, "threads = -1");
        assert_eq!(&l.text[l.span.clone()], "-1");
        // An empty span points at one character; an ESC is not echoed.
        let l = SourceLine::of("x = \u{1b}[2J\n", 4..4);
        assert_eq!(l.text, "x = \u{fffd}[2J");
        assert_eq!(&l.text[l.span.clone()], "\u{fffd}");
        // A long line is cut to a window that still holds the span.
        let long = format!("{}key{}", "a".repeat(5000), "b".repeat(5000));
        let l = SourceLine::of(&long, 5000..5003);
        assert!(l.text.chars().count() <= 4096, "{}", l.text.len());
        assert_eq!(&l.text[l.span.clone()], "key");
        // At the end of the text (a file cut short).
        let l = SourceLine::of("{\"a\": ", 7..7);
        assert_eq!(l.span.start, l.text.len());
        assert_eq!(quote_short("\u{1b}x"), "\\u{1b}x");
        assert_eq!(escape_controls("a\u{1b}[2J\r\n\tb"), "a\\u{1b}[2J\\u{d}\n\tb");
        assert!(matches!(escape_controls("plain\n"), std::borrow::Cow::Borrowed(_)));
        assert!(quote_short(&"z".repeat(500)).ends_with("..."));
    }

    #[test]
    fn names_that_cannot_be_file_names_are_told_why() {
        for ok in ["queue-theory", "a b", "x.y", "\u{e9}t\u{e9}", &"n".repeat(MAX_NAME_BYTES)] {
            assert_eq!(file_name_problem(ok), None, "{ok}");
        }
        let why = |s: &str| file_name_problem(s).unwrap_or_default();
        assert!(why("").contains("non-empty"));
        assert!(why(".").contains("start with '.'"));
        assert!(why("..").contains("start with '.'"));
        assert!(why(&"n".repeat(MAX_NAME_BYTES + 1)).contains("101 bytes"));
        assert!(why("a/b").contains("'/'"));
        assert!(why("a\\b").contains("'\\'"));
        assert!(why("a\0b").contains("\\u{0}"), "{}", why("a\0b"));
        assert!(why("a\u{1b}[2Jb").contains("`a\\u{1b}[2Jb`"), "{}", why("a\u{1b}[2Jb"));
    }

    #[test]
    fn long_words_are_cut_with_their_length() {
        let huge = format!("no metric `{}`; this workload reports: ops", "m".repeat(3_000_000));
        let short = shorten_words(&huge);
        assert!(short.len() < 300, "{}", short.len());
        assert!(short.starts_with("no metric `mmm"), "{short}");
        assert!(
            short.contains("... (3000003 characters in all) this workload reports: ops"),
            "{short}"
        );
        let path = format!("cannot read /{}", "p/".repeat(70));
        assert_eq!(shorten_words(&path), path.as_str(), "a run of 141 characters is kept whole");
        assert!(matches!(shorten_words("a b\n c"), std::borrow::Cow::Borrowed(_)));
        // No suggestion for a huge word, at once.
        assert_eq!(closest(&"k".repeat(1_000_000), ["k", "kk"]), None);
    }

    #[test]
    fn closest_takes_the_nearest_within_a_third_of_the_word() {
        let words = ["threads", "files", "placement"];
        assert_eq!(closest("thraeds", words).as_deref(), Some("threads"));
        assert_eq!(closest("file", words).as_deref(), Some("files"));
        // 3 edits from `placement`: more than a third of `plment` (6 chars), and than 2.
        assert_eq!(closest("plment", words), None);
        assert_eq!(closest("zzzzzzzz", words), None);
        // A tie at distance 1 goes to the candidate that sorts first.
        assert_eq!(closest("ab", ["ac", "aa"]).as_deref(), Some("aa"));
    }

    #[test]
    fn serde_type_names_become_plain_words() {
        assert_eq!(
            plain("invalid value: integer `-1`, expected u64"),
            "found the whole number `-1`, expected a whole number from 0 to 9,223,372,036,854,775,807"
        );
        // What the toml crate says of integers past i64::MAX: both now give
        // the range a scenario can use.
        assert_eq!(
            plain("u64 value was too large"),
            "too large: expected a whole number from 0 to 9,223,372,036,854,775,807 (the largest TOML integer)"
        );
        assert_eq!(
            plain("invalid type: integer `18446744073709551616` as i128, expected any valid TOML value"),
            "found the whole number `18446744073709551616` beyond the largest TOML integer: expected a whole number from 0 to 9,223,372,036,854,775,807"
        );
        assert_eq!(
            plain("invalid type: integer `3`, expected struct AgingParams"),
            "found the whole number `3`, expected a table of settings"
        );
        assert!(plain("unknown variant `percpus`, expected one of `atomic`").starts_with("unknown value"));
    }
}
