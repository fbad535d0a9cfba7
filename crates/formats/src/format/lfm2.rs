//! `lfm2`: its row, models and profile. Read by [`crate::families::jsonlike::lfm2`].

use super::prelude::*;

/// The `lfm2` format.
pub(crate) const FORMAT: Def = Def {
    position: 400,
    extractor: || crate::families::jsonlike::lfm2::extractor(),
    group: Group::JsonLike,
    models: &["lfm2"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "lfm2",
        families: "Liquid LFM2",
        engine: Engine::Pythonic,
        opener: "<|tool_call_start|>",
        separator: Some(","),
        closers: &["<|tool_call_end|>"],
        blocks: &[("<|tool_call_start|>", "<|tool_call_end|>")],
        parameter: None,
        openers: Some(&["<|tool_call_start|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "[f(a=1)] or a JSON call list",
    },
};
