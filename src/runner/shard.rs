//! Shard files: the runs one `fsmeta run --shard K/N` computed, with what
//! `fsmeta merge` needs to rebuild the study and check that every shard
//! came from the same one.
//!
//! JSON through serde ([`ShardFile`] is the body), in an envelope that
//! `merge` checks before it trusts a byte of the body:
//!
//! ```text
//! { "format": "fsmeta-shard", "version": 2,
//!   "build": "<fsmeta version>+<fingerprint of the executable>",
//!   "checksum": "<fingerprint of the body's canonical JSON>",
//!   "shard": { "scenario": .., "file": .., "quick": .., "seed": ..,
//!              "study": .., "runs": .., "shard": "K/N",
//!              "results": [ { "run": <plan index>, "metrics": { .. } } ] } }
//! ```
//!
//! A file of another format or version, of another fsmeta build, whose
//! body does not match its checksum (an edited value, a metric added or
//! deleted), or that is not JSON of this shape (cut short, corrupted) is
//! refused, naming the file and, where there is one, the line and column.

use super::store::{Refusal, build_id, checksum, exact, place_of, read_regular, read_versioned};
use crate::engine::Metrics;
use crate::plan::Shard;
use crate::text::SourceLine;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `format` of a shard file.
pub const FORMAT: &str = "fsmeta-shard";

/// The version of shard files this fsmeta writes and reads (1 was the
/// line format before issue 34).
pub const VERSION: u32 = 2;

/// File name suffix of shard files.
pub const SUFFIX: &str = ".runs";

/// The runs of one shard and the study they belong to.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardFile {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario file, absolute.
    pub file: PathBuf,
    /// Loaded in quick mode.
    pub quick: bool,
    /// The `--seed` override, if any.
    pub seed: Option<u64>,
    /// Fingerprint of the whole plan (see `Study::fingerprint`).
    pub study: String,
    /// Runs in the whole plan.
    pub runs: usize,
    /// Which slice.
    pub shard: Shard,
    /// The slice's runs: plan index and metrics, in plan order.
    pub results: Vec<(usize, Metrics)>,
}

/// One run in a shard file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunEntry {
    run: usize,
    #[serde(with = "exact")]
    metrics: Metrics,
}

/// [`ShardFile`] as it is written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    scenario: String,
    file: PathBuf,
    quick: bool,
    seed: Option<u64>,
    study: String,
    runs: usize,
    shard: String,
    results: Vec<RunEntry>,
}

/// The whole file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    format: String,
    version: u32,
    build: String,
    checksum: String,
    shard: Body,
}

/// A shard file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShardFileError {
    /// The file cannot be read or written.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error (in the message, not chained, so it prints once).
        cause: std::io::Error,
    },
    /// The file is not a well-formed shard file (cut short, corrupted).
    #[error("{}:{line}:{column}: {message}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// What was expected.
        message: String,
        /// The line, for showing it.
        source_line: Option<SourceLine>,
    },
    /// A shard file of another format or version.
    #[error("{}: a shard file of format {found}; this fsmeta reads {expected} (re-run the shard with this fsmeta)", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// What the file says.
        found: String,
        /// What this fsmeta reads.
        expected: String,
    },
    /// A shard file written by another fsmeta build.
    #[error("{}: written by fsmeta build {found}; this is build {expected} (its results may differ: re-run the shard with this fsmeta)", path.display())]
    Build {
        /// The file.
        path: PathBuf,
        /// The build the file names.
        found: String,
        /// This build.
        expected: String,
    },
    /// The content does not match the checksum written with it.
    #[error("{}:{line}:{column}: the content does not match its checksum (checksum {found}, content {computed}): the file was changed after fsmeta wrote it", path.display())]
    Checksum {
        /// The file.
        path: PathBuf,
        /// Line of the checksum, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// The checksum written in the file.
        found: String,
        /// The checksum of the content read.
        computed: String,
        /// The line, for showing it.
        source_line: Option<SourceLine>,
    },
}

impl ShardFileError {
    /// The error as a located diagnostic, for the errors that have a
    /// line and column in the file.
    pub fn diagnostic(&self) -> Option<crate::diagnostic::Diagnostic> {
        let (path, line, column, source, message) = match self {
            ShardFileError::Format {
                path,
                line,
                column,
                message,
                source_line,
            } => (path, *line, *column, source_line, message.clone()),
            ShardFileError::Checksum {
                path,
                line,
                column,
                found,
                computed,
                source_line,
            } => (
                path,
                *line,
                *column,
                source_line,
                format!("the content does not match its checksum (checksum {found}, content {computed})"),
            ),
            _ => return None,
        };
        let help = matches!(self, ShardFileError::Checksum { .. })
            .then(|| "the file was changed after fsmeta wrote it: run that shard again".to_string());
        Some(crate::diagnostic::Diagnostic {
            file: path.clone(),
            line,
            column,
            source: source.clone(),
            message,
            help,
        })
    }
}

impl ShardFile {
    /// The file name of shard `shard` of scenario `name`:
    /// `<name>.shard-K-of-N.runs`.
    pub fn file_name(name: &str, shard: Shard) -> String {
        format!("{name}.shard-{}-of-{}{SUFFIX}", shard.index, shard.count)
    }

    fn body(&self) -> Body {
        Body {
            scenario: self.scenario.clone(),
            file: self.file.clone(),
            quick: self.quick,
            seed: self.seed,
            study: self.study.clone(),
            runs: self.runs,
            shard: self.shard.to_string(),
            results: self
                .results
                .iter()
                .map(|(run, metrics)| RunEntry {
                    run: *run,
                    metrics: metrics.clone(),
                })
                .collect(),
        }
    }

    /// The file's text, for the build `build` (see
    /// [`super::store::build_id`]).
    pub fn to_text(&self, build: &str) -> String {
        let shard = self.body();
        let env = Envelope {
            format: FORMAT.into(),
            version: VERSION,
            build: build.into(),
            checksum: checksum(&shard),
            shard,
        };
        // Plain data serializes into memory without failing.
        let mut text = serde_json::to_string_pretty(&env).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Writes the file as `dir/<file_name>`, atomically (a temporary file
    /// renamed), and returns its path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, ShardFileError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |cause| ShardFileError::Io { path, cause }
        };
        let build = build_id().map_err(|e| io(dir)(std::io::Error::other(e)))?;
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let name = Self::file_name(&self.scenario, self.shard);
        let path = dir.join(&name);
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        std::fs::write(&tmp, self.to_text(build)).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        Ok(path)
    }

    /// Reads a shard file (a regular file: a device or a FIFO is refused
    /// before it is read) written by this build of fsmeta.
    pub fn read(path: &Path) -> Result<ShardFile, ShardFileError> {
        let io = |cause| ShardFileError::Io {
            path: path.to_path_buf(),
            cause,
        };
        let text = read_regular(path).map_err(io)?;
        let build = build_id().map_err(|e| io(std::io::Error::other(e)))?;
        Self::parse(path, &text, build)
    }

    /// Parses the text of a shard file read from `path`, checking that
    /// `build` wrote it.
    pub fn parse(path: &Path, text: &str, build: &str) -> Result<ShardFile, ShardFileError> {
        let p = path.to_path_buf();
        let at = |line: usize, column: usize, message: String| ShardFileError::Format {
            path: p.clone(),
            line,
            column,
            source_line: line_of(text, line, column),
            message,
        };
        let env: Envelope = read_versioned(text, FORMAT, VERSION).map_err(|r| match r {
            Refusal::Malformed { line, column, message } => at(line, column, message),
            Refusal::Version { found, expected } => ShardFileError::Version {
                path: p.clone(),
                found,
                expected,
            },
        })?;
        if env.build != build {
            return Err(ShardFileError::Build {
                path: p,
                found: crate::text::quote_short(&env.build),
                expected: build.to_string(),
            });
        }
        let computed = checksum(&env.shard);
        if computed != env.checksum {
            let (line, column) = place_of(text, "\"checksum\"");
            return Err(ShardFileError::Checksum {
                source_line: line_of(text, line, column),
                path: p,
                line,
                column,
                found: crate::text::quote_short(&env.checksum),
                computed,
            });
        }
        let b = env.shard;
        let shard = b.shard.parse().map_err(|e: crate::plan::ShardError| {
            let (line, column) = place_of(text, "\"shard\": \"");
            at(line, column, e.to_string())
        })?;
        Ok(ShardFile {
            scenario: b.scenario,
            file: b.file,
            quick: b.quick,
            seed: b.seed,
            study: b.study,
            runs: b.runs,
            shard,
            results: b.results.into_iter().map(|r| (r.run, r.metrics)).collect(),
        })
    }
}

/// The source line at `line`:`column` (from 1) of `text`.
fn line_of(text: &str, line: usize, column: usize) -> Option<SourceLine> {
    let start = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum::<usize>();
    let rest = text.get(start..)?;
    let col = rest.char_indices().nth(column.saturating_sub(1)).map_or(rest.len(), |(i, _)| i);
    let len = rest[col..].chars().next().map_or(0, char::len_utf8);
    Some(SourceLine::of(text, start + col..start + col + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ShardFile {
        let mut m = Metrics::new();
        m.insert("ops".into(), 1000.0);
        m.insert("x.y".into(), 1.0 / 3.0);
        m.insert("z".into(), f64::NAN);
        ShardFile {
            scenario: "s".into(),
            file: PathBuf::from("/a/s.toml"),
            quick: true,
            seed: Some(7),
            study: "ab".into(),
            runs: 5,
            shard: Shard { index: 2, count: 3 },
            results: vec![(1, m.clone()), (4, m)],
        }
    }

    fn refuse(text: &str) -> ShardFileError {
        ShardFile::parse(Path::new("x.runs"), text, "B").expect_err("refused")
    }

    #[test]
    fn shard_files_round_trip() {
        let f = sample();
        let text = f.to_text("B");
        let g = ShardFile::parse(Path::new("x"), &text, "B").expect("parses");
        assert_eq!(g.to_text("B"), text);
        assert_eq!(g.results[1].1["x.y"].to_bits(), (1.0f64 / 3.0).to_bits());
        assert!(g.results[0].1["z"].is_nan());
    }

    #[test]
    fn damaged_shard_files_are_refused_where_the_damage_is() {
        let text = sample().to_text("B");
        // Cut short anywhere: a located format error, never a panic.
        for cut in [0, 1, 10, text.len() / 2, text.len() - 3] {
            match refuse(&text[..cut]) {
                ShardFileError::Format { line, .. } => assert!(line >= 1, "{cut}"),
                e => panic!("cut at {cut}: {e}"),
            }
        }
        // A value edited, a metric added or deleted, NaN put in: the
        // checksum disagrees.
        let edits = [
            text.replacen("1000.0", "1001.0", 1),
            text.replacen("\"ops\": 1000.0,", "\"ops\": 1000.0, \"new\": 1.0,", 1),
            text.replacen("\"ops\": 1000.0,", "", 1),
            text.replacen("1000.0", "\"NaN\"", 1),
            text.replacen("\"run\": 4", "\"run\": 3", 1),
            // A metric doubled with another value: JSON's last one is read.
            text.replacen("\"ops\": 1000.0,", "\"ops\": 1000.0, \"ops\": 7.0,", 1),
        ];
        for bad in &edits {
            assert_ne!(bad, &text, "the edit applies");
            let e = refuse(bad);
            assert!(matches!(e, ShardFileError::Checksum { line: 5, .. }), "{e}");
            assert!(
                e.to_string().starts_with("x.runs:5:3: the content does not match its checksum"),
                "{e}"
            );
        }
        // Doubled with the value written last: read as written.
        let doubled = text.replacen("\"ops\": 1000.0,", "\"ops\": 7.0, \"ops\": 1000.0,", 1);
        let back = ShardFile::parse(Path::new("x"), &doubled, "B").expect("the same content");
        assert_eq!(back.results[0].1["ops"], 1000.0);
        // Another version, another build, not JSON: named as such.
        let e = refuse(&text.replacen("\"version\": 2", "\"version\": 3", 1));
        assert_eq!(
            e.to_string(),
            "x.runs: a shard file of format \"fsmeta-shard\" version 3; this fsmeta reads \"fsmeta-shard\" version 2 (re-run the shard with this fsmeta)"
        );
        let e = refuse("fsmeta-shard 1\nscenario s\n");
        assert!(matches!(e, ShardFileError::Format { line: 1, .. }), "{e}");
        let e = ShardFile::parse(Path::new("x.runs"), &text, "C").expect_err("other build");
        assert!(e.to_string().contains("written by fsmeta build B; this is build C"), "{e}");
        // A field of the wrong type is located at its line.
        let e = refuse(&text.replacen("\"quick\": true", "\"quick\": \"maybe\"", 1));
        match e {
            ShardFileError::Format { line, source_line, .. } => {
                assert_eq!(line, 9);
                assert!(source_line.is_some_and(|l| l.text.contains("maybe")));
            }
            e => panic!("{e}"),
        }
    }
}
