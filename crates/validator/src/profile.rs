//! Profiles: primary mode, fallbacks, gate settings (SPEC §4).
//!
//! The default profile is the one of seed 000: primary `tag`, fallbacks `json`
//! then `bracket`, intent tokens `need_tool: yes` and `CALL_TOOL`, a 2 KiB
//! per-call limit for fallback candidates and 64 KiB for primary ones, and
//! repaired candidates never execute.
//!
//! The built-in model profiles make a model family's native format primary:
//!
//! | profile | primary |
//! |---|---|
//! | `hermes` | `hermes` |
//! | `qwen3-coder` | `qwen_xml` |
//! | `mistral` | `mistral` |
//! | `llama3` | `llama3` |
//! | `gpt-oss` | `harmony` |
//! | `deepseek` | `deepseek` |
//! | `kimi` | `kimi` |
//! | `glm` | `glm` |
//! | `native` | `native` (the server's own `tool_calls`) |
//!
//! They have **no fallbacks**: a model served with its own chat template has
//! one wire format, and anything else it emits is either prose or a sampling
//! artifact. Guessing at other shapes would widen the execution surface for no
//! gain; a deployment that wants fallbacks writes them in a profile file.
//!
//! A profile file is TOML; only `name` and `primary` are required, unknown
//! keys are rejected:
//!
//! ```
//! use toolgate_validator::Profile;
//! let p = Profile::from_toml(r#"
//!     name = "strict-hermes"
//!     primary = "hermes"
//!     fallbacks = ["json"]
//!     intent_tokens = ["<use_tool>"]
//!     fallback_size_limit = 1024
//! "#).unwrap();
//! assert_eq!(p.fallbacks, ["json"]);
//! assert!(p.fallbacks_enabled);
//! assert_eq!(p.primary_size_limit, 64 * 1024);
//! assert!(Profile::from_toml("name = \"x\"\nprimary = \"tag\"\nfallback = []").is_err());
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;

/// A parsing profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The profile name (`default`, `hermes`, …).
    pub name: String,
    /// The primary mode.
    pub primary: String,
    /// Fallback modes, in order.
    pub fallbacks: Vec<String>,
    /// Whether fallbacks are tried at all.
    pub fallbacks_enabled: bool,
    /// Lines that show explicit tool intent (each alone on a line).
    pub intent_tokens: Vec<String>,
    /// Per-call payload limit for fallback candidates, bytes.
    pub fallback_size_limit: usize,
    /// Per-call payload limit for primary candidates, bytes.
    pub primary_size_limit: usize,
    /// Whether lenient (repaired) candidates may execute (default false).
    /// When true, the pipeline extracts with the lenient variant of each
    /// mode; otherwise strictly.
    pub allow_repairs: bool,
    /// Whether `format` (`email`, `date-time`, `uri`, …) is asserted in every
    /// draft (default true). JSON Schema 2019-09 and later make `format` an
    /// annotation only, so `"not an email"` would pass `format: email` there
    /// and fail it under draft-07; a gateway asserts it everywhere unless a
    /// profile says `assert_formats = false`.
    pub assert_formats: bool,
}

impl Default for Profile {
    fn default() -> Profile {
        Profile {
            name: "default".into(),
            primary: "tag".into(),
            fallbacks: vec!["json".into(), "bracket".into()],
            fallbacks_enabled: true,
            intent_tokens: vec!["need_tool: yes".into(), "CALL_TOOL".into()],
            fallback_size_limit: 2048,
            primary_size_limit: 64 * 1024,
            allow_repairs: false,
            assert_formats: true,
        }
    }
}

/// The built-in profiles as (name, primary mode), `default` first: each
/// format file declares the profile that makes it primary
/// ([`toolgate_formats::profiles`]).
fn builtin_list() -> Vec<(&'static str, &'static str)> {
    toolgate_formats::profiles()
}

impl Profile {
    /// A built-in profile by name (`default`, `hermes`, `qwen3-coder`,
    /// `mistral`, `llama3`, `gpt-oss`, `deepseek`, `kimi`, `glm`, `native`).
    pub fn builtin(name: &str) -> Option<Profile> {
        if name == "default" {
            return Some(Profile::default());
        }
        let (name, primary) = builtin_list().into_iter().find(|(n, _)| *n == name)?;
        Some(Profile {
            name: name.into(),
            primary: primary.into(),
            fallbacks: Vec::new(),
            fallbacks_enabled: false,
            ..Profile::default()
        })
    }

    /// A mode as a one-mode profile (SPEC §4: every mode name, custom ones
    /// included, is a profile): that mode primary, no fallbacks, the default
    /// profile's gate settings. Whether the mode exists is checked where the
    /// extractors are known ([`Profile::check_modes`]).
    ///
    /// ```
    /// use toolgate_validator::Profile;
    /// let p = Profile::for_mode("apertus");
    /// assert_eq!((p.name.as_str(), p.primary.as_str()), ("apertus", "apertus"));
    /// assert!(p.fallbacks.is_empty() && !p.fallbacks_enabled);
    /// ```
    pub fn for_mode(mode: &str) -> Profile {
        Profile {
            name: mode.into(),
            primary: mode.into(),
            fallbacks: Vec::new(),
            fallbacks_enabled: false,
            ..Profile::default()
        }
    }

    /// The profile that reads `mode` as a model's own format: the built-in
    /// model profile whose primary it is (`harmony` → `gpt-oss`), else the
    /// one-mode profile of [`Profile::for_mode`]. Never `default` (its
    /// fallbacks would judge a `tag` model by other formats too).
    ///
    /// ```
    /// use toolgate_validator::Profile;
    /// assert_eq!(Profile::reading("harmony").name, "gpt-oss");
    /// assert_eq!(Profile::reading("tag").name, "tag");
    /// assert_eq!(Profile::reading("glm"), Profile::builtin("glm").unwrap());
    /// ```
    pub fn reading(mode: &str) -> Profile {
        builtin_list()
            .into_iter()
            .find(|(name, primary)| *name != "default" && *primary == mode)
            .and_then(|(name, _)| Profile::builtin(name))
            .unwrap_or_else(|| Profile::for_mode(mode))
    }

    /// The names of the built-in profiles, `default` first.
    pub fn builtin_names() -> Vec<&'static str> {
        builtin_list().into_iter().map(|(n, _)| n).collect()
    }

    /// Reads a profile from TOML. `name` and `primary` are required; every
    /// other field defaults to the default profile's value, except
    /// `fallbacks` (default: none) and `fallbacks_enabled` (default: whether
    /// any fallback is listed). Unknown keys are errors.
    pub fn from_toml(text: &str) -> Result<Profile, ProfileError> {
        let file: ProfileFile = toml::from_str(text)
            .map_err(|e| ProfileError::new(ProfileErrorKind::Toml(e.message().to_string())))?;
        let defaults = Profile::default();
        if file.name.trim().is_empty() {
            return Err(ProfileError::new(ProfileErrorKind::Invalid(
                "`name` is empty".into(),
            )));
        }
        if file.primary.trim().is_empty() {
            return Err(ProfileError::new(ProfileErrorKind::Invalid(
                "`primary` is empty".into(),
            )));
        }
        let fallbacks = file.fallbacks.unwrap_or_default();
        if let Some(dup) = fallbacks.iter().find(|f| **f == file.primary) {
            return Err(ProfileError::new(ProfileErrorKind::Invalid(format!(
                "the primary mode `{dup}` is also listed as a fallback"
            ))));
        }
        let fallbacks_enabled = file.fallbacks_enabled.unwrap_or(!fallbacks.is_empty());
        Ok(Profile {
            name: file.name,
            primary: file.primary,
            fallbacks,
            fallbacks_enabled,
            intent_tokens: file.intent_tokens.unwrap_or(defaults.intent_tokens),
            fallback_size_limit: file
                .fallback_size_limit
                .unwrap_or(defaults.fallback_size_limit),
            primary_size_limit: file
                .primary_size_limit
                .unwrap_or(defaults.primary_size_limit),
            allow_repairs: file.allow_repairs.unwrap_or(false),
            assert_formats: file.assert_formats.unwrap_or(defaults.assert_formats),
        })
    }

    /// Every mode the profile names: the primary, then the fallbacks.
    pub fn modes(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.primary.as_str()).chain(self.fallbacks.iter().map(String::as_str))
    }

    /// Checks that every mode the profile names is one of `known`.
    pub fn check_modes(&self, known: &[&str]) -> Result<(), ProfileError> {
        for mode in self.modes() {
            if !known.contains(&mode) {
                return Err(ProfileError::new(ProfileErrorKind::UnknownMode {
                    profile: self.name.clone(),
                    mode: mode.to_string(),
                }));
            }
        }
        Ok(())
    }
}

/// The TOML shape of a profile file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    name: String,
    primary: String,
    fallbacks: Option<Vec<String>>,
    fallbacks_enabled: Option<bool>,
    intent_tokens: Option<Vec<String>>,
    fallback_size_limit: Option<usize>,
    primary_size_limit: Option<usize>,
    allow_repairs: Option<bool>,
    assert_formats: Option<bool>,
}

/// A profile could not be read or names a mode that does not exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileError {
    kind: ProfileErrorKind,
}

/// What went wrong with a profile.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProfileErrorKind {
    /// The TOML did not parse or did not have the profile's shape (a missing
    /// `name`/`primary`, an unknown key, a wrong type).
    Toml(String),
    /// A value is not acceptable (empty name, primary listed as fallback).
    Invalid(String),
    /// The profile names a mode no extractor provides.
    UnknownMode {
        /// The profile.
        profile: String,
        /// The mode it names.
        mode: String,
    },
}

impl ProfileError {
    fn new(kind: ProfileErrorKind) -> ProfileError {
        ProfileError { kind }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ProfileErrorKind {
        &self.kind
    }
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ProfileErrorKind::Toml(msg) => write!(f, "invalid profile: {}", msg.trim_end()),
            ProfileErrorKind::Invalid(msg) => write!(f, "invalid profile: {msg}"),
            ProfileErrorKind::UnknownMode { profile, mode } => {
                write!(f, "profile `{profile}` names the unknown mode `{mode}`")
            }
        }
    }
}

impl std::error::Error for ProfileError {}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn default_is_seed_000() {
        let p = Profile::builtin("default").unwrap();
        assert_eq!(p, Profile::default());
        assert_eq!(
            (p.primary.as_str(), p.fallbacks.as_slice()),
            ("tag", &["json".to_string(), "bracket".to_string()][..])
        );
        assert_eq!(p.intent_tokens, ["need_tool: yes", "CALL_TOOL"]);
        assert_eq!((p.fallback_size_limit, p.primary_size_limit), (2048, 65536));
        assert!(p.assert_formats);
        let off = Profile::from_toml("name = \"x\"\nprimary = \"tag\"\nassert_formats = false");
        assert!(!off.unwrap().assert_formats);
    }

    #[test]
    fn model_profiles_use_their_native_mode_without_fallbacks() {
        let expected = [
            ("hermes", "hermes"),
            ("qwen3-coder", "qwen_xml"),
            ("mistral", "mistral"),
            ("llama3", "llama3"),
            ("gpt-oss", "harmony"),
            ("deepseek", "deepseek"),
            ("kimi", "kimi"),
            ("glm", "glm"),
            ("native", "native"),
        ];
        for (name, primary) in expected {
            let p = Profile::builtin(name).unwrap();
            assert_eq!(p.name, name);
            assert_eq!(p.primary, primary);
            assert!(p.fallbacks.is_empty() && !p.fallbacks_enabled);
            assert!(!p.allow_repairs);
        }
        assert_eq!(Profile::builtin_names().len(), 10);
        assert_eq!(Profile::builtin_names()[0], "default");
        assert_eq!(Profile::builtin("nope"), None);
    }

    #[test]
    fn toml_requires_name_and_primary() {
        let e = Profile::from_toml("primary = \"tag\"").unwrap_err();
        assert!(
            matches!(e.kind(), ProfileErrorKind::Toml(m) if m.contains("name")),
            "{e}"
        );
        let e = Profile::from_toml("name = \"x\"").unwrap_err();
        assert!(e.to_string().contains("primary"), "{e}");
        let p = Profile::from_toml("name = \"x\"\nprimary = \"hermes\"").unwrap();
        assert_eq!(p.fallbacks, Vec::<String>::new());
        assert!(!p.fallbacks_enabled);
        assert_eq!(p.intent_tokens, Profile::default().intent_tokens);
    }

    #[test]
    fn toml_rejects_unknown_keys_with_a_clear_error() {
        let e =
            Profile::from_toml("name = \"x\"\nprimary = \"tag\"\nallow_repair = true").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("invalid profile: unknown field `allow_repair`"),
            "{msg}"
        );
    }

    #[test]
    fn toml_rejects_primary_as_fallback_and_wrong_types() {
        let e = Profile::from_toml("name = \"x\"\nprimary = \"tag\"\nfallbacks = [\"tag\"]")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid profile: the primary mode `tag` is also listed as a fallback"
        );
        assert!(
            Profile::from_toml("name = \"x\"\nprimary = \"tag\"\nfallback_size_limit = -1")
                .is_err()
        );
    }

    #[test]
    fn unknown_modes_are_reported() {
        let p = Profile::default();
        assert_eq!(p.check_modes(&["tag", "json", "bracket"]), Ok(()));
        let e = p.check_modes(&["tag", "json"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "profile `default` names the unknown mode `bracket`"
        );
    }
}
