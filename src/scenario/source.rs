//! Reading a scenario file: a regular file of bounded size, UTF-8, with
//! the first invalid byte located by line and column.

use super::error::{Location, ScenarioError};
use std::io::Read;
use std::path::Path;

/// The largest scenario file read, in bytes (a scenario is hand-written
/// text; anything larger is a mistake such as a path to a device).
pub const MAX_SCENARIO_BYTES: u64 = 4 << 20;

fn fail(file: &Path, location: Option<Location>, message: String) -> ScenarioError {
    ScenarioError {
        location,
        file: file.to_path_buf(),
        field: String::new(),
        message,
        suggestion: None,
    }
}

/// Reads `file` as UTF-8 text of at most [`MAX_SCENARIO_BYTES`].
pub fn read_scenario(file: &Path) -> Result<String, ScenarioError> {
    let cannot = |e: std::io::Error| fail(file, None, format!("cannot read the scenario file: {e}"));
    let meta = std::fs::metadata(file).map_err(cannot)?;
    if !meta.is_file() {
        return Err(fail(file, None, "the scenario is not a regular file".into()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .map_err(cannot)?
        .take(MAX_SCENARIO_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(fail(file, None, format!("the scenario is larger than {MAX_SCENARIO_BYTES} bytes")));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
        let lossy = String::from_utf8_lossy(e.as_bytes());
        let bad = String::from_utf8_lossy(good).len();
        let at = Location {
            file: file.to_path_buf(),
            line,
            column,
            source: Some(crate::text::SourceLine::of(&lossy, bad..bad + 1)),
        };
        fail(file, Some(at), "the scenario is not valid UTF-8 (first bad byte here)".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_is_located_at_its_first_bad_byte() {
        let dir = std::env::temp_dir().join(format!("fsmeta-utf8-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let f = dir.join("s.toml");
        std::fs::write(&f, b"[scenario]\nname = \"a\xffb\"\n").expect("write");
        let e = read_scenario(&f).expect_err("invalid");
        let at = e.location.expect("located");
        assert_eq!((at.line, at.column), (2, 10));
        assert!(read_scenario(&dir).is_err(), "a directory is refused");
        let _ = std::fs::remove_dir_all(dir);
    }
}
