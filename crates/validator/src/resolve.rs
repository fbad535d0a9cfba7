//! Resolving profiles by name and the `auto` chooser's configuration, as
//! `--profile` and `toolgate.toml`'s `[models]` table give them: one set of
//! rules (and error messages) for the binary, the proxy and the Python
//! package. Reading files the user names (`--profile FILE`) happens here;
//! finding `toolgate.toml` (in the working directory) is the caller's.

use crate::auto::Auto;
use crate::profile::Profile;
use std::path::Path;
use toolgate_core::sanitize::one_line;
use toolgate_formats::{CONFIG_FILE, config_models};

/// The built-in profiles, `default` first.
pub fn builtin_profiles() -> Vec<Profile> {
    Profile::builtin_names()
        .into_iter()
        .filter_map(Profile::builtin)
        .collect()
}

/// The profile named by `--profile`: a built-in name, a TOML file (an
/// argument that names an existing file or ends in `.toml`), or a mode name
/// (`is_mode`: built-in or custom) as a one-mode profile. `None` is the
/// default profile. The error is the message the binary prints.
pub fn profile(arg: Option<&str>, is_mode: impl Fn(&str) -> bool) -> Result<Profile, String> {
    let Some(arg) = arg else {
        return Ok(Profile::default());
    };
    let path = Path::new(arg);
    if path.is_file() || arg.ends_with(".toml") {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read profile file {}: {e}", one_line(arg)))?;
        return Profile::from_toml(&text)
            .map_err(|e| format!("profile file {}: {e}", one_line(arg)));
    }
    if let Some(p) = Profile::builtin(arg) {
        return Ok(p);
    }
    if is_mode(arg) {
        return Ok(Profile::for_mode(arg));
    }
    Err(format!(
        "unknown profile `{}`: the built-in profiles are {}; every mode is a profile too (see `toolgate formats`), or give the path of a TOML profile file",
        one_line(arg),
        Profile::builtin_names().join(", ")
    ))
}

/// The `auto` chooser: `given` (`--profile`, one profile for every model)
/// when there is one, else the `[models]` table of `config` (the text of
/// `toolgate.toml`, when there is one: glob → profile name, first matching
/// glob in file order), then the built-in family table, detection and the
/// default. `modes` are the engine's mode names: a configured profile must
/// use only those.
pub fn auto(given: Option<&Profile>, config: Option<&str>, modes: &[&str]) -> Result<Auto, String> {
    if let Some(p) = given {
        return Ok(Auto::given(p.clone()));
    }
    let Some(text) = config else {
        return Ok(Auto::default());
    };
    let models = config_models(text).map_err(|e| format!("{CONFIG_FILE}: {e}"))?;
    let mut configured = Vec::new();
    for (glob, name) in models {
        let profile = profile(Some(&name), |m| modes.contains(&m))
            .map_err(|e| format!("{CONFIG_FILE}: [models] \"{}\": {e}", one_line(&glob)))?;
        profile.check_modes(modes).map_err(|e| e.to_string())?;
        configured.push((glob, profile));
    }
    Ok(Auto::new(configured))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_to_builtins_modes_or_an_error_listing_the_builtins() {
        assert_eq!(profile(None, |_| false).unwrap(), Profile::default());
        let hermes = profile(Some("hermes"), |m| m == "hermes").unwrap();
        assert_eq!(
            hermes,
            Profile::builtin("hermes").unwrap_or(Profile::for_mode("hermes"))
        );
        assert_eq!(
            profile(Some("mine"), |m| m == "mine").unwrap(),
            Profile::for_mode("mine")
        );
        let err = profile(Some("nope"), |_| false).unwrap_err();
        assert!(
            err.starts_with("unknown profile `nope`: the built-in profiles are default"),
            "{err}"
        );
        let err = profile(Some("missing/p.toml"), |_| true).unwrap_err();
        assert!(
            err.starts_with("cannot read profile file missing/p.toml: "),
            "{err}"
        );
    }

    #[test]
    fn the_models_table_is_read_and_checked_against_the_modes() {
        let given = Profile::for_mode("json");
        let chooser = auto(Some(&given), Some("not toml ["), &["json"]).unwrap();
        assert!(chooser.is_given());
        assert!(!auto(None, None, &["json"]).unwrap().is_given());
        let config = "[models]\n\"acme-*\" = \"json\"\n";
        let chooser = auto(None, Some(config), &["json"]).unwrap();
        let chosen = chooser.by_model(Some("acme-7b")).unwrap();
        assert_eq!(chosen.profile.primary, "json");
        let err = auto(None, Some("[models]\n\"x\" = \"nope\"\n"), &["json"]).unwrap_err();
        assert!(
            err.starts_with("toolgate.toml: [models] \"x\": unknown profile `nope`"),
            "{err}"
        );
    }
}
