//! Small text helpers shared across layers (no dependencies on any).

/// Levenshtein edit distance between two strings (by chars).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a likely
/// misspelling (distance at most a third of the word, and at least 2).
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, _)| d <= limit)
        .min()
        .map(|(_, c)| c.to_string())
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
