//! Small text helpers shared across layers (no dependencies on any).

/// The candidate closest to `word` by Levenshtein distance (in chars,
/// `strsim::levenshtein`), if it is close enough to be a likely
/// misspelling (distance at most a third of the word, and at least 2);
/// ties go to the candidate that sorts first.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(word, c), c))
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
