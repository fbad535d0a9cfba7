//! Profiles: primary mode, fallbacks, gate settings (SPEC §4).

use serde::{Deserialize, Serialize};

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
    pub allow_repairs: bool,
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
        }
    }
}
