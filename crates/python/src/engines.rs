//! Profiles and engines, resolved as the `toolgate` binary resolves
//! `--profile` (built-in name, mode name, TOML file), with the same error
//! messages. The binary also reads `toolgate.toml` from its working
//! directory; the Python package does not (a library should not depend on
//! the process's working directory): custom patterns, declared formats and
//! the `[models]` table are not available here.

use std::sync::Mutex;
use toolgate_validator::{Auto, Engine, Profile, resolve};

/// The value of `profile=` that means "choose per model".
pub const AUTO: &str = "auto";

/// The profile named by `arg` (`None`: the default profile), as
/// `toolgate --profile` reads it ([`resolve::profile`]; the modes are the
/// built-in ones).
pub fn resolve_profile(arg: Option<&str>) -> Result<Profile, String> {
    resolve::profile(arg, |m| {
        toolgate_formats::builtin().iter().any(|e| e.name() == m)
    })
}

/// Engines built so far, one per distinct profile. They live as long as the
/// process (streaming parsers borrow them); there is one per profile ever
/// asked for, so their number is bounded by the profiles a program uses.
static ENGINES: Mutex<Vec<&'static Engine>> = Mutex::new(Vec::new());

/// The engine (built-in modes) judging with `profile`, built once.
pub fn engine(profile: &Profile) -> Result<&'static Engine, String> {
    // A poisoned lock (a panic while pushing) leaves a usable list.
    let mut engines = ENGINES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = engines.iter().find(|e| e.profile == *profile) {
        return Ok(found);
    }
    let engine = Engine::with_extractors(toolgate_formats::builtin(), profile.clone())
        .map_err(|e| e.to_string())?;
    let engine: &'static Engine = Box::leak(Box::new(engine));
    engines.push(engine);
    Ok(engine)
}

/// The engine and `auto` chooser of a batch: `profile` `None` or `"auto"`
/// chooses per model (the binary without `--profile`), anything else is
/// `--profile`.
pub fn batch(profile: Option<&str>) -> Result<(&'static Engine, Auto), String> {
    match profile {
        None | Some(AUTO) => Ok((engine(&Profile::default())?, Auto::default())),
        Some(name) => {
            let engine = engine(&resolve_profile(Some(name))?)?;
            Ok((engine, Auto::given(engine.profile.clone())))
        }
    }
}
