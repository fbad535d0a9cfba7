//! `apertus`: its row, models and profile. Read by [`crate::families::jsonlike::apertus`].

use super::prelude::*;

/// The `apertus` format.
pub(crate) const FORMAT: Def = Def {
    position: 350,
    extractor: || crate::families::jsonlike::apertus::extractor(),
    group: Group::JsonLike,
    models: &["apertus"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "apertus",
        families: "Swiss AI Apertus",
        engine: Engine::JsonBlock,
        opener: "<|tools_prefix|>",
        separator: None,
        closers: &["<|tools_suffix|>"],
        blocks: &[("<|tools_prefix|>", "<|tools_suffix|>")],
        parameter: None,
        openers: Some(&["<|tools_prefix|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "[{\"NAME\": {arguments}}, …]: the tool name is the key",
    },
};
