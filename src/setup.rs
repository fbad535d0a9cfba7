//! Building the replay [`Engine`] from `--profile` and `--patterns`.

use crate::EngineArgs;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use toolgate_validator::{Engine, Profile};

/// The project configuration file read from the working directory.
pub const CONFIG_FILE: &str = "toolgate.toml";

/// The built-in profiles, default first.
pub fn builtin_profiles() -> Vec<Profile> {
    vec![Profile::default()]
}

/// The profile named by `--profile`: a built-in name, or a TOML file (any
/// argument that names an existing file or ends in `.toml`).
pub fn resolve_profile(arg: Option<&str>) -> Result<Profile> {
    let Some(arg) = arg else {
        return Ok(Profile::default());
    };
    let path = Path::new(arg);
    if path.is_file() || arg.ends_with(".toml") {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read profile file {}", path.display()))?;
        return profile_from_toml(&text)
            .with_context(|| format!("invalid profile file {}", path.display()));
    }
    let builtins = builtin_profiles();
    match builtins.iter().find(|p| p.name == arg) {
        Some(p) => Ok(p.clone()),
        None => {
            let names: Vec<&str> = builtins.iter().map(|p| p.name.as_str()).collect();
            bail!(
                "unknown profile `{}`: built-in profiles are {} (or give the path of a TOML profile file)",
                toolgate_core::sanitize::one_line(arg),
                names.join(", ")
            )
        }
    }
}

fn profile_from_toml(text: &str) -> Result<Profile> {
    let _ = text;
    bail!("profile files are not supported by this build yet")
}

/// The patterns files to read: `--patterns FILE`, and `toolgate.toml` in the
/// working directory when it exists.
pub fn pattern_files(arg: Option<&Path>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let config = PathBuf::from(CONFIG_FILE);
    if config.is_file() {
        files.push(config);
    }
    if let Some(arg) = arg {
        files.push(arg.to_path_buf());
    }
    files
}

/// The engine: built-in modes, custom patterns, the chosen profile.
pub fn engine(args: &EngineArgs) -> Result<Engine> {
    let profile = resolve_profile(args.profile.as_deref())?;
    let engine = Engine::new(profile);
    let files = pattern_files(args.patterns.as_deref());
    if !files.is_empty() {
        for file in &files {
            std::fs::read_to_string(file)
                .with_context(|| format!("cannot read patterns file {}", file.display()))?;
        }
        bail!("custom patterns are not supported by this build yet");
    }
    Ok(engine)
}
