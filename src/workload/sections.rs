//! Typed access to a workload's sections of a scenario document. When the
//! document is the scenario text itself, sections are read through the
//! span-keeping deserializer so that a bad value points at its line and
//! column; a resolved point (after variant and sweep overrides) is read from
//! the merged table.

use crate::param::ParamError;
use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

/// Where sections are read from.
#[derive(Debug, Clone, Copy)]
pub enum Sections<'a> {
    /// The scenario text (errors carry byte spans).
    Text(&'a Spanned<DeTable<'a>>),
    /// A merged document table (errors name the section).
    Table(&'a toml::Table),
}

impl Sections<'_> {
    /// Reads section `name` as `T`, or `T::default()` when absent.
    pub fn get<T: DeserializeOwned + Default>(&self, name: &str) -> Result<T, ParamError> {
        Ok(self.get_opt(name)?.unwrap_or_default())
    }

    /// Section `name` read as `T` with every default filled, as TOML text
    /// (`[name]` and its keys), or empty when the document has none.
    pub fn resolved<T: DeserializeOwned + Default + serde::Serialize>(&self, name: &str) -> Result<String, ParamError> {
        let Some(value) = self.get_opt::<T>(name)? else {
            return Ok(String::new());
        };
        let table = std::collections::BTreeMap::from([(name, value)]);
        toml::to_string_pretty(&table).map_err(|e| ParamError::new(name, e.to_string()))
    }

    /// The whole scenario document (shared sections, `[[variant]]`,
    /// `[sweep]` included) when reading the scenario text; `None` for a
    /// merged point table, which holds the workload's sections alone.
    pub fn document(&self) -> Option<toml::Table> {
        match self {
            Sections::Text(t) => {
                let de = toml::de::Deserializer::from((*t).clone());
                serde::Deserialize::deserialize(de).ok()
            }
            Sections::Table(_) => None,
        }
    }

    /// Refuses keys of `sel`'s section that no run they apply to reads
    /// (see [`super::selected`]); checked on the scenario text only.
    pub fn check_selected(&self, sel: &super::selected::Selected) -> Result<(), ParamError> {
        self.document().map_or(Ok(()), |doc| sel.check(&doc))
    }

    /// Reads section `name` as `T` if present.
    pub fn get_opt<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, ParamError> {
        match self {
            Sections::Text(t) => match t.get_ref().get(name) {
                None => Ok(None),
                Some(v) => {
                    let v: Spanned<DeValue<'_>> = v.clone();
                    T::deserialize(ValueDeserializer::from(v))
                        .map(Some)
                        .map_err(|e| ParamError::from_toml(name, &e))
                }
            },
            Sections::Table(t) => match t.get(name) {
                None => Ok(None),
                Some(v) => v
                    .clone()
                    .try_into()
                    .map(Some)
                    .map_err(|e: toml::de::Error| ParamError::from_toml(name, &e)),
            },
        }
    }
}
