//! `gemma`: its row, models and profile. Read by [`crate::irregular::gemma`].

use super::prelude::*;
use crate::irregular::gemma::Gemma;

/// (opener, closer, string quote) per dialect: Gemma 4, FunctionGemma.
pub(crate) const BLOCKS: [(&str, &str, &str); 2] = [
    ("<|tool_call>", "<tool_call|>", "<|\"|>"),
    ("<start_function_call>", "<end_function_call>", "<escape>"),
];
/// What a block's call begins with, before the tool name.
pub(crate) const CALL: &str = "call:";

/// The `gemma` extractor: its reader with this file's tokens.
pub(crate) const GEMMA: Gemma = Gemma {
    blocks: BLOCKS,
    call: CALL,
};

/// The `gemma` format.
pub(crate) const FORMAT: Def = Def {
    position: 380,
    extractor: || Box::new(GEMMA),
    group: Group::JsonLike,
    models: &["gemma-4", "gemma4", "functiongemma"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "gemma",
        families: "Gemma 4, FunctionGemma",
        engine: Engine::Scanner,
        opener: cat!(BLOCKS[0].0, CALL, "NAME"),
        closers: &[BLOCKS[0].1],
        blocks: &[(BLOCKS[0].0, BLOCKS[0].1)],
        openers: Some(&[BLOCKS[0].0, BLOCKS[1].0]),
        payload: PayloadKind::OwnLiterals,
        conventions: "{key:<|\"|>text<|\"|>, n:1}; FunctionGemma quotes with <escape>",
        ..NO_EXTRAS
    },
};
