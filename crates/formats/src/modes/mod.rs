//! The seed modes (SPEC §3 first table) and the common wire formats of the
//! pipeline issue: `tag`, `json`, `bracket`, `marker`, `fence`, `hermes`, `native`.

use crate::Extractor;

/// The seed modes, in replay order (`native` is appended last by [`crate::builtin`]).
pub fn seed() -> Vec<Box<dyn Extractor>> {
    Vec::new()
}

/// The `native` mode (the transcript's own `tool_calls`).
pub fn native() -> Option<Box<dyn Extractor>> {
    None
}
