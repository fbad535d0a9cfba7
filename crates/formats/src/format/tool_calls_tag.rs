//! `tool_calls_tag`: its row, models and profile. Read by [`crate::families::jsonlike::tool_calls_tag`].

use super::prelude::*;

/// The `tool_calls_tag` format.
pub(crate) const FORMAT: Def = Def {
    position: 310,
    extractor: || crate::families::jsonlike::tool_calls_tag::extractor(),
    group: Group::JsonLike,
    models: &["jamba", "hunyuan-a13b", "minimax-text-01", "apriel"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "tool_calls_tag",
        families: "Jamba, Hunyuan-A13B, MiniMax-Text-01, Apriel",
        engine: Engine::JsonBlock,
        opener: "<tool_calls>",
        separator: None,
        closers: &["</tool_calls>"],
        blocks: &[("<tool_calls>", "</tool_calls>")],
        parameter: None,
        openers: Some(&["<tool_calls>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};
