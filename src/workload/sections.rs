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
    /// Sections read for their defaults alone (the reference): like
    /// `Table`, but nothing is left out as unread.
    Defaults(&'a toml::Table),
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
            Sections::Table(_) | Sections::Defaults(_) => None,
        }
    }

    /// Refuses keys of `sel`'s section that no run they apply to reads
    /// (see [`super::selected`]); checked on the scenario text only.
    pub fn check_selected(&self, sel: &super::selected::Selected) -> Result<(), ParamError> {
        self.document().map_or(Ok(()), |doc| sel.check(&doc))
    }

    /// Section `name` read as `T` with every default filled, without the
    /// keys `sel` says no run reads, as TOML text (`[name]` and its keys in
    /// `T`'s order), or empty when the document has none.
    pub fn resolved_selected<T>(&self, name: &str, sel: &super::selected::Selected) -> Result<String, ParamError>
    where
        T: DeserializeOwned + Default + serde::Serialize,
    {
        let Some(value) = self.get_opt::<T>(name)? else {
            return Ok(String::new());
        };
        let bad = |e: &dyn std::fmt::Display| ParamError::new(name, e.to_string());
        let full = toml::to_string_pretty(&value).map_err(|e| bad(&e))?;
        let mut table = toml::Table::try_from(&value).map_err(|e| bad(&e))?;
        match self {
            Sections::Text(_) => sel.prune(&self.document().unwrap_or_default(), &mut table),
            Sections::Table(t) => sel.prune(t, &mut table),
            Sections::Defaults(_) => {}
        }
        // Keys in the order `T` writes them (a table sorts them).
        let at = |k: &str| {
            let plain = full
                .find(&format!("\n{k} ="))
                .or_else(|| full.starts_with(&format!("{k} =")).then_some(0));
            plain.or_else(|| full.find(&format!("[{k}"))).unwrap_or(usize::MAX)
        };
        let mut keys: Vec<(usize, String, toml::Value)> = table.into_iter().map(|(k, v)| (at(&k), k, v)).collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        let ordered = Ordered(keys.into_iter().map(|(_, k, v)| (k, v)).collect());
        let wrapped = Ordered(vec![(name.to_string(), ordered)]);
        toml::to_string_pretty(&wrapped).map_err(|e| bad(&e))
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
            Sections::Table(t) | Sections::Defaults(t) => match t.get(name) {
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

/// A map that serialises its entries in the order given.
struct Ordered<V>(Vec<(String, V)>);

impl<V: serde::Serialize> serde::Serialize for Ordered<V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}
