//! Works that are the counted code of a kernel path (`[work.NAME] code =
//! "..."`): the path is looked up by name in the one table
//! ([`crate::kernel::xfs::paths::CODE_PATHS`]), sized by `[code]
//! dir_entries` and priced on the machine profile with `[code]
//! work_scale`.

use super::build::{self, BuildError, Names};
use super::config::{DistConfig, DistKind, WorkConfig};
use crate::engine::dist::Duration;
use crate::param::ParamError;

fn err(field: impl Into<String>, message: impl Into<String>) -> BuildError {
    ParamError::new(field, message)
}

/// The largest `[code]` `work_scale` (a load at 1,000 L1 hits).
pub const MAX_WORK_SCALE: f64 = 1000.0;

/// The largest `[code]` `dir_entries` (the lab's largest `files`).
pub const MAX_DIR_ENTRIES: u64 = 1_000_000;

/// The duration of a `[work.NAME]` that names counted code (`code`): the
/// path's counted work ([`crate::kernel::xfs::paths`]) for `[code]`'s
/// `dir_entries`, priced on the profile with `[code]`'s `work_scale`;
/// `fixed` (default) or `exp` around that mean.
pub fn duration(w: &WorkConfig, code: &str, at: &str, names: &Names<'_>) -> Result<Duration, BuildError> {
    use crate::kernel::xfs::paths;
    if let Some((key, _)) = w.dist(DistKind::Fixed).given().iter().find(|(_, v)| v.is_some()) {
        return Err(err(
            format!("{at}.{key}"),
            format!("a work with `code` takes its duration from the counted code of `{code}`: remove `{key}`"),
        ));
    }
    let path = paths::find(code).ok_or_else(|| {
        let known: Vec<&str> = paths::CODE_PATHS.iter().map(|p| p.name).collect();
        err(
            format!("{at}.code"),
            format!("no counted kernel path named `{code}` (known: {})", known.join(", ")),
        )
        .suggest(crate::text::closest(code, known.iter().copied()))
    })?;
    let c = names.code.ok_or_else(|| {
        err(
            format!("{at}.code"),
            "counted code needs a [code] table with dir_entries (and the host's work_scale)",
        )
    })?;
    let scale = c.work_scale.unwrap_or(1.0);
    if !(scale > 0.0 && scale <= MAX_WORK_SCALE) {
        return Err(err(
            "code.work_scale",
            format!("expected a multiple of hit_ns in (0, {MAX_WORK_SCALE}], found {scale}"),
        ));
    }
    if !(1..=MAX_DIR_ENTRIES).contains(&c.dir_entries) {
        return Err(err(
            "code.dir_entries",
            format!("expected 1 to {MAX_DIR_ENTRIES} names per directory, found {}", c.dir_entries),
        ));
    }
    let tally = (path.count)(&paths::CodeParams {
        dir_entries: c.dir_entries,
    });
    let mean_ns = tally.ns(names.profile, scale);
    let dist = match w.dist {
        None | Some(DistKind::Fixed) => DistKind::Fixed,
        Some(DistKind::Exp) => DistKind::Exp,
        Some(other) => {
            return Err(err(
                format!("{at}.dist"),
                format!("a work with `code` is fixed (default) or exp around the counted mean, found {other:?}").to_lowercase(),
            ));
        }
    };
    build::duration(
        &DistConfig {
            dist,
            mean_ns: Some(mean_ns),
            sd_ns: None,
            min_ns: None,
            max_ns: None,
            sigma: None,
        },
        at,
    )
}

#[cfg(test)]
mod tests {
    use crate::kernel::xfs::paths::CODE_PATHS;

    #[test]
    fn the_reference_names_every_counted_path() {
        let spec = super::super::keys::PARAMS
            .iter()
            .find(|p| p.path == "work.NAME.code")
            .expect("work.NAME.code in the reference");
        let listed: Vec<&str> = spec.range.split(", ").collect();
        let table: Vec<&str> = CODE_PATHS.iter().map(|p| p.name).collect();
        assert_eq!(listed, table);
    }
}
