//! `fence`: its row, models and profile. Read by [`crate::irregular::fence`].

use super::prelude::*;

/// The fence of a JSON block (`xlam` and `command_r` wrap calls in it too).
pub(crate) const JSON_FENCE: &str = "```json";

/// The `fence` format.
pub(crate) const FORMAT: Def = Def {
    position: 50,
    extractor: || Box::new(crate::irregular::fence::Fence),
    group: Group::Seed,
    models: &[],
    bare_reader: true,
    profile: None,
    row: Format {
        name: "fence",
        families: "any model asked for a fenced JSON block",
        engine: Engine::Scanner,
        opener: cat!(JSON_FENCE, " / ```tool_call / ```"),
        closers: &["```"],
        blocks: &[],
        openers: Some(&["```"]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
