//! Shard files: the runs one `fsmeta run --shard K/N` computed, with what
//! `fsmeta merge` needs to rebuild the study and check that every shard
//! came from the same one.
//!
//! Text, one field per line, then one block per run:
//!
//! ```text
//! fsmeta-shard 1
//! scenario <name>
//! file <absolute path of the scenario file>
//! quick <true|false>
//! seed <u64|none>
//! study <fingerprint of every planned run>
//! runs <planned runs>
//! shard <K>/<N>
//! run <plan index>
//! <metric><TAB><f64 bits in hex>
//! ...
//! end
//! ```

use super::store::{parse_metric, write_metrics};
use crate::engine::Metrics;
use crate::plan::Shard;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// First line of a shard file.
const MAGIC: &str = "fsmeta-shard 1";

/// File name suffix of shard files.
pub const SUFFIX: &str = ".runs";

/// The runs of one shard and the study they belong to.
#[derive(Debug, Clone)]
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

/// A shard file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShardFileError {
    /// The file cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a well-formed shard file.
    #[error("{}:{line}: {message}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// Line number, from 1.
        line: usize,
        /// What was expected.
        message: String,
    },
}

impl ShardFile {
    /// The file name of shard `shard` of scenario `name`:
    /// `<name>.shard-K-of-N.runs`.
    pub fn file_name(name: &str, shard: Shard) -> String {
        format!("{name}.shard-{}-of-{}{SUFFIX}", shard.index, shard.count)
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut t = String::new();
        let seed = self.seed.map_or("none".to_string(), |s| s.to_string());
        let _ = write!(
            t,
            "{MAGIC}\nscenario {}\nfile {}\nquick {}\nseed {seed}\nstudy {}\nruns {}\nshard {}\n",
            self.scenario,
            self.file.display(),
            self.quick,
            self.study,
            self.runs,
            self.shard
        );
        for (i, m) in &self.results {
            let _ = writeln!(t, "run {i}");
            write_metrics(&mut t, m);
        }
        t.push_str("end\n");
        t
    }

    /// Writes the file as `dir/<file_name>`, atomically (a temporary file
    /// renamed), and returns its path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, ShardFileError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ShardFileError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let name = Self::file_name(&self.scenario, self.shard);
        let path = dir.join(&name);
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        std::fs::write(&tmp, self.to_text()).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        Ok(path)
    }

    /// Reads a shard file.
    pub fn read(path: &Path) -> Result<ShardFile, ShardFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ShardFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Parses the text of a shard file read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<ShardFile, ShardFileError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let fail = |line: usize, message: String| ShardFileError::Format {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut field = |name: &str| -> Result<(usize, String), ShardFileError> {
            match lines.next() {
                Some((n, l)) => match l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')) {
                    Some(v) => Ok((n, v.to_string())),
                    None => Err(fail(n, format!("expected `{name} ...`, found `{l}`"))),
                },
                None => Err(fail(0, format!("ends before `{name}`"))),
            }
        };
        let (n, magic) = field("fsmeta-shard")?;
        if magic != "1" {
            return Err(fail(n, format!("unknown shard file format `{magic}` (this fsmeta reads format 1)")));
        }
        let scenario = field("scenario")?.1;
        let file = PathBuf::from(field("file")?.1);
        let (n, quick) = field("quick")?;
        let quick = quick.parse().map_err(|_| fail(n, "expected true or false".into()))?;
        let (n, seed) = field("seed")?;
        let seed = match seed.as_str() {
            "none" => None,
            s => Some(s.parse().map_err(|_| fail(n, "expected a seed or `none`".into()))?),
        };
        let study = field("study")?.1;
        let (n, runs) = field("runs")?;
        let runs = runs.parse().map_err(|_| fail(n, "expected a number of runs".into()))?;
        let (n, shard) = field("shard")?;
        let shard = shard.parse().map_err(|e: crate::plan::ShardError| fail(n, e.to_string()))?;
        let mut results: Vec<(usize, Metrics)> = Vec::new();
        let mut ended = false;
        for (n, l) in lines {
            if l == "end" {
                ended = true;
                break;
            }
            if let Some(i) = l.strip_prefix("run ") {
                let i = i.parse().map_err(|_| fail(n, "expected `run <plan index>`".into()))?;
                results.push((i, Metrics::new()));
                continue;
            }
            let (k, v) = parse_metric(l).ok_or_else(|| fail(n, "expected `<metric><TAB><16 hex digits>`".into()))?;
            match results.last_mut() {
                Some((_, m)) => {
                    m.insert(k, v);
                }
                None => return Err(fail(n, "a metric before the first `run` line".into())),
            }
        }
        if !ended {
            return Err(fail(text.lines().count(), "the file is cut short (no `end` line)".into()));
        }
        Ok(ShardFile {
            scenario,
            file,
            quick,
            seed,
            study,
            runs,
            shard,
            results,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_files_round_trip_and_refuse_damage() {
        let mut m = Metrics::new();
        m.insert("ops".into(), 1000.0);
        m.insert("x.y".into(), 1.0 / 3.0);
        let f = ShardFile {
            scenario: "s".into(),
            file: PathBuf::from("/a/s.toml"),
            quick: true,
            seed: Some(7),
            study: "ab".into(),
            runs: 5,
            shard: Shard { index: 2, count: 3 },
            results: vec![(1, m.clone()), (4, m)],
        };
        let text = f.to_text();
        let g = ShardFile::parse(Path::new("x"), &text).expect("parses");
        assert_eq!(g.to_text(), text);
        let cut = &text[..text.len() - 4];
        let e = ShardFile::parse(Path::new("x"), cut).expect_err("cut short");
        assert!(e.to_string().contains("no `end` line"), "{e}");
        let bad = text.replace("quick true", "quick maybe");
        let e = ShardFile::parse(Path::new("x"), &bad).expect_err("bad quick");
        assert!(e.to_string().starts_with("x:4:"), "{e}");
    }
}
