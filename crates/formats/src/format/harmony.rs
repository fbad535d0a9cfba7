//! `harmony`: its row, models and profile. Read by [`crate::families::tagged::harmony`].

use super::prelude::*;

/// The `harmony` format.
pub(crate) const FORMAT: Def = Def {
    position: 110,
    extractor: || Box::new(crate::families::tagged::harmony::Harmony),
    group: Group::Tagged,
    models: &["gpt-oss"],
    bare_reader: false,
    profile: Some(Profile {
        name: "gpt-oss",
        rank: 5,
    }),
    row: Format {
        name: "harmony",
        families: "gpt-oss",
        engine: Engine::Scanner,
        opener: "<|channel|>commentary to=functions.NAME",
        separator: Some("<|message|>"),
        closers: &["<|call|>"],
        blocks: &[],
        parameter: None,
        // A call's span starts at its header's first token or at its
        // `to=functions.` recipient.
        openers: Some(&["<|start|>", "<|channel|>", "<|constrain|>", "to=functions."]),
        triggers: None,
        stop_token: Some(StopToken {
            token: "<|call|>",
            stripped_by: "vLLM and the OpenAI harmony renderer: a stop token of gpt-oss",
        }),
        payload: PayloadKind::JsonArguments,
        conventions: "recipient to=functions.NAME in the role header or after the channel",
    },
};
