//! Placeholder until the btrfs model lands.
use serde::{Deserialize, Serialize};
/// Parameters of the btrfs directory script.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct BtrfsDirParams {}
/// Metric names (none until the model lands).
pub const METRICS: &[&str] = &[];
impl BtrfsDirParams {
    /// Accepts everything until the model lands.
    pub fn validate(&self) -> Result<(), crate::model::ModelError> {
        Ok(())
    }
}
/// Placeholder.
pub fn run_btrfs_dir(
    _p: &BtrfsDirParams,
    _rng: &mut rand_chacha::ChaCha8Rng,
) -> Result<std::collections::BTreeMap<String, f64>, crate::model::ModelError> {
    Ok(Default::default())
}
