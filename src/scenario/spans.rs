//! Maps dotted field paths to their place in the scenario text, so that
//! errors found after parsing (ranges, references, overrides) can still
//! name a line and column.

use super::error::Location;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use toml::de::{DeTable, DeValue};

/// Byte spans of every key's value in a document, by dotted path
/// (array elements as `name[i]`, e.g. `variant[1].counters.c.kind`).
#[derive(Debug, Clone, Default)]
pub struct SpanIndex {
    spans: BTreeMap<String, Range<usize>>,
    extents: BTreeMap<String, Range<usize>>,
    line_starts: Vec<usize>,
    text: String,
}

type Spans = BTreeMap<String, Range<usize>>;

/// Records, per path, the key's span (where errors point) and the span
/// from key to end of value (to find the field an error offset falls in).
fn walk(prefix: &str, table: &DeTable<'_>, out: &mut Spans, ext: &mut Spans) {
    for (k, v) in table.iter() {
        let path = if prefix.is_empty() {
            k.get_ref().to_string()
        } else {
            format!("{prefix}.{}", k.get_ref())
        };
        out.insert(path.clone(), k.span());
        ext.insert(path.clone(), k.span().start..v.span().end.max(k.span().end));
        walk_value(&path, v.get_ref(), out, ext);
    }
}

fn walk_value(path: &str, v: &DeValue<'_>, out: &mut Spans, ext: &mut Spans) {
    match v {
        DeValue::Table(t) => walk(path, t, out, ext),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let p = format!("{path}[{i}]");
                out.insert(p.clone(), item.span());
                ext.insert(p.clone(), item.span());
                walk_value(&p, item.get_ref(), out, ext);
            }
        }
        _ => {}
    }
}

impl SpanIndex {
    /// Indexes `text`; a text that does not parse gives an empty index.
    pub fn build(text: &str) -> SpanIndex {
        Self::of(text, DeTable::parse(text).ok().as_ref().map(|d| d.get_ref()))
    }

    /// [`SpanIndex::build`] from `text` already parsed (`doc`; `None`
    /// when it does not parse).
    pub fn of(text: &str, doc: Option<&DeTable<'_>>) -> SpanIndex {
        let (mut spans, mut extents) = (BTreeMap::new(), BTreeMap::new());
        if let Some(doc) = doc {
            walk("", doc, &mut spans, &mut extents);
        }
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SpanIndex {
            spans,
            extents,
            line_starts,
            text: text.to_string(),
        }
    }

    /// Line and column of a byte offset.
    pub fn location(&self, file: &Path, offset: usize) -> Location {
        self.location_span(file, offset..offset)
    }

    /// Line and column of the start of a byte span, with the span's line.
    pub fn location_span(&self, file: &Path, span: Range<usize>) -> Location {
        let offset = span.start;
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let column = self
            .text
            .get(start..offset.min(self.text.len()))
            .map_or(1, |s| s.chars().count() + 1);
        Location {
            file: file.to_path_buf(),
            line,
            column,
            source: Some(crate::text::SourceLine::of(&self.text, span)),
        }
    }

    /// The span of `path`, or of its nearest ancestor that is in the file.
    pub fn find(&self, path: &str) -> Option<Range<usize>> {
        let mut p = path;
        loop {
            if let Some(s) = self.spans.get(p) {
                return Some(s.clone());
            }
            let cut = p.rfind(['.', '['])?;
            p = &p[..cut];
        }
    }

    /// Whether `path` itself (not a parent) is a key of the document.
    pub fn contains(&self, path: &str) -> bool {
        self.spans.contains_key(path)
    }

    /// Every key path of the document, in sorted order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.spans.keys().map(String::as_str)
    }

    /// Like [`SpanIndex::find`], as a location.
    pub fn locate(&self, file: &Path, path: &str) -> Option<Location> {
        self.find(path).map(|s| self.location_span(file, s))
    }

    /// The deepest indexed path whose span contains `offset` (for errors
    /// that come with a span but no field name).
    pub fn path_at(&self, offset: usize) -> Option<String> {
        self.extents
            .iter()
            .filter(|(_, s)| s.start <= offset && offset < s.end.max(s.start + 1))
            .max_by_key(|(p, s)| (s.start, p.len()))
            .map(|(p, _)| p.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys_and_array_elements() {
        let text = "[scenario]\nname = \"x\"\n\n[[variant]]\nname = \"a\"\ncounters.c.kind = \"atomic\"\n";
        let idx = SpanIndex::build(text);
        let f = Path::new("t.toml");
        assert_eq!(idx.locate(f, "scenario.name").map(|l| (l.line, l.column)), Some((2, 1)));
        assert_eq!(idx.locate(f, "variant[0].counters.c.kind").map(|l| l.line), Some(6));
        assert_eq!(idx.locate(f, "scenario.nope").map(|l| l.line), Some(1));
    }
}
