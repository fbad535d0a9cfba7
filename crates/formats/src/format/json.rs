//! `json`: its row, models and profile. Read by [`crate::irregular::json`].

use super::prelude::*;

/// The `json` format.
pub(crate) const FORMAT: Def = Def {
    position: 20,
    extractor: || Box::new(crate::irregular::json::Json),
    group: Group::Seed,
    models: &[],
    bare_reader: true,
    profile: None,
    row: Format {
        name: "json",
        families: "any model prompted for bare JSON",
        engine: Engine::Scanner,
        opener: "{ or [ at the start of the output",
        closers: &[],
        blocks: &[],
        openers: Some(&["{", "[", "```"]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
