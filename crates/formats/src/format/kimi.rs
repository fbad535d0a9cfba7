//! `kimi`: its row, models and profile. Read by [`crate::families::tagged::kimi`].

use super::prelude::*;

/// The `kimi` format.
pub(crate) const FORMAT: Def = Def {
    position: 90,
    extractor: || Box::new(crate::families::tagged::kimi::KIMI),
    group: Group::Tagged,
    models: &["kimi-k2"],
    bare_reader: false,
    profile: Some(Profile {
        name: "kimi",
        rank: 7,
    }),
    row: Format {
        name: "kimi",
        families: "Kimi K2",
        engine: Engine::NameThenJson,
        opener: "<|tool_calls_section_begin|><|tool_call_begin|>",
        separator: Some("<|tool_call_argument_begin|>"),
        closers: &["<|tool_call_end|>", "<|tool_calls_section_end|>"],
        blocks: &[
            ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"),
            ("<|tool_call_begin|>", "<|tool_call_end|>"),
        ],
        parameter: None,
        openers: Some(&["<|tool_calls_section_begin|>", "<|tool_call_begin|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "functions.NAME:INDEX, then the JSON arguments object",
    },
};
