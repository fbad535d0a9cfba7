//! `gemma`: its row, models and profile. Read by [`crate::families::jsonlike::gemma`].

use super::prelude::*;

/// The `gemma` format.
pub(crate) const FORMAT: Def = Def {
    position: 380,
    extractor: || Box::new(crate::families::jsonlike::gemma::Gemma),
    group: Group::JsonLike,
    models: &["gemma-4", "gemma4", "functiongemma"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "gemma",
        families: "Gemma 4, FunctionGemma",
        engine: Engine::Scanner,
        opener: "<|tool_call>call:NAME",
        separator: None,
        closers: &["<tool_call|>"],
        blocks: &[("<|tool_call>", "<tool_call|>")],
        parameter: None,
        openers: Some(&["<|tool_call>", "<start_function_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::OwnLiterals,
        conventions: "{key:<|\"|>text<|\"|>, n:1}; FunctionGemma quotes with <escape>",
    },
};
