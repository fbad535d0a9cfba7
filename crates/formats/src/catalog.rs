//! The catalog: every mode this run knows, built-in, custom pattern and
//! declared format, in replay order.
//!
//! Custom patterns come from a patterns file ([`patterns`]) and from the
//! `[[pattern]]` tables of [`CONFIG_FILE`]; declared formats (issue 8) from
//! a formats file ([`declared`]) and the `[[format]]` tables of
//! [`CONFIG_FILE`] (its other top-level keys are left to other settings and
//! ignored here). Like the rest of this crate the catalog reads no file: the
//! caller reads them and passes their text. A custom mode may not take the name of a built-in mode or
//! of another custom mode: mode names are the keys of every label map. A
//! declared format may not take the name of a built-in profile either: it is
//! meant to be chosen by name. The profiles live above this crate, so the
//! caller passes their names ([`Catalog::modes`]).

use crate::{Extractor, declared, patterns};
use std::fmt;
use toolgate_core::sanitize::one_line;

/// The project configuration file read from the working directory.
pub const CONFIG_FILE: &str = "toolgate.toml";

/// Why the catalog could not be assembled: a message, and the error it
/// wraps (a file that cannot be read, a pattern or format that does not
/// load). Printed as a chain (`{:#}` of an `anyhow` error), each link's
/// message is the one the binary always printed.
#[derive(Debug)]
pub struct CatalogError(Inner);

/// A message over the error it wraps, or a loading error passed on as it
/// is.
#[derive(Debug)]
enum Inner {
    Message(
        String,
        Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ),
    Load(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl CatalogError {
    fn new(message: impl Into<String>) -> Self {
        CatalogError(Inner::Message(message.into(), None))
    }

    fn wrap(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        CatalogError(Inner::Message(message.into(), Some(Box::new(source))))
    }

    fn load(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        CatalogError(Inner::Load(Box::new(error)))
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Inner::Message(message, _) => f.write_str(message),
            Inner::Load(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for CatalogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0 {
            Inner::Message(_, source) => source
                .as_deref()
                .map(|e| e as &(dyn std::error::Error + 'static)),
            Inner::Load(error) => error.source(),
        }
    }
}

/// The custom modes of a [`CONFIG_FILE`] text: its `[[pattern]]` tables,
/// then its `[[format]]` tables.
fn config_modes(text: &str) -> Result<Vec<Box<dyn Extractor>>, CatalogError> {
    let mut modes = patterns::extractors(config_patterns(text)?);
    modes.extend(declared::extractors(config_formats(text)?));
    Ok(modes)
}

/// The `[models]` table of a [`CONFIG_FILE`] text in file order: (glob,
/// profile name).
pub fn config_models(text: &str) -> Result<Vec<(String, String)>, CatalogError> {
    use toml::de::{DeTable, DeValue};
    let root =
        DeTable::parse(text).map_err(|e| CatalogError::new(format!("not valid TOML: {e}")))?;
    let Some((_, models)) = root.get_ref().iter().find(|(k, _)| k.get_ref() == "models") else {
        return Ok(Vec::new());
    };
    let DeValue::Table(models) = models.get_ref() else {
        return Err(CatalogError::new(
            "`models` must be a table of \"glob\" = \"profile\"",
        ));
    };
    let mut rows = Vec::new();
    for (glob, profile) in models.iter() {
        let DeValue::String(name) = profile.get_ref() else {
            return Err(CatalogError::new(format!(
                "[models] \"{}\": the value must be a profile name (a string)",
                one_line(glob.get_ref())
            )));
        };
        rows.push((
            glob.span().start,
            glob.get_ref().to_string(),
            name.to_string(),
        ));
    }
    rows.sort_by_key(|(at, _, _)| *at);
    Ok(rows.into_iter().map(|(_, g, p)| (g, p)).collect())
}

/// The `key` array of tables of a [`CONFIG_FILE`] text alone, as the text
/// of a file holding only it (`None` when absent).
fn config_section(text: &str, key: &str) -> Result<Option<String>, CatalogError> {
    let mut table: toml::Table =
        toml::from_str(text).map_err(|e| CatalogError::wrap("not valid TOML", e))?;
    let Some(list) = table.remove(key) else {
        return Ok(None);
    };
    let mut only = toml::Table::new();
    only.insert(key.into(), list);
    let text = toml::to_string(&only)
        .map_err(|e| CatalogError::wrap(format!("`{key}` must be an array of tables"), e))?;
    Ok(Some(text))
}

/// The `[[pattern]]` tables of a [`CONFIG_FILE`] text, loaded as a patterns
/// file.
fn config_patterns(text: &str) -> Result<Vec<patterns::Pattern>, CatalogError> {
    match config_section(text, "pattern")? {
        Some(text) => patterns::load_patterns(&text).map_err(CatalogError::load),
        None => Ok(Vec::new()),
    }
}

/// The `[[format]]` tables of a [`CONFIG_FILE`] text, loaded as a formats
/// file.
fn config_formats(text: &str) -> Result<Vec<declared::Declared>, CatalogError> {
    match config_section(text, "format")? {
        Some(text) => declared::load_formats(&text).map_err(CatalogError::load),
        None => Ok(Vec::new()),
    }
}

/// The modes of one run, assembled: the built-in modes, then the custom
/// modes in the order they are added (a [`CONFIG_FILE`]'s, a patterns
/// file's, a formats file's), checked against the name-clash rules of the
/// module docs by [`Catalog::modes`]. Like the rest of this crate it reads
/// no file: the caller passes each file's text.
#[derive(Default)]
pub struct Catalog {
    custom: Vec<Box<dyn Extractor>>,
}

impl Catalog {
    /// A catalog of the built-in modes alone.
    pub fn new() -> Catalog {
        Catalog::default()
    }

    /// Adds the custom modes of a [`CONFIG_FILE`] text: its `[[pattern]]`
    /// tables, then its `[[format]]` tables.
    pub fn add_config(&mut self, text: &str) -> Result<(), CatalogError> {
        self.custom.extend(config_modes(text)?);
        Ok(())
    }

    /// Adds the patterns of a patterns file's text (`--patterns FILE`),
    /// highest priority first.
    pub fn add_patterns(&mut self, text: &str) -> Result<(), patterns::PatternError> {
        self.custom
            .extend(patterns::extractors(patterns::load_patterns(text)?));
        Ok(())
    }

    /// Adds the declared formats of a formats file's text (`--formats
    /// FILE`).
    pub fn add_formats(&mut self, text: &str) -> Result<(), declared::FormatError> {
        self.custom
            .extend(declared::extractors(declared::load_formats(text)?));
        Ok(())
    }

    /// The custom modes added so far, without the built-in ones and
    /// unchecked (a caller adding them to modes it already holds).
    pub fn into_custom(self) -> Vec<Box<dyn Extractor>> {
        self.custom
    }

    /// Every mode: the built-in ones, then the custom ones, whose names
    /// must not clash with another mode's; a declared format's name must
    /// not be one of `builtin_profiles` either (`--profile NAME` must find
    /// the format, not a built-in profile).
    pub fn modes(self, builtin_profiles: &[&str]) -> Result<Vec<Box<dyn Extractor>>, CatalogError> {
        modes(self.custom, builtin_profiles)
    }
}

/// The profile that detects the mode (`--profile auto`): no profile table
/// lists it, and it never looks a mode up by name, so a declared format
/// named `auto` would load and never be chosen.
const AUTO_PROFILE: &str = "auto";

/// The modes: the built-in modes, then `custom` (patterns and declared
/// formats, in the order given), whose names must not clash with another
/// mode's; a declared format's name must not be one of `builtin_profiles`
/// either, nor `auto` (`--profile NAME` must find the format, not a built-in
/// profile).
fn modes(
    custom: Vec<Box<dyn Extractor>>,
    builtin_profiles: &[&str],
) -> Result<Vec<Box<dyn Extractor>>, CatalogError> {
    let mut extractors = crate::builtin();
    for custom in custom {
        if extractors.iter().any(|e| e.name() == custom.name()) {
            let kind = if custom.row().is_some() {
                "format"
            } else {
                "pattern"
            };
            return Err(CatalogError::new(format!(
                "{kind} `{}` has the name of another mode; rename it",
                one_line(custom.name())
            )));
        }
        if custom.row().is_some()
            && (builtin_profiles.contains(&custom.name()) || custom.name() == AUTO_PROFILE)
        {
            return Err(CatalogError::new(format!(
                "format `{}` has the name of a built-in profile (`--profile {}` would choose that profile); rename it",
                one_line(custom.name()),
                one_line(custom.name())
            )));
        }
        extractors.push(custom);
    }
    Ok(extractors)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::error::Error as _;

    const ANGLE: &str = r#"
[[format]]
name = "angle_call"
engine = "json_block"
opener = "<<call>>"
closer = "<</call>>"
example = '<<call>>{"name": "get_weather", "arguments": {"city": "Antwerp"}}<</call>>'
"#;

    fn declared(text: &str) -> Vec<Box<dyn Extractor>> {
        declared::extractors(declared::load_formats(text).unwrap())
    }

    fn pattern(name: &str) -> Vec<Box<dyn Extractor>> {
        let text = format!(
            "[[pattern]]\nname = \"{name}\"\ntype = \"xml\"\nregex = 'x(y)'\ntool_name = \"f\"\n"
        );
        patterns::extractors(patterns::load_patterns(&text).unwrap())
    }

    #[test]
    fn a_declared_format_follows_the_builtin_modes() {
        let modes = modes(declared(ANGLE), &["default"]).unwrap();
        let names: Vec<&str> = modes.iter().map(|e| e.name()).collect();
        assert_eq!(names.last(), Some(&"angle_call"));
        assert_eq!(names.len(), crate::builtin().len() + 1);
    }

    #[test]
    fn a_declared_format_may_not_take_a_builtin_profiles_name() {
        let e = modes(declared(ANGLE), &["default", "angle_call"])
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "format `angle_call` has the name of a built-in profile (`--profile angle_call` would choose that profile); rename it"
        );
        // A pattern is not chosen by name that way: it may.
        assert!(modes(pattern("angle_call"), &["angle_call"]).is_ok());
        // Probe 44b: `auto` loaded, and `--profile auto` never reached it.
        let e = modes(declared(&ANGLE.replace("angle_call", "auto")), &["default"])
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "format `auto` has the name of a built-in profile (`--profile auto` would choose that profile); rename it"
        );
    }

    #[test]
    fn a_custom_mode_may_not_take_another_modes_name() {
        let mut custom = pattern("angle_call");
        custom.extend(declared(ANGLE));
        let e = modes(custom, &[]).err().unwrap();
        assert_eq!(
            e.to_string(),
            "format `angle_call` has the name of another mode; rename it"
        );
        let mut custom = pattern("p1");
        custom.extend(pattern("p1"));
        let e = modes(custom, &[]).err().unwrap();
        assert_eq!(
            e.to_string(),
            "pattern `p1` has the name of another mode; rename it"
        );
    }

    #[test]
    fn a_config_file_gives_its_patterns_then_its_formats() {
        let text = format!(
            "{ANGLE}\n[[pattern]]\nname = \"p1\"\ntype = \"xml\"\nregex = 'x(y)'\ntool_name = \"f\"\n\n[models]\n\"a*\" = \"hermes\"\n"
        );
        let modes = config_modes(&text).unwrap();
        let names: Vec<&str> = modes.iter().map(|e| e.name()).collect();
        assert_eq!(names, ["p1", "angle_call"]);
        let e = config_modes("pattern = 3\n").err().unwrap();
        assert_eq!(
            e.to_string(),
            "invalid type: integer `3`, expected a sequence"
        );
        let e = config_modes("x = [\n").err().unwrap();
        assert_eq!(e.to_string(), "not valid TOML");
        assert!(e.source().is_some());
    }

    #[test]
    fn config_models_keep_file_order() {
        let rows = config_models("[models]\n\"b*\" = \"hermes\"\n\"a*\" = \"default\"\n").unwrap();
        assert_eq!(
            rows,
            vec![
                ("b*".to_string(), "hermes".to_string()),
                ("a*".to_string(), "default".to_string())
            ]
        );
        let e = config_models("[models]\n\"a*\" = 3\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "[models] \"a*\": the value must be a profile name (a string)"
        );
    }
}
