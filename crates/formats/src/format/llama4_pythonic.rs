//! `llama4_pythonic`: its row, models and profile. Read by [`crate::families::jsonlike::llama4_pythonic`].

use super::prelude::*;

/// The `llama4_pythonic` format.
pub(crate) const FORMAT: Def = Def {
    position: 390,
    extractor: || crate::families::jsonlike::llama4_pythonic::extractor(),
    group: Group::JsonLike,
    models: &["llama-4", "llama4"],
    bare_reader: true,
    profile: None,
    row: Format {
        name: "llama4_pythonic",
        families: "Llama 4",
        engine: Engine::Pythonic,
        opener: "<|python_start|>",
        separator: Some(","),
        closers: &["<|python_end|>"],
        blocks: &[("<|python_start|>", "<|python_end|>")],
        parameter: None,
        openers: Some(&["<|python_start|>", "["]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "[f(a=1), g(b='x')]",
    },
};
