//! `summary.json`: the summary rows as JSON, written by hand (no extra
//! dependency), with a fixed key order.

use super::csv::value_text;
use super::stats::Summary;
use crate::scenario::Scenario;
use std::fmt::Write;

/// A JSON string literal.
pub fn string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn number(x: f64) -> String {
    if x.is_finite() { format!("{x}") } else { "null".into() }
}

/// The whole summary as one JSON document.
pub fn summary_json(s: &Scenario, rows: &[Summary]) -> String {
    let mut out = format!(
        "{{\n  \"scenario\": {},\n  \"seed\": {},\n  \"rows\": [\n",
        string(&s.doc.scenario.name),
        s.doc.scenario.seed
    );
    for (i, r) in rows.iter().enumerate() {
        let params: Vec<String> = s
            .sweep
            .iter()
            .zip(&s.points[r.point].values)
            .map(|((p, _), v)| format!("{}: {}", string(p), string(&value_text(v))))
            .collect();
        let _ = writeln!(
            out,
            "    {{\"variant\": {}, \"point\": {{{}}}, \"metric\": {}, \"mean\": {}, \"stddev\": {}, \"ci95_lo\": {}, \"ci95_hi\": {}, \"n\": {}}}{}\n",
            string(&s.variants[r.variant].name),
            params.join(", "),
            string(&r.metric),
            number(r.mean),
            number(r.stddev),
            number(r.ci95_lo),
            number(r.ci95_hi),
            r.n,
            if i + 1 < rows.len() { "," } else { "" }
        );
    }
    out.push_str("  ]\n}\n");
    out
}
