//! `sarashina`: its row, models and profile. Read by [`crate::families::jsonlike::sarashina`].

use super::prelude::*;

/// The `sarashina` format.
pub(crate) const FORMAT: Def = Def {
    position: 430,
    extractor: || crate::families::jsonlike::sarashina::extractor(),
    group: Group::JsonLike,
    models: &["sarashina"],
    bare_reader: true,
    profile: None,
    row: Format {
        name: "sarashina",
        families: "SB Intuitions Sarashina",
        engine: Engine::JsonBlock,
        opener: "<|tool_calls|> (often stripped: then [ at the start of the output)",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["<|tool_calls|>", "["]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "[{'name': NAME, 'arguments': {…}}, …] as Python literals (SPEC §9 keys); without the marker only a [ followed by { at the start of the output or of a reasoning span",
    },
};
