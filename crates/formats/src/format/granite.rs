//! `granite`: its row, models and profile. Read by [`crate::families::jsonlike::granite`].

use super::prelude::*;

/// The `granite` format.
pub(crate) const FORMAT: Def = Def {
    position: 270,
    extractor: || crate::families::jsonlike::granite::extractor(),
    group: Group::JsonLike,
    models: &["granite-3", "granite-4", "granite3", "granite4"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "granite",
        families: "Granite 3.x",
        engine: Engine::JsonBlock,
        opener: "<|tool_call|>",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["<|tool_call|>", "<tool_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};
