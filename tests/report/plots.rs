//! Every plot of the golden scenario exists as PNG and SVG, decodes (PNG
//! signature, IHDR chunk with the configured size) and parses (a well
//! formed XML tree under one `<svg>` root of the configured size).

use super::{run_golden, temp_dir};
use fsmeta::report::plot::{HEIGHT_PX, WIDTH_PX};

/// Width and height from a PNG's IHDR chunk, after checking the signature.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let sig = b"\x89PNG\r\n\x1a\n";
    if bytes.len() < 24 || &bytes[..8] != sig || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    Some((be(16), be(20)))
}

/// Checks that `svg` is one well-formed element tree (every tag closed in
/// order, quoted attributes) and returns the root's name and attributes.
fn xml_root(svg: &str) -> Result<(String, String), String> {
    let mut stack: Vec<String> = Vec::new();
    let mut root: Option<(String, String)> = None;
    let mut rest = svg.trim_start();
    if rest.starts_with("<?xml") {
        rest = &rest[rest.find("?>").ok_or("unclosed <?xml")? + 2..];
    }
    while let Some(open) = rest.find('<') {
        if stack.is_empty() && root.is_some() && !rest[..open].trim().is_empty() {
            return Err("text after the root".into());
        }
        rest = &rest[open + 1..];
        // A tag ends at the first '>' outside quotes.
        let mut quote = None;
        let end = rest
            .char_indices()
            .find(|&(_, c)| match quote {
                Some(q) if c == q => {
                    quote = None;
                    false
                }
                Some(_) => false,
                None if c == '"' || c == '\'' => {
                    quote = Some(c);
                    false
                }
                None => c == '>',
            })
            .map(|(i, _)| i)
            .ok_or("unclosed tag")?;
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let top = stack.pop().ok_or("close without open")?;
            if top != name.trim() {
                return Err(format!("</{name}> closes <{top}>"));
            }
            continue;
        }
        let name = tag.split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or("").to_string();
        if stack.is_empty() {
            if root.is_some() {
                return Err("two roots".into());
            }
            root = Some((name.clone(), tag.to_string()));
        }
        if !tag.ends_with('/') {
            stack.push(name);
        }
    }
    if !stack.is_empty() {
        return Err(format!("unclosed <{}>", stack.join("> <")));
    }
    root.ok_or_else(|| "no root".into())
}

#[test]
fn every_plot_is_a_png_and_an_svg_of_the_configured_size() {
    let dir = run_golden(&temp_dir("plots"));
    for stem in ["line", "bars", "heat", "heat-ratio", "busiest"] {
        let png = std::fs::read(dir.join(format!("{stem}.png"))).expect("png exists");
        assert_eq!(png_size(&png), Some((WIDTH_PX, HEIGHT_PX)), "{stem}.png");
        assert!(png.len() > 5_000, "{stem}.png has only {} bytes", png.len());
        let svg = std::fs::read_to_string(dir.join(format!("{stem}.svg"))).expect("svg exists");
        let (name, attrs) = xml_root(&svg).unwrap_or_else(|e| panic!("{stem}.svg: {e}"));
        assert_eq!(name, "svg");
        assert!(attrs.contains(&format!("width=\"{WIDTH_PX}\"")), "{attrs}");
        assert!(attrs.contains(&format!("height=\"{HEIGHT_PX}\"")), "{attrs}");
        // The small print: scenario, seed and version.
        let footer = format!("golden · seed 7 · 3 replication(s) · fsmeta {}", env!("CARGO_PKG_VERSION"));
        assert!(svg.contains(&footer), "{stem}.svg has no small print");
    }
}

#[test]
fn plots_show_marks_panels_and_resources() {
    let dir = run_golden(&temp_dir("content"));
    let read = |n: &str| std::fs::read_to_string(dir.join(n)).expect(n);
    assert!(read("line.svg").contains(">reference<") || read("line.svg").contains("reference"));
    assert!(read("bars.svg").contains("published"));
    let heat = read("heat.svg");
    assert!(heat.contains("ticket") && heat.contains("queued"));
    assert!(read("heat-ratio.svg").contains("queued / ticket"));
    assert!(read("busiest.svg").contains(">l<") || read("busiest.svg").contains("l.cpu") || read("busiest.svg").contains("busiest"));
}

#[test]
fn the_xml_checker_rejects_broken_documents() {
    assert!(xml_root("<svg><g></svg>").is_err());
    assert!(xml_root("<svg></svg><svg></svg>").is_err());
    assert!(xml_root("<svg a=\"1>2\"><g/></svg>").is_ok());
    assert!(png_size(b"not a png at all, not at all").is_none());
}

/// Runs a scenario of `tests/report/steps/` into a fresh folder and
/// returns its output folder.
fn run_steps(file: &str, name: &str) -> std::path::PathBuf {
    let out = temp_dir(&format!("steps-{file}"));
    let path = format!("tests/report/steps/{file}.toml");
    let o = super::fsmeta(&["run", &path, "--out", out.to_str().expect("utf-8"), "--silent", "--jobs", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out.join(name)
}

/// Checks `dir/<stem>.png` and `.svg`: right size, well formed, small
/// print; returns the SVG text.
fn check_plot(dir: &std::path::Path, stem: &str, footer: &str) -> String {
    let png = std::fs::read(dir.join(format!("{stem}.png"))).expect("png exists");
    assert_eq!(png_size(&png), Some((WIDTH_PX, HEIGHT_PX)), "{stem}.png");
    assert!(png.len() > 5_000, "{stem}.png has only {} bytes", png.len());
    let svg = std::fs::read_to_string(dir.join(format!("{stem}.svg"))).expect("svg exists");
    let (name, attrs) = xml_root(&svg).unwrap_or_else(|e| panic!("{stem}.svg: {e}"));
    assert_eq!(name, "svg");
    assert!(attrs.contains(&format!("width=\"{WIDTH_PX}\"")), "{attrs}");
    assert!(attrs.contains(&format!("height=\"{HEIGHT_PX}\"")), "{attrs}");
    assert!(svg.contains(footer), "{stem}.svg has no small print");
    svg
}

#[test]
fn histograms_are_drawn_from_the_workloads_log2_buckets() {
    let dir = run_steps("histogram", "steps-histogram");
    let footer = format!("steps-histogram · seed 3 · 2 replication(s) · fsmeta {}", env!("CARGO_PKG_VERSION"));
    let share = check_plot(&dir, "share", &footer);
    for text in [
        "share of inserts (%)",
        "insert latency (ns) on log2 buckets (1K = 1024)",
        "rbtree",
        "xarray",
        "reference median, rbtree: 729 ns",
        "reference mean: 272.148 ns",
    ] {
        assert!(share.contains(text), "share.svg has no `{text}`");
    }
    let counts = check_plot(&dir, "counts", &footer);
    assert!(counts.contains("inserts (count)"));
    assert!(!counts.contains("rbtree"), "variants = [\"xarray\"] shows xarray only");
}

#[test]
fn bars_and_lines_run_along_the_phases_of_a_script() {
    let dir = run_steps("phases", "steps-phases");
    let footer = format!("steps-phases · seed 1 · 1 replication(s) · fsmeta {}", env!("CARGO_PKG_VERSION"));
    let bars = check_plot(&dir, "per-flush", &footer);
    for text in [
        "unlink before sync",
        "rm -fr + unmount",
        "whole script",
        "reference",
        "batches per flush",
    ] {
        assert!(bars.contains(text), "per-flush.svg has no `{text}`");
    }
    let line = check_plot(&dir, "time-line", &footer);
    assert!(line.contains("us per flush") && !line.contains("(us)"), "the unit is not repeated");
}

/// Runs `tests/report/steps/phases.toml` with `extra` appended, expecting
/// bad input: exit 2 and every piece of `want` in the message.
fn rejects(extra: &str, want: &[&str]) {
    let base = std::fs::read_to_string(super::root().join("tests/report/steps/phases.toml")).expect("phases.toml");
    let dir = temp_dir("steps-bad");
    let file = dir.join("bad.toml");
    std::fs::write(&file, format!("{base}\n{extra}")).expect("write");
    let o = super::fsmeta(&[
        "run",
        file.to_str().expect("utf-8"),
        "--out",
        dir.to_str().expect("utf-8"),
        "--silent",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for w in want {
        assert!(err.contains(w), "no `{w}` in: {err}");
    }
}

#[test]
fn step_axis_plots_reject_what_the_workload_does_not_report() {
    rejects(
        "[[plot]]\nkind = \"histogram\"\nx = \"phase\"\n",
        &["plot[2].x", "log2-bucket step axis", "this workload reports none"],
    );
    rejects(
        "[[plot]]\nkind = \"bars\"\nx = \"phase\"\ny = \"batches_per_flsh\"\n",
        &["plot[2].y", "batches_per_flush"],
    );
    rejects(
        "[[plot]]\nkind = \"bars\"\nx = \"phse\"\ny = \"batches\"\n",
        &["plot[2].x", "neither a swept parameter nor a step axis", "phase"],
    );
    rejects(
        "[[plot]]\nkind = \"bars\"\nx = \"phase\"\ny = \"batches\"\nmarks = [{ at = { phase = \"rm\" }, value = 1 }]\n",
        &["plot[2].marks[0].at.phase", "not a step of `phase`", "rm_fr"],
    );
    rejects(
        "[[plot]]\nx = \"phase\"\ny = \"batches\"\nshare = true\n",
        &["plot[2].share", "histogram"],
    );
}
