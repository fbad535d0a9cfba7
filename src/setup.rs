//! Building the replay [`Engine`] from `--profile`, `--patterns` and
//! `--formats`.
//!
//! The modes (built-in, custom patterns of `--patterns FILE`, declared
//! formats of `--formats FILE`, those of `toolgate.toml`) and their
//! name-clash rules are the formats crate's
//! [`Catalog`](toolgate_formats::Catalog); profiles and the `auto` chooser are
//! resolved by [`toolgate_validator::resolve`]. Here the files the user
//! names (and `toolgate.toml` in the working directory) are read and they meet.

use crate::EngineArgs;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use toolgate_core::sanitize::one_line;
use toolgate_formats::{CONFIG_FILE, Catalog, Extractor};
use toolgate_validator::{Auto, Engine, Profile, resolve};

/// The built-in profiles, `default` first.
pub fn builtin_profiles() -> Vec<Profile> {
    resolve::builtin_profiles()
}

/// The profile named by `--profile` ([`resolve::profile`]; `modes`: the
/// built-in and custom mode names).
pub fn resolve_profile(arg: Option<&str>, modes: &[&str]) -> Result<Profile> {
    resolve::profile(arg, |m| modes.contains(&m)).map_err(anyhow::Error::msg)
}

/// The catalog of this run: the custom modes of `toolgate.toml` (when
/// present: its patterns, then its declared formats), then those of
/// `--patterns`, then those of `--formats`.
fn catalog(patterns_file: Option<&Path>, formats_file: Option<&Path>) -> Result<Catalog> {
    let mut catalog = Catalog::new();
    let config = PathBuf::from(CONFIG_FILE);
    if config.is_file() {
        let text = read_config(&config)
            .map_err(|why| anyhow::anyhow!("cannot read {CONFIG_FILE}: {why}"))?;
        catalog
            .add_config(&text)
            .with_context(|| CONFIG_FILE.to_string())?;
    }
    if let Some(path) = patterns_file {
        read_custom(path, "patterns", |t| Ok(catalog.add_patterns(t)?))?;
    }
    if let Some(path) = formats_file {
        read_custom(path, "formats", |t| Ok(catalog.add_formats(t)?))?;
    }
    Ok(catalog)
}

/// The custom modes of the run's catalog, without the built-in ones.
pub fn custom_modes(
    patterns_file: Option<&Path>,
    formats_file: Option<&Path>,
) -> Result<Vec<Box<dyn Extractor>>> {
    Ok(catalog(patterns_file, formats_file)?.into_custom())
}

/// Reads the `what` file (`patterns`, `formats`) at `path` and loads it;
/// errors name the file.
fn read_custom(path: &Path, what: &str, mut load: impl FnMut(&str) -> Result<()>) -> Result<()> {
    let shown = one_line(&path.display().to_string()).into_owned();
    let text = read_config(path)
        .map_err(|why| anyhow::anyhow!("cannot read {what} file {shown}: {why}"))?;
    load(&text).with_context(|| format!("{what} file {shown}"))
}

/// A configuration file's text, read as transcript files are: regular
/// files only (a FIFO would block, `/dev/zero` never ends), within the
/// default `--max-file-size`, UTF-8.
fn read_config(path: &Path) -> std::result::Result<String, String> {
    let opts = toolgate_core::load::LoadOptions::default();
    let bytes = toolgate_core::load::read_transcript_file(path, &opts)?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The `auto` chooser ([`resolve::auto`]): `--profile` when given, else
/// the `[models]` table of `toolgate.toml` in the working directory, then
/// the built-in family table, detection and the default.
pub fn auto(args: &EngineArgs, engine: &Engine) -> Result<Auto> {
    let given = args.given_profile().is_some().then_some(&engine.profile);
    let config = PathBuf::from(CONFIG_FILE);
    let text = match given.is_none() && config.is_file() {
        true => Some(
            read_config(&config)
                .map_err(|why| anyhow::anyhow!("cannot read {CONFIG_FILE}: {why}"))?,
        ),
        false => None,
    };
    resolve::auto(given, text.as_deref(), &engine.mode_names()).map_err(anyhow::Error::msg)
}

/// The extractors: built-in modes, then custom patterns and declared formats
/// (whose names must not clash with another mode's, nor a declared format's
/// with a built-in profile's).
pub fn extractors(
    patterns: Option<&Path>,
    formats: Option<&Path>,
) -> Result<Vec<Box<dyn Extractor>>> {
    Ok(catalog(patterns, formats)?.modes(&Profile::builtin_names())?)
}

/// The engine: built-in modes, then custom patterns and declared formats,
/// and the chosen profile (whose modes must exist).
pub fn engine(args: &EngineArgs) -> Result<Engine> {
    let extractors = extractors(args.patterns.as_deref(), args.formats.as_deref())?;
    let names: Vec<&str> = extractors.iter().map(|e| e.name()).collect();
    let profile = resolve_profile(args.given_profile(), &names)?;
    Ok(Engine::with_extractors(extractors, profile)?)
}

/// `--modes LIST`: replay only these modes (an unknown name is an error
/// listing the known ones).
pub fn select_modes(engine: &mut Engine, modes: Option<&[String]>) -> Result<()> {
    if let Some(modes) = modes {
        engine
            .select_modes(modes)
            .map_err(|e| anyhow::anyhow!("--modes: {}", toolgate_core::sanitize::one_line(&e)))?;
    }
    Ok(())
}
