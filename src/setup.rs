//! Building the replay [`Engine`] from `--profile`, `--patterns` and
//! `--formats`.
//!
//! The modes (built-in, custom patterns of `--patterns FILE`, declared
//! formats of `--formats FILE`, those of `toolgate.toml`) and their
//! name-clash rules are the formats crate's catalog
//! ([`toolgate_formats::catalog`]); here they meet the profiles.

use crate::EngineArgs;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use toolgate_core::sanitize::one_line;
use toolgate_formats::catalog::{self, CONFIG_FILE};
use toolgate_formats::{Extractor, declared, patterns};
use toolgate_validator::{Auto, Engine, Profile};

/// The built-in profiles, `default` first.
pub fn builtin_profiles() -> Vec<Profile> {
    Profile::builtin_names()
        .into_iter()
        .filter_map(Profile::builtin)
        .collect()
}

/// The profile named by `--profile`: a built-in name, a TOML file (an
/// argument that names an existing file or ends in `.toml`), or a mode name
/// (built-in or custom, among `modes`) as a one-mode profile. `None` is the
/// default profile.
pub fn resolve_profile(arg: Option<&str>, modes: &[&str]) -> Result<Profile> {
    let Some(arg) = arg else {
        return Ok(Profile::default());
    };
    let path = Path::new(arg);
    if path.is_file() || arg.ends_with(".toml") {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read profile file {}", one_line(arg)))?;
        return Profile::from_toml(&text)
            .with_context(|| format!("profile file {}", one_line(arg)));
    }
    if let Some(p) = Profile::builtin(arg) {
        return Ok(p);
    }
    if modes.contains(&arg) {
        return Ok(Profile::for_mode(arg));
    }
    bail!(
        "unknown profile `{}`: the built-in profiles are {}; every mode is a profile too (see `toolgate formats`), or give the path of a TOML profile file",
        one_line(arg),
        Profile::builtin_names().join(", ")
    )
}

/// The custom modes of `toolgate.toml` (when present: its patterns, then its
/// declared formats), then those of `--patterns`, then those of `--formats`.
pub fn custom_modes(
    patterns_file: Option<&Path>,
    formats_file: Option<&Path>,
) -> Result<Vec<Box<dyn Extractor>>> {
    let mut modes = Vec::new();
    let config = PathBuf::from(CONFIG_FILE);
    if config.is_file() {
        let text = std::fs::read_to_string(&config)
            .with_context(|| format!("cannot read {CONFIG_FILE}"))?;
        modes.extend(catalog::config_modes(&text).with_context(|| CONFIG_FILE.to_string())?);
    }
    if let Some(path) = patterns_file {
        let patterns = read_custom(path, "patterns", |t| Ok(patterns::load_patterns(t)?))?;
        modes.extend(patterns::extractors(patterns));
    }
    if let Some(path) = formats_file {
        let formats = read_custom(path, "formats", |t| Ok(declared::load_formats(t)?))?;
        modes.extend(declared::extractors(formats));
    }
    Ok(modes)
}

/// Reads the `what` file (`patterns`, `formats`) at `path` and loads it;
/// errors name the file.
fn read_custom<T>(path: &Path, what: &str, load: impl Fn(&str) -> Result<T>) -> Result<T> {
    let shown = one_line(&path.display().to_string()).into_owned();
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {what} file {shown}"))?;
    load(&text).with_context(|| format!("{what} file {shown}"))
}

/// The `auto` chooser: `--profile` when given (one profile for every
/// model), else the `[models]` table of `toolgate.toml` (glob → profile name,
/// first matching glob in file order), then the built-in family table,
/// detection and the default.
pub fn auto(args: &EngineArgs, engine: &Engine) -> Result<Auto> {
    if args.profile.is_some() {
        return Ok(Auto::given(engine.profile.clone()));
    }
    let config = PathBuf::from(CONFIG_FILE);
    if !config.is_file() {
        return Ok(Auto::default());
    }
    let text =
        std::fs::read_to_string(&config).with_context(|| format!("cannot read {CONFIG_FILE}"))?;
    let modes = engine.mode_names();
    let mut configured = Vec::new();
    for (glob, name) in catalog::config_models(&text).with_context(|| CONFIG_FILE.to_string())? {
        let profile = resolve_profile(Some(&name), &modes)
            .with_context(|| format!("{CONFIG_FILE}: [models] \"{}\"", one_line(&glob)))?;
        profile.check_modes(&modes)?;
        configured.push((glob, profile));
    }
    Ok(Auto::new(configured))
}

/// The extractors: built-in modes, then custom patterns and declared formats
/// (whose names must not clash with another mode's, nor a declared format's
/// with a built-in profile's).
pub fn extractors(
    patterns: Option<&Path>,
    formats: Option<&Path>,
) -> Result<Vec<Box<dyn Extractor>>> {
    let custom = custom_modes(patterns, formats)?;
    Ok(catalog::modes(custom, &Profile::builtin_names())?)
}

/// The engine: built-in modes, then custom patterns and declared formats,
/// and the chosen profile (whose modes must exist).
pub fn engine(args: &EngineArgs) -> Result<Engine> {
    let extractors = extractors(args.patterns.as_deref(), args.formats.as_deref())?;
    let names: Vec<&str> = extractors.iter().map(|e| e.name()).collect();
    let profile = resolve_profile(args.profile.as_deref(), &names)?;
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
